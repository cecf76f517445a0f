"""The command line as a user meets it: exit codes, messages, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.roundtrip import ROUNDTRIP_CHECKS
from reference_impl.followup import FOLLOWUP_TARGETS


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert "toolcall-conformance" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "run" in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_run_against_reference_is_conformant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report_path = tmp_path / "report.json"
    junit_path = tmp_path / "junit.xml"
    code = main(["run", "--profile", "dev", "--report-json", str(report_path), "--junit-xml", str(junit_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "CONFORMANT" in out
    report = json.loads(report_path.read_text())
    assert report["conformant"] is True
    assert not [c for c in report["checks"] if c["status"] == "failed"]
    # The only skips: checks about raw argument deltas, which do not apply to text parsers, and two
    # checks no text-format scenario exercises (text formats carry no reasoning and no provider ids):
    # judging nothing, they are skipped, never passed.
    skipped = {(c["target"].split("(")[0], c["id"]) for c in report["checks"] if c["status"] == "skipped"}
    assert skipped == {
        ("ParsingStreamingResponseHandler", "argument_integrity"),
        ("ParsingStreamingResponseHandler", "text_and_reasoning_in_wire_order"),
        ("ParsingStreamingResponseHandler", "arguments_stream_incrementally"),
        ("ParsingStreamingResponseHandler", "reasoning_conserved"),
        ("ParsingStreamingResponseHandler", "provider_ids_kept"),
    }
    reasons = {c["message"] for c in report["checks"] if c["id"] in ("reasoning_conserved", "provider_ids_kept")}
    assert "ran on no applicable input" in reasons
    targets = {c["target"] for c in report["checks"]}
    assert len(targets) == 6  # API handler, 3 text parsers, the converters, the round-trip formatter
    roundtrip = {c["id"] for c in report["checks"] if c["target"].startswith("round-trip ReferenceFormatter")}
    assert roundtrip == {check.id for check in ROUNDTRIP_CHECKS}
    assert "round-trip ReferenceFormatter (openai-chat, deepseek, openai-responses" in out
    assert "<testsuite" in junit_path.read_text()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon_here", "MODULE:FACTORY"),
        ("surely_missing_module_xyz:make", "cannot import module"),
        ("json:no_such_attribute", "has no attribute"),
        ("json:__doc__", "not a callable"),
    ],
)
def test_bad_handler_spec_is_a_usage_error(spec: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--handler", spec]) == 2
    assert message in capsys.readouterr().err


def test_console_script_runs_as_a_subprocess() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "toolcall-conformance" in result.stdout


# -- round-trip formatters (run --formatter) and the multi-turn demo ---------------------------------

REFERENCE_FORMATTER = "reference_impl.followup:ReferenceFormatter"
# tests/mutants/formatter_mutants.py: results sent in completion order (G06), as a zero-argument factory.
BROKEN_FORMATTER = "tests.mutants.formatter_mutants:completion_order_results"


def test_run_formatter_reference_is_conformant_with_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "report.json"
    code = main(["run", "--formatter", REFERENCE_FORMATTER, "--profile", "dev", "--report-json", str(report_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("16 passed, 0 failed, 0 skipped\nCONFORMANT")
    report = json.loads(report_path.read_text())
    assert report["conformant"] is True and report["target"] == REFERENCE_FORMATTER and report["profile"] == "dev"
    assert [c["id"] for c in report["checks"]] == [check.id for check in ROUNDTRIP_CHECKS]
    assert {c["status"] for c in report["checks"]} == {"passed"}
    # every target: 6 built-in + 2 generated scenarios each (dev)
    assert report["scenarios"] == len(FOLLOWUP_TARGETS) * (6 + 2)


def test_run_formatter_mutant_exits_1_with_counterexample_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path, junit_path = tmp_path / "report.json", tmp_path / "junit.xml"
    code = main(
        [
            "run",
            "--formatter",
            BROKEN_FORMATTER,
            "--target",
            "anthropic",
            "--target",
            "gemini",
            "--profile",
            "dev",
            "--seed",
            "3",
            "--report-json",
            str(report_path),
            "--junit-xml",
            str(junit_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "FAIL  results_adjacent_in_call_order" in out and "NOT CONFORMANT" in out
    assert "scenario: parallel_results_out_of_order (target anthropic)" in out
    report = json.loads(report_path.read_text())
    assert report["conformant"] is False and report["seed"] == 3
    assert report["scenarios"] == 2 * (6 + 2)  # only the two targets asked for
    entry = next(c for c in report["checks"] if c["id"] == "results_adjacent_in_call_order")
    assert entry["status"] == "failed" and "G06" in entry["taxonomy"] and entry["counterexample"]
    junit = junit_path.read_text()
    assert 'name="results_adjacent_in_call_order"' in junit and "<failure" in junit


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--formatter", "no_colon_here"], "--formatter must look like MODULE:ATTR"),
        (["--formatter", "surely_missing_module_xyz:Fmt"], "cannot import module 'surely_missing_module_xyz'"),
        (["--formatter", "json:no_such_attribute"], "has no attribute"),
        (["--formatter", "json:__doc__"], "names a str, not a round-trip formatter"),
        (["--formatter", "json:dumps"], "is not a usable round-trip formatter: TypeError"),  # factory that raises
        (["--formatter", REFERENCE_FORMATTER, "--no-reasoning"], "not used with --formatter: --no-reasoning"),
        (["--formatter", REFERENCE_FORMATTER, "--cassette-dir", "."], "not used with --formatter: --cassette-dir"),
        (["--target", "gemini"], "--target goes with --formatter"),
    ],
)
def test_bad_formatter_arguments_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_formatter_and_handler_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--formatter", REFERENCE_FORMATTER, "--handler", "x:y"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_converter_spec_errors_name_the_converter_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--converter", "no_colon", "--format", "anthropic"]) == 2
    assert "--converter must look like MODULE:FACTORY" in capsys.readouterr().err


# What each wire API's follow-up request carries back, as the demo prints it from the SDK's JSON.
DEMO_RESULT_LINES = {
    "openai-chat": "role=tool tool_call_id=",
    "openai-responses": "function_call_output call_id=",
    "anthropic": "tool_result tool_use_id=",
    "gemini": "functionResponse name=get_weather",
}


@pytest.mark.parametrize("api", sorted(DEMO_RESULT_LINES))
def test_demo_runs_the_multi_turn_cassettes_of_each_wire_api(api: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--api", api, "--chunk-bytes", "7"]) == 0
    out = capsys.readouterr().out
    assert out.count(f"=== {api} / ") == 2  # weather_and_time and invalid_call_retry
    assert "=== " + next(a for a in DEMO_RESULT_LINES if a != api) not in out
    assert "tool called: get_weather(" in out and DEMO_RESULT_LINES[api] in out
    assert "is_error" in out or "error result" in out  # the invalid call is answered with an error
    assert out.count("final answer: In Paris it is 18") == 1 and "[answered;" in out


def test_demo_without_api_runs_all_four(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert [line.split(" / ")[0] for line in out.splitlines() if line.startswith("=== ")] == [
        "=== openai-chat",
        "=== openai-chat",
        "=== openai-responses",
        "=== openai-responses",
        "=== anthropic",
        "=== anthropic",
        "=== gemini",
        "=== gemini",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--chunk-bytes", "0"], "--chunk-bytes must be a positive size"),
        (["--cassette-dir", "surely/not/here"], "no such directory"),
        (["--cassette-dir", "{empty}"], "no multi-turn cassettes under"),
        (["--cassette-dir", "{single_turn}"], "not a multi-turn cassette"),
    ],
)
def test_demo_usage_errors(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.wire.cases import bundled_cassette_dir

    single_turn = tmp_path / "single" / "anthropic"
    single_turn.mkdir(parents=True)
    (single_turn / "single_call.yaml").write_bytes(
        (bundled_cassette_dir() / "anthropic" / "single_call.yaml").read_bytes()
    )
    (tmp_path / "empty").mkdir()
    argv = [a.format(empty=tmp_path / "empty", single_turn=tmp_path / "single") for a in argv]
    assert main(["demo", *argv]) == 2
    assert message in capsys.readouterr().err


def test_junit_from_the_cli_says_what_the_terminal_says_and_how_to_run_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import xml.etree.ElementTree as ET

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    junit = tmp_path / "out" / "junit.xml"
    argv = ["run", "--handler", "examples.seed000_handler:make_handler", "--no-reasoning", "--profile", "dev"]
    assert main([*argv, "--junit-xml", str(junit), "--report-json", str(tmp_path / "r.json")]) == 1
    capsys.readouterr()
    suite = ET.parse(junit).getroot()
    assert {"errors", "timestamp", "hostname"} <= set(suite.attrib)
    rerun = (
        "toolcall-conformance run --handler examples.seed000_handler:make_handler --no-reasoning --profile dev --seed 0"
    )
    failures = [case.find("failure") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failures
    for failure in failures:
        assert failure is not None and failure.text is not None
        assert "failed in " in failure.text and "how to fix: " in failure.text
        assert failure.text.endswith(f"re-run: {rerun}")  # the output options are left out
