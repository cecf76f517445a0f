"""Bad input at every entry point: a clear error and exit 2, never a silent pass or a lost verdict.

Each case here was once a false pass, a lost verdict or a traceback (issue 22's table).
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import reference_impl
from conformance.cli import main
from conformance.handler import Capabilities, run_conformance
from reference_impl.types import ChunkResponse
from tests import bad_targets

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "reference_impl:ApiToolCallStreamingResponseHandler"
REFERENCE_FACTORY = reference_impl.ApiToolCallStreamingResponseHandler


# -- an empty target is a usage error, never "check the reference" -----------------------------


@pytest.mark.parametrize("option", ["--handler", "--accumulator", "--formatter", "--bridge", "--stack"])
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_run_target_is_a_usage_error(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # `run --handler "$HANDLER"` with the variable unset: it used to check the reference and pass.
    assert main(["run", option, value, "--profile", "dev"]) == 2
    captured = capsys.readouterr()
    assert f"{option} is empty" in captured.err
    assert "CONFORMANT" not in captured.out


def test_an_empty_converter_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--converter", "", "--format", "openai-chat"]) == 2
    assert "--converter is empty" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--handler", "--accumulator", "--bridge"])
def test_an_empty_rerun_target_is_a_usage_error(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rerun", str(tmp_path), option, ""]) == 2
    assert f"{option} is empty" in capsys.readouterr().err


# -- report files: refused before the run, created when missing, a failed write is exit 2 -------


def test_a_report_path_through_a_file_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for option in ("--report-json", "--junit-xml", "--save-failures"):
        assert main(["run", "--handler", REFERENCE, option, str(blocker / "inside" / "x.json")]) == 2
        captured = capsys.readouterr()
        assert f"{blocker} is a file, not a folder" in captured.err
        assert captured.out == ""  # refused before anything ran


def test_missing_report_folders_are_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The documented CI workflow writes reports/handler.json into a folder that does not exist yet.
    json_report, junit = tmp_path / "reports" / "handler.json", tmp_path / "deep" / "er" / "junit.xml"
    argv = ["run", "--handler", REFERENCE, "--profile", "dev"]
    assert main([*argv, "--report-json", str(json_report), "--junit-xml", str(junit)]) == 0
    assert json_report.is_file() and junit.is_file()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_a_report_that_cannot_be_written_after_the_run_is_exit_2_with_the_verdict_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "--handler", REFERENCE, "--profile", "dev", "--report-json", "/dev/full"])
    captured = capsys.readouterr()
    assert code == 2
    assert "CONFORMANT" in captured.out  # the verdict is not lost ...
    assert "--report-json /dev/full: could not be written: No space left on device" in captured.err  # ... nor why


# -- a target that changes the chunks it is fed cannot rewrite the suite's expectations ----------


class _DropsEveryCall:
    """Drops every tool call; leaves the chunks it is fed alone."""

    def __init__(self, **callbacks: Any) -> None:
        self._inner = reference_impl.ApiToolCallStreamingResponseHandler(**callbacks)

    def feed(self, chunk: ChunkResponse) -> Any:
        return self._inner.feed(dataclasses.replace(chunk, tool_calls=None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _ClearsWhatItDropped(_DropsEveryCall):
    """The same defect, then clears ``chunk.tool_calls`` as if the stream had none."""

    def feed(self, chunk: ChunkResponse) -> Any:
        chunk.tool_calls = None
        return self._inner.feed(chunk)


class _ConsumesTheList:
    """Correct, but reads the deltas by popping them off the chunk's own list."""

    def __init__(self, **callbacks: Any) -> None:
        self._inner = reference_impl.ApiToolCallStreamingResponseHandler(**callbacks)

    def feed(self, chunk: ChunkResponse) -> Any:
        taken = []
        while chunk.tool_calls:
            taken.insert(0, chunk.tool_calls.pop())
        return self._inner.feed(dataclasses.replace(chunk, tool_calls=taken or None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _verdicts(factory: Any) -> dict[str, tuple[str, int, int]]:
    report = run_conformance(factory, profile="dev", seed=0)
    return {r.check.id: (r.status, r.examples_run, r.failing_examples) for r in report.results}


def test_a_target_that_clears_the_chunks_it_was_fed_is_judged_as_if_it_had_not() -> None:
    # Clearing the judged chunks must not hide what it dropped: the same checks fail on the same runs.
    cleared = _verdicts(_ClearsWhatItDropped)
    assert cleared == _verdicts(_DropsEveryCall)
    assert cleared["segment_per_call"][0] == "failed"


def test_a_correct_target_that_consumes_the_chunk_lists_passes() -> None:
    report = run_conformance(_ConsumesTheList, profile="dev", seed=0)
    assert report.conformant, [(r.check.id, r.message) for r in report.by_status("failed")]


# -- every target kind is bounded by --deadline, its factory too -----------------------------------


def _cli(*argv: str, timeout: float = 60) -> tuple[int, str, str, float]:
    """The console command in a subprocess (a hard stop ends the process: it cannot run in pytest's)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e300", "soon"])
def test_a_deadline_that_is_not_a_finite_number_of_seconds_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # nan compared false with everything and switched the deadline off; inf overflowed the timer.
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--handler", REFERENCE, "--deadline", value])
    assert exit_info.value.code == 2
    assert "argument --deadline" in capsys.readouterr().err


def test_a_nan_deadline_is_refused_by_the_python_api_too() -> None:
    with pytest.raises(ValueError, match="finite"):
        run_conformance(reference_impl.ApiToolCallStreamingResponseHandler, profile="dev", deadline=math.nan)


def test_a_handler_factory_that_never_returns_is_stopped_at_the_deadline() -> None:
    code, _, err, seconds = _cli("run", "--handler", "tests.bad_targets:never_built", "--deadline", "0.5")
    assert code == 2 and seconds < 20
    assert "did not return within the deadline (0.5 s)" in err


def test_a_handler_that_swallows_the_deadline_is_ended_and_the_input_named() -> None:
    argv = ("run", "--handler", "tests.bad_targets:SwallowsTheDeadline", "--deadline", "0.5", "--profile", "dev")
    code, _, err, seconds = _cli(*argv)
    assert code == 2 and seconds < 20  # 0.5 s, then the watchdog's grace (2 s at least)
    assert "did not stop at its deadline (0.5 s) on the chunks " in err
    assert "caught the interruption" in err and "Traceback" not in err


def test_a_converter_that_never_returns_is_a_finding_per_recording() -> None:
    argv = ("--converter", "tests.bad_targets:stuck_converter", "--format", "ollama", "--deadline", "0.3")
    code, out, err, seconds = _cli("run", *argv, "--profile", "dev")
    assert code == 1 and seconds < 30, err
    assert "FAIL  converter_outcome_matches" in out
    assert "replay raised DeadlineExceeded: did not return within the deadline (0.3 s)" in out


def test_a_formatter_that_never_returns_is_a_finding(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.roundtrip import run_roundtrip_conformance

    report = run_roundtrip_conformance(bad_targets.StuckFormatter(), profile="dev", deadline=0.05)
    failed = report.by_status("failed")
    assert failed and "did not return within the deadline (0.05 s)" in (failed[0].counterexample or "")


def test_a_stack_that_never_returns_stops_the_run_at_the_deadline() -> None:
    code, out, _, seconds = _cli("run", "--stack", "tests.bad_targets:stuck_stack", "--deadline", "0.3")
    assert code == 1 and seconds < 20
    assert "STOPPED EARLY: the stack did not finish within 0.3 s" in out


# -- commands and files that cannot be used: exit 2, naming why ----------------------------------


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ('node "unterminated', "cannot be split into words: No closing quotation"),
        ('""', "the bridge command is empty"),
    ],
)
def test_a_bridge_command_that_cannot_be_started_is_a_usage_error(
    command: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--bridge", command, "--profile", "dev"]) == 2
    assert message in capsys.readouterr().err


def test_replay_of_a_body_of_no_known_shape_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    numbers = tmp_path / "numbers.json"
    numbers.write_text("[1, 2, 3]")
    assert main(["replay", str(numbers), "--format", "openai-chat"]) == 2  # was exit 0, "no tool calls"
    assert "nor of any other API's (they are: a JSON int 1" in capsys.readouterr().err


def test_a_saved_scenario_with_a_field_of_the_wrong_type_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.handler.scenario_files import save_scenario
    from conformance.handler.scenarios import BUILTIN_SCENARIOS

    path = save_scenario(tmp_path, BUILTIN_SCENARIOS[0], BUILTIN_SCENARIOS[0].chunks, check="x")
    document = json.loads(path.read_text())
    document["expected"]["text"] = 0
    path.write_text(json.dumps(document))
    assert main(["rerun", str(path), "--handler", REFERENCE]) == 2
    assert "malformed scenario: TypeError: expected.text must be str, got int: 0" in capsys.readouterr().err


_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9) if previous else ', '.join(['lol'] * 9)}]\n"
    for previous, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (_BOMB + "interactions: []\n", 7, "aliases expand the part starting here to more than"),
        ("a: &a [1, *a]\ninteractions: []\n", 1, "refers to a node that contains it (a loop)"),
    ],
)
def test_cassettes_check_refuses_an_alias_bomb_in_bounded_time(
    text: str, line: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bomb.yaml").write_text(text)
    started = time.monotonic()
    assert main(["cassettes", "check", str(tmp_path)]) == 1
    assert time.monotonic() - started < 10  # it ran until killed
    assert f"bomb.yaml:{line}: not checked: " in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "bomb.yaml")]) == 2
    assert message in capsys.readouterr().err


def test_cassettes_check_on_a_folder_without_recordings_checks_nothing_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("nothing to see")
    assert main(["cassettes", "check", str(tmp_path)]) == 2  # it said "clean"
    assert "none a cassette or a body" in capsys.readouterr().err


# -- the Python API refuses arguments of the wrong type, naming them --------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Capabilities(reasoning="no"), "Capabilities.reasoning must be True or False, got str: 'no'"),
        (lambda: Capabilities(text_lag_chars="3"), "Capabilities.text_lag_chars must be int or None"),
        (
            lambda: run_conformance(REFERENCE_FACTORY, capabilities={"reasoning": False}),
            "capabilities= must be a conformance.Capabilities",
        ),
        (lambda: run_conformance(REFERENCE_FACTORY, seed="1"), "seed= must be an int, got str: '1'"),
    ],
)
def test_python_api_arguments_of_the_wrong_type_are_a_type_error(call: Any, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        call()
    assert message in str(raised.value)


def test_record_refuses_an_out_folder_it_cannot_write_before_calling_the_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for out, message in ((blocker, "exists and is not a directory"), (blocker / "x", "is a file, not a folder")):
        assert main(["record", "--provider", "openai-chat", "--scenario", "single_call", "--out", str(out)]) == 2
        assert message in capsys.readouterr().err


def test_replay_reads_a_body_whose_first_event_is_larger_than_the_detection_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One delta carrying 200 KiB of arguments: detection used to read 64 KiB, find no whole payload
    # and refuse the body ("holds no payload"), even with --format.
    arguments = json.dumps({"content": "x" * (200 * 1024)})
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write_file", "arguments": arguments}}
    events = [
        {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    ]
    body = tmp_path / "big.sse"
    body.write_text("".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n")
    for extra in ([], ["--format", "openai-chat"]):
        assert main(["replay", str(body), "--json", *extra]) == 0
        outcome = json.loads(capsys.readouterr().out)
        assert outcome["tool_calls"][0]["arguments"] == json.loads(arguments)


class _Chatty:
    """Correct, but prints on every chunk (as debugging code left in does)."""

    def __init__(self, **callbacks: Any) -> None:
        self._inner = reference_impl.ApiToolCallStreamingResponseHandler(**callbacks)

    def feed(self, chunk: ChunkResponse) -> Any:
        print("DEBUG feed", "x" * 200)
        return self._inner.feed(chunk)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_target_that_prints_does_not_flood_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--handler", "tests.test_bad_inputs:_Chatty", "--profile", "dev"]) == 0
    captured = capsys.readouterr()
    assert "DEBUG feed" not in captured.out and "CONFORMANT" in captured.out
    assert "the target printed" in captured.err and "first line: 'DEBUG feed x" in captured.err


class _HangsOnFeed:
    def __init__(self, **callbacks: Any) -> None:
        self._inner = reference_impl.ApiToolCallStreamingResponseHandler(**callbacks)

    def feed(self, chunk: ChunkResponse) -> Any:
        time.sleep(60)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_run_stopped_at_its_deadline_is_judged_by_the_deadline_check_alone() -> None:
    report = run_conformance(_HangsOnFeed, profile="dev", deadline=0.2)
    results = {result.check.id: result for result in report.by_status("failed") + report.by_status("passed")}
    assert results["finishes_within_deadline"].status == "failed"
    # The hung run said nothing about crashes or readable output: counted as not judged, never as a pass.
    for check in ("no_crash", "events_readable"):
        assert results[check].not_judged >= 1, check


def test_refragmenting_a_second_call_on_an_occupied_index_never_moves_the_first_calls_name_onto_it() -> None:
    # A saved counterexample (found by the new-user trial): get_weather on call_0, then a nameless
    # call_1 on the same index. Re-splitting it moved 'get_weather' onto call_1's delta while still
    # expecting it under call_0, and the reference failed invalid_arguments_flagged on its own input.
    from hypothesis import HealthCheck, given, settings

    from conformance.handler.fragment import refragmented
    from conformance.handler.runner import violations
    from conformance.handler.scenario_files import scenario_from_json
    from reference_impl.types import ToolCallDelta

    chunks = [
        {"tool_calls": [{"index": 0, "call_id": "call_0", "name": "get_weather", "arguments_delta": "{}"}]},
        {"tool_calls": [{"index": 0, "call_id": "call_1", "name": None, "arguments_delta": None}]},
        {"is_complete": True, "finish_reason": "tool_calls"},
    ]
    expected = {
        "tool_calls": [
            {"name": "get_weather", "call_id": "call_0", "arguments": {}, "raw_arguments": "{}", "conflict_group": 0},
            {"name": None, "call_id": "call_1", "arguments": None, "raw_arguments": "", "conflict_group": 0},
        ]
    }
    document = {"format": "toolcall-conformance/scenario", "chunks": chunks, "expected": expected}
    scenario = scenario_from_json(document, source="saved")

    @settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(refragmented(scenario.chunks))
    def same_stream(split: list[ChunkResponse]) -> None:
        deltas: list[ToolCallDelta] = [d for chunk in split for d in chunk.tool_calls or ()]
        names = {d.call_id: d.name for d in deltas if d.call_id}
        assert "call_1" not in names or names["call_1"] is None, split  # the name stays with call_0
        assert not violations(REFERENCE_FACTORY, dataclasses.replace(scenario, chunks=tuple(split)))

    same_stream()


def test_replay_via_the_sdk_says_when_the_sdk_stopped_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The ollama client raises on a line it cannot validate and stops: an application using it loses
    # the rest, and so does --via-sdk. The replay says so instead of letting it read as the end.
    def line(content: str = "", done: bool = False, **message: Any) -> dict[str, Any]:
        return {"model": "m", "message": {"role": "assistant", "content": content, **message}, "done": done}

    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    lines = [line("hi"), {"something_else": 1}, line(tool_calls=[call]), {**line(done=True), "done_reason": "stop"}]
    body = tmp_path / "unknown_line.ndjson"
    body.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["replay", str(body), "--format", "ollama"]) == 0
    direct = capsys.readouterr().out
    assert "[0] get_weather" in direct and "skipped unknown event types" in direct  # the line is skipped
    assert main(["replay", str(body), "--format", "ollama", "--via-sdk"]) == 0
    through_sdk = capsys.readouterr().out
    assert "note: the SDK raised while reading this body; nothing after that point was read" in through_sdk
