"""Stream converters: the shared contract, the drivers, and the real recordings in ../shared/real-recordings.

Also the helpers the per-API converter tests import (``replay``, ``outcome_of``, ``Outcome``):
every test replays SSE bytes through the REAL SDK client offline (``conformance.wire``), converts
the SDK's own objects and feeds the chunks to the reference handler.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.wire import aiter_sdk_events, iter_sdk_events, load_body, stream_why_not, to_sse
from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    StreamError,
    ToolCallDelta,
    ToolInvocation,
)
from reference_impl.converters import (
    CONVERTERS,
    AnthropicConverter,
    ChunkAssembler,
    GeminiConverter,
    OpenAIChatConverter,
    OpenAIResponsesConverter,
    StreamConverter,
    aiter_chunks,
    converter_for,
    iter_chunks,
)

# -- helpers shared by tests/test_converters_*.py ---------------------------------------------------


@dataclass
class Outcome:
    """What a stream became: the converter's chunks and the reference handler's verdict."""

    chunks: list[ChunkResponse]
    converter: StreamConverter
    ends: list[SegmentEvent]
    invocations: list[ToolInvocation]
    text: str
    reasoning: str

    @property
    def terminal(self) -> ChunkResponse:
        return self.chunks[-1]

    @property
    def deltas(self) -> list[ToolCallDelta]:
        return [delta for chunk in self.chunks for delta in chunk.tool_calls or ()]

    def deltas_of(self, index: int) -> list[ToolCallDelta]:
        return [delta for delta in self.deltas if delta.index == index]

    def arguments_of(self, index: int) -> str:
        return "".join(delta.arguments_delta or "" for delta in self.deltas_of(index))

    @property
    def indexes(self) -> list[int]:
        """Dense indexes in order of first appearance."""
        return list(dict.fromkeys(delta.index for delta in self.deltas))

    @property
    def calls(self) -> list[tuple[str | None, str | None, dict[str, Any] | None]]:
        """(tool_name, call_id, arguments or None when the END is an error), in END order."""
        return [
            (
                end.metadata.get("tool_name"),
                end.metadata.get("call_id"),
                dict(end.metadata["arguments"]) if "arguments" in end.metadata else None,
            )
            for end in self.ends
        ]

    @property
    def summary(self) -> tuple[Any, ...]:
        """Everything a re-chunked replay must reproduce."""
        return (
            [json.dumps(call, sort_keys=True) for call in self.calls],
            [self.arguments_of(index) for index in self.indexes],
            self.text,
            self.reasoning,
            self.terminal.finish_reason,
            self.terminal.error.kind if self.terminal.error else None,
        )


def outcome_of(chunks: Sequence[ChunkResponse], converter: StreamConverter) -> Outcome:
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in chunks:
        handler.feed(chunk)
    handler.finalize()
    events = handler.get_all_events()

    def joined(kind: SegmentType) -> str:
        return "".join(e.delta for e in events if e.segment_type is kind and e.event_type is SegmentEventType.CONTENT)

    ends = [e for e in events if e.segment_type is SegmentType.TOOL_CALL and e.event_type is SegmentEventType.END]
    return Outcome(
        list(chunks),
        converter,
        ends,
        handler.get_all_invocations(),
        joined(SegmentType.TEXT),
        joined(SegmentType.REASONING),
    )


def replay(
    api: str,
    payloads: Sequence[Any] | None = None,
    *,
    sse: bytes | None = None,
    pieces: Sequence[bytes] | None = None,
    converter: StreamConverter | None = None,
) -> Outcome:
    """Serve the body through the real SDK (in ``pieces``), convert, and run the reference handler."""
    if sse is None:
        assert payloads is not None
        sse = to_sse(api, payloads)
    converter = converter if converter is not None else converter_for(api)
    chunks = list(iter_chunks(converter, iter_sdk_events(api, pieces if pieces is not None else [sse])))
    return outcome_of(chunks, converter)


def assert_contract(outcome: Outcome) -> None:
    """Invariants of every converter's output."""
    chunks = outcome.chunks
    assert chunks, "a converter always ends with a terminal chunk"
    assert [chunk.is_complete for chunk in chunks].count(True) == 1
    assert chunks[-1].is_complete
    assert all(chunk.error is None for chunk in chunks[:-1])
    assert outcome.indexes == list(range(len(outcome.indexes))), "indexes are dense, 0-based, in first-appearance order"
    for index in outcome.indexes:
        deltas = outcome.deltas_of(index)
        assert sum(1 for d in deltas if d.name) <= 1 or len({d.name for d in deltas if d.name}) > 1, "name restated"
        assert sum(1 for d in deltas if d.call_id) <= 1, "call id restated"
        assert all(d.arguments_delta != "" for d in deltas), "empty fragments are dropped"


# -- the contract ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", sorted(CONVERTERS))
def test_converter_for_returns_a_fresh_converter_per_call(api: str) -> None:
    first, second = converter_for(api), converter_for(api)
    assert type(first) is CONVERTERS[api]
    assert first is not second
    assert first.api == api
    assert not first.is_complete


@pytest.mark.parametrize("api", ["openai", "bedrock", "", "Anthropic"])
def test_converter_for_rejects_unknown_apis_with_the_list_of_known_ones(api: str) -> None:
    with pytest.raises(ValueError, match=r"openai-chat, openai-responses, anthropic, gemini"):
        converter_for(api)


def test_converter_classes_are_exported_under_their_api_names() -> None:
    from reference_impl.converters import (
        BedrockConverseConverter,
        BedrockInvokeConverter,
        CohereV2Converter,
        OllamaConverter,
    )

    expected = {
        "openai-chat": OpenAIChatConverter,
        "openai-responses": OpenAIResponsesConverter,
        "anthropic": AnthropicConverter,
        "gemini": GeminiConverter,
        "ollama": OllamaConverter,
        "bedrock-converse": BedrockConverseConverter,
        "bedrock-invoke": BedrockInvokeConverter,
        "cohere-v2": CohereV2Converter,
    }
    assert expected == CONVERTERS


def test_chunk_assembler_keeps_wire_order_by_starting_new_chunks() -> None:
    pieces = ChunkAssembler()
    pieces.reasoning("think")
    pieces.content("a")
    pieces.content("b")
    pieces.tool(ToolCallDelta(0, "c", "f", "{}"))
    pieces.content("after")
    pieces.reasoning("again")
    chunks = pieces.build(usage=None, is_complete=True, finish_reason="stop")
    assert [(c.reasoning, c.content, bool(c.tool_calls)) for c in chunks] == [
        ("think", "ab", True),
        (None, "after", False),
        ("again", "", False),
    ]
    assert [c.is_complete for c in chunks] == [False, False, True]
    assert chunks[-1].finish_reason == "stop"


def test_chunk_assembler_builds_nothing_for_nothing_and_a_bare_terminal_chunk_when_needed() -> None:
    assert ChunkAssembler().build() == []
    [chunk] = ChunkAssembler().build(error=StreamError("incomplete", "x"), is_complete=True)
    assert chunk.is_complete and chunk.error == StreamError("incomplete", "x")


_CHAT_CALL = [
    {"choices": [{"index": 0, "delta": {"content": "Hi"}}]},
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
                    ]
                },
            }
        ]
    },
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]


def test_finish_emits_the_terminal_chunk_once_and_later_events_are_ignored() -> None:
    converter = OpenAIChatConverter()
    events = list(iter_sdk_events("openai-chat", [to_sse("openai-chat", _CHAT_CALL)]))
    chunks = [chunk for event in events for chunk in converter.convert(event)]
    assert not any(chunk.is_complete for chunk in chunks)
    [terminal] = converter.finish()
    assert terminal.is_complete and terminal.finish_reason == "tool_calls" and terminal.error is None
    assert converter.is_complete
    assert converter.finish() == []
    assert converter.convert(events[0]) == []
    assert converter.ignored["event after the terminal event"] == 1
    assert converter.fail(RuntimeError("late")) == []
    assert converter.problems and "after the terminal event" in converter.problems[-1]


def test_fail_keeps_everything_before_and_ends_with_a_provider_error() -> None:
    converter = OpenAIChatConverter()
    events = list(iter_sdk_events("openai-chat", [to_sse("openai-chat", _CHAT_CALL[:2])]))
    chunks = [chunk for event in events for chunk in converter.convert(event)]
    chunks += converter.fail(ValueError("boom"))
    outcome = outcome_of(chunks, converter)
    assert outcome.text == "Hi"
    assert outcome.terminal.error == StreamError("provider_error", "ValueError: boom")
    assert outcome.invocations == []
    assert outcome.calls == [("f", "call_1", None)]
    assert outcome.ends[0].metadata["provider_error"] is True


def test_iter_chunks_propagates_errors_that_are_not_the_sdks_own() -> None:
    def broken_stream() -> Any:
        yield from iter_sdk_events("openai-chat", [to_sse("openai-chat", _CHAT_CALL[:1])])
        raise RuntimeError("a bug, not a stream event")

    with pytest.raises(RuntimeError, match="a bug"):
        list(iter_chunks(OpenAIChatConverter(), broken_stream()))


def test_iter_chunks_turns_the_sdks_own_errors_into_a_fail_chunk() -> None:
    import openai

    def stream() -> Any:
        yield from iter_sdk_events("openai-chat", [to_sse("openai-chat", _CHAT_CALL[:3])])
        raise openai.APIConnectionError(request=None)  # type: ignore[arg-type]

    chunks = list(iter_chunks(OpenAIChatConverter(), stream()))
    assert chunks[-1].error is not None and chunks[-1].error.kind == "incomplete"
    assert "APIConnectionError" in chunks[-1].error.message


@pytest.mark.parametrize(
    ("api", "converter_class"),
    [("openai-chat", OpenAIChatConverter), ("anthropic", AnthropicConverter), ("gemini", GeminiConverter)],
)
def test_api_errors_are_the_sdks_error_classes(api: str, converter_class: type[StreamConverter]) -> None:
    errors = converter_class().api_errors
    assert errors and all(issubclass(error, BaseException) for error in errors)
    assert not any(error in (Exception, BaseException, ValueError, TypeError) for error in errors)


def test_aiter_chunks_matches_iter_chunks() -> None:
    sse = to_sse("openai-chat", _CHAT_CALL)

    async def run() -> list[ChunkResponse]:
        return [chunk async for chunk in aiter_chunks(OpenAIChatConverter(), aiter_sdk_events("openai-chat", [sse]))]

    assert asyncio.run(run()) == list(iter_chunks(OpenAIChatConverter(), iter_sdk_events("openai-chat", [sse])))


def test_aiter_chunks_turns_the_sdks_own_errors_into_a_fail_chunk() -> None:
    sse = to_sse("openai-chat", _CHAT_CALL[:2]) + b'data: {"error": {"message": "queue full", "code": 503}}\n\n'

    async def run() -> list[ChunkResponse]:
        return [chunk async for chunk in aiter_chunks(OpenAIChatConverter(), aiter_sdk_events("openai-chat", [sse]))]

    chunks = asyncio.run(run())
    assert chunks[-1].error is not None and chunks[-1].error.kind == "provider_error"
    assert "queue full" in chunks[-1].error.message
    assert outcome_of(chunks, OpenAIChatConverter()).text == "Hi"


# -- the real recordings (not in the repository: CI has them at ../shared) -------------------------

RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"
_NO_SDK_HERE = ("bedrock", "cohere")  # AWS event streams and Cohere v2: no SDK of those in this project
# Recordings that disagree with the converters for a defensible reason: {relative path: reason}.
_DISAGREEMENTS: dict[str, str] = {}


def _recording_params() -> list[Any]:
    if not RECORDINGS.is_dir():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"real recordings not found at {RECORDINGS} (they are not in the repository; "
                    "CI provides them at ../shared/real-recordings)"
                ),
                id="no-real-recordings",
            )
        ]
    params = []
    for expected in sorted(RECORDINGS.glob("*/*.expected.json")):
        document = json.loads(expected.read_text(encoding="utf-8"))
        relative = document["file"]
        if relative.endswith(".eventstream.bin") or relative.split("/")[0] in _NO_SDK_HERE:
            continue
        marks = []
        if relative in _DISAGREEMENTS:
            marks.append(pytest.mark.xfail(strict=True, reason=_DISAGREEMENTS[relative]))
        params.append(pytest.param(expected, marks=marks, id=relative))
    return params


@pytest.mark.parametrize("expected_path", _recording_params())
def test_real_recording_through_sdk_converter_and_handler(expected_path: Path) -> None:
    document = json.loads(expected_path.read_text(encoding="utf-8"))
    expected = document["expected"]
    body = load_body(RECORDINGS / document["file"])
    outcome = replay(body.api, sse=body.sse)
    assert_contract(outcome)

    # The converter: one dense index per client call, in stream order, with the wire's names and ids.
    firsts = {}
    for delta in outcome.deltas:
        entry = firsts.setdefault(delta.index, {"name": [], "id": None})
        if delta.name:
            entry["name"].append(delta.name)
        entry["id"] = entry["id"] or delta.call_id
    assert [("".join(firsts[i]["name"]), firsts[i]["id"]) for i in outcome.indexes] == [
        (call["name"], call["id"]) for call in expected["tool_calls"]
    ]
    # The handler: the same calls with parsed arguments; a call whose arguments never became valid
    # JSON (truncated) is an error END and never an invocation. Compared as a multiset: the handler
    # emits ENDs in START order, and a call without arguments starts only at the end.
    want = [(call["name"], call["id"], call["arguments"]) for call in expected["tool_calls"]]
    assert Counter(json.dumps(call, sort_keys=True) for call in outcome.calls) == Counter(
        json.dumps(call, sort_keys=True) for call in want
    )
    valid = [(name, call_id, arguments) for name, call_id, arguments in want if arguments is not None]
    assert Counter(
        json.dumps([inv.name, inv.to_dict()["arguments"]], sort_keys=True) for inv in outcome.invocations
    ) == (Counter(json.dumps([name, arguments], sort_keys=True) for name, _, arguments in valid))
    provider_ids = {call_id for _, call_id, _ in valid if call_id}
    assert provider_ids <= {inv.id for inv in outcome.invocations}
    assert len(outcome.converter.server_tool_calls) == len(expected["server_tool_calls"])
    assert outcome.text == expected["text"]
    assert len(outcome.reasoning) == expected["reasoning_chars"]
    assert outcome.terminal.finish_reason == expected["finish_reason"]
    # The kind the recording calls for: the suite's one reading of each API's stop reasons.
    kind = stream_why_not(body.api, expected["finish_reason"], expected["error"])
    assert (outcome.terminal.error.kind if outcome.terminal.error is not None else None) == kind
    if expected["error"]:
        assert str(expected["error"]["message"]) in outcome.terminal.error.message
    assert not outcome.converter.unknown_events
    assert not outcome.converter.problems


def _recording_files() -> list[Path]:
    if not RECORDINGS.is_dir():
        return []
    return [
        RECORDINGS / json.loads(path.read_text(encoding="utf-8"))["file"]
        for path in sorted(RECORDINGS.glob("*/*.expected.json"))
        if not path.name.endswith(".eventstream.bin.expected.json") and path.parent.name not in _NO_SDK_HERE
    ]


_RECORDING_FILES = _recording_files()


@pytest.mark.skipif(not _RECORDING_FILES, reason=f"real recordings not found at {RECORDINGS}")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_real_recordings_give_the_same_result_under_any_byte_split(data: Any) -> None:
    path = data.draw(st.sampled_from(_RECORDING_FILES), label="recording")
    body = load_body(path)
    cuts = data.draw(st.lists(st.integers(0, len(body.sse)), max_size=60), label="cuts")
    bounds = [0, *sorted(cuts), len(body.sse)]
    pieces = [body.sse[a:b] for a, b in itertools.pairwise(bounds)]
    pieces.insert(data.draw(st.integers(0, len(pieces)), label="empty piece at"), b"")
    assert replay(body.api, sse=body.sse, pieces=pieces).summary == replay(body.api, sse=body.sse).summary
