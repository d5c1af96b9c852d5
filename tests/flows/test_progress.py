"""Progress lines: a stage's start and end, and a line at least every interval while it runs."""

from __future__ import annotations

import io
import re
import sys
import threading
import time

import pytest

import flows._progress
from bughunt.errors import InputError
from flows._progress import StageProgress, heartbeat_s, terminal


class Lines:
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self.lock:
            self.seen.append(line)


def test_a_long_stage_says_where_it_is_between_its_start_and_its_end() -> None:
    """Started with the whole, then lines with done/total, a rate and the time left, then done."""
    lines = Lines()
    with StageProgress("sandbox", "shards", 4, lines, interval_s=0.05) as shown:
        shown.advance()
        time.sleep(0.3)  # nothing finishes for several intervals: lines keep coming
        shown.advance()
    first, *during, last = lines.seen
    assert first == "sandbox: started, 4 shards"
    assert len(during) >= 3
    assert all(re.match(r"sandbox: [12]/4 shards done after \d+s", line) for line in during)
    assert any(" a second" in line or " a minute" in line for line in during)
    assert any("left" in line for line in during)
    assert re.fullmatch(r"sandbox: done in \d+s, 2/4 shards", last)


def test_resumed_units_count_as_done_but_not_in_the_rate() -> None:
    """Shards found finished before are done at once; the rate is of the ones computed now."""
    now = [0.0]
    lines = Lines()
    shown = StageProgress("score", "shards", 4, lines, interval_s=60, clock=lambda: now[0])
    shown.start()
    shown.advance(resumed=True)
    shown.advance(resumed=True)
    now[0] = 120.0
    shown.advance()
    assert shown.line() == "score: 3/4 shards done after 2m00s, 0.5 a minute, about 2m00s left"
    shown.finish()
    assert lines.seen[-1] == "score: done in 2m00s, 3/4 shards (2 resumed from checkpoints)"


def test_a_failing_stage_says_so_with_what_it_had_done() -> None:
    lines = Lines()
    with pytest.raises(RuntimeError), StageProgress("sandbox", "pairs", None, lines, interval_s=9):
        raise RuntimeError("engine gone")
    assert re.fullmatch(r"sandbox: failed after \d+s, 0 pairs done", lines.seen[-1])


def test_a_shard_learns_its_total_as_it_goes() -> None:
    """update(done, total): the sandbox's own counter (pairs of its cases)."""
    lines = Lines()
    with StageProgress("sandbox shard of 5 case(s)", "pairs", None, lines, interval_s=9) as shown:
        shown.update(3, 10)
        assert shown.line().startswith("sandbox shard of 5 case(s): 3/10 pairs done after ")
    assert lines.seen[0] == "sandbox shard of 5 case(s): started, pairs"


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUGHUNT_PROGRESS_S", raising=False)
    assert heartbeat_s() == 30.0
    monkeypatch.setenv("BUGHUNT_PROGRESS_S", "2.5")
    assert heartbeat_s() == 2.5
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("BUGHUNT_PROGRESS_S", bad)
        with pytest.raises(InputError, match="BUGHUNT_PROGRESS_S"):
            heartbeat_s()


def test_on_a_terminal_a_stage_and_its_shards_show_bars_together() -> None:
    """One set of bars for the process: the stage's bar and a shard's bar are live at once in
    it, each with its count, each gone when its part ends; the lines are said all the same."""
    from rich.console import Console
    from rich.progress import Progress

    screen = io.StringIO()
    bars = Progress(console=Console(file=screen, force_terminal=True, width=120), transient=True)
    lines = Lines()
    with StageProgress("sandbox", "shards", 2, lines, interval_s=9, bars=bars) as stage:
        with StageProgress("sandbox shard of 5 case(s)", "pairs", None, lines, bars=bars) as shard:
            shard.update(3, 10)
            assert [(t.description, t.completed, t.total) for t in bars.tasks] == [
                ("sandbox", 0, 2),
                ("sandbox shard of 5 case(s)", 3, 10),
            ]
            bars.refresh()
        stage.advance()
        assert [(t.description, t.completed) for t in bars.tasks] == [("sandbox", 1)]
        assert bars.live.is_started
    assert bars.tasks == [] and not bars.live.is_started
    shown = screen.getvalue()
    assert "sandbox shard of 5 case(s)" in shown and "\x1b[" in shown  # drawn, as a terminal
    assert lines.seen[0] == "sandbox: started, 2 shards"
    assert lines.seen[-1].startswith("sandbox: done in ")


def test_bars_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard error not a terminal (a CI log): no bars; a terminal: the process's one set."""
    monkeypatch.setattr(flows._progress, "_BARS", None)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert terminal() is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    first = terminal()
    assert first is not None and terminal() is first
