"""The converter checks that compare with facts of the recording (conformance.recorded): what they
read, when they apply, and that they fail a converter that holds arguments back, sums usage or
loses a thought signature, on a hand-composed Gemini ``partialArgs`` stream too."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.converter import run_converter_conformance
from conformance.wire import load_body, to_sse
from conformance.wire.cases import bundled_cassette_dir, load_expectation
from conformance.wire.recorded import read_recording, signature_bytes
from conformance.wire.replay import replay_body
from reference_impl.converters import converter_for
from reference_impl.types import ChunkResponse, TokenUsage, ToolCallDelta

CORPUS = bundled_cassette_dir()
INCREMENTAL = "converter_arguments_stream_incrementally"
USAGE = "converter_usage_is_last_snapshot"
METADATA = "converter_provider_metadata_kept"
SIGNATURE = base64.b64encode(b"signature-for-partial-args").decode()


@pytest.fixture(autouse=True)
def _quiet_converters() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _part(part: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def _partial(path: str, **value: Any) -> dict[str, Any]:
    return {"functionCall": {"partialArgs": [{"jsonPath": path, **value}], "willContinue": True}}


@pytest.fixture
def partial_args_dir(tmp_path: Path) -> Path:
    """A Vertex streamed-arguments call: opened with a signature, values in three events, closed by {}."""
    payloads = [
        _part({"functionCall": {"name": "get_weather", "willContinue": True}, "thoughtSignature": SIGNATURE}),
        _part(_partial("$.city", stringValue="Par", willContinue=True)),
        _part(_partial("$.city", stringValue="is")),
        _part(_partial("$.days", numberValue=3)),
        _part({"functionCall": {}}),
        _part(
            {"text": ""},
            "STOP",
            usageMetadata={"promptTokenCount": 20, "candidatesTokenCount": 9, "totalTokenCount": 29},
        ),
    ]
    (tmp_path / "partial_args.sse").write_bytes(to_sse("gemini", payloads))
    arguments = {"city": "Paris", "days": 3}
    expected = {
        "format": "gemini",
        "tool_calls": [
            {
                "name": "get_weather",
                "call_id": None,
                "arguments": arguments,
                "raw_arguments": json.dumps(arguments, separators=(",", ":")),
            }
        ],
        "text": "",
        "finish_reason": "STOP",
        "error": None,
    }
    (tmp_path / "partial_args.expected.json").write_text(json.dumps({"expected": expected}), encoding="utf-8")
    return tmp_path


class _HoldArgumentsUntilFinish:
    """Gemini converter that keeps argument text back and sends it all just before the terminal chunk."""

    def __init__(self) -> None:
        self._inner = converter_for("gemini")
        self.api_errors = self._inner.api_errors
        self._held: list[ToolCallDelta] = []

    def _hold(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        for chunk in chunks:
            for delta in chunk.tool_calls or ():
                if delta.arguments_delta:
                    self._held.append(ToolCallDelta(delta.index, arguments_delta=delta.arguments_delta))
                    delta.arguments_delta = None
        return chunks

    def convert(self, event: Any) -> list[ChunkResponse]:
        return self._hold(self._inner.convert(event))

    def finish(self) -> list[ChunkResponse]:
        chunks = self._hold(self._inner.finish())
        return [ChunkResponse(tool_calls=self._held), *chunks] if self._held else chunks

    def fail(self, error: BaseException) -> list[ChunkResponse]:
        return self._hold(self._inner.fail(error))


def _results(factory: Any, directory: Path, api: str) -> dict[str, Any]:
    report = run_converter_conformance(factory, [directory], profile="dev", seed=0, apis=[api])
    return {result.check.id: result for result in report.results}


def test_replay_records_which_event_each_chunk_came_from() -> None:
    body = load_body(CORPUS / "openai-chat" / "single_call.yaml")
    result = replay_body(body)
    assert len(result.chunk_events) == len(result.chunks)
    positions = [event for event in result.chunk_events if event is not None]
    assert positions == sorted(positions)
    # The reference forwards each fragment with its event: the same events the SDK saw the text grow in.
    recording = read_recording(
        body.api, body.sse, load_expectation(CORPUS / "openai-chat" / "single_call.expected.json")
    )
    assert recording.calls is not None and recording.calls[0].progress is not None
    with_arguments = [
        event
        for chunk, event in zip(result.chunks, result.chunk_events, strict=True)
        if any(delta.arguments_delta for delta in chunk.tool_calls or ())
    ]
    assert with_arguments == [event for event, _ in recording.calls[0].progress]
    # Chat Completions has no end event: its terminal chunk comes from finish(), after the stream.
    assert result.chunk_events[-1] is None and result.chunks[-1].is_complete
    anthropic = replay_body(load_body(CORPUS / "anthropic" / "single_call.yaml"))
    assert anthropic.chunk_events[-1] is not None  # message_stop is an event


def test_recording_reads_cumulative_usage_and_signatures_from_the_sdk() -> None:
    cached = CORPUS / "anthropic" / "usage_with_cache_tokens.yaml"
    body = load_body(cached)
    usage = read_recording(body.api, body.sse, load_expectation(cached.with_suffix("").with_suffix(".expected.json")))
    assert usage.usage is not None
    assert usage.usage.prompt == {12, 12 + 96 + 2048} and usage.usage.completion == {34}
    every_chunk = CORPUS / "gemini" / "usage_on_every_chunk.yaml"
    body = load_body(every_chunk)
    gemini = read_recording(
        body.api, body.sse, load_expectation(every_chunk.with_name("usage_on_every_chunk.expected.json"))
    )
    assert gemini.usage is not None and gemini.usage.completion == {34, 34 + 21} and gemini.usage.total == 12 + 34 + 21
    assert gemini.calls is not None and [len(call.thought_signatures) for call in gemini.calls] == [1]
    assert (
        signature_bytes(base64.b64encode(gemini.calls[0].thought_signatures[0]).decode())
        == (gemini.calls[0].thought_signatures[0])
    )


def test_partial_args_are_read_as_value_events(partial_args_dir: Path) -> None:
    body = load_body(partial_args_dir / "partial_args.sse")
    recording = read_recording(body.api, body.sse, load_expectation(partial_args_dir / "partial_args.expected.json"))
    assert recording.calls is not None and len(recording.calls) == 1
    assert recording.calls[0].value_events == [1, 2, 3]
    assert recording.calls[0].thought_signatures == [base64.b64decode(SIGNATURE)]
    assert recording.usage is not None and recording.usage.prompt == {20}


def test_reference_passes_on_streamed_partial_args(partial_args_dir: Path) -> None:
    results = _results(converter_for, partial_args_dir, "gemini")
    assert all(result.status == "passed" for result in results.values()), {
        k: r.message for k, r in results.items() if r.status != "passed"
    }
    for check_id in (INCREMENTAL, USAGE, METADATA):
        assert results[check_id].scenarios_run == 1 and not results[check_id].not_applicable


def test_holding_partial_args_text_until_the_end_fails(partial_args_dir: Path) -> None:
    results = _results(lambda api, **options: _HoldArgumentsUntilFinish(), partial_args_dir, "gemini")
    assert results[INCREMENTAL].status == "failed"
    assert "held back until the end" in results[INCREMENTAL].message
    assert results["converter_outcome_matches"].status == "passed"  # the same calls come out in the end


def test_a_summed_or_missing_usage_fails(partial_args_dir: Path) -> None:
    class Doubled:
        def __init__(self) -> None:
            self._inner = converter_for("gemini")
            self.api_errors = self._inner.api_errors

        def _double(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
            for chunk in chunks:
                if chunk.usage is not None:
                    chunk.usage = TokenUsage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens * 2)
            return chunks

        def convert(self, event: Any) -> list[ChunkResponse]:
            return self._double(self._inner.convert(event))

        def finish(self) -> list[ChunkResponse]:
            return self._double(self._inner.finish())

        def fail(self, error: BaseException) -> list[ChunkResponse]:
            return self._double(self._inner.fail(error))

    results = _results(lambda api, **options: Doubled(), partial_args_dir, "gemini")
    assert results[USAGE].status == "failed" and "completion_tokens 18" in results[USAGE].message


def test_a_check_with_nothing_to_compare_is_skipped_not_passed() -> None:
    results = _results(converter_for, CORPUS / "anthropic", "anthropic")
    metadata = results[METADATA]
    assert metadata.status == "skipped" and metadata.scenarios_run == 0
    assert "not applicable" in metadata.skipped_reason and "no per-call metadata" in metadata.skipped_reason
    assert len(metadata.not_applicable) == results["converter_outcome_matches"].scenarios_run
    assert metadata.to_json()["not_applicable"] == metadata.not_applicable
    # Recordings that send arguments whole are listed, not counted, by the incremental check.
    incremental = results[INCREMENTAL]
    assert incremental.status == "passed"
    assert any(entry.startswith("no_argument_call.yaml:") for entry in incremental.not_applicable)
    assert (
        incremental.scenarios_run + len(incremental.not_applicable)
        == results["converter_outcome_matches"].scenarios_run
    )
