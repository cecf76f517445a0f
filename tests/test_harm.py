"""Every finding says what it does to the user: its harm, read from what ran, never from which check fired.

The expected harms below are reasoned by hand from each target's planted bug (what a person running
the agent would see), not read back from the classifier.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import run_conformance
from conformance.cli import main
from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.verdict import Harm, HarmVerdict
from conformance.verdict.harm import TRUNCATION_SENTENCE, CameOut, WantedCall, classify_calls
from conformance.wire.harm import outcome_harm
from conformance.wire.outcome import ExpectedToolCall, Outcome
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta
from tests.mutants import api_handler_mutants as mutants

ROOT = Path(__file__).resolve().parents[1]

# -- the rules, on hand-made pairs -------------------------------------------------------------------


def _want(arguments: object, **extra: object) -> WantedCall:
    return WantedCall("call 0 (write_file)", "write_file", "call_1", arguments, **extra)  # type: ignore[arg-type]


def _ran(arguments: object, name: str = "write_file", ids: frozenset[str] = frozenset({"call_1"})) -> CameOut:
    return CameOut("out", name, ids, arguments, ran=True)


def test_a_call_from_a_truncated_turn_that_ran_is_ran_wrong_even_when_it_parses() -> None:
    verdict = classify_calls([(_want(None, why_not="cut", truncated=True), _ran({"path": "a", "content": "x"}))])
    assert verdict.harm is Harm.RAN_WRONG
    assert TRUNCATION_SENTENCE in verdict.why  # the one sentence a maintainer can weigh


@pytest.mark.parametrize(
    ("pair", "harm"),
    [
        ((_want({"a": 1}), _ran({"a": 2})), Harm.RAN_WRONG),
        ((_want({"a": 1}), _ran({"a": 1}, name="write_filewrite_file")), Harm.RAN_WRONG),
        ((_want({"a": 1}), None), Harm.LOST),
        ((_want({"a": 1}), CameOut("out", "write_file", frozenset({"call_1"}), None, error=True)), Harm.LOST),
        ((_want({"a": 1}), _ran({"a": 1}, ids=frozenset({"seg-1"}))), Harm.MISIDENTIFIED),
        ((_want({"a": 1}), _ran({"a": 1})), Harm.STREAM_SHAPE),
    ],
)
def test_each_class_from_what_ran(pair: tuple[WantedCall, CameOut | None], harm: Harm) -> None:
    assert classify_calls([pair]).harm is harm


def test_a_crash_is_crashed_unless_something_ran_wrong_first() -> None:
    assert classify_calls([(_want({"a": 1}), None)], crashed="raised KeyError").harm is Harm.CRASHED
    assert classify_calls([(_want({"a": 1}), _ran({}))], crashed="raised KeyError").harm is Harm.RAN_WRONG


def test_an_error_for_a_shared_index_is_an_answer_not_a_loss() -> None:
    error = CameOut("out", "f", frozenset({"call_0"}), None, error=True)
    first = WantedCall("call 0", "f", "call_0", {}, error_answers=True)
    second = WantedCall("call 1", "g", "call_1", {"a": 1}, error_answers=True)
    assert classify_calls([(first, error), (second, None)]).harm is Harm.STREAM_SHAPE


# -- handler runs: the issue's own contrast -----------------------------------------------------------

_WRITE = '{"path": "notes.txt", "content": "first line"}'
TRUNCATED_WRITE = Scenario(
    "write_file_cut_at_the_token_limit",
    (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "call_1", "write_file", _WRITE)]),
        ChunkResponse(finish_reason="length", error=StreamError("truncated", "finish_reason=length")),
    ),
    ExpectedOutcome((ExpectedCall("write_file", "call_1", None, _WRITE),)),
)


def _harms(factory: object, **options: object) -> dict[str, dict[str, int]]:
    report = run_conformance(factory, profile="dev", seed=0, shrink=False, **options)  # type: ignore[arg-type]
    return {result.check.id: result.harms for result in report.by_status("failed")}


def test_running_write_file_from_a_truncated_turn_and_reordered_ends_are_not_the_same_failure() -> None:
    truncated = run_conformance(mutants.IgnoreStreamErrors, scenarios=[TRUNCATED_WRITE], profile="dev", seed=0)
    finding = truncated.by_status("failed")[0].counterexamples[0]
    assert finding.harm is not None and finding.harm.harm is Harm.RAN_WRONG
    assert TRUNCATION_SENTENCE in finding.harm.why
    reordered = _harms(mutants.EndsInReverseOrder)
    assert reordered == {"calls_in_wire_order": {"stream_shape": reordered["calls_in_wire_order"]["stream_shape"]}}


@pytest.mark.parametrize(
    ("mutant", "check", "harm"),
    [
        (mutants.RaiseFromFinalize, "no_crash", "crashed"),  # the JSONDecodeError kills the turn
        (mutants.UnguardedCallback, "callbacks_isolated", "crashed"),  # a raising UI listener aborts the turn
        (mutants.NoResetOfInvocations, "reset_behaves_like_new", "ran_wrong"),  # last turn's calls run again
        (mutants.DropTextAfterTools, "text_conserved", "lost"),
        (mutants.CallbackSkipsEnds, "callbacks_see_returned_events", "stream_shape"),
        (mutants.BufferArgsUntilEnd, "arguments_stream_incrementally", "stream_shape"),
        (mutants.SegmentIdAsInvocationId, "provider_ids_kept", "misidentified"),
    ],
)
def test_planted_bugs_get_the_harm_a_user_would_see(mutant: object, check: str, harm: str) -> None:
    harms = _harms(mutant)
    assert set(harms[check]) == {harm}, harms[check]


# -- outcomes (stacks and converters) -----------------------------------------------------------------


def test_a_stack_that_runs_a_truncated_call_is_ran_wrong_and_one_that_drops_a_call_lost() -> None:
    expected = Outcome("anthropic", [ExpectedToolCall("write_file", "toolu_1", {"path": "a"}, '{"path": "a"}')])
    expected.finish_reason = "max_tokens"
    ran = Outcome("anthropic", [ExpectedToolCall("write_file", "toolu_1", {"path": "a"}, '{"path": "a"}')])
    assert outcome_harm(expected, ran).harm is Harm.RAN_WRONG
    normal = Outcome("anthropic", list(expected.tool_calls))
    assert outcome_harm(normal, Outcome("anthropic")).harm is Harm.LOST
    # A name no tool has runs nothing: the dispatcher answers it, and write_file never ran.
    renamed = Outcome("anthropic", [ExpectedToolCall("write_filewrite_file", "toolu_1", {"path": "a"}, "")])
    assert outcome_harm(normal, renamed).harm is Harm.LOST
    assert "which no tool has" in outcome_harm(normal, renamed).why
    # Under another tool's name, that tool runs: run wrong.
    two = Outcome("anthropic", [*normal.tool_calls, ExpectedToolCall("delete_file", "toolu_2", {"path": "b"}, "")])
    swapped = Outcome("anthropic", [ExpectedToolCall("delete_file", "toolu_1", {"path": "a"}, ""), two.tool_calls[1]])
    assert outcome_harm(two, swapped).harm is Harm.RAN_WRONG
    assert outcome_harm(normal, None, KeyError("index")).harm is Harm.CRASHED


def test_a_call_left_out_of_a_turn_whose_error_was_surfaced_is_not_lost() -> None:
    # Vercel on anthropic/error_event_mid_call: finishReason "error", the error shown, the unfinished
    # write_file not produced. Nothing that may run was lost; left out silently, it is.
    expected = Outcome("anthropic", [ExpectedToolCall("write_file", "toolu_1", None, '{"path": "a')])
    expected.error = "overloaded_error"
    surfaced = Outcome("anthropic")
    surfaced.error = "overloaded_error"
    assert outcome_harm(expected, surfaced).harm is Harm.STREAM_SHAPE
    assert outcome_harm(expected, Outcome("anthropic")).harm is Harm.LOST


def test_a_stack_that_reports_an_error_on_a_normal_stream_crashed_it_did_not_lose_a_call_silently() -> None:
    # Mastra over @ai-sdk/openai 2.x on a call without an id: finish "error", the schema error shown,
    # nothing run. Read as "lost ... nothing said why" before: the error said why, and the turn failed
    # aloud on a stream that ended normally, as a stack that raises does.
    expected = Outcome("openai-chat", [ExpectedToolCall("get_weather", None, {"city": "Paris"}, '{"city": "Paris"}')])
    expected.finish_reason = "tool_calls"
    surfaced = Outcome("openai-chat")
    surfaced.error = "AI_InvalidResponseDataError: Expected 'id' to be a string."
    verdict = outcome_harm(expected, surfaced)
    assert verdict.harm is Harm.CRASHED and "Expected 'id' to be a string" in verdict.why
    # Silently left out, it is still lost; and a call that ran wrong beside the error stays ran_wrong.
    assert outcome_harm(expected, Outcome("openai-chat")).harm is Harm.LOST
    wrong = Outcome("openai-chat", [ExpectedToolCall("get_weather", None, {"city": "Oslo"}, '{"city": "Oslo"}')])
    wrong.error = "something"
    assert outcome_harm(expected, wrong).harm is Harm.RAN_WRONG


# -- the gate: --fail-on from the CLI, pytest and Python ---------------------------------------------


def test_fail_on_gates_only_findings_at_least_that_harmful_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    target = ["run", "--handler", "tests.mutants.api_handler_mutants:EndsInReverseOrder", "--profile", "dev"]
    assert main(target) == 1
    report = tmp_path / "report.json"
    assert main([*target, "--fail-on", "misidentified", "--report-json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "the gate passes" in out and "[stream_shape]" in out
    data = json.loads(report.read_text())
    assert (data["conformant"], data["passes"], data["fail_on"]) == (False, True, "misidentified")
    failing = next(c for c in data["checks"] if c["status"] == "failed")
    assert failing["harm"] == "stream_shape" and failing["counterexamples"][0]["harm"] == "stream_shape"
    assert main([*target, "--fail-on", "stream_shape"]) == 1
    with pytest.raises(SystemExit) as usage_error:  # an unknown harm is a usage error: exit 2, no traceback
        main([*target, "--fail-on", "harmless"])
    assert usage_error.value.code == 2


def test_fail_on_from_python() -> None:
    report = run_conformance(mutants.EndsInReverseOrder, profile="dev", seed=0, shrink=False)
    assert not report.conformant
    assert report.gate("misidentified") == []
    assert [r.check.id for r in report.gate(Harm.STREAM_SHAPE)] == ["calls_in_wire_order"]
    failing = report.by_status("failed")[0]
    failing.harms.clear()  # a failing run nobody classified is never let through
    assert report.gate("ran_wrong") == [failing]


def test_fail_on_from_pytest(tmp_path: Path) -> None:
    test_file = tmp_path / "test_gate.py"
    test_file.write_text(
        textwrap.dedent(
            """
            from conformance.pytest_plugin import HandlerConformanceTests
            from tests.mutants.api_handler_mutants import EndsInReverseOrder, IgnoreStreamErrors


            class TestReordered(HandlerConformanceTests):
                def handler_factory(self, **callbacks):
                    return EndsInReverseOrder(**callbacks)


            class TestRunsTruncatedCalls(HandlerConformanceTests):
                fail_on = "lost"

                def handler_factory(self, **callbacks):
                    return IgnoreStreamErrors(**callbacks)
            """
        )
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file), "-rxf"]
    command += ["--toolcall-profile", "dev", "--toolcall-fail-on", "misidentified", "--rootdir", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stdout  # the truncated calls that run gate at "lost"
    assert "XFAIL" in done.stdout and "test_calls_in_wire_order" in done.stdout  # below the gate
    assert "FAILED" in done.stdout and "TestRunsTruncatedCalls::test_invalid_arguments_flagged" in done.stdout
    assert "harm: ran_wrong" in done.stdout


def test_a_harm_verdict_reads_as_json() -> None:
    assert HarmVerdict(Harm.LOST, "x").to_json() == {"harm": "lost", "why": "x", "cause": ""}


class _ModelLayer(mutants.NameConcat):
    """A model layer that concatenates restated names and hands its ENDs to a runner: no invocations."""

    def get_all_invocations(self) -> list[object]:
        return []


def test_a_model_layer_declares_no_invocations_and_its_ends_are_what_it_hands_on() -> None:
    from conformance import Capabilities

    report = run_conformance(_ModelLayer, capabilities=Capabilities(invocations=False), profile="dev", seed=0)
    results = {r.check.id: r for r in report.results}
    for check in ("invalid_arguments_flagged", "invocations_match_stream"):
        assert results[check].status == "skipped" and "--no-invocations" in results[check].skipped_reason
    # The concatenated name is on the END it hands to its runner, which finds no tool by that name:
    # the call's own tool never runs (lost), nothing else runs in its place.
    names = results["tool_names_whole"]
    assert names.status == "failed" and set(names.harms) <= {"lost", "stream_shape"} and "lost" in names.harms


def test_an_event_shape_check_gives_the_runs_harm_to_the_check_that_explains_it() -> None:
    # openai-agents: one run failed calls_in_wire_order and a call check; the ordering finding was
    # published as ran_wrong although ENDs in another order run nothing wrong.
    from conformance.handler.harm import attribute_harms

    lost = HarmVerdict(Harm.LOST, "call 1 never ran and nothing said why")
    both = attribute_harms({"calls_in_wire_order": lost, "segment_per_call": lost})
    assert both["segment_per_call"] is lost
    assert both["calls_in_wire_order"].harm is Harm.STREAM_SHAPE
    assert "segment_per_call" in both["calls_in_wire_order"].why
    # Alone, the event-shape check is the only thing that can explain the run's harm: it keeps it.
    assert attribute_harms({"segment_lifecycle": lost})["segment_lifecycle"] is lost
    # A probe's harm is another run's: it explains nothing about the main run.
    probe = HarmVerdict(Harm.CRASHED, "reset raised")
    alone = attribute_harms({"segment_lifecycle": lost, "reset_behaves_like_new": probe})
    assert alone["segment_lifecycle"] is lost


def test_a_generated_call_cut_inside_its_name_runs_no_tool() -> None:
    # pydantic-ai ran 'rea' (read_file's name, the stream cut after three letters) as rea({}): no
    # runner finds a tool by that name, so nothing ran wrong. Named so in a written scenario, it is a
    # tool of that scenario, and running it from a cut stream is run wrong.
    from examples.seed000_handler import make_handler
    from reference_impl.types import StreamError

    chunks = (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "rea", "{}")]),
        ChunkResponse(error=StreamError("incomplete", "cut")),
    )
    expected = ExpectedOutcome((ExpectedCall("rea", "call_0", None, "{}"),), "", "")
    harms: dict[str, set[str]] = {}
    for source in ("generated", "built-in"):
        scenario = Scenario("cut_inside_the_name", chunks, expected, source=source)
        report = run_conformance(make_handler, scenarios=[scenario], profile="dev", seed=0, shrink=False)
        harms[source] = set(next(r.harms for r in report.results if r.check.id == "invalid_arguments_flagged"))
    assert harms == {"generated": {"stream_shape"}, "built-in": {"ran_wrong"}}
