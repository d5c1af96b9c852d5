"""The HTML report in a real browser: Debian's headless Chromium, file:// only, behind a trap proxy.

Every request Chromium makes goes to a local socket that answers nothing, so
no byte leaves the machine, and the test sees which hosts were asked for
(the browser and the trap are in tests/chromium.py, shared with the Prefect
UI test). Chromium's own service pings (update, accounts) are told apart by
host; a control page with an external image proves the trap catches a
page's requests. CI installs the browser with ``apt-get install -y chromium``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from tasks.report import RunSummary, write_report
from tasks.report._render import render_html
from tasks.report.runs import History
from tests.chromium import run_chromium, trap

WINDOW = (1280, 2400)
CHART_BLUE = (0x25, 0x63, 0xEB)


@dataclass(frozen=True)
class Shot:
    """One report opened in Chromium: the screenshot, the DOM, the hosts asked for."""

    png: Path
    dom: str
    hosts: list[str]


def open_report(html: str, where: Path) -> Shot:
    """Screenshot and DOM dump of ``html`` written to ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    page = where / "report.html"
    page.write_text(html, encoding="utf-8")
    png = where / "out.png"
    with trap() as proxy:
        run_chromium(
            page, where, proxy, f"--screenshot={png}", f"--window-size={WINDOW[0]},{WINDOW[1]}"
        )
        dom = run_chromium(page, where, proxy, "--dump-dom").stdout
    return Shot(png, dom, proxy.page_hosts())


@pytest.fixture(scope="module")
def shot(tmp_path_factory: pytest.TempPathFactory, summary: RunSummary, history: History) -> Shot:
    """The fixture night's report, written by write_report and opened in Chromium."""
    where = tmp_path_factory.mktemp("chromium")
    paths = write_report(summary, history, where / "written")
    return open_report(paths.html.read_text(encoding="utf-8"), where)


def blue_pixels(png: Path) -> int:
    """Pixels within a small distance of the charts' first line colour."""
    rgb = (mpimg.imread(png)[:, :, :3] * 255).round().astype(int)
    return int((np.abs(rgb - np.array(CHART_BLUE)).sum(axis=2) <= 30).sum())


def test_screenshot_is_taken(shot: Shot) -> None:
    """Chromium writes a full-size PNG that is far from blank."""
    assert shot.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(shot.png)
    assert image.shape[:2] == (WINDOW[1], WINDOW[0])
    assert shot.png.stat().st_size > 50_000
    assert float(image[:, :, :3].std()) > 0.05


def test_charts_are_in_the_rendered_dom(shot: Shot) -> None:
    """After Chromium parsed the page, the four chart figures each hold an <svg> with drawn paths."""
    for key in ("chart-win-rate", "chart-repro", "chart-flakes", "chart-consistency"):
        m = re.search(rf'<figure id="{key}">(.*?)</figure>', shot.dom, flags=re.DOTALL)
        assert m, key
        assert "<svg" in m.group(1) and m.group(1).count("<path") > 5, key


def test_hostile_text_is_text_in_the_rendered_dom(shot: Shot) -> None:
    """The browser's DOM has no script, and the hostile title is a text node."""
    assert "<script" not in shot.dom.lower()
    assert "<img" not in shot.dom.lower()
    assert "Zero-amount posting accepted &lt;script&gt;alert(1)&lt;/script&gt;" in shot.dom


def test_report_makes_no_network_request(shot: Shot) -> None:
    """Opening the report asks for no host at all (Chromium's own service pings aside)."""
    assert shot.hosts == [], shot.hosts


def test_trap_sees_a_page_that_does_fetch(tmp_path: Path) -> None:
    """Control: a page with an external image and stylesheet is caught asking for their hosts."""
    page = tmp_path / "control.html"
    page.write_text(
        '<!doctype html><img src="http://img.example.invalid/x.png">'
        '<link rel="stylesheet" href="https://css.example.invalid/a.css">'
    )
    with trap() as proxy:
        run_chromium(page, tmp_path, proxy, "--dump-dom")
    assert {"img.example.invalid", "css.example.invalid"} <= set(proxy.page_hosts())


def test_charts_are_drawn_in_the_screenshot(
    shot: Shot, tmp_path: Path, summary: RunSummary
) -> None:
    """The charts' line colour covers far more of the screenshot than without history."""
    empty = open_report(render_html(summary, History()), tmp_path)
    assert blue_pixels(shot.png) > 2 * blue_pixels(empty.png) + 500
