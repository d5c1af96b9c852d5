"""A PR run's story in Prefect's UI, read off the rendered page by headless Chromium.

A real ``bughunt run pr`` (two touched cases of a mini corpus, sandboxed in
Docker, judged by the simulated judge) reports to the session's Prefect
server, whose UI is on (tests/flows/servers.py). Chromium (tests/chromium.py)
opens the flow run's page in a 1,400 px window; only the server's origin is
reached directly, every other request goes to a trap proxy that answers
nothing. Over DevTools the test polls the DOM until the Vue app has drawn,
reads the run's name, tags and state message, follows the Artifacts tab to
each artifact, and measures every table artifact's ``scrollWidth`` — the
run's two and the widest cases table bughunt can make (120-character case
ids), published beside them — and every table its Markdown artifacts draw. A screenshot of every page is kept under the
module's temporary folder (printed, and named in each failure).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from bughunt.models import BugCategory, ReproOutcome
from ledger import Ledger
from tasks.report import RunSummary, closing_message, load_summary
from tasks.report._artifacts import artifact_keys, case_table
from tests.chromium import DevTools, Trap, devtools, trap
from tests.flows.minicorpus import build_minicorpus
from tests.flows.servers import Server

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN_ID = "pr-prefect-ui-test"
CASES = ("cond-closed-account", "obo-top-expenses")
"""Two cases whose reasons are long (a report that is not valid JSON, a baseline that fails on
the clean tree); the widest table adds the longest statuses and category."""
WINDOW = (1400, 1000)
MAX_TABLE_PX = 1400
RUN_TIMEOUT_S = 480.0
DRAW_TIMEOUT_S = 120.0
"""How long a page may take to draw: generous, a loaded 2-core machine renders slowly."""
LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}
WIDEST_KEY = "bughunt-ui-test-widest-cases"

STATE_VALUE = """
  const text = (e) => e.textContent.trim();
  const kv = [...document.querySelectorAll('.p-key-value')]
    .find((e) => text(e.querySelector('.p-key-value__label') || e) === 'State Message');
  const value = kv && kv.querySelector('.p-key-value__value');
"""
"""JavaScript statements: ``value`` is the Details tab's State Message field (or nothing yet)."""

PAGE = (
    "(runId) => {"
    + STATE_VALUE
    + """
  const crumbs = [...document.querySelectorAll('.p-bread-crumbs__crumb')].map(text);
  const tags = [...document.querySelectorAll('.p-tag')].map(text);
  const shown = value ? text(value) : '';
  return crumbs.includes(runId) && shown ? {title: document.title, crumbs, tags, shown} : null;
}"""
)
"""The flow run's name (breadcrumbs), tags and state message as first shown (the UI cuts a
message after 70 characters, behind "See More"), once its Details tab has drawn."""

WHOLE_MESSAGE = (
    "() => {"
    + STATE_VALUE
    + """
  if (!value) return null;
  const more = [...value.querySelectorAll('*')]
    .find((e) => e.children.length === 0 && text(e) === 'See More');
  if (more) { more.click(); return null; }
  return text(value).replace(/\\s*See Less$/, '');
}"""
)
"""The whole state message, after clicking "See More" when the UI cut it."""

CLICK_TAB = """(name) => {
  const tab = [...document.querySelectorAll('li.p-tab')].find((e) => e.textContent.trim() === name);
  if (!tab) return false;
  tab.click();
  return true;
}"""

LINKS = """(count) => {
  const ids = [...document.querySelectorAll('a[href*="/artifacts/artifact/"]')]
    .map((a) => a.getAttribute('href').split('/').pop());
  return ids.length >= count ? [...new Set(ids)] : null;
}"""
"""The artifacts the Artifacts tab links to, once it lists at least as many as the run has."""

TABLE = """async (id, rows) => {
  if (!document.body || !document.body.innerText.includes(id)) return null;
  const table = document.querySelector('.artifact-data-table table');
  if (!table || table.tBodies[0].rows.length !== rows) return null;
  await document.fonts.ready;
  return {width: table.scrollWidth, window: window.innerWidth};
}"""
"""A table artifact's page once all its rows (and the fonts) are in: the table's width."""


MARKDOWN = """async (needle) => {
  if (!document.body || !document.body.innerText.includes(needle)) return null;
  await document.fonts.ready;
  const widths = [...document.querySelectorAll('table')].map((t) => t.scrollWidth);
  return {widths, window: window.innerWidth};
}"""
"""A Markdown artifact's page once its text is in: the width of every table it drew."""

NEEDLES = {"report": "bughunt PR gate", "case-details": "Why each case of run"}
"""Text each Markdown artifact of a PR run starts with, by the end of its key."""


def js(function: str, *args: object) -> str:
    """An expression calling the JavaScript ``function`` with ``args`` (as JSON literals)."""
    return f"({function})({', '.join(json.dumps(a) for a in args)})"


@dataclass(frozen=True, slots=True)
class Table:
    """A table artifact as its page drew it."""

    key: str
    width: int
    """The table's ``scrollWidth``, px."""
    window: int
    """``window.innerWidth`` while it was measured, px."""


@dataclass(frozen=True, slots=True)
class Seen:
    """What the UI showed of the run, and what Chromium asked for on the way."""

    summary: RunSummary
    page: dict[str, Any]
    """The flow run page: title, breadcrumbs, tags, the state message as first shown."""
    message: str
    """The whole state message, "See More" clicked."""
    artifacts: dict[str, str]
    """The run's artifacts, id → key, as the API lists them."""
    linked: set[str]
    """Artifact ids the Artifacts tab links to."""
    tables: list[Table]
    hosts: list[str]
    """Hosts the trap saw, Chromium's own services aside."""
    shots: Path = field(repr=False)


def run_pr(server: Server, tmp: Path) -> RunSummary:
    """`bughunt run pr` on two touched cases against ``server``; the summary it stored."""
    mini = build_minicorpus(tmp / "repo", CASES)
    diff = tmp / "pr.diff"
    diff.write_text("".join(mini.touch_case(c) for c in mini.cases))
    ledger = tmp / "ledger.duckdb"
    argv = [sys.executable, "-m", "cli", "run", "pr", "--diff", str(diff)]
    argv += ["--corpus", str(mini.corpus), "--ledger", str(ledger), "--out", str(tmp / "out")]
    argv += ["--run-id", RUN_ID, "--repeats", "1", "--probe-pairs", "2"]
    log = tmp / "run.log"
    with log.open("w") as out:
        proc = subprocess.run(
            argv,
            env=server.env,
            cwd=tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    summary = load_summary(Ledger(ledger), RUN_ID)
    assert summary.gate is not None, log.read_text()[-4000:]
    # the gate decides the exit code: two cases are too little evidence for a verdict
    assert proc.returncode == summary.gate.exit_code, log.read_text()[-4000:]
    return summary


def flow_run_id(server: Server) -> str:
    """The id of the flow run named after the bughunt run."""
    runs = httpx.post(
        f"{server.api_url}/flow_runs/filter",
        json={"flow_runs": {"name": {"any_": [RUN_ID]}}},
        timeout=30,
    ).json()
    assert len(runs) == 1, runs
    found: str = runs[0]["id"]
    return found


def widest(summary: RunSummary) -> list[dict[str, Any]]:
    """The widest cases table bughunt can make: the longest case id of the widest letter, a
    two-digit sample, and the longest category, statuses and verdict."""
    row = summary.cases[0].model_copy(
        update={
            "case_id": "m" * 120,
            "sample": 49,
            "category": max(BugCategory, key=len),
            "baseline_status": max(ReproOutcome, key=len),
            "candidate_status": max(ReproOutcome, key=len),
            "verdict": max(("candidate", "baseline", "tie", "unscored"), key=len),
        }
    )
    return case_table(summary.model_copy(update={"cases": [row]}))


def publish_widest(server: Server, summary: RunSummary) -> tuple[str, int]:
    """Publish :func:`widest` as an unlinked table artifact; its id and row count."""
    rows = widest(summary)
    created = httpx.post(
        f"{server.api_url}/artifacts/",
        json={"key": WIDEST_KEY, "type": "table", "data": rows, "description": "widest cases"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    return created.json()["id"], len(rows)


def run_artifacts(server: Server, flow_run: str) -> list[dict[str, Any]]:
    """The run's artifacts as the API lists them."""
    found: list[dict[str, Any]] = httpx.post(
        f"{server.api_url}/artifacts/filter",
        json={"artifacts": {"flow_run_id": {"any_": [flow_run]}}},
        timeout=30,
    ).json()
    return found


def open_page(page: DevTools, url: str, ready: str, what: str, shot: Path) -> Any:
    """Load ``url``, wait until ``ready`` holds, screenshot it to ``shot``; ``ready``'s value."""
    page.navigate(url)
    try:
        value = page.wait_for(ready, DRAW_TIMEOUT_S, what)
    except AssertionError as exc:
        page.screenshot(shot)
        raise AssertionError(f"{exc}\nscreenshot: {shot}") from exc
    page.screenshot(shot)
    return value


def rows_of(art: dict[str, Any]) -> int:
    """How many rows a table artifact holds (the API gives its data as JSON text or a list)."""
    data = json.loads(art["data"]) if isinstance(art["data"], str) else art["data"]
    assert isinstance(data, list), art
    return len(data)


def measure(page: DevTools, base: str, art: dict[str, Any], rows: int, shots: Path) -> Table:
    """A table artifact's page, drawn: the table's width."""
    url = f"{base}/artifacts/artifact/{art['id']}"
    got = open_page(page, url, js(TABLE, art["id"], rows), art["key"], shots / f"{art['key']}.png")
    return Table(key=art["key"], width=got["width"], window=got["window"])


def measure_markdown(page: DevTools, base: str, art: dict[str, Any], shots: Path) -> list[Table]:
    """A Markdown artifact's page, drawn: each of its tables' width (none: an empty list)."""
    needle = next(v for k, v in NEEDLES.items() if art["key"].endswith(f"-{k}"))
    url = f"{base}/artifacts/artifact/{art['id']}"
    got = open_page(page, url, js(MARKDOWN, needle), art["key"], shots / f"{art['key']}.png")
    return [Table(key=art["key"], width=w, window=got["window"]) for w in got["widths"]]


def browse(server: Server, summary: RunSummary, home: Path, shots: Path) -> Seen:
    """Everything the test reads off the UI, in one browser session (its profile under
    ``home``) behind one trap; a screenshot of each page in ``shots``."""
    base = server.ui_url
    flow_run = flow_run_id(server)
    listed = run_artifacts(server, flow_run)
    widest_id, widest_rows = publish_widest(server, summary)
    direct = [base.removeprefix("http://")]
    with trap() as proxy, devtools(home, proxy, WINDOW, direct) as page:
        shown = open_page(
            page,
            f"{base}/runs/flow-run/{flow_run}?tab=Details",
            js(PAGE, RUN_ID),
            "the flow run's name and state message",
            shots / "flow-run.png",
        )
        message = page.wait_for(js(WHOLE_MESSAGE), DRAW_TIMEOUT_S, "the whole state message")
        page.wait_for(js(CLICK_TAB, "Artifacts"), DRAW_TIMEOUT_S, "the Artifacts tab")
        linked = page.wait_for(js(LINKS, len(listed)), DRAW_TIMEOUT_S, "the run's artifact links")
        page.screenshot(shots / "flow-run-artifacts.png")
        tables = [measure(page, base, a, rows_of(a), shots) for a in listed if a["type"] == "table"]
        widest_art = {"id": widest_id, "key": WIDEST_KEY}
        tables.append(measure(page, base, widest_art, widest_rows, shots))
        for art in listed:
            if art["type"] == "markdown":
                tables += measure_markdown(page, base, art, shots)
        hosts = proxy.page_hosts()
    return Seen(
        summary=summary,
        page=shown,
        message=message,
        artifacts={a["id"]: a["key"] for a in listed},
        linked=set(linked),
        tables=tables,
        hosts=hosts,
        shots=shots,
    )


@pytest.fixture(scope="module")
def seen(prefect_server: Server, tmp_path_factory: pytest.TempPathFactory) -> Seen:
    """A PR run on the session's server, and what its flow run's pages showed in Chromium."""
    tmp = tmp_path_factory.mktemp("prefect-ui")
    summary = run_pr(prefect_server, tmp)
    shots = tmp / "screenshots"
    shots.mkdir()
    print(f"\nPrefect UI screenshots: {shots}")
    return browse(prefect_server, summary, tmp / "chromium", shots)


def test_the_run_is_named_after_its_bughunt_run_id(seen: Seen) -> None:
    """The flow run page's breadcrumb and title carry the bughunt run id."""
    assert seen.page["crumbs"][-1] == RUN_ID, (seen.page, seen.shots)
    assert RUN_ID in seen.page["title"], (seen.page, seen.shots)


def test_the_run_shows_its_kind_corpus_and_gate_tags(seen: Seen) -> None:
    """The page shows the kind:, corpus: and gate: tags the flow added."""
    gate = seen.summary.gate
    assert gate is not None
    wanted = {"kind:pr", f"corpus:{seen.summary.corpus}", f"gate:{gate.outcome.value}"}
    assert wanted <= set(seen.page["tags"]), (seen.page, seen.shots)


def test_the_state_message_is_the_headline_and_the_gate(seen: Seen) -> None:
    """The Details tab's state message is the run's closing line, and what it shows before
    "See More" already says how the gate came out and which version is better."""
    gate, answer = seen.summary.gate, seen.summary.answer
    assert gate is not None and answer is not None
    assert seen.message == closing_message(seen.summary), (seen.message, seen.shots)
    shown = seen.page["shown"]
    assert shown.startswith(f"gate {gate.outcome.value} (exit {gate.exit_code}); "), seen.page
    verdict = answer.short.split(" (", 1)[0]
    assert verdict in shown, (seen.page, seen.shots)


def test_the_artifacts_tab_links_every_artifact_of_the_run(seen: Seen) -> None:
    """The Artifacts tab links to the report, both tables and the case details, and no other."""
    keys = artifact_keys(seen.summary.kind)
    assert set(seen.artifacts.values()) == {
        keys.report,
        keys.categories,
        keys.cases,
        keys.details,
    }
    assert seen.linked == set(seen.artifacts), seen.shots


def test_every_table_artifact_fits_a_1400_px_window(seen: Seen) -> None:
    """In a 1,400 px window each table artifact, the run's and the widest bughunt can make,
    and every table a Markdown artifact draws, renders no wider than 1,400 px."""
    keys = artifact_keys(seen.summary.kind)
    tabled = {keys.categories, keys.cases, WIDEST_KEY}
    assert sorted(t.key for t in seen.tables if t.key in tabled) == sorted(tabled)
    assert all(t.window == WINDOW[0] for t in seen.tables), seen.tables
    too_wide = [t for t in seen.tables if t.width > MAX_TABLE_PX]
    assert too_wide == [], (too_wide, seen.shots)


def test_chromium_asks_no_host_but_loopback(seen: Seen) -> None:
    """Drawing every page asked the trap for no host other than loopback (the server's own
    origin goes direct; Chromium's own service pings aside)."""
    assert [h for h in seen.hosts if h not in LOOPBACK] == [], seen.hosts


def test_the_trap_catches_a_request_of_the_ui_page(prefect_server: Server, tmp_path: Path) -> None:
    """Control: a request the UI page makes to another host reaches the trap, so the trap sees
    what the page asks for under this very setup."""
    base = prefect_server.ui_url
    direct = [base.removeprefix("http://")]
    with trap() as proxy, devtools(tmp_path / "chromium", proxy, WINDOW, direct) as page:
        ready = "!!document.querySelector('.p-bread-crumbs__crumb')"
        open_page(page, f"{base}/runs", ready, "the runs page", tmp_path / "runs.png")
        page.evaluate(
            "fetch('http://control.example.invalid/x.png', {mode: 'no-cors'})"
            ".then(() => true, () => true)"
        )
        seen_control = wait_for_host(proxy, "control.example.invalid")
    assert seen_control, proxy.hosts


def wait_for_host(proxy: Trap, host: str, timeout: float = 30.0) -> bool:
    """Whether ``host`` reaches the trap within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if host in proxy.hosts:
            return True
        time.sleep(0.1)
    return False
