"""Finished turns (TurnRecorder over the real SDKs) and follow-up formatting per provider (reference_impl.followup)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.turns.model import Call, Reasoning, Text, Turn, fake_signature
from conformance.turns.render import render_body, render_sse
from conformance.wire import iter_sdk_events, to_sse
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.followup import (
    FOLLOWUP_TARGETS,
    UNNAMED_TOOL,
    DuplicateToolResultError,
    FinishedTurn,
    FollowupError,
    MissingToolResultError,
    ReasoningItem,
    ReferenceFormatter,
    TextItem,
    ToolCallItem,
    ToolResult,
    TurnRecorder,
    UnknownToolResultError,
    format_followup,
    invalid_call_message,
    pair_results,
    result_text,
    user_message,
)
from reference_impl.types import ToolInvocation

SIG_A = fake_signature("thinking-a")
SIG_B = fake_signature("thinking-b")


def record(api: str, body: bytes, piece: int | None = None) -> FinishedTurn:
    pieces = [body] if piece is None else [body[i : i + piece] for i in range(0, len(body), piece)]
    return TurnRecorder(api).record(iter_sdk_events(api, pieces))


def anthropic_body(events: list[dict[str, Any]]) -> bytes:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-model",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    end = [
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return to_sse("anthropic", [start, *events, *end])


def _block(index: int, block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


INTERLEAVED_ANTHROPIC = anthropic_body(
    [
        *_block(
            0,
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "thinking_delta", "thinking": "First, "},
            {"type": "thinking_delta", "thinking": "the weather."},
            {"type": "signature_delta", "signature": SIG_A[:6]},
            {"type": "signature_delta", "signature": SIG_A[6:]},  # accumulated with +=, never =
        ),
        *_block(1, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Checking."}),
        *_block(
            2,
            {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {}},
            {"type": "input_json_delta", "partial_json": ""},
            {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        ),
        *_block(
            3,
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "thinking_delta", "thinking": "Now the time."},
            {"type": "signature_delta", "signature": SIG_B},
        ),
        *_block(4, {"type": "redacted_thinking", "data": "REDACTED-OPAQUE"}),
        *_block(
            5,
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "thinking_delta", "thinking": "Adjacent block."},
            {"type": "signature_delta", "signature": fake_signature("c")},
        ),
        *_block(
            6,
            {"type": "tool_use", "id": "toolu_B", "name": "get_time", "input": {}},
            {"type": "input_json_delta", "partial_json": '{"timezone": "Eu'},
        ),
    ]
)


# -- TurnRecorder ----------------------------------------------------------------------------------


def test_anthropic_turn_keeps_block_order_signatures_and_redacted_thinking() -> None:
    turn = record("anthropic", INTERLEAVED_ANTHROPIC)
    kinds = [type(item).__name__ for item in turn.items]
    assert kinds == [
        "ReasoningItem",
        "TextItem",
        "ToolCallItem",
        "ReasoningItem",
        "ReasoningItem",
        "ReasoningItem",
        "ToolCallItem",
    ]
    first, _, weather, second, redacted, adjacent, clock = turn.items
    assert isinstance(first, ReasoningItem) and first.text == "First, the weather." and first.signature == SIG_A
    assert isinstance(second, ReasoningItem) and second.signature == SIG_B
    assert isinstance(redacted, ReasoningItem) and redacted.redacted_data == "REDACTED-OPAQUE"
    # Two thinking blocks with a redacted one between stay three blocks (the handler's one REASONING run).
    assert isinstance(adjacent, ReasoningItem) and adjacent.text == "Adjacent block."
    assert isinstance(weather, ToolCallItem) and weather.valid and weather.call_id == "toolu_A"
    assert isinstance(clock, ToolCallItem) and not clock.valid and clock.raw_arguments == '{"timezone": "Eu'
    assert turn.finish_reason == "tool_use" and turn.error is None


def test_anthropic_follow_up_replays_exactly_what_was_streamed() -> None:
    turn = record("anthropic", INTERLEAVED_ANTHROPIC)
    weather = turn.tool_calls[0]
    messages = format_followup("anthropic", turn, [ToolResult.ok(weather, {"temp_c": 18})])
    assert messages == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "First, the weather.", "signature": SIG_A},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "thinking", "thinking": "Now the time.", "signature": SIG_B},
                {"type": "redacted_thinking", "data": "REDACTED-OPAQUE"},
                {"type": "thinking", "thinking": "Adjacent block.", "signature": fake_signature("c")},
                {"type": "tool_use", "id": "toolu_B", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_A", "content": '{"temp_c": 18}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_B",
                    "content": invalid_call_message(turn.tool_calls[1]),
                    "is_error": True,
                },
            ],
        },
    ]


@pytest.mark.parametrize("piece", [1, 7, 64])
def test_recording_is_independent_of_byte_boundaries(piece: int) -> None:
    whole = record("anthropic", INTERLEAVED_ANTHROPIC)
    split = record("anthropic", INTERLEAVED_ANTHROPIC, piece)
    assert format_followup("anthropic", split, [ToolResult.ok(split.tool_calls[0], "x")]) == format_followup(
        "anthropic", whole, [ToolResult.ok(whole.tool_calls[0], "x")]
    )


def _gemini(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def test_gemini_signatures_stay_on_their_parts_and_a_restatement_does_not_erase_them() -> None:
    sig_call, sig_text = fake_signature("call"), fake_signature("text")
    body = to_sse(
        "gemini",
        [
            _gemini([{"text": "Thinking about it.", "thought": True}]),
            _gemini([{"text": "Let me check."}]),
            _gemini(
                [
                    {"functionCall": {"name": "a", "args": {"x": 1}, "id": "c1"}, "thoughtSignature": sig_call},
                    {"functionCall": {"name": "b", "args": {}, "id": "c2"}},
                ]
            ),
            _gemini([{"functionCall": {"name": "a", "args": {"x": 1}, "id": "c1"}}]),  # restated, no signature (G07)
            _gemini([{"text": "", "thoughtSignature": sig_text}], finish="STOP"),
        ],
    )
    turn = record("gemini", body)
    a, b = turn.tool_calls
    assert a.provider_metadata["thought_signature"] == sig_call
    assert "thought_signature" not in b.provider_metadata
    assert [type(i).__name__ for i in turn.items] == [
        "ReasoningItem",
        "TextItem",
        "ToolCallItem",
        "ToolCallItem",
        "TextItem",
    ]
    assert turn.items[-1] == TextItem("", signature=sig_text)
    model, responses = format_followup("gemini", turn, [ToolResult.ok(b, "B"), ToolResult.ok(a, {"v": 1})])
    assert model == {
        "role": "model",
        "parts": [
            {"text": "Thinking about it.", "thought": True},
            {"text": "Let me check."},
            {"functionCall": {"name": "a", "args": {"x": 1}, "id": "c1"}, "thoughtSignature": sig_call},
            {"functionCall": {"name": "b", "args": {}, "id": "c2"}},
            {"text": "", "thoughtSignature": sig_text},
        ],
    }
    assert responses == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "a", "response": {"output": {"v": 1}}, "id": "c1"}},
            {"functionResponse": {"name": "b", "response": {"output": "B"}, "id": "c2"}},
        ],
    }


def test_gemini_signature_keeps_its_position_inside_one_chunk() -> None:
    sig_thought, sig_b = fake_signature("thought"), fake_signature("text-b")
    body = to_sse(
        "gemini",
        [
            _gemini(
                [
                    {"text": "plan", "thought": True, "thoughtSignature": sig_thought},
                    {"functionCall": {"name": "a", "args": {}}},
                    {"text": "a"},
                    {"text": "b", "thoughtSignature": sig_b},
                    {"text": "c"},
                ],
                finish="STOP",
            )
        ],
    )
    turn = record("gemini", body)
    assert turn.items == (
        ReasoningItem("plan", signature=sig_thought),
        turn.tool_calls[0],
        TextItem("a"),
        TextItem("b", signature=sig_b),
        TextItem("c"),
    )
    parts = format_followup("gemini", turn, [ToolResult.ok(turn.tool_calls[0], 1)])[0]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [sig_thought, None, None, sig_b, None]


def test_responses_reasoning_items_keep_ids_summary_and_encrypted_content() -> None:
    turn_def = Turn(
        (
            Reasoning(("Two lookups.",)),
            Text(("On it.",)),
            Call("get_weather", ('{"city": "Oslo"}',), "call_W"),
            Call("get_time", ('{"timezone": "UTC"}',), "call_T"),
        )
    )
    payloads = json.loads(json.dumps(_responses_payloads(turn_def)))
    for payload in payloads:
        if payload.get("type") == "response.output_item.done" and payload["item"]["type"] == "reasoning":
            payload["item"]["encrypted_content"] = "gAAAA-encrypted"
    turn = record("openai-responses", to_sse("openai-responses", payloads))
    reasoning = turn.items[0]
    assert isinstance(reasoning, ReasoningItem)
    assert dict(reasoning.provider_metadata) == {
        "item_id": "rs_0",
        "summary": ["Two lookups."],
        "encrypted_content": "gAAAA-encrypted",
    }
    weather, clock = turn.tool_calls
    assert (weather.call_id, weather.provider_metadata["item_id"]) == ("call_W", "fc_2")
    entries = format_followup("openai-responses", turn, [ToolResult.ok(clock, "12:00"), ToolResult.ok(weather, "4 °C")])
    assert entries == [
        {
            "type": "reasoning",
            "id": "rs_0",
            "summary": [{"type": "summary_text", "text": "Two lookups."}],
            "encrypted_content": "gAAAA-encrypted",
        },
        {"type": "message", "role": "assistant", "content": "On it."},
        {
            "type": "function_call",
            "call_id": "call_W",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
            "id": "fc_2",
        },
        {
            "type": "function_call",
            "call_id": "call_T",
            "name": "get_time",
            "arguments": '{"timezone": "UTC"}',
            "id": "fc_3",
        },
        {"type": "function_call_output", "call_id": "call_W", "output": "4 °C"},
        {"type": "function_call_output", "call_id": "call_T", "output": "12:00"},
    ]


def _responses_payloads(turn: Turn) -> list[dict[str, Any]]:
    from conformance.turns.render import render

    return render(turn, "openai-responses")


def test_chat_reasoning_and_a_stream_error() -> None:
    body = render_sse(
        Turn((Reasoning(("a", "b")), Call("read_file", ('{"path": ', '"x"}'), "call_1")), ending="length"),
        "openai-chat",
    )
    turn = record("openai-chat", body)
    assert turn.reasoning == "ab"
    assert turn.error is not None and turn.error.startswith("truncated")
    assert not turn.tool_calls[0].valid  # a truncated turn never yields executable calls


def test_from_events_matches_the_recorder_without_signatures() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    recorder = TurnRecorder("anthropic", handler=handler)
    recorded = recorder.record(iter_sdk_events("anthropic", [INTERLEAVED_ANTHROPIC]))
    rebuilt = FinishedTurn.from_events(handler.get_all_events(), api="anthropic")
    assert [c.key for c in rebuilt.tool_calls] == [c.key for c in recorded.tool_calls]
    assert rebuilt.tool_calls == recorded.tool_calls
    assert rebuilt.text == recorded.text and rebuilt.reasoning == recorded.reasoning
    assert all(item.signature is None for item in rebuilt.items if isinstance(item, ReasoningItem))


def test_recorder_contract() -> None:
    recorder = TurnRecorder("openai-chat")
    turn = recorder.record(iter_sdk_events("openai-chat", [render_sse(Turn((Text(("hi",)),)), "openai-chat")]))
    assert recorder.finish() is turn  # idempotent
    with pytest.raises(RuntimeError):
        recorder.observe({})
    with pytest.raises(ValueError):
        TurnRecorder("openai-chat", handler=ApiToolCallStreamingResponseHandler(), on_tool_invocation=print)


# -- results ---------------------------------------------------------------------------------------


def _call(name: str, call_id: str | None, arguments: dict[str, Any] | None = None, **kw: Any) -> ToolCallItem:
    if arguments is None and "error" not in kw:
        arguments = {}
    return ToolCallItem(name, call_id, arguments, segment_id=kw.pop("segment_id", f"seg-{name}-{call_id}"), **kw)


W = _call("get_weather", "call_W", {"city": "Paris"})
T = _call("get_time", "call_T", {"timezone": "UTC"})
BAD = _call("read_file", "call_X", None, raw_arguments='{"path": "a', error="truncated arguments")
TURN = FinishedTurn((TextItem("Checking."), W, T, BAD))


def test_pair_results_orders_by_call_and_answers_invalid_calls() -> None:
    paired = pair_results(TURN, [ToolResult.ok(T, "t"), ToolResult.ok(W, "w")])
    assert [(call.key, result.output, result.is_error) for call, result in paired] == [
        ("call_W", "w", False),
        ("call_T", "t", False),
        ("call_X", invalid_call_message(BAD), True),
    ]


def test_pair_results_errors() -> None:
    with pytest.raises(MissingToolResultError, match="call_T"):
        pair_results(TURN, [ToolResult.ok(W, "w")])
    with pytest.raises(UnknownToolResultError, match="seg-"):
        pair_results(TURN, [ToolResult.ok(W, "w"), ToolResult.ok(T, "t"), ToolResult.ok("seg-123", "x")])
    with pytest.raises(DuplicateToolResultError):
        pair_results(TURN, [ToolResult.ok(W, "w"), ToolResult.ok(W, "again"), ToolResult.ok(T, "t")])
    with pytest.raises(FollowupError, match="never executed"):
        pair_results(TURN, [ToolResult.ok(W, "w"), ToolResult.ok(T, "t"), ToolResult.ok(BAD, "ran anyway")])


def test_calls_sharing_a_provider_id_take_their_results_in_order() -> None:
    first, second = _call("f", "dup", {"n": 1}, segment_id="s1"), _call("f", "dup", {"n": 2}, segment_id="s2")
    paired = pair_results(FinishedTurn((first, second)), [ToolResult.ok("dup", "one"), ToolResult.ok("dup", "two")])
    assert [(c.arguments["n"], r.output) for c, r in paired] == [(1, "one"), (2, "two")]


def test_item_and_result_types() -> None:
    with pytest.raises(ValueError):
        ToolCallItem("f", "id", {"a": 1}, error="both")
    with pytest.raises(ValueError):
        ToolCallItem("f", None, {})  # no key at all
    with pytest.raises(ValueError):
        ToolCallItem("", "id", {})  # a valid call needs a name
    with pytest.raises(TypeError):
        FinishedTurn(("text",))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ToolResult("", "x")
    assert W.invocation() == ToolInvocation("call_W", "get_weather", {"city": "Paris"})
    with pytest.raises(ValueError):
        BAD.invocation()
    assert ToolResult.ok(ToolInvocation("call_W", "get_weather", {}), 1).call_key == "call_W"
    assert result_text({"b": [1, "ü"]}) == '{"b": [1, "ü"]}' and result_text("plain") == "plain"
    nameless = _call("", "call_N", None, error="the tool name never arrived")
    assert nameless.replay_name == UNNAMED_TOOL


def test_invalid_call_message_quotes_error_and_raw_text_bounded() -> None:
    huge = _call("write_file", "c", None, raw_arguments='{"content": "' + "x" * 5000, error="truncated")
    message = invalid_call_message(huge)
    assert "truncated" in message and "write_file" in message and "(5013 characters)" in message
    assert len(message) < 2300


# -- formatting per target -------------------------------------------------------------------------


RESULTS = [ToolResult.ok(T, "12:00"), ToolResult.ok(W, {"temp_c": 18})]
ERROR_TEXT = invalid_call_message(BAD)


def test_openai_chat_format() -> None:
    assert format_followup("openai-chat", TURN, RESULTS) == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_W",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_T",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"timezone": "UTC"}'},
                },
                {"id": "call_X", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_W", "content": '{"temp_c": 18}'},
        {"role": "tool", "tool_call_id": "call_T", "content": "12:00"},
        {"role": "tool", "tool_call_id": "call_X", "content": ERROR_TEXT},
    ]


def test_tool_only_chat_turn_has_null_content_and_deepseek_passes_reasoning_back() -> None:
    turn = FinishedTurn((ReasoningItem("think "), ReasoningItem("more"), W))
    chat = format_followup("openai-chat", turn, [ToolResult.ok(W, "x")])
    assert chat[0]["content"] is None and "reasoning_content" not in chat[0]
    deepseek = format_followup("deepseek", turn, [ToolResult.ok(W, "x")])
    assert deepseek[0]["reasoning_content"] == "think more"
    ollama = format_followup("ollama", turn, [ToolResult.ok(W, "x")])
    assert ollama[0]["content"] == "" and ollama[0]["thinking"] == "think more"


def test_ollama_format() -> None:
    gemini_like = FinishedTurn((_call("get_weather", None, {"city": "Paris"}, segment_id="s9"), T))
    assert format_followup("ollama", gemini_like, [ToolResult.ok("s9", "sunny"), ToolResult.ok(T, "12:00")]) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_time", "arguments": {"timezone": "UTC"}}, "id": "call_T"},
            ],
        },
        {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
        {"role": "tool", "content": "12:00", "tool_name": "get_time", "tool_call_id": "call_T"},
    ]


def test_anthropic_error_results_and_dropped_unsigned_thinking(caplog: pytest.LogCaptureFixture) -> None:
    turn = FinishedTurn((ReasoningItem("unsigned"), TextItem(""), W, BAD))
    with caplog.at_level(logging.WARNING, "reference_impl.followup"):
        messages = format_followup("anthropic", turn, [ToolResult.failure(W, "boom")])
    assert "signature" in caplog.text
    assert messages == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_W", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_X", "name": "read_file", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_W", "content": "boom", "is_error": True},
                {"type": "tool_result", "tool_use_id": "call_X", "content": ERROR_TEXT, "is_error": True},
            ],
        },
    ]


def test_responses_item_ids_only_when_every_reasoning_item_is_replayable(caplog: pytest.LogCaptureFixture) -> None:
    call = ToolCallItem("f", "call_1", {}, provider_metadata={"item_id": "fc_1"}, segment_id="s")
    with_rs = FinishedTurn((ReasoningItem("r", provider_metadata={"item_id": "rs_1"}), call))
    without_rs = FinishedTurn((ReasoningItem("r"), call))
    result = [ToolResult.ok(call, "ok")]

    def ids(turn: FinishedTurn, **options: Any) -> list[Any]:
        entries = format_followup("openai-responses", turn, result, **options)
        return [entry.get("id") for entry in entries if entry["type"] == "function_call"]

    assert ids(with_rs) == ["fc_1"]
    assert ids(with_rs, include_item_ids=False) == [None]
    with caplog.at_level(logging.WARNING, "reference_impl.followup"):
        assert ids(without_rs) == [None]  # an fc_ id without its rs_ item is rejected: send neither
    assert "rs_" in caplog.text


def test_gemini_error_result_and_no_ids_invented() -> None:
    call = _call("get_weather", None, {"city": "Paris"}, segment_id="s1")
    model, responses = format_followup("gemini", FinishedTurn((call,)), [ToolResult.failure("s1", "quota")])
    assert model == {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}
    assert responses == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_weather", "response": {"error": "quota"}}}],
    }


@pytest.mark.parametrize("target", FOLLOWUP_TARGETS)
def test_turn_without_calls(target: str) -> None:
    answer = format_followup(target, FinishedTurn((TextItem("Done."),)))
    assert len(answer) == 1
    assert format_followup(target, FinishedTurn(())) == []
    assert format_followup(target, FinishedTurn((TextItem(""),))) == []


def test_user_messages_and_target_validation() -> None:
    assert user_message("gemini", "hi") == {"role": "user", "parts": [{"text": "hi"}]}
    assert user_message("anthropic", "hi") == {"role": "user", "content": "hi"}
    with pytest.raises(ValueError, match="unknown follow-up target"):
        format_followup("bedrock", TURN, RESULTS)
    with pytest.raises(TypeError):
        format_followup("openai-chat", [W], RESULTS)  # type: ignore[arg-type]


def test_reference_formatter_protocol() -> None:
    formatter = ReferenceFormatter()
    assert formatter.targets == FOLLOWUP_TARGETS
    assert formatter.format_followup("openai-chat", TURN, RESULTS) == format_followup("openai-chat", TURN, RESULTS)
    from reference_impl.tools import ToolDefinition

    params = formatter.format_tools("anthropic", [ToolDefinition("get_weather")], "required")
    assert params["tool_choice"] == {"type": "any"} and params["tools"][0]["name"] == "get_weather"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FOLLOWUP_TARGETS), st.permutations(range(3)), st.booleans())
def test_output_does_not_depend_on_completion_order(target: str, order: Sequence[int], give_error: bool) -> None:
    pool = [ToolResult.ok(W, {"w": 1}), ToolResult.ok(T, "t"), ToolResult.failure(BAD, "agent says no")]
    chosen = [pool[i] for i in order if give_error or i != 2]
    canonical = [pool[i] for i in range(3) if give_error or i != 2]
    assert format_followup(target, TURN, chosen) == format_followup(target, TURN, canonical)


# -- Bedrock Converse and Cohere v2 ------------------------------------------------------------------


def test_bedrock_turn_keeps_reasoning_blocks_and_their_signatures() -> None:
    turn_spec = Turn(
        (
            Reasoning(("First, ", "the weather."), signature=SIG_A),
            Text(("Checking.",)),
            Call("get_weather", ('{"city": ', '"Paris"}'), "tooluse_A"),
            Reasoning(("Now the time.",), signature=SIG_B),
            Call("get_time", ('{"timezone": "UTC"}',), "tooluse_B"),
        )
    )
    turn = record("bedrock-converse", render_body(turn_spec, "bedrock-converse"))
    assert [(type(item).__name__, getattr(item, "signature", None)) for item in turn.items] == [
        ("ReasoningItem", SIG_A),
        ("TextItem", None),
        ("ToolCallItem", None),
        ("ReasoningItem", SIG_B),
        ("ToolCallItem", None),
    ]
    results = [ToolResult.ok("tooluse_B", "12:00"), ToolResult.failure("tooluse_A", "no network")]
    assistant, answers = format_followup("bedrock-converse", turn, results)
    assert assistant["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "First, the weather.", "signature": SIG_A}}},
        {"text": "Checking."},
        {"toolUse": {"toolUseId": "tooluse_A", "name": "get_weather", "input": {"city": "Paris"}}},
        {"reasoningContent": {"reasoningText": {"text": "Now the time.", "signature": SIG_B}}},
        {"toolUse": {"toolUseId": "tooluse_B", "name": "get_time", "input": {"timezone": "UTC"}}},
    ]
    assert answers == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "tooluse_A", "content": [{"text": "no network"}], "status": "error"}},
            {"toolResult": {"toolUseId": "tooluse_B", "content": [{"text": "12:00"}], "status": "success"}},
        ],
    }


def test_cohere_turn_passes_the_tool_plan_back_and_answers_by_tool_call_id() -> None:
    turn_spec = Turn((Reasoning(("I will ", "look it up.")), Call("get_weather", ('{"city": "Oslo"}',), "call_c1")))
    turn = record("cohere-v2", render_body(turn_spec, "cohere-v2"))
    messages = format_followup("cohere-v2", turn, [ToolResult.ok("call_c1", {"temp_c": 3})])
    assert messages == [
        {
            "role": "assistant",
            "tool_plan": "I will look it up.",
            "tool_calls": [
                {
                    "id": "call_c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_c1", "content": '{"temp_c": 3}'},
    ]


def test_followup_reexports_the_turn_model_and_nothing_private() -> None:
    import reference_impl.followup as followup
    import reference_impl.turn as turn_module

    moved = {
        name for name, value in vars(followup).items() if getattr(value, "__module__", None) == turn_module.__name__
    }
    assert moved == {"FinishedTurn", "ReasoningItem", "TextItem", "ToolCallItem", "TurnRecorder"}
    assert moved <= set(turn_module.__all__) and moved <= set(followup.__all__)
    private = [name for name in vars(followup) if name.startswith("_") and not name.startswith("__")]
    assert not [name for name in private if hasattr(turn_module, name)]
    assert followup.UNNAMED_TOOL is turn_module.UNNAMED_TOOL
