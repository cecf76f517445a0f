"""Bedrock converters: ConverseStream and InvokeModelWithResponseStream through a real boto3 client, offline.

Bodies are AWS binary event streams written by ``conformance.wire.frame_body`` and
decoded by botocore's own parser; expected values are read off the events written below, never
from the converters' output.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from new_wire_support import (
    assert_matches_expected,
    byte_splits,
    decode_event_stream,
    ours_as_tuples,
    recording,
    replay,
    replay_payloads,
)
from test_converters_common import outcome_of
from test_converters_common import replay as replay_anthropic

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn
from conformance.turns.render import render, render_body
from conformance.wire import to_sse
from conformance.wire.detect import payload_api
from conformance.wire.eventstream import EventStreamError, encode_message, iter_messages
from conformance.wire.framing import frame_body
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import BedrockConverseConverter, BedrockInvokeConverter, iter_chunks

boto3 = pytest.importorskip("boto3")
botocore = pytest.importorskip("botocore")

CONVERSE = "bedrock-converse"
INVOKE = "bedrock-invoke"


def ev(kind: str, **body: Any) -> dict[str, Any]:
    return {kind: body}


def delta(index: int, **body: Any) -> dict[str, Any]:
    return ev("contentBlockDelta", contentBlockIndex=index, delta=body, p="abcdefgh")


def tool_start(index: int, tool_id: str, name: str, **extra: Any) -> dict[str, Any]:
    return ev(
        "contentBlockStart", contentBlockIndex=index, start={"toolUse": {"toolUseId": tool_id, "name": name, **extra}}
    )


def stop(index: int) -> dict[str, Any]:
    return ev("contentBlockStop", contentBlockIndex=index, p="abc")


def metadata(input_tokens: int = 353, output_tokens: int = 38, **more: int) -> dict[str, Any]:
    usage = {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens}
    return ev("metadata", usage={**usage, **more}, metrics={"latencyMs": 924}, p="abcdefghijklmnop")


START = ev("messageStart", role="assistant", p="abcdefghijklmnopqrstuvwxyz")

# The shape of the real claude-3-haiku ConverseStream recording: a text block (deltas without a
# start), then a toolUse block whose first input fragment is "", then messageStop and, after it,
# metadata.
TEXT_THEN_TWO_TOOLS = [
    START,
    delta(0, text="Let me check "),
    delta(0, text="both."),
    stop(0),
    tool_start(1, "tooluse_p0X002uYQ9y", "top_song"),
    delta(1, toolUse={"input": ""}),
    delta(1, toolUse={"input": '{"'}),
    delta(1, toolUse={"input": 'sign": "W'}),
    delta(1, toolUse={"input": 'ZPZ"}'}),
    stop(1),
    tool_start(2, "tooluse_Tm3Nv", "get_time"),
    delta(2, toolUse={"input": ""}),
    delta(2, toolUse={"input": '{"tz": "Asia/東京"}'}),
    stop(2),
    ev("messageStop", stopReason="tool_use", p="abcdefghi"),
    metadata(),
]


def test_block_indexes_become_dense_and_fragments_are_verbatim() -> None:
    outcome = replay(CONVERSE, TEXT_THEN_TWO_TOOLS)
    assert outcome.deltas == [
        ToolCallDelta(0, "tooluse_p0X002uYQ9y", "top_song"),
        ToolCallDelta(0, None, None, '{"'),
        ToolCallDelta(0, None, None, 'sign": "W'),
        ToolCallDelta(0, None, None, 'ZPZ"}'),
        ToolCallDelta(1, "tooluse_Tm3Nv", "get_time"),
        ToolCallDelta(1, None, None, '{"tz": "Asia/東京"}'),
    ]
    assert outcome.calls == [
        ("top_song", "tooluse_p0X002uYQ9y", {"sign": "WZPZ"}),
        ("get_time", "tooluse_Tm3Nv", {"tz": "Asia/東京"}),
    ]
    assert outcome.text == "Let me check both."
    assert outcome.terminal.finish_reason == "tool_use"
    assert outcome.terminal.error is None


def test_metadata_after_message_stop_puts_usage_on_the_terminal_chunk() -> None:
    outcome = replay(CONVERSE, TEXT_THEN_TWO_TOOLS)
    assert outcome.terminal.usage == TokenUsage(353, 38)
    assert [chunk.is_complete for chunk in outcome.chunks].count(True) == 1


def test_cache_tokens_count_as_prompt_tokens() -> None:
    outcome = replay(
        CONVERSE,
        [
            START,
            delta(0, text="hi"),
            ev("messageStop", stopReason="end_turn"),
            metadata(10, 5, cacheReadInputTokens=100),
        ],
    )
    assert outcome.terminal.usage == TokenUsage(110, 5)


def test_metadata_before_message_stop_as_in_hand_written_fixtures() -> None:
    outcome = replay(CONVERSE, [START, delta(0, text="hi"), metadata(7, 3), ev("messageStop", stopReason="end_turn")])
    assert outcome.terminal.finish_reason == "end_turn"
    assert outcome.terminal.usage == TokenUsage(7, 3)


def test_message_stop_without_metadata_is_still_complete() -> None:
    events = [START, tool_start(0, "t1", "f"), delta(0, toolUse={"input": "{}"}), stop(0)]
    outcome = replay(CONVERSE, [*events, ev("messageStop", stopReason="tool_use")])
    assert outcome.terminal.error is None and outcome.terminal.usage is None
    assert outcome.calls == [("f", "t1", {})]


def test_stream_cut_before_message_stop_is_incomplete() -> None:
    body = frame_body(CONVERSE, [START, tool_start(0, "t1", "f"), delta(0, toolUse={"input": '{"a": 1}'})])
    # The body also ends in the middle of a frame: botocore waits for the rest, which never comes.
    outcome = replay(CONVERSE, body=body + frame_body(CONVERSE, [stop(0)])[:9])
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.invocations == []


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("max_tokens", "truncated"),
        ("model_context_window_exceeded", "truncated"),
        ("guardrail_intervened", "provider_error"),
        ("content_filtered", "provider_error"),
        ("malformed_tool_use", "provider_error"),
        ("end_turn", None),
        ("stop_sequence", None),
    ],
)
def test_stop_reasons(reason: str, kind: str | None) -> None:
    outcome = replay(
        CONVERSE,
        [START, tool_start(0, "t1", "f"), delta(0, toolUse={"input": '{"a": '}), ev("messageStop", stopReason=reason)],
    )
    assert outcome.terminal.finish_reason == reason
    assert (outcome.terminal.error.kind if outcome.terminal.error else None) == kind
    if kind:
        assert outcome.invocations == []


def _exception_frame(kind: str, message: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return encode_message(headers, json.dumps({"message": message}).encode())


def test_exception_frame_mid_stream_is_a_provider_error_and_keeps_what_came_before() -> None:
    body = frame_body(CONVERSE, [START, delta(0, text="Working"), stop(0), tool_start(1, "t1", "f")])
    body += _exception_frame("modelStreamErrorException", "Model is overloaded")
    outcome = replay(CONVERSE, body=body)
    assert outcome.text == "Working"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "Model is overloaded" in outcome.terminal.error.message
    assert outcome.calls == [("f", "t1", None)]
    assert outcome.ends[0].metadata["provider_error"] is True


def test_exception_event_as_a_dict() -> None:
    [chunk] = BedrockConverseConverter().convert({"throttlingException": {"message": "Too many requests"}})
    assert chunk.is_complete
    assert chunk.error == StreamError("provider_error", "throttlingException: Too many requests")


def test_corrupt_frame_is_a_provider_error() -> None:
    body = bytearray(frame_body(CONVERSE, [START, delta(0, text="Hi")]))
    body[-1] ^= 0xFF  # the last message CRC no longer matches
    outcome = replay(CONVERSE, body=bytes(body))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "ChecksumMismatch" in outcome.terminal.error.message


def test_server_tool_and_its_result_are_not_client_calls() -> None:
    # The shape of the real nova-2-lite recording (code interpreter, then a client toolUse).
    converter = BedrockConverseConverter()
    outcome = replay(
        CONVERSE,
        [
            START,
            tool_start(0, "tooluse_srv", "nova_code_interpreter", type="server_tool_use"),
            delta(0, toolUse={"input": '{"snippet":"1234 * 5678"}'}),
            stop(0),
            ev(
                "contentBlockStart",
                contentBlockIndex=1,
                start={"toolResult": {"toolUseId": "tooluse_srv", "type": "nova_code_interpreter_result"}},
            ),
            delta(1, toolResult=[{"json": {"stdOut": "7006652", "exitCode": 0}}]),
            stop(1),
            tool_start(2, "tooluse_client", "final_result", type="tool_use"),
            delta(2, toolUse={"input": '{"result":7006652.0}'}),
            stop(2),
            ev("messageStop", stopReason="tool_use"),
            metadata(),
        ],
        converter=converter,
    )
    assert outcome.calls == [("final_result", "tooluse_client", {"result": 7006652.0})]
    assert outcome.indexes == [0]
    assert converter.server_tool_calls == [
        {
            "index": 0,
            "type": "server_tool_use",
            "id": "tooluse_srv",
            "name": "nova_code_interpreter",
            "input": '{"snippet":"1234 * 5678"}',
        }
    ]
    assert converter.server_tool_results == [
        {"index": 1, "type": "nova_code_interpreter_result", "id": "tooluse_srv", "status": None}
    ]
    assert not converter.unknown_events and not converter.problems


def test_reasoning_content_goes_to_reasoning_and_its_signature_is_quiet() -> None:
    converter = BedrockConverseConverter()
    outcome = replay(
        CONVERSE,
        [
            START,
            delta(0, reasoningContent={"text": "The user wants "}),
            delta(0, reasoningContent={"text": "a song."}),
            delta(0, reasoningContent={"signature": "c2lnbmF0dXJl"}),
            stop(0),
            delta(1, text="Sure."),
            stop(1),
            ev("messageStop", stopReason="end_turn"),
        ],
        converter=converter,
    )
    assert outcome.reasoning == "The user wants a song."
    assert outcome.text == "Sure."
    assert not converter.unknown_events


def test_unknown_members_events_and_fields_never_crash() -> None:
    plain = [START, delta(0, text="Hi"), stop(0), ev("messageStop", stopReason="end_turn"), metadata()]
    noisy = [
        {"messageStart": {"role": "assistant", "p": "abc", "brandNew": 1}},
        {"hologramEvent": {"x": 1, "p": "ab"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "newField": {"a": 1}, "p": "a"}},
        {"contentBlockStart": {"contentBlockIndex": 1, "start": {"hologram": {"a": 1}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"hologramDelta": {"a": 1}}}},
        stop(0),
        {"messageStop": {"stopReason": "end_turn", "additionalModelResponseFields": {"x": [1]}, "more": True}},
        {"metadata": {**metadata()["metadata"], "serviceTier": {"type": "default"}, "newMetric": 3}},
    ]
    converter = BedrockConverseConverter()
    outcome = replay(CONVERSE, noisy, converter=converter)
    assert outcome.summary == replay(CONVERSE, plain).summary
    # botocore drops the unknown event type; unknown union members reach the converter by name.
    assert converter.unknown_events == {"block start 'hologram'": 1, "delta 'hologramDelta'": 1}
    from_payloads = BedrockConverseConverter()
    assert replay_payloads(CONVERSE, noisy, converter=from_payloads).summary == outcome.summary
    assert from_payloads.unknown_events == {
        "event 'hologramEvent'": 1,
        "block start 'hologram'": 1,
        "delta 'hologramDelta'": 1,
    }


def test_a_union_with_two_members_stops_botocore_but_not_the_payload_path() -> None:
    payloads = [START, delta(0, text="Hi", hologram={"a": 1}), ev("messageStop", stopReason="end_turn")]
    through_library = replay(CONVERSE, payloads)
    assert through_library.terminal.error is not None and through_library.terminal.error.kind == "provider_error"
    assert "ResponseParserError" in through_library.terminal.error.message
    converter = BedrockConverseConverter()
    from_payloads = replay_payloads(CONVERSE, payloads, converter=converter)
    assert from_payloads.text == "Hi" and from_payloads.terminal.error is None
    assert converter.unknown_events == {"delta 'hologram'": 1}


def test_delta_before_its_block_start_is_a_nameless_call() -> None:
    converter = BedrockConverseConverter()
    outcome = replay(
        CONVERSE,
        [START, delta(3, toolUse={"input": "{}"}), stop(3), ev("messageStop", stopReason="tool_use")],
        converter=converter,
    )
    assert outcome.calls == [(None, None, None)]
    assert converter.problems


class _BrokenRaw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_options: Any) -> Iterator[bytes]:
        import urllib3

        yield self._body
        raise urllib3.exceptions.ProtocolError("Connection broken: IncompleteRead")

    def close(self) -> None:
        pass


def test_connection_dropped_mid_stream_is_incomplete() -> None:
    from botocore.awsrequest import AWSResponse

    body = frame_body(CONVERSE, [START, tool_start(0, "t1", "f"), delta(0, toolUse={"input": '{"a": 1}'}), stop(0)])
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test-key-not-a-real-secret",
    )
    client.meta.events.register(
        "before-send.bedrock-runtime.*",
        lambda request, **_: AWSResponse(request.url, 200, {}, _BrokenRaw(body)),
    )
    converter = BedrockConverseConverter()
    stream = client.converse_stream(modelId="m", messages=[])["stream"]
    outcome = outcome_of(list(iter_chunks(converter, stream)), converter)
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert "ProtocolError" in outcome.terminal.error.message
    assert outcome.invocations == []


def test_api_errors_are_botocores_and_urllib3s() -> None:
    import urllib3
    from botocore.exceptions import ClientError

    errors = BedrockConverseConverter().api_errors
    assert ClientError in errors and urllib3.exceptions.HTTPError in errors
    assert not {Exception, BaseException, ValueError, TypeError} & set(errors)
    assert BedrockInvokeConverter().api_errors == errors


# -- the AWS event-stream encoder ------------------------------------------------------------------


def test_encoder_layout_by_hand() -> None:
    frame = encode_message({":event-type": "messageStop"}, b'{"stopReason":"end_turn"}')
    headers = b"\x0b:event-type" + b"\x07\x00\x0bmessageStop"
    assert len(headers) == 1 + 11 + 1 + 2 + 11
    total, headers_length, prelude_crc = struct.unpack(">III", frame[:12])
    assert (total, headers_length) == (len(frame), len(headers)) == (12 + 26 + 25 + 4, 26)
    assert prelude_crc == zlib.crc32(frame[:8])
    assert frame[12 : 12 + 26] == headers
    assert frame[38:-4] == b'{"stopReason":"end_turn"}'
    assert struct.unpack(">I", frame[-4:])[0] == zlib.crc32(frame[:-4])


@settings(max_examples=60, deadline=None)
@given(
    headers=st.dictionaries(
        st.text(min_size=1, max_size=20).filter(lambda name: len(name.encode()) < 256),
        st.text(max_size=40) | st.binary(max_size=40) | st.booleans(),
        max_size=5,
    ),
    payload=st.binary(max_size=300),
)
def test_encoder_round_trips_through_botocores_decoder_and_ours(headers: dict[str, Any], payload: bytes) -> None:
    frame = encode_message(headers, payload)
    [(decoded_headers, decoded_payload)] = decode_event_stream(frame)
    assert decoded_headers == headers
    assert decoded_payload == payload
    assert ours_as_tuples(list(iter_messages(frame))) == [(headers, payload)]


@pytest.mark.parametrize("position", [2, 9, 20, -2])
def test_both_decoders_reject_a_corrupt_frame(position: int) -> None:
    from botocore.eventstream import ChecksumMismatch

    frame = bytearray(encode_message({":event-type": "x"}, b"{}"))
    frame[position] ^= 1
    with pytest.raises(ChecksumMismatch):
        decode_event_stream(bytes(frame))
    with pytest.raises(EventStreamError, match=r"byte 0: .*CRC32"):
        list(iter_messages(bytes(frame)))


def test_our_decoder_reads_a_real_recording_as_botocore_does() -> None:
    path, _ = recording("bedrock/converse_claude3_haiku_tool_only.eventstream.bin")
    data = path.read_bytes()
    assert ours_as_tuples(list(iter_messages(data))) == decode_event_stream(data)
    # A stream cut inside a message: both leave the incomplete message out.
    assert ours_as_tuples(list(iter_messages(data[:-7]))) == decode_event_stream(data[:-7])


def test_encoder_reproduces_a_real_recording_byte_for_byte() -> None:
    path, _ = recording("bedrock/converse_claude3_haiku_tool_only.eventstream.bin")
    decoded = path.parent / "converse_claude3_haiku_tool_only.decoded.jsonl"
    lines = [json.loads(text) for text in decoded.read_text(encoding="utf-8").splitlines() if text.strip()]
    written = b"".join(
        encode_message(line["headers"], json.dumps(line["payload"], separators=(",", ":")).encode()) for line in lines
    )
    assert written == path.read_bytes()


def test_encoder_refuses_what_the_format_cannot_hold() -> None:
    with pytest.raises(ValueError, match="1-255 bytes"):
        encode_message({"x" * 256: "v"}, b"")
    with pytest.raises(ValueError, match="exceeds 32767"):
        encode_message({"h": "v" * 40000}, b"")


# -- the real recordings (read in place from ../shared) --------------------------------------------


@pytest.mark.parametrize(
    "relative",
    [
        "bedrock/converse_claude3_haiku_tool_only.eventstream.bin",
        "bedrock/converse_server_tool_then_tool.eventstream.bin",
    ],
)
def test_real_eventstream_recording_through_boto3(relative: str) -> None:
    path, expected = recording(relative)
    assert_matches_expected(replay(CONVERSE, body=path.read_bytes()), expected)


def test_real_hand_written_jsonl_fixture_from_payloads_and_through_boto3() -> None:
    path, expected = recording("bedrock/converse_jsonl_handwritten_two_tools.jsonl")
    payloads = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip()]
    assert_matches_expected(replay_payloads(CONVERSE, payloads), expected)
    assert_matches_expected(replay(CONVERSE, payloads), expected)


def test_real_decoded_jsonl_from_payloads_matches_the_binary() -> None:
    path, expected = recording("bedrock/converse_server_tool_then_tool.eventstream.bin")
    decoded = path.parent / "converse_server_tool_then_tool.decoded.jsonl"
    payloads = [json.loads(text) for text in decoded.read_text(encoding="utf-8").splitlines() if text.strip()]
    assert_matches_expected(replay_payloads(CONVERSE, payloads), expected)


def _recording_bytes(relative: str) -> bytes:
    from new_wire_support import RECORDINGS

    path = RECORDINGS / relative
    return path.read_bytes() if path.is_file() else b""


_REAL = _recording_bytes("bedrock/converse_server_tool_then_tool.eventstream.bin")


@pytest.mark.skipif(not _REAL, reason="real recordings not found (they are not in the repository)")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_real_recording_any_byte_split_gives_the_same_outcome(data: Any) -> None:
    pieces = data.draw(byte_splits(_REAL))
    assert replay(CONVERSE, body=_REAL, pieces=pieces).summary == replay(CONVERSE, body=_REAL).summary


# -- rendered turns -------------------------------------------------------------------------------

TURN = Turn(
    (
        Reasoning(("Two ", "tools."), signature="c2lnbmF0dXJl"),
        Text(("Checking ", "ü 🌦")),
        ServerCall("web_search", ('{"query": ', '"weather"}'), call_id="srvtoolu_1"),
        Call("get_weather", ('{"city": ', '"Zürich"}'), call_id="tooluse_1"),
        Call("ping", (), call_id="tooluse_2"),
    ),
    usage=(50, 9),
)

_CONVERSE_BODY = render_body(TURN, CONVERSE)


def test_rendered_converse_turn_reads_back_as_written() -> None:
    payloads = render(TURN, CONVERSE)
    assert all("p" in body for payload in payloads for body in payload.values())
    assert list(payloads[-2]) == ["messageStop"] and list(payloads[-1]) == ["metadata"]
    converter = BedrockConverseConverter()
    outcome = replay(CONVERSE, payloads, converter=converter)
    assert outcome.reasoning == "Two tools."
    assert outcome.text == "Checking ü 🌦"
    assert outcome.calls == [("get_weather", "tooluse_1", {"city": "Zürich"}), ("ping", "tooluse_2", {})]
    assert [call["name"] for call in converter.server_tool_calls] == ["web_search"]
    assert outcome.terminal.usage == TokenUsage(50, 9)
    assert not converter.unknown_events and not converter.problems


@pytest.mark.parametrize(
    ("ending", "kind"), [("length", "truncated"), ("error", "provider_error"), ("cut", "incomplete")]
)
@pytest.mark.parametrize("api", [CONVERSE, INVOKE])
def test_rendered_abnormal_endings(api: str, ending: str, kind: str) -> None:
    turn = Turn((Text(("a",)), Call("f", ('{"a": ', "1}"), call_id="toolu_1")), ending=ending)  # type: ignore[arg-type]
    outcome = replay(api, render(turn, api))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == kind
    assert outcome.invocations == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=byte_splits(_CONVERSE_BODY))
def test_any_byte_split_through_boto3_gives_the_same_outcome(pieces: list[bytes]) -> None:
    assert replay(CONVERSE, body=_CONVERSE_BODY, pieces=pieces).summary == replay(CONVERSE, body=_CONVERSE_BODY).summary


# -- InvokeModelWithResponseStream (Anthropic models) ----------------------------------------------


def chunk(event: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps(event, separators=(",", ":")).encode()
    return {"chunk": {"bytes": base64.b64encode(data).decode(), "p": "abcdefghijklmnopqr"}}


INVOKE_EVENTS: Sequence[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_bdrk_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 3, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_bdrk_1", "name": "f", "input": {}},
    },
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"a": '}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "1}"}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 15},
    },
    {
        "type": "message_stop",
        "amazon-bedrock-invocationMetrics": {
            "inputTokenCount": 10,
            "outputTokenCount": 15,
            "invocationLatency": 1798,
            "firstByteLatency": 1507,
        },
    },
]


def test_invoke_chunks_are_anthropic_events() -> None:
    converter = BedrockInvokeConverter()
    outcome = replay(INVOKE, [chunk(event) for event in INVOKE_EVENTS], converter=converter)
    assert outcome.deltas == [
        ToolCallDelta(0, "toolu_bdrk_1", "f"),
        ToolCallDelta(0, None, None, '{"a": '),
        ToolCallDelta(0, None, None, "1}"),
    ]
    assert outcome.calls == [("f", "toolu_bdrk_1", {"a": 1})]
    assert outcome.text == "Hi"
    assert outcome.terminal.finish_reason == "tool_use" and outcome.terminal.error is None
    assert outcome.terminal.usage == TokenUsage(13, 15)
    assert not converter.unknown_events and not converter.problems


def test_invoke_gives_what_the_anthropic_sdk_gives_for_the_same_events() -> None:
    turn = Turn(
        (Reasoning(("think",), signature="c2ln"), Text(("a", "b")), Call("f", ('{"x": ', '"ü"}'), call_id="toolu_1")),
    )
    via_bedrock = replay(INVOKE, render(turn, INVOKE))
    via_anthropic = replay_anthropic("anthropic", sse=to_sse("anthropic", render(turn, "anthropic")))
    assert via_bedrock.summary == via_anthropic.summary
    assert via_bedrock.deltas == via_anthropic.deltas


def test_invoke_exception_frame_and_unreadable_chunk() -> None:
    body = frame_body(INVOKE, [chunk(INVOKE_EVENTS[0])]) + _exception_frame("throttlingException", "slow down")
    outcome = replay(INVOKE, body=body)
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "slow down" in outcome.terminal.error.message
    bad = replay(INVOKE, [chunk(INVOKE_EVENTS[0]), {"chunk": {"bytes": base64.b64encode(b"not json").decode()}}])
    assert bad.terminal.error is not None and bad.terminal.error.kind == "provider_error"
    assert "not an Anthropic event" in bad.terminal.error.message


def test_invoke_unknown_event_key_as_a_dict_is_counted() -> None:
    converter = BedrockInvokeConverter()
    assert converter.convert({"hologram": {"x": 1}}) == []
    assert converter.unknown_events == {"event 'hologram'": 1}


_INVOKE_BODY = render_body(TURN, INVOKE)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=byte_splits(_INVOKE_BODY))
def test_invoke_any_byte_split_gives_the_same_outcome(pieces: list[bytes]) -> None:
    assert replay(INVOKE, body=_INVOKE_BODY, pieces=pieces).summary == replay(INVOKE, body=_INVOKE_BODY).summary


def test_detection() -> None:
    assert {payload_api(payload) for payload in render(TURN, CONVERSE)} == {CONVERSE}
    assert {payload_api(payload) for payload in render(TURN, INVOKE)} == {INVOKE}
    assert (
        payload_api({"headers": {":event-type": "contentBlockDelta"}, "payload": {"contentBlockIndex": 0}}) == CONVERSE
    )
    assert payload_api({"contentBlockIndex": 0, "delta": {"text": "x"}, "p": "abc"}) == CONVERSE
    assert payload_api({"bytes": "eyJ9", "p": "ab"}) == INVOKE
    assert payload_api({"modelStreamErrorException": {"message": "x"}}) is None
    assert payload_api({"metadata": {"user_id": "x"}}) is None
