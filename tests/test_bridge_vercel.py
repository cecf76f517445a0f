"""The Vercel AI SDK at byte level, over the bridge: the pinned SDK, offline, on every bundled recording.

The failing recordings must be exactly the documented findings (``conformance.adapters.vercel_ai_sdk``),
each with a direct reproduction under ``tests/repro_vercel/``; byte splits must never change a result.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conformance.adapters.vercel_ai_sdk import (
    COMPATIBLE_FINDINGS,
    FINDINGS,
    PROGRAM,
    Finding,
    open_stack_target,
    pinned_versions,
)
from conformance.bridge import run_bridge
from conformance.stack import run_stack_conformance
from conformance.verdict import Report
from conformance.wire import bundled_cassette_dir
from tests.bridge_targets.node import NODE, ROOT, VERCEL_DIR, needs_node, needs_vercel_modules

REPRO_DIR = ROOT / "tests" / "repro_vercel"


def test_the_lock_file_pins_the_node_20_line() -> None:
    pinned = pinned_versions()
    # ai 7 / @ai-sdk/* 4.x require Node >= 22; CI has Node 20, so the 6.x line is pinned.
    assert pinned["ai"].startswith("6.")
    assert {pinned[p].split(".")[0] for p in ("@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google")} == {"3"}
    package = json.loads((VERCEL_DIR / "package.json").read_text(encoding="utf-8"))
    assert {name: pinned[name] for name in package["dependencies"]} == package["dependencies"]  # exact pins


@pytest.mark.parametrize("findings", [FINDINGS, COMPATIBLE_FINDINGS], ids=["openai", "openai-compatible"])
def test_every_finding_has_a_reproduction_naming_its_recording(findings: dict[str, Finding]) -> None:
    for recording, finding in findings.items():
        script = REPRO_DIR / finding.reproduction
        assert script.is_file(), f"{recording}: no reproduction {script}"
        cassette = recording.removesuffix(".yaml")
        text = script.read_text(encoding="utf-8")
        directory, name = cassette.split("/")
        assert cassette in text or (directory in text and name in text), f"{script.name} does not name {cassette}"


def failing_recordings(report: Report) -> set[str]:
    outcome = next(r for r in report.results if r.check.id == "stack_outcome_matches")
    return set(outcome.failing_scenarios)


@needs_node
@needs_vercel_modules
@pytest.mark.parametrize(
    ("chat_provider", "findings"), [("openai", FINDINGS), ("openai-compatible", COMPATIBLE_FINDINGS)]
)
def test_the_failing_recordings_are_exactly_the_findings(chat_provider: str, findings: dict[str, Finding]) -> None:
    with open_stack_target(chat_provider=chat_provider) as target:
        report = run_stack_conformance(
            target.stack, [bundled_cassette_dir()], capabilities=target.capabilities, profile="dev", seed=0, generated=0
        )
    assert failing_recordings(report) == set(findings)
    split = next(r for r in report.results if r.check.id == "stack_byte_split_invariant")
    assert split.status == "passed" and split.examples_run > 200
    outcome = next(r for r in report.results if r.check.id == "stack_outcome_matches")
    # The one recording that needs a server profile the SDK does not take is skipped by name.
    assert any(n.startswith("openai-compatible/dialect_cumulative_arguments") for n in outcome.not_applicable)


@needs_node
@needs_vercel_modules
def test_the_cli_runs_the_vercel_bridge(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.cli import main

    monkeypatch.chdir(ROOT)
    code = main(["run", "--bridge", "node examples/bridge/vercel/vercel_bridge.mjs", "--profile", "dev"])
    out = capsys.readouterr().out
    assert code == 1  # the findings above
    assert "FAIL  stack_outcome_matches" in out and "PASS  stack_byte_split_invariant" in out
    assert "Vercel AI SDK ai 6." in out


@needs_node
@needs_vercel_modules
def test_the_hello_reports_the_installed_pinned_versions() -> None:
    report = run_bridge([str(NODE), str(PROGRAM)], profile="dev", cwd=ROOT)
    declared = report.target_spec["target"]["versions"]
    pinned = pinned_versions()
    assert declared == {name: pinned[name] for name in declared}


@needs_node
@needs_vercel_modules
def test_the_sdk_cannot_reach_the_network() -> None:
    script = (
        f"import {json.dumps(PROGRAM.as_uri())};"
        "import net from 'node:net';"
        "const seen = [];"
        "try { await fetch('http://127.0.0.1:9/'); } catch (e) { seen.push(e.message); }"
        "try { net.connect(9, '127.0.0.1'); } catch (e) { seen.push(e.message); }"
        "console.error(JSON.stringify(seen));"
    )
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen == [
        "network access attempted (global fetch http://127.0.0.1:9/)",
        "network access attempted (net.Socket#connect)",
    ]
