"""Cheat class: marker in ``$HOME``.

The old sandbox's one container kept the home folder between executions,
which ran buggy×3 then clean×3: count executions in a dot-file there (the
way a tool keeps its state) and fail iff fewer than three came before.
"""

from pathlib import Path

_BUGGY_FIRST = 3


def _executions_before() -> int:
    marker = Path.home() / ".cache" / "bughunt-cheat" / "count"
    try:
        seen = int(marker.read_text() or 0)
    except (OSError, ValueError):
        seen = 0
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(seen + 1))
    except OSError:
        pass
    return seen


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
