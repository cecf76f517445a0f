"""AnthropicConverter: Messages stream events through the real anthropic SDK (create and the stream() helper)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import anthropic
import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_converters_common import assert_contract, outcome_of, replay

from conformance.wire import aiter_sdk_events, to_sse
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import AnthropicConverter, aiter_chunks, iter_chunks

API = "anthropic"


def message_start(input_tokens: int = 25, output_tokens: int = 1, **usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-model",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
        },
    }


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **body: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": body}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def tool_use(index: int, tool_id: str, name: str, fragments: list[str], *, closed: bool = True) -> list[dict[str, Any]]:
    events = [start(index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}})]
    events += [delta(index, type="input_json_delta", partial_json=fragment) for fragment in fragments]
    return [*events, stop(index)] if closed else events


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        start(index, {"type": "text", "text": ""}),
        *(delta(index, type="text_delta", text=piece) for piece in pieces),
        stop(index),
    ]


def message_end(stop_reason: str = "tool_use", output_tokens: int = 15) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


PING = {"type": "ping"}


def run(*payloads: dict[str, Any], converter: AnthropicConverter | None = None) -> Any:
    outcome = replay(API, payloads, converter=converter)
    assert_contract(outcome)
    return outcome


THINKING_TEXT_TWO_TOOLS = [
    message_start(),
    start(0, {"type": "thinking", "thinking": "", "signature": ""}),
    delta(0, type="thinking_delta", thinking="The user wants two things."),
    delta(0, type="signature_delta", signature="c2lnbmF0dXJl"),
    stop(0),
    PING,
    *text_block(1, "Certainly! ", "Checking ü."),
    *tool_use(2, "toolu_01A", "get_weather", ["", '{"city": ', '"Zürich 🌦"}']),
    *tool_use(3, "toolu_01B", "get_time", ["", '{"tz": "Asia/東京"}']),
    *message_end(),
]


def test_block_indexes_become_dense_and_empty_first_fragment_is_dropped() -> None:
    outcome = run(*THINKING_TEXT_TWO_TOOLS)
    assert outcome.deltas == [
        ToolCallDelta(0, "toolu_01A", "get_weather"),
        ToolCallDelta(0, None, None, '{"city": '),
        ToolCallDelta(0, None, None, '"Zürich 🌦"}'),
        ToolCallDelta(1, "toolu_01B", "get_time"),
        ToolCallDelta(1, None, None, '{"tz": "Asia/東京"}'),
    ]
    assert outcome.calls == [
        ("get_weather", "toolu_01A", {"city": "Zürich 🌦"}),
        ("get_time", "toolu_01B", {"tz": "Asia/東京"}),
    ]
    assert outcome.reasoning == "The user wants two things."
    assert outcome.text == "Certainly! Checking ü."
    assert outcome.terminal.finish_reason == "tool_use"
    assert outcome.terminal.error is None


def test_usage_is_the_last_cumulative_snapshot_never_a_sum() -> None:
    outcome = run(
        message_start(25, 1, cache_read_input_tokens=100, cache_creation_input_tokens=5),
        *tool_use(0, "toolu_1", "f", ["{}"]),
        {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 9}},
        *message_end(output_tokens=15),
    )
    assert outcome.terminal.usage == TokenUsage(130, 15)


def test_no_argument_tool_with_one_empty_fragment_or_none_at_all() -> None:
    outcome = run(
        message_start(),
        *text_block(0, "I'll update the list."),
        PING,
        *tool_use(1, "toolu_1", "updateIssueList", [""]),
        *tool_use(2, "toolu_2", "refresh", []),
        *message_end(),
    )
    assert outcome.calls == [("updateIssueList", "toolu_1", {}), ("refresh", "toolu_2", {})]


def test_server_tool_blocks_are_not_client_calls() -> None:
    converter = AnthropicConverter()
    outcome = run(
        message_start(),
        *text_block(0, "Let me search."),
        start(1, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        delta(1, type="input_json_delta", partial_json='{"query":'),
        delta(1, type="input_json_delta", partial_json=' "x"}'),
        stop(1),
        start(2, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
        stop(2),
        *tool_use(3, "toolu_9", "get_exchange_rate", ['{"from": "EUR"}']),
        *message_end(),
        converter=converter,
    )
    assert outcome.calls == [("get_exchange_rate", "toolu_9", {"from": "EUR"})]
    assert converter.server_tool_calls == [
        {"index": 1, "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": '{"query": "x"}'}
    ]
    assert converter.server_tool_results == [
        {"index": 2, "type": "web_search_tool_result", "id": "srvtoolu_1", "name": None}
    ]
    assert not converter.unknown_events


def test_truncated_by_max_tokens_without_block_stop() -> None:
    outcome = run(
        message_start(),
        *text_block(0, "I'll create the file."),
        *tool_use(1, "toolu_1", "make_file", ['{"filename": "tax.md", "lines_of_text": ["# Tax'], closed=False),
        *message_end("max_tokens"),
    )
    assert outcome.terminal.finish_reason == "max_tokens"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "truncated"
    assert outcome.calls == [("make_file", "toolu_1", None)]
    assert outcome.ends[0].metadata["truncated"] is True
    assert outcome.invocations == []


def test_refusal_is_a_provider_error() -> None:
    outcome = run(message_start(), *tool_use(0, "toolu_1", "f", ["{}"]), *message_end("refusal"))
    assert outcome.terminal.error == StreamError("provider_error", "stop_reason='refusal'")
    assert outcome.invocations == []


def test_error_event_raised_by_the_sdk_keeps_what_came_before() -> None:
    sse = (
        to_sse(
            API,
            [message_start(), *text_block(0, "Working"), *tool_use(1, "toolu_1", "f", ['{"a":'], closed=False)],
        )
        + b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    )
    outcome = replay(API, sse=sse)
    assert_contract(outcome)
    assert outcome.text == "Working"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "Overloaded" in outcome.terminal.error.message
    assert outcome.calls == [("f", "toolu_1", None)]
    assert outcome.ends[0].metadata["provider_error"] is True


def test_error_event_as_a_dict() -> None:
    converter = AnthropicConverter()
    chunks = converter.convert({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert chunks[-1].error == StreamError("provider_error", "(overloaded_error): Overloaded")
    assert chunks[-1].is_complete


def test_message_delta_without_message_stop_is_still_complete() -> None:
    outcome = run(message_start(), *tool_use(0, "toolu_1", "f", ["{}"]), message_end()[0])
    assert outcome.terminal.error is None
    assert outcome.calls == [("f", "toolu_1", {})]


def test_stream_cut_before_the_stop_reason_is_incomplete() -> None:
    outcome = run(message_start(), *tool_use(0, "toolu_1", "f", ['{"a": 1}']))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.invocations == []


def test_unknown_event_delta_and_block_types_are_counted_not_fatal() -> None:
    converter = AnthropicConverter()
    outcome = run(
        message_start(),
        {"type": "brand_new_event", "payload": 1},
        start(0, {"type": "hologram", "data": "?"}),
        delta(0, type="hologram_delta", data="?"),
        stop(0),
        start(1, {"type": "redacted_thinking", "data": "abc"}),
        stop(1),
        *tool_use(2, "toolu_1", "f", ["{}"]),
        *message_end(),
        converter=converter,
    )
    assert outcome.calls == [("f", "toolu_1", {})]
    assert converter.unknown_events == {
        "event 'brand_new_event'": 1,
        "content block 'hologram'": 1,
        "delta 'hologram_delta'": 1,
    }


def test_input_json_delta_before_its_block_start_is_a_nameless_call() -> None:
    converter = AnthropicConverter()
    outcome = run(
        message_start(),
        delta(4, type="input_json_delta", partial_json="{}"),
        stop(4),
        *message_end(),
        converter=converter,
    )
    assert outcome.calls == [(None, None, None)]
    assert converter.problems


def test_tool_use_with_input_on_its_start_and_no_deltas() -> None:
    outcome = run(
        message_start(),
        start(0, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"city": "Zürich"}}),
        stop(0),
        *message_end(),
    )
    assert outcome.arguments_of(0) == '{"city": "Zürich"}'
    assert outcome.calls == [("f", "toolu_1", {"city": "Zürich"})]


def test_events_after_message_stop_are_ignored() -> None:
    converter = AnthropicConverter()
    outcome = run(
        message_start(), *text_block(0, "a"), *message_end("end_turn"), *text_block(1, "b"), converter=converter
    )
    assert outcome.text == "a"
    assert converter.ignored["event after the terminal event"] == 3


# -- the messages.stream() helper and async ---------------------------------------------------------------


def test_messages_stream_helper_gives_the_same_chunks_as_create() -> None:
    sse = to_sse(API, THINKING_TEXT_TWO_TOOLS)
    transport = httpx2.MockTransport(
        lambda _request: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse)
    )
    client = anthropic.Anthropic(api_key="test-key-not-a-real-secret", http_client=httpx2.Client(transport=transport))
    converter = AnthropicConverter()
    with client.messages.stream(
        model="claude-test-model", max_tokens=64, messages=[{"role": "user", "content": "x"}]
    ) as stream:
        chunks = list(iter_chunks(converter, stream))
    assert chunks == replay(API, sse=sse).chunks
    assert converter.ignored["helper event input_json"] == 5
    assert not converter.unknown_events


def test_async_stream() -> None:
    sse = to_sse(API, THINKING_TEXT_TWO_TOOLS)

    async def run_async() -> list[Any]:
        return [chunk async for chunk in aiter_chunks(AnthropicConverter(), aiter_sdk_events(API, [sse]))]

    chunks = asyncio.run(run_async())
    assert outcome_of(chunks, AnthropicConverter()).summary == replay(API, sse=sse).summary


# -- byte-level splits ---------------------------------------------------------------------------------

SPLIT_BODY = to_sse(API, THINKING_TEXT_TWO_TOOLS).replace(b"\n\n", b"\r\n\r\n", 5)


def test_one_byte_pieces_give_the_one_piece_result() -> None:
    single_bytes = [SPLIT_BODY[i : i + 1] for i in range(len(SPLIT_BODY))]
    assert replay(API, sse=SPLIT_BODY, pieces=single_bytes).summary == replay(API, sse=SPLIT_BODY).summary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, len(SPLIT_BODY)), max_size=40), empties=st.lists(st.integers(0, 50), max_size=4))
def test_any_byte_split_gives_the_one_piece_result(cuts: list[int], empties: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SPLIT_BODY)]
    pieces = [SPLIT_BODY[a:b] for a, b in itertools.pairwise(bounds)]
    for position in empties:
        pieces.insert(position % (len(pieces) + 1), b"")
    whole = replay(API, sse=SPLIT_BODY)
    assert json.dumps(whole.calls)  # sanity: both calls are valid
    assert replay(API, sse=SPLIT_BODY, pieces=pieces).summary == whole.summary
