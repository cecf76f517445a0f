"""CohereV2Converter: the v2 chat stream (SSE) through the real cohere client library (ClientV2), offline.

Expected values are read off the events written below (the shapes of Cohere's documented
examples and of the real recording in ../shared), never from the converter's output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from new_wire_support import assert_matches_expected, byte_splits, recording, replay, replay_payloads
from test_converters_common import outcome_of

from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.turns.render import render, render_body
from conformance.wire.detect import payload_api
from conformance.wire.framing import frame_body
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import CohereV2Converter, iter_chunks

cohere = pytest.importorskip("cohere")
httpx = pytest.importorskip("httpx")

API = "cohere-v2"

MESSAGE_START = {
    "id": "66dec7d7-45e6-427c-8fd9-7d6375d12046",
    "type": "message-start",
    "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}},
}


def plan(text: str) -> dict[str, Any]:
    return {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": text}}}


def call_start(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}


def call_delta(index: int, fragment: str) -> dict[str, Any]:
    return {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": fragment}}}},
    }


def call_end(index: int) -> dict[str, Any]:
    return {"type": "tool-call-end", "index": index}


def message_end(finish: str = "TOOL_CALL", **extra: Any) -> dict[str, Any]:
    usage = {
        "billed_units": {"input_tokens": 46, "output_tokens": 14},
        "tokens": {"input_tokens": 1445, "output_tokens": 43},
        "cached_tokens": 704,
    }
    return {"type": "message-end", "delta": {"finish_reason": finish, "usage": usage, **extra}}


# Cohere's documented tool-use stream: a tool plan, then two calls whose arguments some models
# pretty-print ('{\n    "' ...), each call start / deltas / end by index.
PARALLEL = [
    MESSAGE_START,
    plan("I will search for the weather"),
    plan(" in Madrid and Paris."),
    call_start(0, "get_weather_kh3v6cxw4m3h", "get_weather"),
    call_delta(0, '{\n    "'),
    call_delta(0, "location"),
    call_delta(0, '": "'),
    call_delta(0, "Madrid"),
    call_delta(0, '"\n}'),
    call_end(0),
    call_start(1, "get_weather_9rbbq9sxeq4y", "get_weather"),
    call_delta(1, '{\n    "location": "Paris, Île-de-France"\n}'),
    call_end(1),
    message_end(),
]


def test_calls_by_index_with_pretty_printed_fragments_verbatim() -> None:
    outcome = replay(API, PARALLEL)
    assert outcome.deltas == [
        ToolCallDelta(0, "get_weather_kh3v6cxw4m3h", "get_weather"),
        ToolCallDelta(0, None, None, '{\n    "'),
        ToolCallDelta(0, None, None, "location"),
        ToolCallDelta(0, None, None, '": "'),
        ToolCallDelta(0, None, None, "Madrid"),
        ToolCallDelta(0, None, None, '"\n}'),
        ToolCallDelta(1, "get_weather_9rbbq9sxeq4y", "get_weather"),
        ToolCallDelta(1, None, None, '{\n    "location": "Paris, Île-de-France"\n}'),
    ]
    assert outcome.calls == [
        ("get_weather", "get_weather_kh3v6cxw4m3h", {"location": "Madrid"}),
        ("get_weather", "get_weather_9rbbq9sxeq4y", {"location": "Paris, Île-de-France"}),
    ]


def test_tool_plan_is_reasoning_and_message_end_is_the_terminal_event() -> None:
    outcome = replay(API, PARALLEL)
    assert outcome.reasoning == "I will search for the weather in Madrid and Paris."
    assert outcome.text == ""
    assert outcome.terminal.finish_reason == "TOOL_CALL"
    assert outcome.terminal.error is None
    # tokens (what the model used), not billed_units.
    assert outcome.terminal.usage == TokenUsage(1445, 43)


def test_usage_falls_back_to_billed_units() -> None:
    end = {
        "type": "message-end",
        "delta": {"finish_reason": "COMPLETE", "usage": {"billed_units": {"input_tokens": 5}}},
    }
    assert replay(API, [MESSAGE_START, end]).terminal.usage == TokenUsage(5, 0)


def test_tool_without_parameters_gets_start_then_end() -> None:
    outcome = replay(API, [MESSAGE_START, call_start(0, "currentTime_y46", "currentTime"), call_end(0), message_end()])
    assert outcome.deltas == [ToolCallDelta(0, "currentTime_y46", "currentTime")]
    assert outcome.calls == [("currentTime", "currentTime_y46", {})]


def test_arguments_already_on_the_start_event_are_forwarded() -> None:
    outcome = replay(API, [MESSAGE_START, call_start(0, "c1", "f", '{"a": 1}'), call_end(0), message_end()])
    assert outcome.arguments_of(0) == '{"a": 1}'


def test_done_marker_is_the_end_of_the_body() -> None:
    assert replay(API, PARALLEL, done_marker=True).summary == replay(API, PARALLEL).summary
    assert frame_body(API, PARALLEL, done_marker=True).endswith(b"\n\ndata: [DONE]\n\n")


def test_text_and_thinking_content() -> None:
    outcome = replay(
        API,
        [
            MESSAGE_START,
            {
                "type": "content-start",
                "index": 0,
                "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}},
            },
            {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"thinking": "Let me think."}}}},
            {"type": "content-end", "index": 0},
            {"type": "content-start", "index": 1, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
            {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "It is "}}}},
            {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "24°C."}}}},
            {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {"start": 6, "end": 11}}}},
            {"type": "citation-end", "index": 0},
            {"type": "content-end", "index": 1},
            message_end("COMPLETE"),
        ],
    )
    assert outcome.reasoning == "Let me think."
    assert outcome.text == "It is 24°C."
    assert outcome.terminal.finish_reason == "COMPLETE" and outcome.terminal.error is None


@pytest.mark.parametrize(
    ("finish", "extra", "kind"),
    [
        ("MAX_TOKENS", {}, "truncated"),
        ("ERROR", {"error": "internal error"}, "provider_error"),
        ("TIMEOUT", {}, "provider_error"),
        ("STOP_SEQUENCE", {}, None),
        ("COMPLETE", {}, None),
    ],
)
def test_finish_reasons(finish: str, extra: dict[str, Any], kind: str | None) -> None:
    outcome = replay(
        API, [MESSAGE_START, call_start(0, "c1", "f"), call_delta(0, '{"a": 1}'), message_end(finish, **extra)]
    )
    assert outcome.terminal.finish_reason == finish
    assert (outcome.terminal.error.kind if outcome.terminal.error else None) == kind
    if extra:
        assert outcome.terminal.error == StreamError("provider_error", "internal error")
    if kind:
        assert outcome.invocations == []


def test_stream_without_message_end_is_incomplete() -> None:
    outcome = replay(API, [MESSAGE_START, call_start(0, "c1", "f"), call_delta(0, '{"a": ')])
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.calls == [("f", "c1", None)]


def test_unknown_fields_change_nothing_and_unknown_types_are_dropped_by_the_library() -> None:
    noisy = [
        {**MESSAGE_START, "brand_new": {"x": 1}},
        {"type": "hologram-delta", "delta": {"message": {"x": 1}}},
        {**plan("I will search for the weather"), "extra": [1]},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": " in Madrid and Paris.", "new": 1}, "z": 2}},
        *PARALLEL[3:],
    ]
    converter = CohereV2Converter()
    assert replay(API, noisy, converter=converter).summary == replay(API, PARALLEL).summary
    assert not converter.unknown_events  # the library dropped it (with a logged warning)
    from_payloads = CohereV2Converter()
    assert replay_payloads(API, noisy, converter=from_payloads).summary == replay(API, PARALLEL).summary
    assert from_payloads.unknown_events == {"event 'hologram-delta'": 1}


def test_a_start_event_without_id_is_dropped_by_the_library_and_the_call_never_runs() -> None:
    # cohere's ToolCallV2 requires "id": its stream drops the whole tool-call-start (name
    # included) with only a warning; the arguments then arrive for a call that never started.
    start = call_start(0, "x", "f")
    del start["delta"]["message"]["tool_calls"]["id"]
    payloads = [MESSAGE_START, start, call_delta(0, '{"a": 1}'), call_end(0), message_end()]
    converter = CohereV2Converter()
    through_library = replay(API, payloads, converter=converter)
    assert through_library.calls == [(None, None, None)]
    assert through_library.invocations == []
    assert converter.problems
    from_payloads = replay_payloads(API, payloads)
    assert from_payloads.calls == [("f", None, {"a": 1})]


def test_delta_after_its_call_ended_is_dropped_with_a_problem() -> None:
    converter = CohereV2Converter()
    outcome = replay(
        API,
        [MESSAGE_START, call_start(0, "c1", "f", "{}"), call_end(0), call_delta(0, "x"), message_end()],
        converter=converter,
    )
    assert outcome.calls == [("f", "c1", {})]
    assert converter.problems


def _stream_through(body: bytes, *, broken: bool, content_type: str = "text/event-stream") -> Any:
    class Body(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield body
            if broken:
                raise httpx.ReadError("connection reset by peer")

    transport = httpx.MockTransport(
        lambda _request: httpx.Response(200, headers={"content-type": content_type}, stream=Body())
    )
    client = cohere.ClientV2(api_key="test-key-not-a-real-secret", httpx_client=httpx.Client(transport=transport))
    converter = CohereV2Converter()
    stream = client.chat_stream(model="command-a", messages=[{"role": "user", "content": "x"}])
    return outcome_of(list(iter_chunks(converter, stream)), converter)


def test_connection_dropped_mid_stream_is_incomplete() -> None:
    outcome = _stream_through(frame_body(API, PARALLEL[:6]), broken=True)
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert "ReadError" in outcome.terminal.error.message
    assert outcome.calls == [("get_weather", "get_weather_kh3v6cxw4m3h", None)]
    assert outcome.invocations == []


def test_a_body_that_is_not_an_event_stream_is_a_provider_error() -> None:
    # cohere's SSEError subclasses httpx.TransportError, but it is not a dropped connection.
    outcome = _stream_through(b'{"message": "upstream proxy error"}', broken=False, content_type="application/json")
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "SSEError" in outcome.terminal.error.message


def test_api_errors_are_cohere_and_httpx_classes() -> None:
    from cohere.core.api_error import ApiError

    errors = CohereV2Converter().api_errors
    assert ApiError in errors and httpx.TransportError in errors
    assert not {Exception, BaseException, ValueError, TypeError} & set(errors)


# -- the real recording (read in place from ../shared) ---------------------------------------------


def _real_payloads() -> tuple[list[Any], dict[str, Any]]:
    path, expected = recording("cohere/empty_tool_call.jsonl")
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip()], expected


def test_real_recording_through_the_library_and_from_payloads() -> None:
    payloads, expected = _real_payloads()
    assert_matches_expected(replay(API, payloads), expected)
    assert_matches_expected(replay(API, payloads, done_marker=True), expected)
    assert_matches_expected(replay_payloads(API, payloads), expected)


# -- rendered turns and byte splits ----------------------------------------------------------------

TURN = Turn(
    (
        Reasoning(("Two ", "tools.")),
        Call("get_weather", ('{"city": ', '"Zürich 🌦"}'), call_id="get_weather_1"),
        Call("ping", (), call_id="ping_2"),
        Text(("Done ", "ü.")),
    ),
    usage=(50, 9),
)

_BODY = render_body(TURN, API)


def test_rendered_turn_reads_back_as_written() -> None:
    outcome = replay(API, render(TURN, API))
    assert outcome.reasoning == "Two tools."
    assert outcome.text == "Done ü."
    assert outcome.calls == [("get_weather", "get_weather_1", {"city": "Zürich 🌦"}), ("ping", "ping_2", {})]
    assert outcome.terminal.finish_reason == "TOOL_CALL"
    assert outcome.terminal.usage == TokenUsage(50, 9)


@pytest.mark.parametrize(
    ("ending", "kind"), [("length", "truncated"), ("error", "provider_error"), ("cut", "incomplete")]
)
def test_rendered_abnormal_endings(ending: str, kind: str) -> None:
    turn = Turn((Text(("a",)), Call("f", ('{"a": ', "1}"), call_id="f_1")), ending=ending)  # type: ignore[arg-type]
    outcome = replay(API, render(turn, API))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == kind
    assert outcome.invocations == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=byte_splits(_BODY))
def test_any_byte_split_through_the_library_gives_the_same_outcome(pieces: list[bytes]) -> None:
    assert replay(API, body=_BODY, pieces=pieces).summary == replay(API, body=_BODY).summary


def test_detection() -> None:
    assert {payload_api(payload) for payload in render(TURN, API)} == {API}
    assert payload_api({"type": "message_start"}) == "anthropic"  # underscored: Anthropic, not Cohere
    assert payload_api({"type": "stream-start", "event_type": "stream-start"}) is None  # Cohere v1
