"""OllamaConverter: /api/chat NDJSON through the real ollama client library, offline.

Expected values are read off the wire lines below (written as the Go server writes them), never
from the converter's output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from new_wire_support import byte_splits, replay, replay_payloads
from test_converters_common import outcome_of

from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.turns.render import render, render_body
from conformance.wire.detect import payload_api
from conformance.wire.framing import frame_body
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import OllamaConverter, iter_chunks

ollama = pytest.importorskip("ollama")
httpx = pytest.importorskip("httpx")

API = "ollama"


def line(message: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"model": "qwen3", "created_at": "2026-01-15T10:00:00.000000Z", "done": False}
    if message is not None:
        payload["message"] = {"role": "assistant", "content": "", **message}
    return {**payload, **fields}


def done(reason: str = "stop", prompt: int = 120, completion: int = 37) -> dict[str, Any]:
    return line({}, done=True, done_reason=reason, prompt_eval_count=prompt, eval_count=completion)


# The shape of ollama.com/blog/streaming-tool: a thinking model (think: true) streams "thinking",
# then one line per whole tool call (arguments a JSON object; the first call has no index), then
# the done line, whose done_reason is "stop" although the model called tools.
BODY = (
    b'{"model":"qwen3","created_at":"2026-01-15T10:00:00Z","message":{"role":"assistant","content":"",'
    b'"thinking":"The user wants "},"done":false}\n'
    b'{"model":"qwen3","created_at":"2026-01-15T10:00:01Z","message":{"role":"assistant","content":"",'
    b'"thinking":"two cities."},"done":false}\n'
    b'{"model":"qwen3","created_at":"2026-01-15T10:00:02Z","message":{"role":"assistant","content":"",'
    b'"tool_calls":[{"function":{"name":"get_current_weather","arguments":{"format":"celsius","location":'
    b'"Z\xc3\xbcrich"}}}]},"done":false}\n'
    b'{"model":"qwen3","created_at":"2026-01-15T10:00:03Z","message":{"role":"assistant","content":"",'
    b'"tool_calls":[{"function":{"index":1,"name":"get_current_weather","arguments":{"location":'
    b'"Toronto","format":"celsius"}}}]},"done":false}\n'
    b'{"model":"qwen3","created_at":"2026-01-15T10:00:04Z","message":{"role":"assistant","content":""},'
    b'"done":true,"done_reason":"stop","total_duration":912000000,"prompt_eval_count":120,'
    b'"prompt_eval_duration":1000,"eval_count":37,"eval_duration":2000}\n'
)


def test_whole_calls_become_dense_indexes_with_arguments_serialised_once() -> None:
    outcome = replay(API, body=BODY)
    assert outcome.deltas == [
        ToolCallDelta(0, None, "get_current_weather"),
        ToolCallDelta(0, None, None, '{"format": "celsius", "location": "Zürich"}'),
        ToolCallDelta(1, None, "get_current_weather"),
        ToolCallDelta(1, None, None, '{"location": "Toronto", "format": "celsius"}'),
    ]
    assert outcome.calls == [
        ("get_current_weather", None, {"format": "celsius", "location": "Zürich"}),
        ("get_current_weather", None, {"location": "Toronto", "format": "celsius"}),
    ]
    assert len(outcome.invocations) == 2
    assert outcome.reasoning == "The user wants two cities."
    assert outcome.text == ""


def test_done_reason_stop_after_tool_calls_is_a_normal_end_with_usage() -> None:
    outcome = replay(API, body=BODY)
    assert outcome.terminal.is_complete
    assert outcome.terminal.finish_reason == "stop"
    assert outcome.terminal.error is None
    assert outcome.terminal.usage == TokenUsage(120, 37)


def test_think_tags_in_content_stay_in_content() -> None:
    # Go's encoder writes "<" and ">" as \u003c and \u003e; the library decodes them.
    body = (
        b'{"model":"qwen3","message":{"role":"assistant","content":"\\u003cthink\\u003e"},"done":false}\n'
        b'{"model":"qwen3","message":{"role":"assistant","content":"hmm"},"done":false}\n'
        b'{"model":"qwen3","message":{"role":"assistant","content":"\\u003c/think\\u003e"},"done":false}\n'
        b'{"model":"qwen3","message":{"role":"assistant","content":"Hi \\u0026 bye"},"done":false}\n'
        b'{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}\n'
    )
    outcome = replay(API, body=body)
    assert outcome.text == "<think>hmm</think>Hi & bye"
    assert outcome.reasoning == ""


def test_the_encoder_escapes_like_go() -> None:
    body = frame_body(API, [line({"content": "<think>a & b</think>\u2028"})])
    assert b"\\u003cthink\\u003ea \\u0026 b\\u003c/think\\u003e\\u2028" in body
    assert body.endswith(b"}\n") and body.count(b"\n") == 1


def test_done_reason_length_is_truncated_and_no_call_runs() -> None:
    outcome = replay(
        API,
        [
            line({"tool_calls": [{"function": {"name": "write_file", "arguments": {"path": "a.md"}}}]}),
            done("length"),
        ],
    )
    assert outcome.terminal.finish_reason == "length"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "truncated"
    assert outcome.invocations == []
    assert outcome.ends[0].metadata["truncated"] is True


def test_stream_without_a_done_line_is_incomplete() -> None:
    outcome = replay(API, [line({"content": "Hel"}), line({"content": "lo"})])
    assert outcome.text == "Hello"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.terminal.finish_reason is None


def test_error_line_mid_stream_is_a_provider_error_and_keeps_what_came_before() -> None:
    body = frame_body(API, [line({"content": "Working"})]) + b'{"error":"model runner has unexpectedly stopped"}\n'
    outcome = replay(API, body=body)
    assert outcome.text == "Working"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "model runner has unexpectedly stopped" in outcome.terminal.error.message
    assert "ResponseError" in outcome.terminal.error.message


def test_error_line_as_a_dict() -> None:
    [chunk] = OllamaConverter().convert({"error": "out of memory"})
    assert chunk.is_complete and chunk.error == StreamError("provider_error", "out of memory")


def test_no_argument_tool_and_empty_object() -> None:
    outcome = replay(
        API,
        [
            line({"tool_calls": [{"function": {"name": "list_files", "arguments": {}}}]}),
            line({"tool_calls": [{"function": {"index": 1, "name": "refresh"}}]}),
            done(),
        ],
    )
    # ollama-python's model requires "arguments": a call without them stops its stream, and the
    # turn is then incomplete, so even the well-formed first call must not run.
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "ValidationError" in outcome.terminal.error.message
    assert outcome.calls == [("list_files", None, None)]
    assert outcome.ends[0].metadata["provider_error"] is True
    assert outcome.invocations == []

    from_dicts = replay_payloads(
        API,
        [
            line({"tool_calls": [{"function": {"name": "list_files", "arguments": {}}}]}),
            line({"tool_calls": [{"function": {"index": 1, "name": "refresh"}}]}),
            done(),
        ],
    )
    assert from_dicts.arguments_of(0) == "{}"
    assert from_dicts.arguments_of(1) == ""
    assert from_dicts.calls == [("list_files", None, {}), ("refresh", None, {})]
    assert from_dicts.terminal.error is None


def test_call_id_and_index_are_dropped_by_the_library_but_kept_from_dicts() -> None:
    payloads = [
        line({"tool_calls": [{"id": "call_a1", "function": {"name": "f", "arguments": {"x": 1}}}]}),
        line({"tool_calls": [{"id": "call_b2", "function": {"index": 1, "name": "g", "arguments": {}}}]}),
        done(),
    ]
    through_library = replay(API, payloads)
    assert through_library.calls == [("f", None, {"x": 1}), ("g", None, {})]
    converter = OllamaConverter()
    chunks = [chunk for payload in payloads for chunk in converter.convert(payload)] + converter.finish()
    from_dicts = outcome_of(chunks, converter)
    assert from_dicts.calls == [("f", "call_a1", {"x": 1}), ("g", "call_b2", {})]


def test_argument_string_from_a_compatible_server_is_forwarded_verbatim() -> None:
    converter = OllamaConverter()
    chunks = converter.convert(line({"tool_calls": [{"function": {"name": "f", "arguments": '{"a": [1, 2]}'}}]}))
    chunks += converter.convert(done())
    assert outcome_of(chunks, converter).arguments_of(0) == '{"a": [1, 2]}'


def test_unknown_fields_at_every_level_change_nothing() -> None:
    plain = [
        line({"content": "Hi"}),
        line({"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}),
        done(),
    ]
    noisy = [
        {**line({"content": "Hi", "images": None, "brand_new": {"x": 1}}), "logprobs": [], "new_top_level": 3},
        line(
            {"tool_calls": [{"type": "function", "extra": 1, "function": {"name": "f", "arguments": {"a": 1}, "z": 2}}]}
        ),
        {**done(), "new_metric": 1, "context": [1, 2]},
    ]
    assert replay(API, noisy).summary == replay(API, plain).summary
    assert replay_payloads(API, noisy).summary == replay(API, plain).summary


def test_a_line_of_unknown_shape_is_counted_from_payloads_and_fatal_in_the_library() -> None:
    payloads = [{"status": "loading model"}, line({"content": "Hi"}), done()]
    converter = OllamaConverter()
    outcome = replay_payloads(API, payloads, converter=converter)
    assert outcome.text == "Hi" and outcome.terminal.error is None
    assert converter.unknown_events == {"line without message or done": 1}
    # ollama-python validates each line with pydantic: such a line stops its stream.
    through_library = replay(API, payloads)
    assert through_library.terminal.error is not None and through_library.terminal.error.kind == "provider_error"


def test_lines_after_done_are_ignored() -> None:
    converter = OllamaConverter()
    outcome = replay(API, [line({"content": "a"}), done(), line({"content": "b"})], converter=converter)
    assert outcome.text == "a"
    assert converter.ignored["event after the terminal event"] == 1


def _broken_transport(body: bytes) -> Any:
    class Body(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield body
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    return httpx.MockTransport(lambda _request: httpx.Response(200, stream=Body()))


def test_connection_dropped_mid_stream_is_incomplete() -> None:
    body = frame_body(API, [line({"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]})])
    client = ollama.Client(host="http://127.0.0.1:11434", transport=_broken_transport(body))
    converter = OllamaConverter()
    stream = client.chat(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    outcome = outcome_of(list(iter_chunks(converter, stream)), converter)
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert "RemoteProtocolError" in outcome.terminal.error.message
    assert outcome.invocations == []


def test_api_errors_are_the_librarys_own_and_never_bare_builtins() -> None:
    errors = OllamaConverter().api_errors
    assert ollama.ResponseError in errors and httpx.TransportError in errors
    assert not {Exception, BaseException, ValueError, TypeError} & set(errors)
    assert OllamaConverter().connection_errors == (httpx.TransportError,)


# -- the renderer and byte splits ------------------------------------------------------------------

TURN = Turn(
    (
        Reasoning(("Two ", "tools.")),
        Text(("Checking ", "ü 🌦")),
        Call("get_weather", ('{"city": ', '"Zürich"}'), call_id="call_1"),
        Call("get_time", ('{"tz": "Asia/東京"}',), call_id="call_2"),
        Call("ping", ()),
    ),
    usage=(50, 9),
)


def test_rendered_turn_reads_back_as_written() -> None:
    payloads = render(TURN, API)
    # Two reasoning lines, two text lines, then one line per call; Go omits index 0.
    calls = [payload["message"]["tool_calls"][0]["function"] for payload in payloads[4:7]]
    assert [call.get("index") for call in calls] == [None, 1, 2]
    assert calls[0]["arguments"] == {"city": "Zürich"}
    assert payloads[-1]["done"] is True and payloads[-1]["done_reason"] == "stop"
    outcome = replay(API, payloads)
    assert outcome.reasoning == "Two tools."
    assert outcome.text == "Checking ü 🌦"
    assert outcome.calls == [
        ("get_weather", None, {"city": "Zürich"}),
        ("get_time", None, {"tz": "Asia/東京"}),
        ("ping", None, {}),
    ]
    assert outcome.terminal.usage == TokenUsage(50, 9)


def test_rendered_think_tags_variant() -> None:
    turn = Turn((Reasoning(("plan",)), Text(("ok",))), extras={"ollama_think_tags": True})
    assert replay(API, render(turn, API)).text == "<think>plan</think>ok"


def test_renderer_refuses_arguments_ollama_cannot_send() -> None:
    with pytest.raises(ValueError, match="whole calls only"):
        render(Turn((Call("f", ('{"a": ',)),)), API)


_BODY = render_body(TURN, API)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=byte_splits(_BODY))
def test_any_byte_split_through_the_library_gives_the_same_outcome(pieces: list[bytes]) -> None:
    assert replay(API, body=_BODY, pieces=pieces).summary == replay(API, body=_BODY).summary


@settings(max_examples=25, deadline=None)
@given(extra=st.dictionaries(st.text(min_size=1, max_size=8), st.integers() | st.text(max_size=5), max_size=3))
def test_extra_keys_from_payloads_never_crash(extra: dict[str, Any]) -> None:
    noisy = [{**extra, **payload} for payload in render(TURN, API)]
    assert replay_payloads(API, noisy).calls == replay(API, render(TURN, API)).calls


def test_detection() -> None:
    assert {payload_api(payload) for payload in render(TURN, API)} == {"ollama"}
    assert payload_api({"error": "boom"}) is None
    assert payload_api(json.loads(BODY.splitlines()[0])) == "ollama"
