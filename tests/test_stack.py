"""The stack suite (``run_stack_conformance``): a whole provider stack, bytes in, final calls out.

The stack here is written from scratch for these tests (its own SSE reading and accumulation, no
SDK, nothing of ``reference_impl``), then broken one way at a time. It reads plain streams only (no
cut stream, error event or dialect), so it is run on the recordings below alone (``generated=0``);
the generated search has its own tests (``tests/test_stack_generated.py``).
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from conformance.stack import StackCapabilities, run_stack_conformance
from conformance.wire import bundled_cassette_dir

RECORDINGS = (
    "openai-chat/single_call",
    "openai-chat/parallel_two_tools",
    "openai-chat/raw_unicode_split",
    "openai-chat/unicode_escapes_split",
    "openai-chat/text_only",
    # The whole name restated on every chunk (MiniMax via NIM): read once, never concatenated.
    "openai-compatible/dialect_name_restated",
)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few plain OpenAI Chat recordings (no cut streams, no error events) for a small stack."""
    folder = tmp_path_factory.mktemp("recordings")
    for name in RECORDINGS:
        for suffix in (".yaml", ".expected.json"):
            shutil.copy(bundled_cassette_dir() / f"{name}{suffix}", folder / f"{Path(name).name}{suffix}")
    return folder


def _restatement_or_fragment(name: str, fragment: str) -> str:
    """A name fragment equal to the name so far is a restatement (A06), anything else continues it (A07)."""
    return name if fragment == name else name + fragment


def _chat_stack(body: bytes, add_name: Any = _restatement_or_fragment) -> dict[str, Any]:
    """OpenAI Chat SSE in, the calls an application would run out."""
    calls: dict[int, dict[str, str]] = {}
    text = []
    for line in body.decode("utf-8").splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        for choice in json.loads(line[5:]).get("choices", []):
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            for fragment in delta.get("tool_calls") or []:
                call = calls.setdefault(fragment["index"], {"id": "", "name": "", "arguments": ""})
                function = fragment.get("function") or {}
                call["id"] = call["id"] or fragment.get("id") or ""
                call["name"] = add_name(call["name"], function.get("name") or "")
                call["arguments"] += function.get("arguments") or ""
    return {
        "text": "".join(text),
        "tool_calls": [
            {
                "call_id": c["id"] or None,
                "name": c["name"],
                "raw_arguments": c["arguments"],
                "arguments": json.loads(c["arguments"] or "{}"),
            }
            for _, c in sorted(calls.items())
        ],
    }


def correct(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    return _chat_stack(b"".join(pieces))


def minting_ids(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """Replaces every provider id by a fresh random one, as some SDKs do for ids not on the wire."""
    result = correct(api, pieces, options)
    for call in result["tool_calls"]:
        call["call_id"] = f"minted_{uuid.uuid4().hex}"
    return result


def concatenating_names(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """Appends every name fragment, restatements too: ``get_weatherget_weather...`` (A06, NAME_CONCAT)."""
    return _chat_stack(b"".join(pieces), add_name=lambda name, fragment: name + fragment)


def decoding_each_piece(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """Decodes every network read on its own: a UTF-8 character split across two reads is lost (H02)."""
    text = "".join(piece.decode("utf-8", errors="ignore") for piece in pieces)
    return _chat_stack(text.encode("utf-8"))


CAPABILITIES = StackCapabilities(apis=("openai-chat",), reasoning=False)


def _statuses(stack: Any, recordings: Path) -> dict[str, str]:
    report = run_stack_conformance(stack, [recordings], capabilities=CAPABILITIES, profile="dev", seed=0, generated=0)
    return {result.check.id: result.status for result in report.results}


def test_a_correct_stack_passes(recordings: Path) -> None:
    assert _statuses(correct, recordings) == {"stack_outcome_matches": "passed", "stack_byte_split_invariant": "passed"}


def test_ids_minted_by_the_stack_are_wrong_ids_but_not_a_split_dependence(recordings: Path) -> None:
    # The provider sent ids, so replacing them is a finding of the outcome; but a random id per run
    # must not read as "this split changed the result".
    assert _statuses(minting_ids, recordings) == {
        "stack_outcome_matches": "failed",
        "stack_byte_split_invariant": "passed",
    }


def test_a_stack_that_decodes_each_read_alone_fails_the_split_check(recordings: Path) -> None:
    statuses = _statuses(decoding_each_piece, recordings)
    assert statuses == {"stack_outcome_matches": "passed", "stack_byte_split_invariant": "failed"}


def test_a_stack_that_concatenates_restated_names_fails_the_outcome_check(recordings: Path) -> None:
    report = run_stack_conformance(
        concatenating_names, [recordings], capabilities=CAPABILITIES, profile="dev", seed=0, generated=0
    )
    result = next(result for result in report.results if result.check.id == "stack_outcome_matches")
    assert result.status == "failed"
    assert "get_weatherget_weather" in result.message, result.message


def _with_finish_reason(finish_reason: str) -> Any:
    """``correct``, reporting ``finish_reason`` as the turn's stop reason whatever the stream said."""

    def stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        return {**correct(api, pieces, options), "finish_reason": finish_reason}

    return stack


def _wire_finish_reason(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """``correct``, reporting the stream's own finish_reason (the last one it sent)."""
    reasons = [
        json.loads(line[5:])["choices"][0].get("finish_reason")
        for line in b"".join(pieces).decode().splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]" and json.loads(line[5:]).get("choices")
    ]
    return {**correct(api, pieces, options), "finish_reason": next((r for r in reversed(reasons) if r), None)}


def test_a_stop_reason_that_means_nothing_is_a_finding_not_a_pass(recordings: Path) -> None:
    # A false pass before: the result's finish_reason was read and never compared.
    report = run_stack_conformance(
        _with_finish_reason("banana"), [recordings], capabilities=CAPABILITIES, profile="dev", seed=0, generated=0
    )
    result = next(result for result in report.results if result.check.id == "stack_outcome_matches")
    assert result.status == "failed"
    assert "finish_reason 'banana' is no stop reason openai-chat sends" in result.message, result.message


@pytest.mark.parametrize("stack", [_wire_finish_reason, _with_finish_reason("other")], ids=["wire", "says-nothing"])
def test_the_stream_s_own_stop_reason_or_one_that_says_nothing_passes(stack: Any, recordings: Path) -> None:
    assert _statuses(stack, recordings)["stack_outcome_matches"] == "passed"


def test_a_normalised_stop_reason_is_read_by_what_it_means() -> None:
    from conformance.wire import ExpectedToolCall, Outcome
    from conformance.wire.replay import compare_finish_reason

    calls = [ExpectedToolCall("f", "call_0", {}, "{}")]
    finished = Outcome("openai-chat", calls, finish_reason="tool_calls")
    cut = Outcome("openai-chat", calls, finish_reason="length")
    assert compare_finish_reason(finished, Outcome("openai-chat", calls, finish_reason="tool-calls")) == []
    assert compare_finish_reason(finished, Outcome("openai-chat", calls, finish_reason="tool_call")) == []
    assert compare_finish_reason(cut, Outcome("openai-chat", calls, finish_reason="length")) == []
    assert compare_finish_reason(finished, Outcome("openai-chat", calls, finish_reason="length")) == [
        "finish_reason 'length' says the turn ended truncated; the stream's is 'tool_calls'"
    ]
    assert compare_finish_reason(cut, Outcome("openai-chat", calls, finish_reason="stop")) == [
        "finish_reason 'stop' reads as a turn that ended normally; the stream's is 'length' (truncated)"
    ]
    # Reported as finished beside an error that says it did not: the error tells the caller.
    assert compare_finish_reason(cut, Outcome("openai-chat", calls, finish_reason="stop", error="truncated")) == []


def test_a_truncated_turn_reported_as_finished_loses_its_ending() -> None:
    from conformance.verdict.harm import Harm
    from conformance.wire import ExpectedToolCall, Outcome
    from conformance.wire.harm import outcome_harm

    cut = Outcome("openai-chat", [ExpectedToolCall("f", "call_0", None, '{"a"')], text="Hel", finish_reason="length")
    said_stop = Outcome(
        "openai-chat", [ExpectedToolCall("f", "call_0", None, '{"a"', error="x")], text="Hel", finish_reason="stop"
    )
    verdict = outcome_harm(cut, said_stop)
    assert verdict.harm is Harm.LOST
    assert "cut the turn at its token limit ('length') but the result says it ended normally ('stop')" in verdict.why


def test_a_stack_that_hangs_only_on_split_bodies_fails_the_split_check(recordings: Path) -> None:
    # The hang happened inside the split search: that check must not read as passed.
    import time

    def hangs_when_split(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        while len(pieces) > 1:
            time.sleep(0.02)
        return correct(api, pieces, options)

    report = run_stack_conformance(
        hangs_when_split, [recordings], capabilities=CAPABILITIES, profile="dev", generated=0, deadline_seconds=0.3
    )
    statuses = {result.check.id: result.status for result in report.results}
    assert statuses["stack_byte_split_invariant"] == "failed"
    assert "did not finish within 0.3 s" in report.stopped and "reads" in report.stopped
