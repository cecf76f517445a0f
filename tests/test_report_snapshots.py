"""What a user reads when their handler fails is part of the product, so its exact text is pinned.

syrupy keeps the rendered terminal report and JUnit XML of a failing run in
``tests/__snapshots__/``; any change to wording, grouping, counterexample layout or which checks
fail shows up as a reviewable diff (``pytest --snapshot-update`` after reviewing it). The handler
is the faithful seed-000 transcription, whose bugs are documented in the README. Only what is
random by design is masked: the seed handler's uuid4 segment and call ids, and elapsed time. The
run is the same in every process (``verdict.the_same_search_in_every_process``), so counts and
shrunk counterexamples are pinned exactly, serially and under pytest-xdist alike.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance import Capabilities, Report, run_conformance
from conformance.report import render_terminal, write_junit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from examples.seed000_handler import make_handler

# uuid4 hex (call ids the seed handler invents) and the tails of such ids in counterexamples.
_UUID_HEX = re.compile(r"\b[0-9a-f]{32}\b")
# A uuid cut short where a JUnit failure message is truncated to its attribute's length.
_CUT_UUID = re.compile(r"'[0-9a-f]{1,31}(?=\">)")
_ID_TAIL = re.compile(r"#\u2026[0-9a-f]{8}\b")
_SECONDS = re.compile(r"(runs in |time=\")[0-9.]+s?")


def _mask(text: str) -> str:
    text = _UUID_HEX.sub("<uuid>", text)
    text = _ID_TAIL.sub("#<id>", text)
    text = _CUT_UUID.sub("'<uuid", text)
    return _SECONDS.sub(lambda match: f"{match.group(1)}<t>", text)


@pytest.fixture(scope="module")
def seed_report() -> Iterator[Report]:
    logging.disable(logging.CRITICAL)  # the seed handler logs every swallowed callback error
    try:
        yield run_conformance(make_handler, capabilities=Capabilities(reasoning=False), profile="dev", seed=3)
    finally:
        logging.disable(logging.NOTSET)


def test_terminal_report_of_a_failing_handler(seed_report: Report, snapshot: SnapshotAssertion) -> None:
    rendered = _mask(render_terminal(seed_report))
    assert "NOT CONFORMANT" in rendered  # the seed handler is broken; the snapshot must show it
    assert rendered == snapshot


def test_junit_report_of_a_failing_handler(seed_report: Report, snapshot: SnapshotAssertion, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(seed_report, path)
    assert _mask(path.read_text(encoding="utf-8")) == snapshot
