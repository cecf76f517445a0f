"""Render a turn as Anthropic Messages stream events (also the payload of Bedrock's InvokeModel stream)."""

from __future__ import annotations

import itertools
from typing import Any

from conformance.turns.model import Reasoning, ServerCall, Text, Turn, fake_signature

__all__ = ["render_anthropic"]


def render_anthropic(turn: Turn) -> list[dict[str, Any]]:
    """Messages stream events: message_start, content blocks in order, message_delta, message_stop."""
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
