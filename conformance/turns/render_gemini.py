"""Render a turn as Gemini ``streamGenerateContent`` responses (google-genai's ``GenerateContentResponse`` JSON).

Gemini streams no argument text: each call arrives whole, ``args`` as a JSON object.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn

__all__ = ["render_gemini"]


def _chunk(turn: Turn, parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": turn.model}


def _call_part(item: Call) -> tuple[dict[str, Any], dict[str, Any]]:
    function_call: dict[str, Any] = {"name": item.name}
    if item.arguments.strip():
        function_call["args"] = json.loads(item.arguments)
    if item.call_id:
        function_call["id"] = item.call_id
    part: dict[str, Any] = {"functionCall": function_call}
    if item.thought_signature:
        part["thoughtSignature"] = item.thought_signature
    return part, function_call


def _last_is_call(chunks: list[dict[str, Any]]) -> bool:
    return bool(chunks) and "functionCall" in chunks[-1]["candidates"][0]["content"]["parts"][-1]


def _add_call(turn: Turn, chunks: list[dict[str, Any]], item: Call) -> None:
    part, function_call = _call_part(item)
    if turn.extras.get("gemini_calls_share_chunk") and _last_is_call(chunks):
        chunks[-1]["candidates"][0]["content"]["parts"].append(part)
    else:
        chunks.append(_chunk(turn, [part]))
    if turn.extras.get("gemini_restate_calls"):
        # Gemini may send a complete call again in a later chunk, same id, without its signature (B08).
        chunks.append(_chunk(turn, [{"functionCall": copy.deepcopy(function_call)}]))


def _add_usage(turn: Turn, chunks: list[dict[str, Any]], final: dict[str, Any]) -> None:
    prompt, completion = turn.usage
    thoughts = int(turn.extras.get("gemini_thoughts_tokens", 0))

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


def render_gemini(turn: Turn) -> list[dict[str, Any]]:
    """One response per text or thought piece and per call, then a final chunk with finishReason and usage."""
    chunks: list[dict[str, Any]] = []
    for item in turn.items:
        if isinstance(item, Reasoning):
            chunks += [_chunk(turn, [{"text": p, "thought": True}]) for p in item.pieces]
        elif isinstance(item, Text):
            chunks += [_chunk(turn, [{"text": p}]) for p in item.pieces]
        elif isinstance(item, ServerCall):
            raise ValueError("the Gemini renderer has no provider-executed tool items")
        else:
            _add_call(turn, chunks, item)
    if turn.ending == "cut":
        return chunks
    if turn.ending == "error":
        chunks.append({"error": {"code": 503, "message": turn.error_message, "status": "UNAVAILABLE"}})
        return chunks
    final = _chunk(turn, [{"text": ""}], "MAX_TOKENS" if turn.ending == "length" else "STOP")
    chunks.append(final)
    _add_usage(turn, chunks, final)
    return chunks
