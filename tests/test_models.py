"""Domain models: closed sets, clear validation errors, aliases."""

from __future__ import annotations

import pydantic
import pytest

from bughunt.models import AgentVersion, BugReport, Observation, Status, run_id_name


def test_unknown_status_names_field_and_value() -> None:
    """An unknown status is refused with the field name and the offending value."""
    with pytest.raises(pydantic.ValidationError) as info:
        Observation(observation_id="o", status="passed")
    text = str(info.value)
    assert "status" in text and "'passed'" in text


def test_missing_field_is_named() -> None:
    """A report without a reproduction test names the missing field."""
    with pytest.raises(pydantic.ValidationError) as info:
        BugReport.model_validate({"case_id": "c", "agent_version": "a", "title": "t"})
    assert "repro_test" in str(info.value)


def test_record_id_accepts_its_alias() -> None:
    """`id` and `record_id` both fill Observation.record_id."""
    assert Observation.model_validate({"observation_id": "o", "id": "A"}).record_id == "A"
    assert Observation.model_validate({"observation_id": "o", "record_id": "A"}).record_id == "A"


def test_missing_status_is_unknown_not_fail() -> None:
    """An observation without a status is `unknown`."""
    assert Observation(observation_id="o").status is Status.UNKNOWN


def test_agent_mode_is_a_closed_set() -> None:
    """An agent mode outside {command, replay} is refused."""
    with pytest.raises(pydantic.ValidationError, match="mode"):
        AgentVersion.model_validate({"name": "a", "family": "f", "mode": "shell"})


@pytest.mark.parametrize(
    "run_id",
    [
        "../../x",
        "..",
        ".",
        "/etc/passwd",
        "a/b",
        "a\\b",
        "",
        "nightly\n",
        "tab\there",
        "\x1b[31m",
        "zero\u200bwidth",
        "é",
        "-leading-dash",
        "x" * 129,
    ],
)
def test_a_run_id_is_a_name_not_a_path(run_id: str) -> None:
    """Slashes, dot names, absolute paths, control and non-ASCII characters are refused."""
    with pytest.raises(ValueError, match="a run id is a name"):
        run_id_name(run_id)


@pytest.mark.parametrize(
    "run_id", ["nightly-20261130T020000Z-1a2b3c", "pr-42", "a..b", "R_1.2", "x" * 128]
)
def test_ordinary_run_ids_pass(run_id: str) -> None:
    """The ids bughunt makes and ordinary names pass unchanged."""
    assert run_id_name(run_id) == run_id
