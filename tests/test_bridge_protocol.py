"""The JSON-lines bridge, with a Python target (no Node needed): fidelity and every way a target can fail.

Fidelity: one and the same handler checked in process and over the bridge gets the same verdict,
check by check, with the same counts (the proxy reproduces callbacks, raising callbacks, getters
that hand out their own list, exceptions by class, unreadable results). Failures: a line on stdout
that is not the protocol, a hang, a crash, a flood on stderr, a wrong id, no hello, an unknown
protocol or capability each give a clear verdict quoting what was wrong, never a hang.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import Capabilities, run_conformance
from conformance.bridge import BridgeBroken, BridgeProcess, TargetRaisedState, handler_target, run_bridge
from conformance.cli import main
from conformance.handler import TargetError
from conformance.verdict import Profile, Report
from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse
from tests.bridge_targets.final_result import FinalResult
from tests.mutants.api_handler_mutants import MUTANTS

ROOT = Path(__file__).resolve().parent.parent
TARGET = str(ROOT / "tests" / "bridge_targets" / "py_target.py")
TINY = Profile("tiny", 2)


@pytest.fixture(autouse=True)
def _quiet_handlers() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def command(factory: str, capabilities: dict[str, object] | None = None, misbehave: str = "") -> list[str]:
    argv = [sys.executable, TARGET, factory, "--capabilities", json.dumps(capabilities or {})]
    return [*argv, "--misbehave", misbehave] if misbehave else argv


def verdicts(report: Report) -> list[tuple[str, str, int, int]]:
    return [(r.check.id, r.status, r.failing_examples, r.examples_run) for r in report.results]


def assert_same_verdict(factory: str, obj: object, capabilities: dict[str, object]) -> Report:
    declared = Capabilities.from_declared(capabilities)
    in_process = run_conformance(obj, capabilities=declared, profile=TINY, seed=3, keep_counterexamples=1)
    bridged = run_bridge(command(factory, capabilities), profile=TINY, seed=3, cwd=ROOT, keep_counterexamples=1)
    assert verdicts(bridged) == verdicts(in_process)
    for ours, theirs in zip(in_process.results, bridged.results, strict=True):
        assert [c.message for c in ours.counterexamples] == [c.message for c in theirs.counterexamples] or (
            # generated segment ids differ between runs; the failures must still be the same kinds
            len(ours.counterexamples) == len(theirs.counterexamples)
        )
    return bridged


# -- fidelity ----------------------------------------------------------------------------------


def test_the_reference_handler_is_conformant_over_the_bridge() -> None:
    report = assert_same_verdict(
        "reference_impl:ApiToolCallStreamingResponseHandler", ApiToolCallStreamingResponseHandler, {}
    )
    assert report.conformant
    assert report.target_spec["kind"] == "bridge"
    assert any(note.startswith("bridge: ") and "requests to one process" in note for note in report.notes)


def test_the_seed000_handler_gets_the_same_verdict_over_the_bridge() -> None:
    from examples.seed000_handler import make_handler

    report = assert_same_verdict("examples.seed000_handler:make_handler", make_handler, {"reasoning": False})
    failed = {r.check.id for r in report.by_status("failed")}
    assert {"callbacks_isolated", "reset_behaves_like_new", "invalid_arguments_flagged"} <= failed


# Mutants whose bug lives in what the proxy has to reproduce: callbacks, raising callbacks, the
# handler's own list handed out, exceptions by class, unreadable results, lifecycle.
PROXY_MUTANTS = (
    "unguarded_callback",
    "callback_skips_ends",
    "returns_internal_list",
    "feed_after_finalize_accepted",
    "return_nothing_from_feed",
    "misplaced_metadata",
    "raise_from_finalize",
    "no_reset_of_invocations",
)


@pytest.mark.parametrize("name", PROXY_MUTANTS)
def test_a_mutant_is_caught_by_the_same_check_over_the_bridge(name: str) -> None:
    mutant = next(m for m in MUTANTS if m.name == name)
    factory = f"{mutant.factory.__module__}:{mutant.factory.__qualname__}"
    report = assert_same_verdict(factory, mutant.factory, {})
    assert mutant.primary in {r.check.id for r in report.by_status("failed")}


def test_a_final_result_accumulator_over_the_bridge() -> None:
    capabilities = {"events": False, "callbacks": False, "lifecycle": False}
    report = assert_same_verdict("tests.bridge_targets.final_result:FinalResult", FinalResult, capabilities)
    assert report.conformant
    assert {r.check.id for r in report.by_status("skipped")} >= {"segment_lifecycle", "callbacks_isolated"}


def test_a_refusal_crosses_the_bridge_as_a_runtime_error() -> None:
    with BridgeProcess(command("reference_impl:ApiToolCallStreamingResponseHandler"), cwd=ROOT) as process:
        factory, _ = handler_target(process)
        handler = factory()
        handler.feed(ChunkResponse(content="hi"))
        handler.finalize()
        with pytest.raises(RuntimeError) as raised:
            handler.feed(ChunkResponse(content="late"))
        assert isinstance(raised.value, TargetRaisedState)
        assert raised.value.type_name == "HandlerFinalizedError"


# -- a target that misbehaves --------------------------------------------------------------------

REFERENCE = "reference_impl:ApiToolCallStreamingResponseHandler"


def bridge_error(misbehave: str, *, timeout: float = 10.0) -> str:
    with pytest.raises(TargetError) as raised:
        run_bridge(command(REFERENCE, misbehave=misbehave), profile=TINY, timeout=timeout, cwd=ROOT)
    return str(raised.value)


def test_a_stray_line_on_stdout_is_quoted() -> None:
    message = bridge_error("stdout-noise")
    assert "'debug: feeding a chunk'" in message
    assert "stdout is reserved for the protocol" in message


def test_a_hang_ends_at_the_deadline_naming_the_request() -> None:
    started = time.monotonic()
    message = bridge_error("hang", timeout=1.0)
    assert time.monotonic() - started < 10
    assert "no answer from" in message and "within 1 s" in message
    assert "request #3 (" in message and '"type":' in message  # the request that got no answer, quoted


def test_a_stopped_target_leaves_no_process_behind() -> None:
    process = BridgeProcess(command(REFERENCE, misbehave="hang"), cwd=ROOT, timeout=0.5)
    factory, _ = handler_target(process)
    with pytest.raises(BridgeBroken):
        handler = factory()
        handler.feed(ChunkResponse(content="a"))
        handler.feed(ChunkResponse(content="b"))
    assert not process.running
    process.close()


def test_a_crash_is_a_finding_and_the_target_is_restarted(tmp_path: Path) -> None:
    report = run_bridge(command(REFERENCE, misbehave=f"crash-once:{tmp_path / 'crashed'}"), profile=TINY, cwd=ROOT)
    no_crash = next(r for r in report.results if r.check.id == "no_crash")
    assert no_crash.status == "failed"
    assert "exited with status 3" in no_crash.message
    assert "fatal: the target fell over" in no_crash.message  # with the stderr tail
    assert any("restarted" in note for note in report.notes)
    # Everything after the restart ran: the other checks still judged hundreds of runs.
    assert next(r for r in report.results if r.check.id == "segment_lifecycle").examples_run > 50


def test_a_target_that_keeps_crashing_stops_the_run() -> None:
    message = bridge_error("crash-always")
    assert "exited with status 3" in message and "times in a row; giving up" in message
    assert "fatal: the target fell over" in message  # the stderr tail is shown


def test_a_flood_on_stderr_does_not_stall_the_run() -> None:
    report = run_bridge(command(REFERENCE, misbehave="stderr-flood"), profile=Profile("one", 1), cwd=ROOT, timeout=20)
    assert report.conformant


def test_an_answer_to_the_wrong_request_is_quoted() -> None:
    message = bridge_error("wrong-id")
    assert "carries id 103" in message and '\'{"tcc": 1, "id": 103' in message


def test_no_hello_ends_at_the_hello_deadline() -> None:
    process = BridgeProcess(command(REFERENCE, misbehave="no-hello"), cwd=ROOT, hello_timeout=0.5)
    with pytest.raises(BridgeBroken, match=r"within 0.5 s to the hello message"):
        process.start()
    process.close()


def test_no_ready_ends_at_the_hello_deadline() -> None:
    process = BridgeProcess(command(REFERENCE, misbehave="silent-start"), cwd=ROOT, hello_timeout=0.5)
    with pytest.raises(BridgeBroken, match=r"the ready message"):
        process.start()
    process.close()


def test_another_protocol_version_is_refused() -> None:
    assert "offers protocol [2]; this suite speaks 1" in bridge_error("protocol-2")


def test_an_unknown_capability_is_refused_by_name() -> None:
    with pytest.raises(TargetError, match=r"unknown delta-level capabilities \['teleport'\]"):
        run_bridge(command(REFERENCE, {"teleport": True}), profile=TINY, cwd=ROOT)


def test_a_capability_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TargetError, match=r"capability reasoning must be true or false, got 'no'"):
        run_bridge(command(REFERENCE, {"reasoning": "no"}), profile=TINY, cwd=ROOT)


def test_the_cli_exits_2_with_the_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "--bridge", " ".join(command(REFERENCE, misbehave="stdout-noise")), "--profile", "dev"])
    assert code == 2
    error = capsys.readouterr().err
    assert "cannot run --bridge" in error and "'debug: feeding a chunk'" in error


def test_the_cli_refuses_flags_the_hello_declares(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--bridge", " ".join(command(REFERENCE)), "--no-reasoning"]) == 2
    assert "not used with --bridge: --no-reasoning" in capsys.readouterr().err


def test_a_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--bridge", "no-such-command-xyz"]) == 2
    assert "cannot start the bridge command 'no-such-command-xyz'" in capsys.readouterr().err


def test_failures_saved_from_a_bridge_run_rerun_against_the_same_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    mutant = "tests.mutants.api_handler_mutants:IgnoreIdChange"
    bridge = " ".join(command(mutant))
    saved = tmp_path / "failures"
    argv = ["run", "--bridge", bridge, "--profile", "dev", "--save-failures", str(saved)]
    assert main(argv) == 1
    assert list(saved.glob("*.json"))
    capsys.readouterr()
    # The files name the bridge command: asked to, rerun starts it again and replays exactly the saved chunks.
    assert main(["rerun", str(saved), "--use-saved-target"]) == 1
    out = capsys.readouterr().out
    assert "saved scenario(s) against --bridge" in out and "IgnoreIdChange" in out
    assert "FAIL  segment_per_call" in out
