"""Render a turn as OpenAI Chat Completions chunks and as OpenAI Responses stream events.

Payload shapes follow ``shared/research/sdk-surface.md`` section 3; OpenAI-compatible servers'
variations are applied afterwards by ``conformance.turns.dialects``.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn

__all__ = ["render_openai_chat", "render_openai_responses"]

# -- OpenAI Chat Completions ----------------------------------------------------------------------


def _chat_chunk(turn: Turn, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_760_000_000,
        "model": turn.model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


def _chat_call(turn: Turn, index: int, item: Call) -> list[dict[str, Any]]:
    header = {"index": index, "id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": ""}}
    deltas = [_chat_chunk(turn, {"tool_calls": [header]})]
    deltas += [
        _chat_chunk(turn, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        for piece in item.argument_pieces
        if piece
    ]
    return deltas


def render_openai_chat(turn: Turn) -> list[dict[str, Any]]:
    """Chat Completions chunks: a role chunk, the items, a finish chunk and a usage chunk."""
    chunks = [_chat_chunk(turn, {"role": "assistant", "content": ""})]
    call_index = itertools.count()
    pending_calls: list[list[dict[str, Any]]] = []
    for item in turn.items:
        if isinstance(item, Reasoning):
            chunks += [_chat_chunk(turn, {"reasoning_content": piece}) for piece in item.pieces]
        elif isinstance(item, Text):
            chunks += [_chat_chunk(turn, {"content": piece}) for piece in item.pieces]
        elif isinstance(item, ServerCall):
            raise ValueError("OpenAI Chat Completions streams no provider-executed tools")
        elif turn.interleave_calls:
            pending_calls.append(_chat_call(turn, next(call_index), item))
        else:
            chunks += _chat_call(turn, next(call_index), item)
    # Round-robin interleaving keeps each call's own order (INV-INTERLEAVE).
    for group in itertools.zip_longest(*pending_calls):
        chunks += [chunk for chunk in group if chunk is not None]
    if turn.ending == "cut":
        return chunks
    if turn.ending == "error":
        chunks.append({"error": {"message": turn.error_message, "type": "server_error", "code": 503}})
        return chunks
    finish = "length" if turn.ending == "length" else ("tool_calls" if turn.calls else "stop")
    chunks.append(_chat_chunk(turn, {}, finish))
    prompt, completion = turn.usage
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    chunks.append({**_chat_chunk(turn, {}), "choices": [], "usage": usage})
    return chunks


# -- OpenAI Responses -----------------------------------------------------------------------------

_Emit = Callable[..., None]


class _CutHere(Exception):
    """The stream stops inside the last call (``ending == "cut"``)."""


def _reasoning_item(emit: _Emit, position: int, item: Reasoning) -> dict[str, Any]:
    item_id = f"rs_{position}"
    place = {"item_id": item_id, "output_index": position, "summary_index": 0}
    emit("response.output_item.added", output_index=position, item={"id": item_id, "type": "reasoning", "summary": []})
    emit("response.reasoning_summary_part.added", **place, part={"type": "summary_text", "text": ""})
    for piece in item.pieces:
        emit("response.reasoning_summary_text.delta", **place, delta=piece)
    emit("response.reasoning_summary_text.done", **place, text=item.text)
    return {"id": item_id, "type": "reasoning", "summary": [{"type": "summary_text", "text": item.text}]}


def _message_item(emit: _Emit, position: int, item: Text) -> dict[str, Any]:
    item_id = f"msg_{position}"
    place = {"item_id": item_id, "output_index": position, "content_index": 0}
    added = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    emit("response.output_item.added", output_index=position, item=added)
    emit("response.content_part.added", **place, part={"type": "output_text", "text": "", "annotations": []})
    for piece in item.pieces:
        emit("response.output_text.delta", **place, delta=piece, logprobs=[])
    emit("response.output_text.done", **place, text=item.text, logprobs=[])
    part = {"type": "output_text", "text": item.text, "annotations": []}
    emit("response.content_part.done", **place, part=part)
    return {"id": item_id, "type": "message", "role": "assistant", "status": "completed", "content": [part]}


def _hosted_tool_item(emit: _Emit, position: int, item: ServerCall) -> dict[str, Any]:
    # A hosted tool (web search): its own item type and progress events, never a function_call.
    item_id = f"ws_{position}"
    kind = f"{item.name}_call"
    emit(
        "response.output_item.added", output_index=position, item={"id": item_id, "type": kind, "status": "in_progress"}
    )
    for stage in ("in_progress", "searching", "completed"):
        emit(f"response.{kind}.{stage}", item_id=item_id, output_index=position)
    action = {"type": "search", **json.loads(item.input or "{}")}
    return {"id": item_id, "type": kind, "status": "completed", "action": action}


def _function_call_item(emit: _Emit, position: int, item: Call, turn: Turn) -> dict[str, Any]:
    item_id = f"fc_{position}"
    added: dict[str, Any] = {
        "id": item_id,
        "type": "function_call",
        "call_id": item.call_id,
        "name": item.name,
        "arguments": "",
        "status": "in_progress",
    }
    emit("response.output_item.added", output_index=position, item=added)
    # Some producers (Codex Spark, Copilot) send no argument deltas: the text is only in .done.
    streamed = () if turn.extras.get("responses_arguments_only_in_done") else item.argument_pieces
    for piece in filter(None, streamed):
        emit("response.function_call_arguments.delta", item_id=item_id, output_index=position, delta=piece)
    if turn.ending == "cut" and item is turn.items[-1]:
        raise _CutHere
    emit("response.function_call_arguments.done", item_id=item_id, output_index=position, arguments=item.arguments)
    return {**added, "arguments": item.arguments, "status": "completed"}


def _responses_items(emit: _Emit, turn: Turn) -> Iterator[dict[str, Any]]:
    for position, item in enumerate(turn.items):
        if isinstance(item, Reasoning):
            done = _reasoning_item(emit, position, item)
        elif isinstance(item, Text):
            done = _message_item(emit, position, item)
        elif isinstance(item, ServerCall):
            done = _hosted_tool_item(emit, position, item)
        else:
            done = _function_call_item(emit, position, item, turn)
        emit("response.output_item.done", output_index=position, item=done)
        yield done


def _responses_end(emit: _Emit, turn: Turn, response: dict[str, Any], output: list[dict[str, Any]]) -> None:
    prompt, completion = turn.usage
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }
    if turn.ending == "error":
        emit("error", code="server_error", message=turn.error_message, param=None)
        error = {"code": "server_error", "message": turn.error_message}
        emit("response.failed", response={**response, "status": "failed", "output": output, "error": error})
    elif turn.ending == "length":
        details = {"reason": "max_output_tokens"}
        final = {**response, "status": "incomplete", "output": output, "usage": usage, "incomplete_details": details}
        emit("response.incomplete", response=final)
    else:
        emit("response.completed", response={**response, "status": "completed", "output": output, "usage": usage})


def render_openai_responses(turn: Turn) -> list[dict[str, Any]]:
    """Responses stream events: created, in_progress, each output item's events, then the terminal event."""
    events: list[dict[str, Any]] = []
    sequence = itertools.count()
    response = {
        "id": "resp_test",
        "object": "response",
        "created_at": 1_760_000_000,
        "model": turn.model,
        "status": "in_progress",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": next(sequence), **fields})

    emit("response.created", response=copy.deepcopy(response))
    emit("response.in_progress", response=copy.deepcopy(response))
    try:
        output = list(_responses_items(emit, turn))
    except _CutHere:
        return events
    if turn.ending != "cut":
        _responses_end(emit, turn, response, output)
    return events
