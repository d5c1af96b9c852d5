"""Labelled pairs whose right answer a scripted judge can see, and that judge's server replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.judging.judges.helpers import report
from tests.judging.judges.openai_server import Reply, Seen, answer, error

GOOD, BAD, SAME, BROKEN = "GOOD-REPORT", "BAD-REPORT", "SAME-REPORT", "BROKEN-REPORT"


def labelled(pair_id: str, better: str, *, broken: bool = False) -> dict[str, Any]:
    """A pair of one case: ``better`` names the GOOD report's side (``tie``: two SAME reports)."""
    case = f"case-{pair_id}"
    marks = {"first": (GOOD, BAD), "second": (BAD, GOOD), "tie": (SAME, SAME)}[better]
    if broken:
        marks = (f"{marks[0]} {BROKEN}", marks[1])

    def one(agent: str, mark: str) -> dict[str, Any]:
        return report(agent, case_id=case, title=f"{mark}: clamp of {pair_id}").model_dump()

    return {
        "id": pair_id,
        "first": one("x", marks[0]),
        "second": one("y", marks[1]),
        "better": better,
    }


def write_labels(path: Path, pairs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


def oracle(seen: Seen) -> Reply:
    """A judge that sees the answer: the GOOD report wins in either order; SAME is a tie; BROKEN is refused."""
    user = str(seen.body["messages"][-1]["content"])
    if BROKEN in user:
        return error(400, "scripted refusal")
    if GOOD not in user:
        return answer("tie")
    return answer("first" if user.index(GOOD) < user.index(BAD) else "second")


def judges_toml(path: Path, base_url: str, *names: str) -> Path:
    """A judges config with one openai judge per name, all at ``base_url``."""
    path.write_text(
        "".join(
            f'[judges.{n}]\nbackend = "openai"\nfamily = "fam-{n}"\nmodel = "m"\n'
            f'base_url = "{base_url}"\napi_key_env = ""\n'
            for n in names
        )
    )
    return path
