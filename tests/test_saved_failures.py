"""Saved counterexamples: written by 'run --save-failures', re-run by 'rerun', kept by '--scenario-dir'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.handler.scenario_files import load_scenarios, scenario_to_json
from conformance.handler.scenarios import BUILTIN_SCENARIOS

SEED_HANDLER = "examples.seed000_handler:make_handler"


def test_round_trip_of_every_builtin_scenario(tmp_path: Path) -> None:
    for scenario in BUILTIN_SCENARIOS:
        (tmp_path / f"{scenario.name}.json").write_text(json.dumps(scenario_to_json(scenario)), encoding="utf-8")
    loaded = {s.name: s for s in load_scenarios([tmp_path])}
    for scenario in BUILTIN_SCENARIOS:
        assert loaded[scenario.name].chunks == scenario.chunks
        assert loaded[scenario.name].expected == scenario.expected


def test_saved_failures_rerun_against_broken_and_fixed_handlers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    saved = tmp_path / "saved"
    assert (
        main(["run", "--handler", SEED_HANDLER, "--no-reasoning", "--profile", "dev", "--save-failures", str(saved)])
        == 1
    )
    files = sorted(saved.glob("*.json"))
    assert any(f.name.startswith("invalid_arguments_flagged__") for f in files), files
    printed = capsys.readouterr().out
    # The printed re-run command is complete: it names the saved folder and asks for the saved target ...
    assert f"toolcall-conformance rerun {saved} --use-saved-target" in printed
    # ... which rerun never imports unasked (the files are data: they may come from someone else) ...
    assert main(["rerun", str(saved)]) == 2
    assert f"these files were saved from --handler '{SEED_HANDLER}'" in capsys.readouterr().err
    # ... and, asked, re-runs the same target, which still fails on exactly the saved chunks ...
    assert main(["rerun", str(saved), "--use-saved-target"]) == 1
    out = capsys.readouterr().out
    assert "invalid_arguments_flagged" in out and f"--handler {SEED_HANDLER} --no-reasoning" in out
    # ... while a correct handler passes them: they are now regression scenarios.
    assert main(["rerun", str(saved), "--handler", "reference_impl:ApiToolCallStreamingResponseHandler"]) == 0
    report_path = tmp_path / "report.json"
    assert main(["run", "--profile", "dev", "--scenario-dir", str(saved), "--report-json", str(report_path)]) == 0
    # handler scenarios (built-in + saved) plus the converter suite's recordings
    assert json.loads(report_path.read_text())["scenarios"] >= len(BUILTIN_SCENARIOS) + len(files)


def test_malformed_scenario_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"format": "toolcall-conformance/scenario", "chunks": [{"tool_calls": [{}]}]}), encoding="utf-8"
    )
    assert main(["rerun", str(bad)]) == 2
    assert "bad.json: malformed scenario" in capsys.readouterr().err
    assert main(["rerun", str(tmp_path / "missing.json")]) == 2
