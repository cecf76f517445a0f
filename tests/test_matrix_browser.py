"""The published matrix page in a real headless browser (Debian's ``chromium``).

It renders (the DOM chromium builds has the table, every row and column), every link of every cell
resolves to a file that exists, and it stays readable at 1,280 px wide: nothing overflows the
window horizontally and the screenshot is the full width. The page itself has no script; a copy
with one measuring line appended is what chromium loads.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "matrix" / "index.html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
WIDTH = 1280

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.rows = 0
        self.headers = 0
        self.in_thead = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))
        elif tag == "thead":
            self.in_thead = True
        elif tag == "tr" and not self.in_thead:
            self.rows += 1
        elif tag == "th" and self.in_thead:
            self.headers += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.in_thead = False


def _chromium(*args: str, cwd: Path) -> str:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *FLAGS, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def measured_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the page with one line that records the layout's width in the DOM."""
    probe = tmp_path_factory.mktemp("page") / "index.html"
    text = PAGE.read_text(encoding="utf-8").replace(
        "</body>",
        "<script>document.body.setAttribute('data-scroll-width', document.documentElement.scrollWidth);"
        "document.body.setAttribute('data-client-width', document.documentElement.clientWidth);</script></body>",
    )
    probe.write_text(text, encoding="utf-8")
    return probe


def test_the_page_renders_with_every_row_and_column(measured_copy: Path, tmp_path: Path) -> None:
    dom = _chromium(f"--window-size={WIDTH},900", "--dump-dom", measured_copy.as_uri(), cwd=tmp_path)
    parser = _Links()
    parser.feed(dom)
    matrix = json.loads((PAGE.parent / "matrix.json").read_text(encoding="utf-8"))
    assert parser.rows == len(matrix["rows"])
    assert parser.headers == len(matrix["columns"]) + 1
    scroll = int(re.search(r'data-scroll-width="(\d+)"', dom).group(1))  # type: ignore[union-attr]
    client = int(re.search(r'data-client-width="(\d+)"', dom).group(1))  # type: ignore[union-attr]
    assert scroll <= client <= WIDTH, f"the page is {scroll} px wide in a {client} px window"


def test_every_link_of_the_page_resolves_to_a_file_that_exists() -> None:
    parser = _Links()
    parser.feed(PAGE.read_text(encoding="utf-8"))
    assert parser.hrefs
    for href in parser.hrefs:
        target = (PAGE.parent / href.split("#", 1)[0]).resolve()
        assert target.is_file(), f"{href} -> {target}"
    failing = [href for href in parser.hrefs if "counterexamples/" in href]
    reproductions = [href for href in parser.hrefs if "test_repro_" in href]
    assert failing and reproductions


def test_a_screenshot_at_1280_px_is_full_width(tmp_path: Path) -> None:
    shot = tmp_path / "matrix.png"
    _chromium(f"--window-size={WIDTH},900", f"--screenshot={shot}", PAGE.as_uri(), cwd=tmp_path)
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert (width, height) == (WIDTH, 900)
    assert shot.stat().st_size > 20_000  # a rendered table, not a blank page
