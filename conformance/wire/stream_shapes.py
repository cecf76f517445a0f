"""The shapes an input shows (``conformance.wire.shapes``), read from the input itself.

Every input is tagged the same way, wherever it came from (a built-in scenario, a re-cut one, a
generated stream, a saved file, a recording): by looking at what its chunks carry. A call is an
index, until a different non-empty id arrives on it (that starts the next call), as the checks
read it. A recording (``recording_realism``) is read as the chunks a faithful converter (the
reference's) makes of it, plus the byte-level shapes of an OpenAI-compatible Chat Completions body
(no ``index``, ``"content": null`` first, object arguments...), read from its payloads.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.verdict.realism import Realism
from conformance.wire.bodies import Body, WireFormatError
from conformance.wire.shapes import realism_of
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = ["RESERVED_KEYS", "call_positions", "chat_body_shapes", "chunk_shapes", "recording_realism", "stream_realism"]

# Argument keys that collide with names frameworks reserve for themselves (pydantic settings,
# **kwargs, bound methods, discriminators, ids).
RESERVED_KEYS = ("settings", "kwargs", "self", "type", "id", "name")


@dataclass
class _Call:
    index: int
    deltas: list[tuple[int, ToolCallDelta]] = field(default_factory=list)  # (chunk position, delta)
    call_id: str | None = None


def _calls(chunks: Sequence[ChunkResponse]) -> list[_Call]:
    calls: list[_Call] = []
    current: dict[int, _Call] = {}
    for position, chunk in enumerate(chunks):
        for delta in chunk.tool_calls or ():
            call = current.get(delta.index)
            if call is None or (delta.call_id and call.call_id and delta.call_id != call.call_id):
                call = _Call(delta.index)
                calls.append(call)
                current[delta.index] = call
            call.call_id = call.call_id or (delta.call_id or None)
            call.deltas.append((position, delta))
    return calls


def call_positions(chunks: Sequence[ChunkResponse]) -> list[list[tuple[int, int]]]:
    """Each call of the stream, read as the checks read calls (an index, until a different non-empty
    id arrives on it), as the (chunk, delta) positions of its deltas."""
    return [
        [
            (position, next(n for n, d in enumerate(chunks[position].tool_calls or ()) if d is delta))
            for position, delta in call.deltas
        ]
        for call in _calls(chunks)
    ]


def _id_shapes(deltas: Sequence[ToolCallDelta]) -> set[str]:
    """How the call's id arrives."""
    shapes: set[str] = set()
    id_at = [n for n, delta in enumerate(deltas) if delta.call_id]
    if not id_at:
        shapes.add("no_id")
    elif id_at[0] > 0:
        shapes.add("id_late")
    if len(id_at) > 1:
        shapes.add("id_restated")
    if any(delta.call_id == "" or delta.name == "" for delta in deltas[1:]):
        shapes.add("empty_string_continuation_fields")
    return shapes


def _name_shapes(deltas: Sequence[ToolCallDelta]) -> set[str]:
    """How the call's name (and its arguments, against the name) arrive."""
    shapes: set[str] = set()
    fragments: list[str] = []
    complete_at: int | None = None
    for n, delta in enumerate(deltas):
        if not delta.name:
            continue
        if fragments and delta.name == "".join(fragments):
            shapes.add("name_restated")
            continue
        fragments.append(delta.name)
        complete_at = n
    if not fragments:
        shapes.add("no_name")
    if len(fragments) > 1:
        shapes.add("name_fragmented")
    args_at = next((n for n, delta in enumerate(deltas) if delta.arguments_delta), None)
    if args_at is not None and complete_at is not None and args_at < complete_at:
        shapes.add("name_late")
    if sum(1 for delta in deltas if delta.arguments_delta) > 1:
        shapes.add("arguments_fragmented")
    return shapes


def _argument_shapes(text: str, abnormal: bool) -> set[str]:
    """What the call's argument text is (a stream cut short says nothing about the model's text)."""
    if not text.strip():  # a stream cut before any argument text says nothing of the call
        return set() if abnormal else {"arguments_empty"}
    try:
        value, end = json.JSONDecoder().raw_decode(text.strip())
    except json.JSONDecodeError as error:
        if abnormal:
            return set()
        at_end = error.pos >= len(text.strip())
        return {"arguments_truncated_normal_end" if at_end else "arguments_invalid_json"}
    rest = text.strip()[end:].strip()
    if rest:
        return {"arguments_two_objects"} if rest.startswith("{") else {"arguments_invalid_json"}
    if value is None:
        return {"arguments_null"}
    if not isinstance(value, dict):
        return {"arguments_not_an_object"}
    return {"reserved_argument_keys"} if set(value) & set(RESERVED_KEYS) else set()


def _text(call: _Call) -> str:
    return "".join(delta.arguments_delta or "" for _, delta in call.deltas)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _continues(before: str, after: str) -> bool:
    """The second call's text completes the first's: the first is a broken prefix, the two parse as one."""
    return bool(before.strip()) and not _is_object(before) and _is_object(before + after)


def _layout_shapes(chunks: Sequence[ChunkResponse], calls: list[_Call]) -> set[str]:
    """How calls share indices and chunks, and how they are laid out against each other."""
    shapes: set[str] = set()
    firsts = [call.deltas[0][0] for call in calls if call.deltas]
    for number, call in enumerate(calls):
        last = call.deltas[-1][0]
        if any(first < last for first in firsts[number + 1 :]):
            shapes.add("interleaved_calls")
        if any(earlier.index == call.index for earlier in calls[:number]):
            shapes.add("index_reused")
        text_between = any(
            (chunk.content or chunk.reasoning) and call.deltas[0][0] < position <= last
            for position, chunk in enumerate(chunks)
        )
        if text_between:
            shapes.add("text_inside_open_call")
        previous = next((e for e in reversed(calls[:number]) if e.index == call.index), None)
        if previous is not None and _continues(_text(previous), _text(call)):
            shapes.add("arguments_continue_across_ids")
    fresh = [call.index for number, call in enumerate(calls) if all(e.index != call.index for e in calls[:number])]
    if fresh != list(range(len(fresh))):
        shapes.add("indices_not_dense")
    for chunk in chunks:
        indices = [delta.index for delta in chunk.tool_calls or ()]
        if len(indices) != len(set(indices)):
            shapes.add("several_deltas_of_one_call_in_a_chunk")
        if len(set(indices)) > 1:
            shapes.add("several_calls_in_one_chunk")
    return shapes


def _chunk_level_shapes(chunks: Sequence[ChunkResponse], has_calls: bool) -> set[str]:
    """What single chunks carry, and how the stream ends."""
    shapes: set[str] = set()
    for chunk in chunks:
        carries = bool(chunk.content or chunk.reasoning or chunk.tool_calls)
        if chunk.content and chunk.tool_calls:
            shapes.add("content_and_tool_delta_in_one_chunk")
        if chunk.content and chunk.reasoning:
            shapes.add("reasoning_and_content_in_one_chunk")
        terminal = chunk.is_complete or chunk.finish_reason is not None
        if not carries and not terminal and chunk.error is None and chunk.usage is None:
            shapes.add("empty_chunk")
        if terminal and carries:
            shapes.add("terminal_chunk_carries_payload")
        if chunk.finish_reason in ("stop", "STOP") and has_calls:
            shapes.add("finish_stop_with_tool_calls")
        if chunk.error is not None:
            shapes.add(
                {
                    "truncated": "truncated_by_token_limit",
                    "provider_error": "provider_error_mid_stream",
                    "incomplete": "stream_cut",
                }[chunk.error.kind]
            )
    if not any(chunk.is_complete or chunk.finish_reason is not None or chunk.error is not None for chunk in chunks):
        shapes.add("no_terminal_marker")
    return shapes


def chunk_shapes(chunks: Sequence[ChunkResponse]) -> frozenset[str]:
    """The shapes (ids of ``conformance.wire.shapes.SHAPES``) a chunk stream shows."""
    calls = _calls(chunks)
    abnormal = any(chunk.error is not None for chunk in chunks)
    shapes = _chunk_level_shapes(chunks, bool(calls)) | _layout_shapes(chunks, calls)
    for call in calls:
        deltas = [delta for _, delta in call.deltas]
        shapes |= _id_shapes(deltas) | _name_shapes(deltas)
        if call.deltas[0][1].name or any(delta.name for _, delta in call.deltas):
            shapes |= _argument_shapes(_text(call), abnormal)
    return frozenset(shapes)


def stream_realism(
    chunks: Sequence[ChunkResponse], wire_dialects: frozenset[str] = frozenset(), api: str | None = None
) -> Realism:
    """How real a chunk stream is: its shapes, plus the byte-level dialects that change its bytes
    (``api``: the wire API the target read it in, whose servers the evidence names first)."""
    return realism_of(chunk_shapes(chunks) | _rendered(chunks, wire_dialects), api)


def _rendered(chunks: Sequence[ChunkResponse], dialects: frozenset[str]) -> frozenset[str]:
    """The dialects that change a byte of this stream (``conformance.adapters.openai_wire``): the
    index dialects need a tool delta, an id-only entry a delta with neither name nor arguments (a
    stream cut short may have lost the one drawn); the first chunk is always sent."""
    deltas = [delta for chunk in chunks for delta in chunk.tool_calls or ()]
    shown = set(dialects)
    if not deltas:
        shown -= {"no_index", "null_index"}
    if not any(delta.name is None and delta.arguments_delta is None for delta in deltas):
        shown.discard("entry_without_function")
    return frozenset(shown)


def _restated_shapes(entry: dict[str, Any], open_calls: dict[Any, tuple[str, str]]) -> set[str]:
    """An id or name repeated on a continuation of the call open on the entry's index (the reference
    converter drops a restated field, so only the payload shows it)."""
    function = entry.get("function")
    call_id = str(entry.get("id") or "")
    name = str(function.get("name") or "") if isinstance(function, dict) else ""
    key = entry.get("index")
    shapes: set[str] = set()
    before = open_calls.get(key)
    if before is not None and not (call_id and before[0] and call_id != before[0]):
        if call_id and call_id == before[0]:
            shapes.add("id_restated")
        if name and name == before[1]:
            shapes.add("name_restated")
        if entry.get("id") == "" or (isinstance(function, dict) and function.get("name") == ""):
            shapes.add("empty_string_continuation_fields")
        open_calls[key] = (before[0] or call_id, before[1] or name)
        return shapes
    open_calls[key] = (call_id, name)
    arguments = function.get("arguments") if isinstance(function, dict) else None
    if name and (isinstance(arguments, dict) or (isinstance(arguments, str) and _is_object(arguments))):
        shapes.add("whole_call_per_chunk")
    return shapes


def _chat_entry_shapes(entry: Any, zero_ids: set[str], open_calls: dict[Any, tuple[str, str]]) -> set[str]:
    shapes: set[str] = set()
    if not isinstance(entry, dict):
        return shapes
    shapes |= _restated_shapes(entry, open_calls)
    if "index" not in entry:
        shapes.add("no_index")
    elif entry["index"] is None:
        shapes.add("null_index")
    elif entry["index"] == 0 and entry.get("id"):
        zero_ids.add(str(entry["id"]))
    function = entry.get("function")
    if "function" not in entry:
        shapes.add("entry_without_function")
    elif isinstance(function, dict):
        if isinstance(function.get("arguments"), dict):
            shapes.add("object_arguments")
        if any(function.get(key) is None and key in function for key in ("name", "arguments")) or (
            "id" in entry and entry["id"] is None
        ):
            shapes.add("null_continuation_fields")
    return shapes


def _chat_choice_shapes(
    choice: Any, position: int, zero_ids: set[str], open_calls: dict[Any, tuple[str, str]]
) -> set[str]:
    shapes: set[str] = set()
    delta = choice.get("delta") if isinstance(choice, dict) else None
    if not isinstance(delta, dict):
        return shapes
    if "message" in choice:
        shapes.add("message_and_delta")
    if position <= 1 and "content" in delta and delta["content"] is None and "role" in delta:
        shapes.add("null_content_first_chunk")
    entries = delta.get("tool_calls") or ()
    if entries and choice.get("finish_reason"):
        shapes.add("tool_delta_with_finish")
    for entry in entries:
        shapes |= _chat_entry_shapes(entry, zero_ids, open_calls)
    return shapes


def chat_body_shapes(payloads: Iterable[Any]) -> frozenset[str]:
    """The byte-level shapes an OpenAI-compatible Chat Completions body shows, from its payloads."""
    shapes: set[str] = set()
    zero_ids: set[str] = set()
    open_calls: dict[Any, tuple[str, str]] = {}  # wire index -> the id and name of the call open on it
    usage_chunks = 0
    for position, payload in enumerate(payloads):
        if not isinstance(payload, dict):
            continue
        choices = payload.get("choices")
        if position == 0 and choices == [] and "prompt_filter_results" in payload:
            shapes.add("azure_empty_first_chunk")
        if payload.get("usage") and choices:
            usage_chunks += 1
        for choice in choices or ():
            shapes |= _chat_choice_shapes(choice, position, zero_ids, open_calls)
    if len(zero_ids) > 1:
        shapes.add("index_always_zero")
    if usage_chunks > 1:
        shapes.add("continuous_usage_stats")
    return frozenset(shapes)


def recording_realism(body: Body) -> Realism:
    """How real a recording is: the shapes of the chunks the reference converter makes of it, and
    (Chat Completions) of its payloads; a body the reference cannot replay is read from its payloads."""
    from conformance.wire.replay import BodyReadError, replay_body

    shapes: set[str] = set()
    # A body the reference cannot replay is still judged; its realism is then read from its bytes alone.
    with contextlib.suppress(BodyReadError, WireFormatError, ValueError, TypeError):
        shapes |= chunk_shapes(replay_body(body).chunks)
    if body.api == "openai-chat":
        shapes |= chat_body_shapes(body.payloads(strict=False))
        if any(piece.startswith(b":") or b"\n:" in piece for piece in body.chunks()):
            shapes.add("sse_comments")
    if body.api == "gemini" and _gemini_call_restated(body.payloads(strict=False)):
        shapes.add("call_restated")
    if body.converter_options.get("cumulative_arguments"):
        shapes.add("cumulative_arguments")
    return realism_of(shapes, body.api)


def _gemini_call_restated(payloads: Iterable[Any]) -> bool:
    """A ``functionCall`` part whose id an earlier part already carried (the reference converter reads
    it as one call, so only the payloads show it)."""
    seen: set[str] = set()
    for payload in payloads:
        candidates = payload.get("candidates") if isinstance(payload, dict) else None
        for candidate in candidates or ():
            content = candidate.get("content") if isinstance(candidate, dict) else None
            for part in (content or {}).get("parts") or () if isinstance(content, dict) else ():
                call = part.get("functionCall") if isinstance(part, dict) else None
                call_id = call.get("id") if isinstance(call, dict) else None
                if call_id and call_id in seen:
                    return True
                if call_id:
                    seen.add(str(call_id))
    return False
