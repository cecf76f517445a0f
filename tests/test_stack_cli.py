"""``toolcall-conformance run --stack MODULE:FACTORY``: the factory contract, --format, reports, exit codes, progress.

The examples (``examples/stacks/``) are correct stacks on the real SDKs and must pass; their
planted-bug variants must fail with the harm they do. The shape tests use the SDK-free stacks of
``tests/stack_targets.py``.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.stack import StackCapabilities, StackFactoryError, as_stack
from conformance.wire import WIRE_APIS
from tests import stack_targets

EXAMPLE = "examples.stacks.openai_stack"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the factory contract ------------------------------------------------------------------------


def test_a_stack_function_is_taken_as_it_is_with_its_declared_capabilities() -> None:
    target = as_stack(stack_targets.declared_chat_stack)
    assert target.stack is stack_targets.declared_chat_stack
    assert target.capabilities == StackCapabilities(apis=("openai-chat",), reasoning=False)
    assert not target.made
    assert as_stack(stack_targets.chat_stack).capabilities is None


@pytest.mark.parametrize("factory", [stack_targets.ClosingStack, stack_targets.make_stack])
def test_a_zero_argument_factory_is_called_once_and_its_stack_read(factory: object) -> None:
    target = as_stack(factory)
    assert target.made
    assert target.capabilities == StackCapabilities(apis=("openai-chat",), reasoning=False)
    assert callable(target.stack)


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("NOT_CALLABLE", "is a dict, not a stack (stack(api, pieces, options)) or a factory of one"),
        ("two_arguments", "two_arguments(api, pieces) can be called neither as stack(api, pieces, options) nor"),
        ("raising_factory", "raising_factory() raised RuntimeError: no API key configured"),
        ("factory_of_a_string", "factory_of_a_string() returned a str, which cannot be called as stack("),
        ("unknown_capability", "unknown stack capabilities ['streaming']"),
        ("unknown_api", "unknown wire APIs ['openai_chat'] in apis"),
        ("capabilities_of_a_string", ".capabilities is a str; declare a StackCapabilities or a mapping"),
    ],
)
def test_unusable_targets_are_exit_2_with_a_typed_error_naming_them(
    attribute: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(StackFactoryError) as raised:
        as_stack(getattr(stack_targets, attribute), f"tests.stack_targets:{attribute}")
    assert message in str(raised.value)
    code, out, err = _run(["--stack", f"tests.stack_targets:{attribute}"], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("toolcall-conformance: error: --stack tests.stack_targets:")
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--stack", "no_such_module_xyz:stack"], "cannot import module 'no_such_module_xyz' from --stack"),
        (["--stack", "tests.stack_targets:nothing"], "module 'tests.stack_targets' has no attribute 'nothing'"),
        (["--stack", "tests.stack_targets"], "--stack must look like MODULE:FACTORY"),
        (
            ["--stack", "tests.stack_targets:declared_chat_stack", "--format", "anthropic"],
            "--format: the stack does not declare anthropic (it declares apis: openai-chat)",
        ),
        (["--handler", "reference_impl:ApiToolCallStreamingResponseHandler", "--format", "anthropic"], "--format goes"),
        (
            ["--stack", "tests.stack_targets:chat_stack", "--no-reasoning", "--realistic", "--deadline", "3"],
            "not used with --stack: --no-reasoning, --realistic",
        ),
        (["--stack", "tests.stack_targets:chat_stack", "--handler", "x:y"], "not allowed with argument"),
        (
            ["--converter", "reference_impl.converters:converter_for", "--format", "anthropic", "--format", "gemini"],
            "--converter needs exactly one --format",
        ),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["run", *argv])
    except SystemExit as exit_:  # argparse's own errors (mutually exclusive targets)
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err, err


def test_a_factory_stack_is_closed_after_the_run_and_a_failing_close_is_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack_targets.CLOSED.clear()
    code, out, _ = _run(["--stack", "tests.stack_targets:ClosingStack", "--profile", "dev"], capsys)
    assert code in (0, 1) and "stack_outcome_matches" in out
    assert stack_targets.CLOSED == ["closed"]
    code, out, err = _run(["--stack", "tests.stack_targets:FailingClose", "--profile", "dev"], capsys)
    assert code == 2
    assert "closing the stack raised OSError: connection pool already closed" in err
    # The run itself was complete: its report is printed, not lost to the failing close().
    assert "stack_outcome_matches" in out and "the report above is complete" in err


def test_format_restricts_the_recordings_to_the_apis_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report_path = tmp_path / "report.json"
    argv = ["--stack", "tests.stack_targets:chat_stack", "--format", "openai-chat", "--profile", "dev"]
    _run([*argv, "--report-json", str(report_path)], capsys)
    report = json.loads(report_path.read_text())
    outcome = next(check for check in report["checks"] if check["id"] == "stack_outcome_matches")
    reasons = {entry.split(": ", 1)[1] for entry in outcome["not_applicable"]}
    others = {f"the stack does not run {api}" for api in WIRE_APIS if api != "openai-chat"}
    assert reasons - others == {
        "needs the server profile {'cumulative_arguments': True}, which the stack does not take"
    }
    # 16 Chat, 17 dialects, 2 conversations; then 5 generated turns (profile dev) for the one API
    assert report["scenarios"] == outcome["scenarios_run"] == 35 + 5


# -- the examples --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["examples.stacks.openai_stack", "examples.stacks.anthropic_stack"])
def test_the_examples_are_correct_stacks_and_pass(
    module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"
    report_path = tmp_path / "report.json"
    code, out, err = _run(
        ["--stack", f"{module}:stack", "--report-json", str(report_path), "--junit-xml", str(junit)], capsys
    )
    assert code == 0, out
    assert out.startswith(f"toolcall-conformance: {module}:stack\nprofile ci, seed 0: ")
    assert "  PASS  stack_outcome_matches" in out and "  PASS  stack_byte_split_invariant" in out
    assert out.rstrip().endswith("2 passed, 0 failed, 0 skipped\nCONFORMANT")
    assert err == ""  # not a terminal, no --progress: nothing on stderr
    report = json.loads(report_path.read_text())
    assert report["conformant"] and report["target"] == f"{module}:stack"
    assert [case.get("name") for case in ET.parse(junit).getroot().iter("testcase")] == [
        "stack_outcome_matches",
        "stack_byte_split_invariant",
    ]


@pytest.mark.parametrize("module", ["examples.stacks.openai_stack", "examples.stacks.anthropic_stack"])
def test_the_planted_bug_fails_as_ran_wrong_and_the_gate_keeps_it(
    module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--stack", f"{module}:stack_ignoring_the_end", "--profile", "dev"]
    code, out, _ = _run(argv, capsys)
    assert code == 1
    assert "  FAIL  stack_outcome_matches       " in out and out.rstrip().endswith("NOT CONFORMANT")
    assert "stream_cut_after_arguments" in out
    assert "ran_wrong: call 0 (write_file" in out
    code, _, _ = _run([*argv, "--fail-on", "ran_wrong"], capsys)
    assert code == 1  # a call that must not run ran: at the top of the scale


def test_the_sdk_adapters_declare_their_api_through_make_stack() -> None:
    from conformance.adapters import anthropic_sdk, openai_sdk

    assert as_stack(openai_sdk.make_stack).capabilities == openai_sdk.ADAPTER.capabilities
    assert as_stack(anthropic_sdk.make_stack).capabilities == anthropic_sdk.ADAPTER.capabilities


# -- progress ------------------------------------------------------------------------------------


def test_progress_is_quiet_off_a_terminal_and_forced_by_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--stack", "tests.stack_targets:declared_chat_stack", "--profile", "dev"]
    _, _, err = _run(argv, capsys)
    assert err == ""
    _, _, err = _run([*argv, "--progress"], capsys)
    lines = err.splitlines()
    assert lines, "--progress writes lines even off a terminal"
    assert all(line.startswith("tests.stack_targets:declared_chat_stack: [") for line in lines), lines
    # The last line is the last step of the phase, with the elapsed time: 161 recordings, then the
    # generated turns of the one API it runs.
    assert re.match(r"\[161/162, \d+s\] generated/openai-chat", lines[-1].split(": ", 1)[1]), lines[-1]


# -- the same stack over the bridge ----------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
BRIDGED = f"{sys.executable} tests/bridge_targets/py_stack_target.py"


def test_the_same_stack_in_process_and_over_the_bridge_gets_the_same_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    target = "examples.stacks.anthropic_stack:stack_ignoring_the_end"
    command = f"{BRIDGED} {target} --capabilities " + shlex.quote(json.dumps({"apis": ["anthropic"]}))
    reports = []
    for argv in (["--stack", target], ["--bridge", command]):
        path = tmp_path / f"{len(reports)}.json"
        code, _, _ = _run([*argv, "--profile", "dev", "--report-json", str(path)], capsys)
        assert code == 1
        reports.append(json.loads(path.read_text()))
    in_process, bridged = (
        [
            (
                c["id"],
                c["status"],
                c["examples_run"],
                c["failing_examples"],
                [x["message"] for x in c["counterexamples"]],
            )
            for c in report["checks"]
        ]
        for report in reports
    )
    assert bridged == in_process
    code, _, err = _run(["--bridge", command, "--format", "gemini"], capsys)
    assert code == 2
    assert "--format: the stack does not declare gemini (it declares apis: anthropic)" in err


def test_the_page_quotes_the_examples_verbatim() -> None:
    page = (ROOT / "docs" / "stacks.md").read_text(encoding="utf-8")
    for sdk in ("openai", "anthropic"):
        section = page.split(f"## Example: a framework on the `{sdk}` SDK", 1)[1].split("\n## ", 1)[0]
        blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
        source = (ROOT / "examples" / "stacks" / f"{sdk}_stack.py").read_text(encoding="utf-8")
        assert blocks
        for block in blocks:
            assert block in source, block


def test_a_stack_that_hangs_is_stopped_at_its_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    # Nothing hangs without a deadline: a stack that never returns was waited for forever.
    code, out, _ = _run(["--stack", "tests.stack_targets:hanging", "--profile", "dev", "--deadline", "0.5"], capsys)
    assert code == 1
    assert "the stack did not finish within 0.5 s" in out and "STOPPED EARLY" in out
    assert "crashed" in out


def test_the_body_a_stack_hung_on_is_saved_and_hangs_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --save-failures wrote nothing for a hang: the one body a maintainer most needs was lost.
    saved = tmp_path / "failures"
    argv = ["--stack", "tests.stack_targets:hanging", "--profile", "dev", "--deadline", "0.3"]
    code, out, _ = _run([*argv, "--save-failures", str(saved)], capsys)
    assert code == 1 and "STOPPED EARLY" in out
    bodies = sorted(saved.rglob("*.sse"))
    assert len(bodies) == 1, sorted(saved.rglob("*"))
    document = json.loads(bodies[0].with_suffix(".expected.json").read_text(encoding="utf-8"))
    assert "openai-chat/" in document["recording"]
    failure = document["failures"][0]
    assert failure["harm"] == "crashed" and "did not finish within 0.3 s" in failure["message"]
    # Run on the saved folder alone, the stack hangs on that same body again.
    code, out, _ = _run([*argv, "--generated", "0", "--cassette-dir", str(saved)], capsys)
    assert code == 1 and "STOPPED EARLY" in out and f"{bodies[0].stem}." in out.split("STOPPED EARLY", 1)[1]


def test_a_stack_that_exits_the_process_is_exit_2_never_a_silent_pass(capsys: pytest.CaptureFixture[str]) -> None:
    # sys.exit(0) inside the stack ended the run with status 0 and no report: a false pass.
    code, _, err = _run(["--stack", "tests.stack_targets:exiting", "--profile", "dev"], capsys)
    assert code == 2
    assert "the target raised SystemExit(0)" in err and "nothing was judged" in err


@pytest.mark.parametrize("attribute", ["returning_a_number", "returning_none", "returning_a_bare_object_as_a_call"])
def test_a_result_that_says_nothing_is_a_crash_not_an_empty_turn(
    attribute: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # 12345, None or a call with no field at all were read as an empty turn (and passed on a turn
    # that has nothing in it).
    report_code, out, _ = _run(["--stack", f"tests.stack_targets:{attribute}", "--profile", "dev"], capsys)
    assert report_code == 1
    assert "FinalResultError" in out, out[-2000:]
    assert "  PASS  stack_outcome_matches" not in out
    # Every body fails, the cut and truncated ones too: an unreadable result is not "raising on an
    # abnormal end" (a stack returning None on every cut stream passed those).
    assert "failed in 40 of 40 runs" in out, out[-3000:]
    # The same result reads the same on every split (a memory address in it made splits differ).
    assert "  PASS  stack_byte_split_invariant" in out
    assert "minimal counterexample (40 recordings fail this way):" in out  # one finding, not one per object
