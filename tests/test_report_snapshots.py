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
    write_junit(seed_report, path, rerun="toolcall-conformance run --handler examples.seed000_handler:make_handler")
    text = path.read_text(encoding="utf-8")
    # The attributes CI tools read (errors, timestamp, hostname) are there; their values vary by run.
    assert re.search(r'errors="0" .*timestamp="\d{4}-\d\d-\d\dT[^"]+" hostname="[^"]+"', text)
    text = re.sub(r'(timestamp|hostname)="[^"]*"', r'\1="<masked>"', text)
    assert _mask(text) == snapshot


def test_a_hypothesis_test_run_earlier_in_the_process_changes_nothing(seed_report: Report) -> None:
    # Hypothesis caches the literals it mines from the process's modules (CONSTANTS_CACHE) at the
    # first draw that wants one; a user's (or our own) @given test that ran first left them in the
    # suite's searches, and the same seed then gave other counts under pytest than from the CLI.
    from hypothesis import HealthCheck, given, settings

    from conformance.handler.generate import wire_scenarios

    # The suite's own strategies, drawn outside its searches: the constants pools of their choice
    # types are cached with this process's mined literals in them.
    @settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck))
    @given(wire_scenarios(wire_dialects=True))
    def draws_literals(scenario: object) -> None:
        del scenario

    draws_literals()
    logging.disable(logging.CRITICAL)
    try:
        again = run_conformance(make_handler, capabilities=Capabilities(reasoning=False), profile="dev", seed=3)
    finally:
        logging.disable(logging.NOTSET)
    assert again.examples == seed_report.examples
    assert _mask(render_terminal(again)) == _mask(render_terminal(seed_report))
