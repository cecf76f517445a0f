"""The command line as a user meets it: exit codes, messages, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main


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
    # The only skips: checks about raw argument deltas, which do not apply to text parsers.
    skipped = {(c["target"].split("(")[0], c["id"]) for c in report["checks"] if c["status"] == "skipped"}
    assert skipped == {
        ("ParsingStreamingResponseHandler", "argument_integrity"),
        ("ParsingStreamingResponseHandler", "text_and_reasoning_in_wire_order"),
        ("ParsingStreamingResponseHandler", "arguments_stream_incrementally"),
    }
    targets = {c["target"] for c in report["checks"]}
    assert len(targets) == 5  # API handler, 3 text parsers, the converters
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
