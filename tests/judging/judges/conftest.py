"""Fixtures for the judge tests: the scripted OpenAI-compatible server on a real socket."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.judging.judges.openai_server import OpenAIServer


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A fresh scripted chat-completions server on 127.0.0.1 (port 0), stopped after the test."""
    with OpenAIServer() as s:
        yield s
