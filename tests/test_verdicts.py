"""The verdict can be trusted: every false pass the suite once had is caught, and legitimate designs pass.

Each test names the defect it guards against: a target the suite used to call CONFORMANT, a check
reported PASS that never applied, a flag that did nothing, a crash or traceback where a clear
exit code belongs. The targets live in ``tests/verdict_targets.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import Capabilities, run_conformance
from conformance.cli import main
from conformance.handler import plan
from tests import verdict_targets as targets

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(ROOT)  # the CLI imports tests.verdict_targets from the working directory
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _failed(report: object) -> set[str]:
    return {result.check.id for result in report.by_status("failed")}  # type: ignore[attr-defined]


# -- false passes ------------------------------------------------------------------------------------


def test_the_cli_runs_generated_streams(capsys: pytest.CaptureFixture[str]) -> None:
    # Only generated streams carry argument keys such as "self" or "kwargs". The CLI used to pass
    # an explicit scenario list, which switched the generated search off (exit 0, CONFORMANT).
    assert main(["run", "--handler", "tests.verdict_targets:make_drop_reserved", "--profile", "dev"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  invocations_match_stream" in out and "scenario: generated" in out


def test_cli_pytest_and_python_run_the_same_search(tmp_path: Path, pytester_report: dict[str, int]) -> None:
    report_path = tmp_path / "cli.json"
    handler = "reference_impl:ApiToolCallStreamingResponseHandler"
    assert (
        main(["run", "--handler", handler, "--profile", "dev", "--seed", "5", "--report-json", str(report_path)]) == 0
    )
    cli = json.loads(report_path.read_text())
    from reference_impl import ApiToolCallStreamingResponseHandler

    python = run_conformance(ApiToolCallStreamingResponseHandler, profile="dev", seed=5)
    assert (cli["scenarios"], cli["examples"]) == (python.scenarios, python.examples)
    assert (pytester_report["scenarios"], pytester_report["examples"]) == (python.scenarios, python.examples)


@pytest.fixture
def pytester_report(pytester: pytest.Pytester) -> dict[str, int]:
    """The pytest plugin's run of the same handler, profile and seed (its report, read from a JSON dump)."""
    pytester.makepyfile(
        test_same="""
import json
from conformance.pytest_plugin import HandlerConformanceTests
from reference_impl import ApiToolCallStreamingResponseHandler


class TestSame(HandlerConformanceTests):
    profile = "dev"
    seed = 5

    def handler_factory(self, **callbacks):
        return ApiToolCallStreamingResponseHandler(**callbacks)

    def test_dump(self, toolcall_conformance_report):
        with open("report.json", "w") as handle:
            json.dump({"scenarios": toolcall_conformance_report.scenarios,
                       "examples": toolcall_conformance_report.examples}, handle)
"""
    )
    result = pytester.runpytest_subprocess("-q", "-k", "test_dump", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    data: dict[str, int] = json.loads((pytester.path / "report.json").read_text())
    return data


def test_callback_checks_are_skipped_not_passed_for_a_factory_without_callbacks() -> None:
    report = run_conformance(targets.no_callbacks_handler, profile="dev", seed=0)
    results = {r.check.id: r for r in report.results}
    for check_id in ("callbacks_see_returned_events", "callbacks_isolated"):
        assert results[check_id].status == "skipped", check_id
        assert "on_segment_event" in results[check_id].skipped_reason
    assert report.conformant


def test_every_passed_check_ran_on_something() -> None:
    from reference_impl import ApiToolCallStreamingResponseHandler

    report = run_conformance(ApiToolCallStreamingResponseHandler, profile="dev", seed=0)
    assert all(r.examples_run > 0 for r in report.by_status("passed"))


def test_no_stream_errors_changes_the_scenarios_and_an_idle_flag_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with_errors = plan(Capabilities()).scenarios
    without = plan(Capabilities(stream_errors=False)).scenarios
    assert {s.name for s in with_errors} - {s.name for s in without} >= {"truncated_by_max_tokens"}
    # --no-incremental-arguments changes nothing for a text parser (the check needs provider-native calls).
    argv = ["run", "--handler", "reference_impl:ApiToolCallStreamingResponseHandler", "--text-format", "xml"]
    assert main([*argv, "--no-incremental-arguments"]) == 2
    assert "--no-incremental-arguments changes nothing" in capsys.readouterr().err


def test_later_calls_must_stream_too() -> None:
    report = run_conformance(targets.StreamFirstCallOnly, profile="dev", seed=0)
    assert "arguments_stream_incrementally" in _failed(report)


def test_sparse_and_non_zero_based_indices_are_generated() -> None:
    report = run_conformance(targets.ListIndexedCalls, profile="dev", seed=0)
    assert "no_crash" in _failed(report)


def test_a_converter_factory_takes_the_wire_api_name_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--converter", "tests.verdict_targets:converter_factory", "--format", "openai-chat"]
    assert main([*argv, "--profile", "dev"]) == 0
    assert "CONFORMANT" in capsys.readouterr().out


# -- legitimate designs get no false alarm ----------------------------------------------------------------


def test_a_text_only_handler_declared_as_such_passes() -> None:
    report = run_conformance(targets.TextOnlyHandler, capabilities=Capabilities(tool_calls=False), profile="dev")
    assert report.conformant, {r.check.id: r.counterexample for r in report.by_status("failed")}
    assert {r.check.id for r in report.by_status("skipped")} >= {"segment_per_call", "invocations_match_stream"}


def test_a_final_result_accumulator_passes_and_event_checks_are_skipped_by_name() -> None:
    capabilities = Capabilities(events=False, callbacks=False, lifecycle=False)
    report = run_conformance(targets.FinalResultAccumulator, capabilities=capabilities, profile="dev")
    assert report.conformant, {r.check.id: r.counterexample for r in report.by_status("failed")}
    skipped = {r.check.id: r.skipped_reason for r in report.by_status("skipped")}
    assert "segment events" in skipped["segment_lifecycle"]
    assert {"invocations_match_stream", "invalid_arguments_flagged", "text_conserved"} <= {
        r.check.id for r in report.by_status("passed")
    }


# -- bad targets and paths: exit 2 with a message, never a traceback ------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tests.verdict_targets:raising_factory", "raised RuntimeError when called: cannot connect"),
        ("tests.verdict_targets:not_a_handler", "which is not a handler"),
        ("tests.no_such_module:factory", "cannot import module 'tests.no_such_module'"),
        ("tests.verdict_targets:missing", "has no attribute 'missing'"),
    ],
)
def test_a_target_the_suite_cannot_run_is_exit_2(spec: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--handler", spec, "--profile", "dev"]) == 2
    assert message in capsys.readouterr().err


def test_feed_returning_none_is_a_named_violation() -> None:
    report = run_conformance(targets.FeedReturnsNone, profile="dev", seed=0)
    assert "events_readable" in _failed(report)
    result = next(r for r in report.results if r.check.id == "events_readable")
    assert "feed() must return a list of events, got None" in result.message


def test_a_hanging_handler_is_stopped_and_named() -> None:
    report = run_conformance(targets.HangsOnReasoning, profile="dev", seed=0, deadline=0.5)
    assert "finishes_within_deadline" in _failed(report)
    assert "hung on scenario" in report.stopped


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--report-json", "missing-dir/report.json", "does not exist"),
        ("--junit-xml", "missing-dir/junit.xml", "does not exist"),
        ("--scenario-dir", "no/such/dir", "no such file or directory"),
    ],
)
def test_paths_are_checked_before_the_run(
    flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--handler", "reference_impl:ApiToolCallStreamingResponseHandler", flag, value]) == 2
    assert message in capsys.readouterr().err
