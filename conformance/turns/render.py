"""Render a logical assistant turn as each wire API's stream payloads, following the documented formats.

A ``Turn`` is what the model "said": text, reasoning and tool calls in order, with the cut points
at which each string is streamed, and how the stream ends. ``render(turn, api)`` returns the
provider payloads (dicts) in wire order; ``render_sse(turn, api)`` frames them as the SSE body the
SDK decodes. Dialects (``OPENAI_COMPAT_DIALECTS``) rewrite an OpenAI Chat rendering the way
OpenAI-compatible servers really differ (missing index, ids late or repeated, ``""`` names...).

Used to write the bundled cassettes and by the byte-level strategies; payload shapes follow
``shared/research/sdk-surface.md`` section 3 and the quirks seen in real recordings.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.model import Reasoning, ServerCall, Text, Turn, fake_signature
from conformance.wire.bodies import to_sse

__all__ = ["RENDERED_APIS", "render", "render_sse"]

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


def _render_openai_chat(turn: Turn) -> list[dict[str, Any]]:
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
        else:
            index = next(call_index)
            header = {
                "index": index,
                "id": item.call_id,
                "type": "function",
                "function": {"name": item.name, "arguments": ""},
            }
            deltas = [_chat_chunk(turn, {"tool_calls": [header]})]
            deltas += [
                _chat_chunk(turn, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in item.argument_pieces
                if piece
            ]
            if turn.interleave_calls:
                pending_calls.append(deltas)
            else:
                chunks += deltas
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


def _render_openai_responses(turn: Turn) -> list[dict[str, Any]]:
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
    output: list[dict[str, Any]] = []
    for output_index, item in enumerate(turn.items):
        if isinstance(item, Reasoning):
            item_id = f"rs_{output_index}"
            emit(
                "response.output_item.added",
                output_index=output_index,
                item={"id": item_id, "type": "reasoning", "summary": []},
            )
            emit(
                "response.reasoning_summary_part.added",
                item_id=item_id,
                output_index=output_index,
                summary_index=0,
                part={"type": "summary_text", "text": ""},
            )
            for piece in item.pieces:
                emit(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=output_index,
                    summary_index=0,
                    delta=piece,
                )
            emit(
                "response.reasoning_summary_text.done",
                item_id=item_id,
                output_index=output_index,
                summary_index=0,
                text=item.text,
            )
            done: dict[str, Any] = {
                "id": item_id,
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": item.text}],
            }
        elif isinstance(item, Text):
            item_id = f"msg_{output_index}"
            emit(
                "response.output_item.added",
                output_index=output_index,
                item={"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []},
            )
            emit(
                "response.content_part.added",
                item_id=item_id,
                output_index=output_index,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": []},
            )
            for piece in item.pieces:
                emit(
                    "response.output_text.delta",
                    item_id=item_id,
                    output_index=output_index,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                item_id=item_id,
                output_index=output_index,
                content_index=0,
                text=item.text,
                logprobs=[],
            )
            part = {"type": "output_text", "text": item.text, "annotations": []}
            emit("response.content_part.done", item_id=item_id, output_index=output_index, content_index=0, part=part)
            done = {"id": item_id, "type": "message", "role": "assistant", "status": "completed", "content": [part]}
        elif isinstance(item, ServerCall):
            # A hosted tool (web search): its own item type and progress events, never a function_call.
            item_id = f"ws_{output_index}"
            kind = f"{item.name}_call"
            emit(
                "response.output_item.added",
                output_index=output_index,
                item={"id": item_id, "type": kind, "status": "in_progress"},
            )
            for stage in ("in_progress", "searching", "completed"):
                emit(f"response.{kind}.{stage}", item_id=item_id, output_index=output_index)
            action = {"type": "search", **json.loads(item.input or "{}")}
            done = {"id": item_id, "type": kind, "status": "completed", "action": action}
        else:
            item_id = f"fc_{output_index}"
            added: dict[str, Any] = {
                "id": item_id,
                "type": "function_call",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": "",
                "status": "in_progress",
            }
            emit("response.output_item.added", output_index=output_index, item=added)
            # Some producers (Codex Spark, Copilot) send no argument deltas: the text is only in .done.
            streamed = () if turn.extras.get("responses_arguments_only_in_done") else item.argument_pieces
            for piece in streamed:
                if piece:
                    emit(
                        "response.function_call_arguments.delta",
                        item_id=item_id,
                        output_index=output_index,
                        delta=piece,
                    )
            if turn.ending == "cut" and item is turn.items[-1]:
                return events
            emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=output_index,
                arguments=item.arguments,
            )
            done = {**added, "arguments": item.arguments, "status": "completed"}
        emit("response.output_item.done", output_index=output_index, item=done)
        output.append(done)
    if turn.ending == "cut":
        return events
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
        emit(
            "response.failed",
            response={
                **response,
                "status": "failed",
                "output": output,
                "error": {"code": "server_error", "message": turn.error_message},
            },
        )
    elif turn.ending == "length":
        emit(
            "response.incomplete",
            response={
                **response,
                "status": "incomplete",
                "output": output,
                "usage": usage,
                "incomplete_details": {"reason": "max_output_tokens"},
            },
        )
    else:
        emit("response.completed", response={**response, "status": "completed", "output": output, "usage": usage})
    return events


# -- Anthropic Messages ---------------------------------------------------------------------------


def _render_anthropic(turn: Turn) -> list[dict[str, Any]]:
    prompt, completion = turn.usage
    start_usage: dict[str, int] = {"input_tokens": prompt, "output_tokens": 1}
    # Prompt caching: cache writes and reads are reported beside input_tokens, and the current API
    # restates every count, cumulatively, in message_delta (summing them double-counts: F05).
    cache = turn.extras.get("anthropic_cache_tokens")
    if cache:
        start_usage = {
            "input_tokens": prompt,
            "cache_creation_input_tokens": cache[0],
            "cache_read_input_tokens": cache[1],
            "output_tokens": 1,
        }
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": turn.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        }
    ]
    # Block indexes count every block; a server tool adds two (its use and its result).
    blocks = itertools.count()
    for item in turn.items:
        index = next(blocks)
        if isinstance(item, Reasoning):
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            events += [
                {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}
                for p in item.pieces
            ]
            if item.signature:
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": item.signature},
                    }
                )
        elif isinstance(item, Text):
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            events += [
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
                for p in item.pieces
            ]
        elif isinstance(item, ServerCall):
            use = {"type": "server_tool_use", "id": item.call_id, "name": item.name, "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": use})
            events += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in ("", *item.input_pieces)
            ]
            events.append({"type": "content_block_stop", "index": index})
            index = next(blocks)
            found = {
                "type": "web_search_result",
                "url": "https://weather.example/paris",
                "title": item.result,
                "encrypted_content": fake_signature(item.call_id),
                "page_age": None,
            }
            result = {"type": f"{item.name}_tool_result", "tool_use_id": item.call_id, "content": [found]}
            events.append({"type": "content_block_start", "index": index, "content_block": result})
        else:
            block: dict[str, Any] = {"type": "tool_use", "id": item.call_id, "name": item.name, "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": block})
            # The API sends an empty first fragment; keep that quirk.
            events += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in ("", *item.argument_pieces)
            ]
            if turn.ending in ("length", "cut", "error") and item is turn.items[-1]:
                # A truncated or interrupted block never gets its content_block_stop.
                break
        events.append({"type": "content_block_stop", "index": index})
    if turn.ending == "cut":
        return events
    if turn.ending == "error":
        events.append({"type": "error", "error": {"type": "overloaded_error", "message": turn.error_message}})
        return events
    stop_reason = "max_tokens" if turn.ending == "length" else ("tool_use" if turn.calls else "end_turn")
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {**start_usage, "output_tokens": completion} if cache else {"output_tokens": completion},
        }
    )
    events.append({"type": "message_stop"})
    return events


# -- Gemini (google-genai) ------------------------------------------------------------------------


def _render_gemini(turn: Turn) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = []

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "modelVersion": turn.model}

    for item in turn.items:
        if isinstance(item, Reasoning):
            chunks += [chunk([{"text": p, "thought": True}]) for p in item.pieces]
        elif isinstance(item, Text):
            chunks += [chunk([{"text": p}]) for p in item.pieces]
        elif isinstance(item, ServerCall):
            raise ValueError("the Gemini renderer has no provider-executed tool items")
        else:
            # Gemini streams no argument text: each call arrives whole, args as a JSON object.
            function_call: dict[str, Any] = {"name": item.name}
            if item.arguments.strip():
                function_call["args"] = json.loads(item.arguments)
            if item.call_id:
                function_call["id"] = item.call_id
            part: dict[str, Any] = {"functionCall": function_call}
            if item.thought_signature:
                part["thoughtSignature"] = item.thought_signature
            if (
                turn.extras.get("gemini_calls_share_chunk")
                and chunks
                and "functionCall" in chunks[-1]["candidates"][0]["content"]["parts"][-1]
            ):
                chunks[-1]["candidates"][0]["content"]["parts"].append(part)
            else:
                chunks.append(chunk([part]))
            if turn.extras.get("gemini_restate_calls"):
                # Gemini may send a complete call again in a later chunk, same id, without its signature (B08).
                chunks.append(chunk([{"functionCall": copy.deepcopy(function_call)}]))
    if turn.ending == "cut":
        return chunks
    if turn.ending == "error":
        chunks.append({"error": {"code": 503, "message": turn.error_message, "status": "UNAVAILABLE"}})
        return chunks
    prompt, completion = turn.usage
    thoughts = int(turn.extras.get("gemini_thoughts_tokens", 0))
    final = chunk([{"text": ""}], "MAX_TOKENS" if turn.ending == "length" else "STOP")
    chunks.append(final)

    def usage_metadata(candidates: int) -> dict[str, int]:
        metadata = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
        if thoughts:
            metadata["thoughtsTokenCount"] = thoughts
        return {**metadata, "totalTokenCount": prompt + candidates + thoughts}

    if turn.extras.get("gemini_usage_every_chunk"):
        # The Gemini API puts a running, cumulative usageMetadata on every chunk (F05: never sum them).
        for position, payload in enumerate(chunks, start=1):
            payload["usageMetadata"] = usage_metadata(completion * position // len(chunks))
    else:
        final["usageMetadata"] = usage_metadata(completion)
    return chunks


_RENDERERS: dict[str, Callable[[Turn], list[dict[str, Any]]]] = {
    "openai-chat": _render_openai_chat,
    "openai-responses": _render_openai_responses,
    "anthropic": _render_anthropic,
    "gemini": _render_gemini,
}


def render(turn: Turn, api: str, dialects: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The provider payloads for ``turn`` in wire order. ``dialects`` apply to ``openai-chat`` only."""
    if api not in _RENDERERS:
        raise ValueError(f"unknown wire API {api!r}; expected one of {', '.join(_RENDERERS)}")
    payloads = _RENDERERS[api](turn)
    for name in dialects:
        if api != "openai-chat":
            raise ValueError(f"dialect {name!r} applies to openai-chat only, not {api!r}")
        try:
            transform = OPENAI_COMPAT_DIALECTS[name]
        except KeyError:
            raise ValueError(f"unknown dialect {name!r}; known: {', '.join(OPENAI_COMPAT_DIALECTS)}") from None
        payloads = transform(payloads)
    return payloads


def render_sse(turn: Turn, api: str, dialects: Sequence[str] = (), *, sse_comments: bool = False) -> bytes:
    """``render`` framed as an SSE body (``data: [DONE]`` for OpenAI Chat when the stream ends normally)."""
    body = to_sse(api, render(turn, api, dialects))
    if api == "openai-chat" and turn.ending not in ("cut", "error"):
        body += b"data: [DONE]\n\n"
    if sse_comments:
        # OpenRouter sends comment lines before (and between) events; decoders must skip them.
        body = b": OPENROUTER PROCESSING\n\n" + body.replace(b"\n\ndata:", b"\n\n: OPENROUTER PROCESSING\n\ndata:", 1)
    return body


RENDERED_APIS: tuple[str, ...] = tuple(_RENDERERS)
