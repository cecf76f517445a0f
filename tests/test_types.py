"""Contract types (issue 2, "Contract types"): validation, defaults, enum values, immutability, to_dict."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    StreamError,
    TokenUsage,
    ToolCallDelta,
    ToolInvocation,
)

# -- ToolCallDelta --------------------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 1, 7, 10**6])
def test_tool_call_delta_accepts_non_negative_int_index(index: int) -> None:
    delta = ToolCallDelta(index)
    assert delta.index == index
    assert (delta.call_id, delta.name, delta.arguments_delta) == (None, None, None)


def test_tool_call_delta_fields_and_order_are_the_seeds() -> None:
    assert [f.name for f in dataclasses.fields(ToolCallDelta)][:4] == ["index", "call_id", "name", "arguments_delta"]
    delta = ToolCallDelta(2, "call_1", "get_weather", '{"a"')
    assert (delta.index, delta.call_id, delta.name, delta.arguments_delta) == (2, "call_1", "get_weather", '{"a"')


@pytest.mark.parametrize("index", [True, False, 1.0, 0.0, "0", "1", None, b"0", [0]])
def test_tool_call_delta_rejects_non_int_index(index: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        ToolCallDelta(index)
    assert "index" in str(info.value)


@pytest.mark.parametrize("index", [-1, -100])
def test_tool_call_delta_rejects_negative_index(index: int) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        ToolCallDelta(index)
    assert "index" in str(info.value)


@pytest.mark.parametrize("field", ["call_id", "name", "arguments_delta"])
@pytest.mark.parametrize("value", [{"city": "Paris"}, 5, ["x"]])
def test_tool_call_delta_string_fields_reject_non_strings(field: str, value: Any) -> None:
    # A11: object-typed arguments must be rendered to a JSON string by the converter.
    with pytest.raises(TypeError) as info:
        ToolCallDelta(0, **{field: value})
    assert field in str(info.value)


# -- ChunkResponse --------------------------------------------------------------------------


def test_chunk_response_defaults() -> None:
    chunk = ChunkResponse()
    assert chunk.content == ""
    assert chunk.reasoning is None
    assert chunk.is_complete is False
    assert chunk.usage is None
    assert chunk.image_urls == [] and chunk.audio_urls == [] and chunk.video_urls == []
    assert chunk.tool_calls is None
    # Fields added by later issues must default to None.
    seed_fields = {
        "content",
        "reasoning",
        "is_complete",
        "usage",
        "image_urls",
        "audio_urls",
        "video_urls",
        "tool_calls",
    }
    assert seed_fields <= {f.name for f in dataclasses.fields(ChunkResponse)}
    for f in dataclasses.fields(ChunkResponse):
        if f.name not in seed_fields:
            assert getattr(chunk, f.name) is None, f.name


def test_chunk_response_list_defaults_are_not_shared() -> None:
    first, second = ChunkResponse(), ChunkResponse()
    first.image_urls.append("http://x")
    assert second.image_urls == []


def test_chunk_response_content_is_positional_first() -> None:
    chunk = ChunkResponse("hello", "thinking", True)
    assert (chunk.content, chunk.reasoning, chunk.is_complete) == ("hello", "thinking", True)


@pytest.mark.parametrize("content", [None, 5, b"bytes", ["a"]])
def test_chunk_response_rejects_non_str_content(content: Any) -> None:
    with pytest.raises(TypeError) as info:
        ChunkResponse(content=content)
    assert "content" in str(info.value)


@pytest.mark.parametrize("tool_calls", [ToolCallDelta(0), "x", {"index": 0}, [{"index": 0}], [ToolCallDelta(0), None]])
def test_chunk_response_rejects_bad_tool_calls(tool_calls: Any) -> None:
    with pytest.raises(TypeError) as info:
        ChunkResponse(tool_calls=tool_calls)
    assert "tool_calls" in str(info.value)


def test_chunk_response_rejects_bad_reasoning_usage_and_error() -> None:
    with pytest.raises(TypeError):
        ChunkResponse(reasoning=3)
    with pytest.raises(TypeError):
        ChunkResponse(usage={"prompt_tokens": 1})
    with pytest.raises(TypeError):
        ChunkResponse(error="truncated")


def test_chunk_response_accepts_full_seed_shape() -> None:
    usage = TokenUsage(prompt_tokens=3, completion_tokens=4)
    chunk = ChunkResponse(
        content="a",
        reasoning="b",
        is_complete=True,
        usage=usage,
        image_urls=["i"],
        audio_urls=["a"],
        video_urls=["v"],
        tool_calls=[ToolCallDelta(0, "c", "f", "{}")],
    )
    assert chunk.usage is usage
    assert usage.total_tokens == 7


def test_stream_error_kinds() -> None:
    for kind in ("truncated", "incomplete", "provider_error"):
        assert StreamError(kind, "m").kind == kind
    with pytest.raises(ValueError):
        StreamError("oops", "m")


# -- enums ----------------------------------------------------------------------------------


def test_segment_event_type_values_are_exactly_the_specs() -> None:
    assert {m.name: m.value for m in SegmentEventType} == {
        "START": "SEGMENT_START",
        "CONTENT": "SEGMENT_CONTENT",
        "END": "SEGMENT_END",
    }


def test_segment_type_values_are_exactly_the_specs() -> None:
    assert {m.name: m.value for m in SegmentType} == {
        "TEXT": "text",
        "TOOL_CALL": "tool_call",
        "REASONING": "reasoning",
    }


# -- SegmentEvent ---------------------------------------------------------------------------


def _tool_events() -> list[SegmentEvent]:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(
        ChunkResponse(
            content="hi",
            tool_calls=[ToolCallDelta(0, "call_1", "write", '{"path": "a", "nested": {"list": [1, {"x": [2]}]}}')],
        )
    )
    return events + handler.finalize()


def test_segment_event_payload_shapes() -> None:
    events = _tool_events()
    for event in events:
        assert isinstance(event.segment_type, SegmentType)
        assert isinstance(event.segment_id, str) and event.segment_id
        if event.event_type is SegmentEventType.CONTENT:
            assert set(event.payload) == {"delta"}
            assert isinstance(event.payload["delta"], str)
        else:
            assert set(event.payload) == {"metadata"}
            assert isinstance(event.payload["metadata"], dict)
    start = next(e for e in events if e.segment_type is SegmentType.TOOL_CALL)
    assert dict(start.payload["metadata"]) == {"tool_name": "write", "call_id": "call_1"}
    end = events[-1]
    assert end.event_type is SegmentEventType.END
    assert end.payload["metadata"] == {
        "tool_name": "write",
        "call_id": "call_1",
        "arguments": {"path": "a", "nested": {"list": [1, {"x": [2]}]}},
    }


def test_segment_event_factories_build_the_documented_payloads() -> None:
    start = SegmentEvent.start("s1", SegmentType.TOOL_CALL, tool_name="f", call_id=None)
    content = SegmentEvent.content("s1", SegmentType.TOOL_CALL, '{"a"')
    end = SegmentEvent.end("s1", SegmentType.TOOL_CALL, tool_name="f", call_id=None, arguments={})
    assert start.payload == {"metadata": {"tool_name": "f", "call_id": None}}
    assert content.payload == {"delta": '{"a"'}
    assert end.payload == {"metadata": {"tool_name": "f", "call_id": None, "arguments": {}}}
    assert (start.event_type, content.event_type, end.event_type) == (
        SegmentEventType.START,
        SegmentEventType.CONTENT,
        SegmentEventType.END,
    )


def test_segment_event_is_frozen() -> None:
    event = _tool_events()[0]
    for attribute, value in (
        ("payload", {}),
        ("segment_id", "x"),
        ("event_type", SegmentEventType.END),
        ("segment_type", SegmentType.TEXT),
    ):
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
            setattr(event, attribute, value)


def _mutations(container: Any) -> list[Any]:
    """Every way to mutate a dict or list in place."""
    if isinstance(container, dict):
        key = next(iter(container), "k")
        return [
            lambda: container.__setitem__("new", 1),
            lambda: container.__delitem__(key),
            lambda: container.update({"new": 1}),
            lambda: container.setdefault("new", 1),
            lambda: container.pop(key),
            container.popitem,
            container.clear,
            lambda: container.__ior__({"new": 1}),
        ]
    return [
        lambda: container.append(1),
        lambda: container.extend([1]),
        lambda: container.insert(0, 1),
        lambda: container.__setitem__(0, 1),
        lambda: container.__delitem__(0),
        container.pop,
        lambda: container.remove(container[0]),
        container.clear,
        container.sort,
        container.reverse,
        lambda: container.__iadd__([1]),
        lambda: container.__imul__(2),
    ]


def _assert_read_only(container: Any) -> None:
    before = json.dumps(container, sort_keys=True)
    for mutate in _mutations(container):
        with pytest.raises(TypeError):
            mutate()
    assert json.dumps(container, sort_keys=True) == before


def test_payload_metadata_and_nested_arguments_are_read_only() -> None:
    events = _tool_events()
    end = events[-1]
    arguments = end.payload["metadata"]["arguments"]
    _assert_read_only(end.payload)
    _assert_read_only(end.payload["metadata"])
    _assert_read_only(arguments)
    _assert_read_only(arguments["nested"])
    _assert_read_only(arguments["nested"]["list"])
    _assert_read_only(arguments["nested"]["list"][1]["x"])
    content = next(e for e in events if e.event_type is SegmentEventType.CONTENT)
    _assert_read_only(content.payload)
    text_start = events[0]
    _assert_read_only(text_start.payload["metadata"])


def test_event_does_not_alias_the_callers_payload() -> None:
    metadata: dict[str, Any] = {"tool_name": "f", "call_id": "c", "arguments": {"a": [1]}}
    payload: dict[str, Any] = {"metadata": metadata}
    event = SegmentEvent(SegmentEventType.END, "s1", SegmentType.TOOL_CALL, payload)
    metadata["arguments"]["a"].append(2)
    metadata["tool_name"] = "g"
    payload["metadata"] = {}
    assert event.payload == {"metadata": {"tool_name": "f", "call_id": "c", "arguments": {"a": [1]}}}


def test_frozen_payloads_still_behave_like_plain_json_values() -> None:
    end = _tool_events()[-1]
    arguments = end.payload["metadata"]["arguments"]
    assert isinstance(arguments, dict)
    assert arguments == {"path": "a", "nested": {"list": [1, {"x": [2]}]}}
    assert json.loads(json.dumps(end.payload)) == end.payload
    assert copy.deepcopy(end) == end
    assert pickle.loads(pickle.dumps(end)) == end


def test_segment_event_to_dict_is_plain_mutable_and_json_round_trips() -> None:
    for event in _tool_events():
        plain = event.to_dict()
        assert plain["event_type"] == event.event_type.value
        assert plain["segment_type"] == event.segment_type.value
        assert plain["segment_id"] == event.segment_id
        assert json.loads(json.dumps(plain)) == plain
        _assert_plain(plain)
        rebuilt = SegmentEvent(
            SegmentEventType(plain["event_type"]),
            plain["segment_id"],
            SegmentType(plain["segment_type"]),
            plain["payload"],
        )
        assert rebuilt == event
        # The copy is independent of the event.
        if "metadata" in plain["payload"]:
            plain["payload"]["metadata"]["injected"] = True
            assert "injected" not in event.payload["metadata"]


def _assert_plain(value: Any) -> None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            assert type(node) is dict, type(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            assert type(node) is list, type(node)
            stack.extend(node)
        else:
            assert node is None or isinstance(node, (str, int, float, bool))


# -- ToolInvocation -------------------------------------------------------------------------


def test_tool_invocation_is_immutable() -> None:
    invocation = ToolInvocation("call_1", "f", {"a": {"b": [1, 2]}})
    for attribute in ("id", "name", "arguments"):
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
            setattr(invocation, attribute, "x")
    _assert_read_only(invocation.arguments)
    _assert_read_only(invocation.arguments["a"])
    _assert_read_only(invocation.arguments["a"]["b"])


def test_tool_invocation_does_not_alias_the_callers_arguments() -> None:
    arguments: dict[str, Any] = {"a": {"b": [1]}}
    invocation = ToolInvocation("call_1", "f", arguments)
    arguments["a"]["b"].append(2)
    arguments["c"] = 3
    assert invocation.arguments == {"a": {"b": [1]}}


def test_tool_invocation_to_dict_round_trips() -> None:
    invocation = ToolInvocation("call_1", "f", {"a": {"b": [1, "\U0001f600", None, 1.5, True]}})
    plain = invocation.to_dict()
    assert plain == {"id": "call_1", "name": "f", "arguments": {"a": {"b": [1, "\U0001f600", None, 1.5, True]}}}
    _assert_plain(plain)
    assert json.loads(json.dumps(plain)) == plain
    assert ToolInvocation(**plain) == invocation
    plain["arguments"]["a"]["b"].append("x")
    assert invocation.arguments["a"]["b"] == [1, "\U0001f600", None, 1.5, True]


def test_handler_invocations_are_immutable_and_serialisable() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, "call_1", "f", '{"x": [1, {"y": 2}]}')]))
    handler.finalize()
    (invocation,) = handler.get_all_invocations()
    _assert_read_only(invocation.arguments)
    _assert_read_only(invocation.arguments["x"])
    assert json.loads(json.dumps(invocation.to_dict())) == {
        "id": "call_1",
        "name": "f",
        "arguments": {"x": [1, {"y": 2}]},
    }


def test_to_dict_works_for_deeply_nested_arguments_the_handler_accepts() -> None:
    # The handler accepts (and json.dumps serialises) arguments nested a few hundred levels deep;
    # to_dict() must too ("to_dict round trips to plain JSON-serialisable dicts").
    depth = 600
    text = '{"a":' * depth + "1" + "}" * depth
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, "call_1", "f", text)]))
    end = handler.finalize()[-1]
    assert "arguments" in end.payload["metadata"], dict(end.payload["metadata"])
    assert json.loads(json.dumps(end.payload["metadata"]["arguments"])) == json.loads(text)
    (invocation,) = handler.get_all_invocations()
    assert invocation.to_dict()["arguments"] == json.loads(text)
    assert end.to_dict()["payload"]["metadata"]["arguments"] == json.loads(text)
