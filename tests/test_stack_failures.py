"""Every failing recording of a stack is named, grouped by finding, and saved with its expectation.

``stack_outcome_matches`` and ``stack_byte_split_invariant`` keep every distinct failure (not the
first three) and list under each one all the recordings that fail that way; ``run --save-failures``
writes each failing recording's body in its own framing with its expectation beside it (and the
pieces of a split), in a folder ``--cassette-dir`` and ``repro`` read back.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.stack import StackFinding, as_stack, load_saved_failure, run_stack_conformance
from conformance.verdict import Report
from conformance.wire import bundled_cassette_dir, load_body, load_expectation
from tests import stack_targets

BUNDLED = bundled_cassette_dir()


@pytest.fixture(scope="module")
def text_only_report() -> Report:
    stack = stack_targets.TextOnlyStack()
    return run_stack_conformance(stack, [BUNDLED], capabilities=stack.capabilities, profile="dev", seed=0, generated=0)


def test_every_failing_recording_is_listed_once_under_its_finding(text_only_report: Report) -> None:
    outcome = text_only_report.results[0]
    assert outcome.check.id == "stack_outcome_matches"
    listed = [name for finding in outcome.counterexamples for name in finding.recordings]
    assert sorted(listed) == sorted(outcome.failing_scenarios)  # each failing recording, once
    assert len(listed) == outcome.failing_examples == 29
    assert len(outcome.counterexamples) > 3  # no longer capped at the first three findings
    for finding in outcome.counterexamples:
        assert isinstance(finding.input, StackFinding)
        assert [r.name for r in finding.input.recordings] == finding.recordings
        assert finding.text.startswith(f"recording: {BUNDLED / finding.recordings[0]}\n")
    # Dropping every call is one finding, whichever tool and however many calls.
    lost = max(outcome.counterexamples, key=lambda finding: len(finding.recordings))
    assert len(lost.recordings) == 25 and lost.harm is not None and lost.harm.harm.value == "lost"
    assert {"openai-chat/single_call.yaml", "openai-chat/parallel_two_tools.yaml"} <= set(lost.recordings)


def test_the_reports_name_them(text_only_report: Report, tmp_path: Path) -> None:
    from conformance.report import render_terminal, write_json

    text = render_terminal(text_only_report)
    assert "counterexample 1 (25 recordings fail this way):" in text
    assert "  the same failure on 24 more recordings:\n    openai-chat/" in text
    for name in text_only_report.results[0].failing_scenarios:
        assert name in text
    write_json(text_only_report, tmp_path / "report.json")
    findings = json.loads((tmp_path / "report.json").read_text())["checks"][0]["counterexamples"]
    assert sum(len(finding["recordings"]) for finding in findings) == 29


def test_a_cut_call_that_ran_and_one_that_was_dropped_are_two_findings(capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "run",
            "--stack",
            "examples.stacks.openai_stack:stack_ignoring_the_end",
            "--profile",
            "dev",
            "--generated",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert "3 distinct failures shown" in out and "the same failure on" not in out


def test_split_failures_are_grouped_by_harm_and_every_recording_named() -> None:
    target = as_stack(stack_targets.decoding_each_read)
    report = run_stack_conformance(
        target.stack, [BUNDLED], capabilities=target.capabilities, profile="dev", seed=0, generated=0
    )
    split = report.results[1]
    assert split.status == "failed"
    listed = [name for finding in split.counterexamples for name in finding.recordings]
    assert sorted(listed) == sorted(split.failing_scenarios)
    assert "openai-chat/raw_unicode_split.yaml" in listed
    assert len(split.counterexamples) < len(listed)  # grouped
    assert all(isinstance(f.input, StackFinding) and f.input.recordings[0].pieces for f in split.counterexamples)


# -- saved --------------------------------------------------------------------------------------


def _save(argv: list[str], directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    # The recordings alone: what is saved is compared with the bundled files it came from.
    code = main(["run", *argv, "--profile", "dev", "--generated", "0", "--save-failures", str(directory)])
    assert code == 1
    return capsys.readouterr().out


def test_saved_bodies_are_the_bytes_served_with_the_expectation_beside_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "failures"
    out = _save(["--stack", "tests.stack_targets:TextOnlyStack"], saved, capsys)
    bodies = sorted(saved.rglob("*.sse"))
    assert len(bodies) == 29
    assert f"saved failing recording: {saved / 'openai-chat' / 'single_call.sse'}" in out
    assert (
        f"re-run them against the same target: toolcall-conformance run --stack tests.stack_targets:TextOnlyStack "
        f"--cassette-dir {saved}"
    ) in out
    repro = re.search(
        r"^reproduce one without this suite: toolcall-conformance repro (\S+) --client openai --call MODULE:FUNCTION ",
        out,
        flags=re.M,
    )
    assert repro is not None and Path(repro.group(1)) in bodies
    for body in bodies:
        stem = body.relative_to(saved).with_suffix("")
        original = load_body(BUNDLED / stem.with_suffix(".yaml"))
        assert load_body(body).data == original.data and load_body(body).api == original.api
        document = json.loads(body.with_suffix(".expected.json").read_text())
        want = load_expectation(BUNDLED / stem.with_suffix(".expected.json"))
        assert load_expectation(body.with_suffix(".expected.json")).to_json() == want.to_json()
        assert document["recording"] == f"{stem}.yaml"
        assert document["target"] == {
            "kind": "stack",
            "spec": "tests.stack_targets:TextOnlyStack",
            "capabilities": {"apis": ["openai-chat"], "reasoning": False},
        }
        assert [failure["check"] for failure in document["failures"]] == ["stack_outcome_matches"]
    # The folder is a recordings folder: a re-run finds every saved recording failing the same way.
    report = tmp_path / "again.json"
    main(["run", "--stack", "tests.stack_targets:TextOnlyStack", "--profile", "dev", "--cassette-dir", str(saved),
          "--generated", "0", "--report-json", str(report)])  # fmt: skip
    failing = json.loads(report.read_text())["checks"][0]["failing_scenarios"]
    assert failing == 29 * 2


def test_each_framing_keeps_its_suffix_and_a_server_profile_keeps_its_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "failures"
    argv = ["--stack", "tests.stack_targets:chat_stack", "--format", "ollama", "--format", "bedrock-converse"]
    _save(argv, saved, capsys)
    suffixes = {"".join(path.suffixes[-2:]) if path.name.endswith(".eventstream.bin") else path.suffix
                for path in saved.rglob("*") if path.is_file() and not path.name.endswith(".json")}  # fmt: skip
    assert suffixes == {".ndjson", ".eventstream.bin"}
    for body in (p for p in saved.rglob("*") if p.suffix in (".ndjson", ".bin")):
        assert load_saved_failure(body).body.api in ("ollama", "bedrock-converse")
    profiled = tmp_path / "profiled"
    _save(["--stack", "tests.stack_targets:ChatHonouringOptions"], profiled, capsys)
    cassette = profiled / "openai-compatible" / "dialect_cumulative_arguments.yaml"
    assert cassette.read_bytes() == (BUNDLED / "openai-compatible" / "dialect_cumulative_arguments.yaml").read_bytes()
    assert load_body(cassette).converter_options == {"cumulative_arguments": True}


def test_a_split_failure_saves_the_pieces_that_change_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "failures"
    _save(["--stack", "tests.stack_targets:decoding_each_read"], saved, capsys)
    pieces_file = saved / "openai-chat" / "raw_unicode_split.pieces.json"
    document = json.loads(pieces_file.read_text())
    assert document["check"] == "stack_byte_split_invariant"
    pieces = [base64.b64decode(piece) for piece in document["pieces"]]
    assert [sum(map(len, pieces[: n + 1])) for n in range(len(pieces) - 1)] == document["cuts"]
    failure = load_saved_failure(saved / "openai-chat" / "raw_unicode_split.sse")
    assert failure.pieces == tuple(pieces) and b"".join(pieces) == failure.body.data
    # The saved pieces reproduce it: whole, the stack is right; in those reads, it is not.
    whole = stack_targets.decoding_each_read("openai-chat", [failure.body.data], {})
    assert stack_targets.decoding_each_read("openai-chat", pieces, {}) != whole


def test_a_saved_failure_without_its_expectation_is_a_clear_error(tmp_path: Path) -> None:
    from conformance.wire import WireFormatError

    body = tmp_path / "single_call.sse"
    body.write_bytes(load_body(BUNDLED / "openai-chat" / "single_call.yaml").data)
    with pytest.raises(WireFormatError, match="no expectation beside it"):
        load_saved_failure(body)
    shutil.copy(BUNDLED / "openai-chat" / "single_call.expected.json", tmp_path)
    assert load_saved_failure(body).pieces is None


def test_a_failing_generated_body_is_saved_and_reruns_as_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "failures"
    argv = ["--stack", "examples.stacks.openai_stack:stack_ignoring_the_end", "--format", "openai-chat"]
    code = main(["run", *argv, "--profile", "dev", "--save-failures", str(saved)])
    assert code == 1
    capsys.readouterr()
    generated = sorted((saved / "generated" / "openai-chat").glob("*.sse"))
    assert generated, "no generated body saved"
    document = json.loads(generated[0].with_suffix(".expected.json").read_text())
    assert document["recording"].startswith("generated/openai-chat/")
    # Saved, it is a recording like any other: the same stack fails on it again, the reference passes.
    report = tmp_path / "again.json"
    main(["run", *argv, "--profile", "dev", "--generated", "0", "--cassette-dir", str(saved / "generated"),
          "--report-json", str(report)])  # fmt: skip
    findings = json.loads(report.read_text())["checks"][0]["counterexamples"]
    failing = {name for finding in findings for name in finding["recordings"]}
    assert {f"openai-chat/{body.name}" for body in generated} <= failing
