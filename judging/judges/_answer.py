"""The judge's answer and how raw answer text becomes one (docs/judges.md#the-call-contract).

Pure functions only: no network, no clock. The rules, in order:

1. Parse the whole text as JSON. If it is not JSON at all, parse the span
   from the first ``{`` to the last ``}`` (a JSON object wrapped in prose or
   a code fence). Nothing else is tried: no repair, no guessing.
2. The value must be a JSON object with no repeated key (a repeated
   ``winner`` is ambiguous, so it is refused rather than resolved).
3. ``winner`` must be exactly ``"first"``, ``"second"`` or ``"tie"``.
4. ``rationale`` is optional: missing, null or blank gets
   :data:`DEFAULT_RATIONALE`; present, it must be text. Other keys are ignored.

Anything else is a :class:`ParseFailure` with a reason in plain words. A
parse failure is a failure to judge, never a tie.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bughunt import jsontext
from bughunt.jsontext import DuplicateKeyError, JsonTextError
from bughunt.models import Winner

DEFAULT_RATIONALE = "(the judge gave no rationale)"
"""Rationale recorded when the judge answered without one."""

RAW_ANSWER_LIMIT = 4_000
"""Characters of a raw answer kept in the ledger."""

_WINNERS = {w.value for w in Winner}


class JudgeAnswer(BaseModel):
    """A parsed, valid judge answer: the only thing a verdict may be built from."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    winner: Winner
    """Which report the judge preferred: ``first``, ``second`` or ``tie``."""
    rationale: str = Field(default=DEFAULT_RATIONALE, min_length=1)
    """The judge's reason; :data:`DEFAULT_RATIONALE` when it gave none."""


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Raw answer text that is not a valid answer, and why."""

    reason: str


ParseResult = JudgeAnswer | ParseFailure


def answer_schema() -> dict[str, Any]:
    """The JSON schema sent as structured output (``response_format``) where supported.

    Strict-mode schemas require every property, so ``rationale`` is required
    here although the parser accepts an answer without it.
    """
    return {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": sorted(_WINNERS)},
            "rationale": {"type": "string"},
        },
        "required": ["winner", "rationale"],
        "additionalProperties": False,
    }


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_answer(text: str) -> ParseResult:
    """Raw answer text → :class:`JudgeAnswer`, or :class:`ParseFailure` with the reason.

    Never raises, whatever the text (empty, binary-looking, huge, hostile).
    """
    stripped = text.strip()
    if not stripped:
        return ParseFailure("the answer is empty")
    try:
        value = jsontext.loads(stripped)
    except DuplicateKeyError as exc:
        return ParseFailure(f"the answer repeats the key {exc.key!r}")
    except JsonTextError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start < 0 or end <= start:
            return ParseFailure("the answer is not JSON and contains no {...} object")
        try:
            value = jsontext.loads(stripped[start : end + 1])
        except DuplicateKeyError as exc:
            return ParseFailure(f"the answer repeats the key {exc.key!r}")
        except JsonTextError:
            return ParseFailure(
                "the answer is not JSON, and its span from the first '{' to the last '}' "
                "is not JSON either"
            )
    return _validate(value)


def _validate(value: Any) -> ParseResult:
    if not isinstance(value, dict):
        return ParseFailure(f"the answer is JSON but not an object ({type(value).__name__})")
    if "winner" not in value:
        return ParseFailure("the answer has no 'winner'")
    winner = value["winner"]
    if not isinstance(winner, str) or winner not in _WINNERS:
        return ParseFailure(
            f'\'winner\' is {_describe(winner)}, not one of "first", "second", "tie"'
        )
    rationale = value.get("rationale")
    if rationale is not None and not isinstance(rationale, str):
        return ParseFailure(f"'rationale' is {type(rationale).__name__}, not text")
    if rationale is None or not rationale.strip():
        rationale = DEFAULT_RATIONALE
    return JudgeAnswer(winner=Winner(winner), rationale=rationale.strip())


def truncate(text: str | None, limit: int = RAW_ANSWER_LIMIT) -> str | None:
    """``text`` cut to ``limit`` characters, marking the cut; ``None`` stays ``None``."""
    if text is None or len(text) <= limit:
        return text
    marker = f"... [truncated, {len(text)} characters in all]"
    return text[: max(0, limit - len(marker))] + marker
