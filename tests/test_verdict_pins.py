"""Pins for verdicts that were correct but tested by nothing (issue 15 audit, note sections 5 and 6).

Each test says in a comment which regression makes it fail. The handler targets are in
``tests/verdict_targets.py``: wrappers around the from-scratch ``AltApiHandler`` of
``tests/alternatives`` (nothing from ``reference_impl``), each breaking exactly one thing.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from conformance import Capabilities, run_conformance
from conformance.handler.checks import CHECKS
from conformance.roundtrip import ROUNDTRIP_CHECKS, run_roundtrip_conformance
from reference_impl.followup import ReferenceFormatter
from reference_impl.types import ChunkResponse, ToolCallDelta
from tests import verdict_targets as targets

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")

ROOT = Path(__file__).resolve().parents[1]

# Checks that read segment events: an accumulator has none, so every entry point must skip them by name.
EVENT_CHECKS = frozenset(
    {
        "segment_lifecycle",
        "returned_events_are_all_events",
        "callbacks_see_returned_events",
        "finalize_idempotent",
        "feed_after_finalize_raises",
        "get_all_returns_copies",
        "reset_behaves_like_new",
        "callbacks_isolated",
        "text_segments_follow_wire",
        "text_and_reasoning_in_wire_order",
        "text_streams_within_lag",
        "argument_integrity",
        "arguments_stream_incrementally",
    }
)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _statuses(report: Any) -> dict[str, str]:
    return {result.check.id: result.status for result in report.results}


def _failed(report: Any) -> set[str]:
    return {result.check.id for result in report.by_status("failed")}


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m conformance.cli ...`` in a fresh process, importing this checkout's code."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- B1: the literal example, dropping the third of three parallel calls ---------------------------


def _three_calls_two_out(report: Any) -> None:
    result = next(r for r in report.results if r.check.id == "segment_per_call")
    assert result.status == "failed"
    first = result.counterexamples[0].input
    assert first is not None
    wire_calls = {delta.index for chunk in first.chunks for delta in chunk.tool_calls or ()}
    assert len(wire_calls) >= 3, result.counterexamples[0].text  # the failure is about a third call


def test_dropping_the_third_parallel_call_fails_from_python() -> None:
    # Catches: the Python entry point calling a handler that silently loses a call CONFORMANT (the
    # issue's own example), or the loss being reported under a check other than segment_per_call.
    report = run_conformance(targets.make_drop_third_call, profile="dev")
    assert not report.conformant
    assert "segment_per_call" in _failed(report)
    _three_calls_two_out(report)


def test_dropping_the_third_parallel_call_fails_from_the_cli() -> None:
    # Catches: the CLI exiting 0 / printing CONFORMANT for it, or not naming the check. (Today both the
    # built-in no_argument_call_then_streamed_calls and generated streams with three calls catch it.)
    done = _cli("run", "--handler", "tests.verdict_targets:make_drop_third_call", "--profile", "dev")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^\s*FAIL\s+segment_per_call\b", done.stdout, re.MULTILINE), done.stdout
    assert "NOT CONFORMANT" in done.stdout


def test_dropping_the_third_parallel_call_fails_from_the_pytest_plugin(pytester: pytest.Pytester) -> None:
    # Catches: --toolcall-handler passing every generated test for it, or failing a different test
    # than test_segment_per_call (the other 23 checks must still pass: the handler is otherwise right).
    pytester.syspathinsert(str(ROOT))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-v",
        "--toolcall-handler",
        "tests.verdict_targets:make_drop_third_call",
        "--toolcall-profile",
        "dev",
        "-m",
        "toolcall_conformance",
    )
    result.assert_outcomes(passed=len(CHECKS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*::test_segment_per_call FAILED*"])
    assert result.ret == 1


# -- B3b / B3c: round-trip checks that cannot apply are SKIPPED, never PASS -----------------------------------


def test_target_specific_roundtrip_checks_skip_on_a_target_they_cannot_apply_to() -> None:
    # Catches: signatures_preserved (Anthropic/Bedrock thinking signatures, Gemini thought signatures) or
    # responses_item_ids_valid (Responses only) reported PASS after judging nothing on openai-chat.
    # The second run keeps the test honest: on targets they apply to, both really run and pass.
    only_chat = run_roundtrip_conformance(ReferenceFormatter(), targets=["openai-chat"], profile="dev")
    results = {r.check.id: r for r in only_chat.results}
    for check_id in ("signatures_preserved", "responses_item_ids_valid"):
        assert results[check_id].status == "skipped", (check_id, results[check_id].status)
        assert results[check_id].examples_run == 0 and results[check_id].skipped_reason
    assert only_chat.conformant

    both = ["openai-responses", "anthropic"]
    applicable = run_roundtrip_conformance(ReferenceFormatter(), targets=both, profile="dev")
    results = {r.check.id: r for r in applicable.results}
    for check_id in ("signatures_preserved", "responses_item_ids_valid"):
        assert results[check_id].status == "passed" and results[check_id].examples_run > 0, check_id


def test_a_formatter_that_always_raises_passes_no_check() -> None:
    # Catches the "13 PASS lines" defect: checks that could not read the (absent) follow-up reported
    # PASS next to the one failure. Only sdk_accepts_followup may judge; the rest must be skipped.
    def broken(target: str, turn: Any, results: Sequence[Any]) -> list[dict[str, Any]]:
        raise KeyError("call_id")

    report = run_roundtrip_conformance(broken, targets=["openai-chat"], profile="dev")
    statuses = _statuses(report)
    assert not report.conformant
    assert report.by_status("passed") == [], sorted(c for c, s in statuses.items() if s == "passed")
    assert _failed(report) == {"sdk_accepts_followup"}
    assert sum(s == "skipped" for s in statuses.values()) == len(ROUNDTRIP_CHECKS) - 1


# -- B4c: text or reasoning between two deltas of an open call -------------------------------------------


def _text_inside_an_open_call(chunks: Sequence[Any]) -> bool:
    """Some call has deltas in chunks a < c and text or reasoning in a chunk b with a < b <= c
    (within a chunk, text comes before that chunk's tool deltas)."""
    for index in {delta.index for chunk in chunks for delta in chunk.tool_calls or ()}:
        where = [n for n, chunk in enumerate(chunks) if any(d.index == index for d in chunk.tool_calls or ())]
        for a, c in itertools.pairwise(where):
            if any(chunks[b].content or chunks[b].reasoning for b in range(a + 1, c + 1)):
                return True
    return False


def test_a_handler_broken_by_text_inside_an_open_call_is_caught() -> None:
    # Catches: the suite no longer producing text/reasoning between two deltas of one call (the
    # built-in scenario removed and the generator not interleaving), which would make this handler
    # CONFORMANT. The last assertion checks the target: it breaks on nothing but that shape.
    # Not shrunk: every input this target fails on has the shape, the first found ones too.
    report = run_conformance(targets.LosesCallAfterInterruption, profile="dev", shrink=False)
    assert not report.conformant
    assert "argument_integrity" in _failed(report)
    integrity = next(r for r in report.results if r.check.id == "argument_integrity")
    shown = [c.input for c in integrity.counterexamples if c.input is not None]
    assert any(
        c.scenario.name == "text_and_reasoning_inside_an_open_call" or _text_inside_an_open_call(c.chunks)
        for c in shown
    ), [c.text for c in integrity.counterexamples]
    for result in report.by_status("failed"):
        for counterexample in result.counterexamples:
            assert counterexample.input is not None
            assert _text_inside_an_open_call(counterexample.input.chunks), (result.check.id, counterexample.text)


# -- S2: the provider id kept as segment id (and invocation id) -----------------------------------------------


def test_provider_id_as_segment_and_invocation_id_passes_and_segment_id_alone_fails_only_on_a_late_id() -> None:
    # (a) Catches a false alarm: R9 accepts the id on the END, the segment or the invocation; a handler
    # whose valid END carries no call_id (the id is its segment id when known at START and always its
    # invocation id) must pass provider_ids_kept.
    chunks = [
        ChunkResponse(tool_calls=[ToolCallDelta(index=0, name="search", arguments_delta='{"q": ')]),
        ChunkResponse(tool_calls=[ToolCallDelta(index=0, call_id="call_late", arguments_delta='"x"}')]),
    ]
    handler = targets.ProviderIdKept()
    for chunk in chunks:
        handler.feed(chunk)
    handler.finalize()
    end = handler.get_all_events()[-1].to_dict()
    assert end["kind"] == "END" and "call_id" not in end["payload"]["metadata"]  # the shape under test
    assert [invocation.id for invocation in handler.get_all_invocations()] == ["call_late"]

    report = run_conformance(targets.ProviderIdKept, profile="dev")
    kept = next(r for r in report.results if r.check.id == "provider_ids_kept")
    assert kept.status == "passed" and kept.examples_run > 0
    assert report.conformant, {r.check.id: r.message for r in report.by_status("failed")}

    # (b) Catches a false pass (R9 "however late it arrived"): the same handler with random invocation
    # ids keeps the provider id only as the segment id, which it cannot have when START came before
    # the id. It must fail provider_ids_kept, and only on streams where the id came after the name.
    report = run_conformance(targets.SegmentIdOnly, profile="dev")
    assert _failed(report) == {"provider_ids_kept"}
    kept = next(r for r in report.results if r.check.id == "provider_ids_kept")
    assert 0 < kept.failing_examples < kept.examples_run  # early ids still pass
    for counterexample in kept.counterexamples:
        assert counterexample.input is not None
        lost = re.search(r"the provider's id '([^']+)' is on no END", counterexample.message)
        assert lost, counterexample.message
        provider_id = lost.group(1)
        deltas = [(n, d) for n, chunk in enumerate(counterexample.input.chunks) for d in chunk.tool_calls or ()]
        index, id_chunk = next((d.index, n) for n, d in deltas if d.call_id == provider_id)
        name_chunk = min(n for n, d in deltas if d.index == index and d.name)
        assert name_chunk < id_chunk, counterexample.text


# -- S5: the final-result accumulator from the CLI and from pytest ---------------------------------------------


def test_an_accumulator_from_the_cli_is_judged_on_results_with_event_checks_skipped_by_name() -> None:
    # Catches: --accumulator running event checks on a target without events (false alarms, exit 1),
    # reporting them PASS instead of SKIP, or judging nothing (the broken accumulator must exit 1).
    done = _cli("run", "--accumulator", "tests.verdict_targets:FinalResultAccumulator", "--profile", "dev")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {m.group(2): m.group(1) for m in re.finditer(r"^\s*(PASS|FAIL|SKIP)\s+(\w+)", done.stdout, re.MULTILINE)}
    assert {check_id for check_id, status in lines.items() if status == "SKIP"} == EVENT_CHECKS
    assert {"invocations_match_stream", "segment_per_call", "provider_ids_kept", "text_conserved"} <= {
        check_id for check_id, status in lines.items() if status == "PASS"
    }
    assert re.search(r"^CONFORMANT$", done.stdout, re.MULTILINE)

    broken = _cli("run", "--accumulator", "tests.verdict_targets:DropsTheThirdCallAccumulator", "--profile", "dev")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert re.search(r"^\s*FAIL\s+segment_per_call\b", broken.stdout, re.MULTILINE), broken.stdout


ACCUMULATOR_SUBCLASS = """
from conformance.pytest_plugin import AccumulatorConformanceTests
from tests.verdict_targets import FinalResultAccumulator


class TestAccumulator(AccumulatorConformanceTests):
    profile = "dev"

    def accumulator_factory(self):
        return FinalResultAccumulator()
"""


@pytest.mark.parametrize("how", ["option", "base_class"])
def test_an_accumulator_from_pytest_passes_with_event_checks_skipped_by_name(
    pytester: pytest.Pytester, how: str
) -> None:
    # Catches: --toolcall-accumulator or AccumulatorConformanceTests failing, or passing, an event
    # check it cannot apply (each of the 13 must be SKIPPED by its own test name).
    pytester.syspathinsert(str(ROOT))
    if how == "option":
        argv = ["--toolcall-accumulator", "tests.verdict_targets:FinalResultAccumulator", "--toolcall-profile", "dev"]
        argv += ["-m", "toolcall_conformance"]
    else:
        pytester.makepyfile(test_accumulator=ACCUMULATOR_SUBCLASS)
        argv = []
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", *argv)
    result.assert_outcomes(passed=len(CHECKS) - len(EVENT_CHECKS), skipped=len(EVENT_CHECKS))
    result.stdout.fnmatch_lines_random([f"*::test_{check_id} SKIPPED*" for check_id in sorted(EVENT_CHECKS)])
    result.stdout.fnmatch_lines_random(["*::test_invocations_match_stream PASSED*", "*::test_segment_per_call PASSED*"])
    assert result.ret == 0


def test_the_capabilities_of_an_accumulator_are_the_ones_the_entry_points_use() -> None:
    # Catches drift between this file's EVENT_CHECKS and the Python entry point's skips for an accumulator.
    capabilities = Capabilities(events=False, callbacks=False, lifecycle=False)
    report = run_conformance(targets.FinalResultAccumulator, capabilities=capabilities, profile="dev")
    assert {r.check.id for r in report.by_status("skipped")} == EVENT_CHECKS
    assert report.conformant
