"""The suite's chunks as OpenAI Chat Completions chunks, the wire the OpenAI-shaped adapters feed."""

from __future__ import annotations

from conformance.adapters.openai_wire import chunk_dict, role_chunk, stream_end, terminal_chunk
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta


def _delta(chunk: ChunkResponse) -> dict[str, object]:
    payload = chunk_dict(chunk)
    assert payload is not None
    return payload["choices"][0]["delta"]  # type: ignore[no-any-return]


def test_a_field_the_wire_left_out_is_omitted_and_empty_strings_are_sent() -> None:
    delta = _delta(ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, '{"a"')]))
    assert delta == {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}
    delta = _delta(ChunkResponse(tool_calls=[ToolCallDelta(2, "", "", "")]))
    assert delta == {
        "tool_calls": [{"index": 2, "id": "", "type": "function", "function": {"name": "", "arguments": ""}}]
    }


def test_text_reasoning_and_several_calls_travel_in_one_chunk() -> None:
    chunk = ChunkResponse(
        content="hi", reasoning="hm", tool_calls=[ToolCallDelta(0, "a", "f", "{}"), ToolCallDelta(1, "b", "g", None)]
    )
    delta = _delta(chunk)
    assert delta["content"] == "hi" and delta["reasoning_content"] == "hm"
    assert [entry["id"] for entry in delta["tool_calls"]] == ["a", "b"]  # type: ignore[attr-defined]


def test_how_a_stream_ends() -> None:
    assert chunk_dict(ChunkResponse()) is None
    truncated = ChunkResponse(error=StreamError("truncated", "cut"))
    assert chunk_dict(truncated)["choices"][0]["finish_reason"] == "length"  # type: ignore[index]
    end = stream_end([ChunkResponse(tool_calls=[ToolCallDelta(0, "a", "f", "{}")]), truncated])
    assert (end.finished, end.error_kind, end.stopped, end.saw_tool_calls) == (True, "truncated", False, True)
    end = stream_end([ChunkResponse(error=StreamError("provider_error", "overloaded"))])
    assert (end.finished, end.stopped, end.error_message) == (False, True, "overloaded")
    assert stream_end([ChunkResponse(error=StreamError("incomplete", "cut"))]).stopped
    assert terminal_chunk(True)["choices"][0]["finish_reason"] == "tool_calls"
    assert role_chunk()["choices"][0]["delta"] == {"role": "assistant", "content": ""}
