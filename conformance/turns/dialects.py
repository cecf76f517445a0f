"""OpenAI-compatible dialects: how real servers' Chat Completions streams differ from OpenAI's own.

Each dialect rewrites the payloads of an OpenAI Chat rendering (``conformance.turns.render``) the
way a family of OpenAI-compatible servers really sends them (missing index, ids late or repeated,
``""`` names, cumulative arguments...), from the quirks seen in real recordings.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["OPENAI_COMPAT_DIALECTS"]


def _tool_entries(chunks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        entry
        for chunk in chunks
        for choice in chunk.get("choices", [])
        for entry in choice["delta"].get("tool_calls") or []
    ]


def _no_index(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for entry in _tool_entries(chunks):
        entry.pop("index", None)
    return chunks


def _null_index(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``"index": null`` on every entry (no server seen sending it: docs/realism.md, null_index)."""
    for entry in _tool_entries(chunks):
        entry["index"] = None
    return chunks


def _entry_without_function(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An id-only entry (no ``function`` object) restates each call's id after its first delta (no
    server seen sending it: docs/realism.md, entry_without_function)."""
    result = []
    for chunk in chunks:
        result.append(chunk)
        for choice in chunk.get("choices", []):
            for entry in choice["delta"].get("tool_calls") or []:
                if entry.get("id"):
                    restated = copy.deepcopy(chunk)
                    delta = restated["choices"][0]["delta"]
                    delta.pop("content", None)
                    delta["tool_calls"] = [{"index": entry.get("index"), "id": entry["id"], "type": "function"}]
                    restated["choices"][0]["finish_reason"] = None
                    result.append(restated)
    return result


def _null_content_first_chunk(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The role chunk says ``"content": null`` (OpenAI itself, DeepSeek, Groq...: docs/realism.md)."""
    for chunk in chunks[:1]:
        for choice in chunk.get("choices", []):
            if "content" in choice["delta"] and not choice["delta"]["content"]:
                choice["delta"]["content"] = None
    return chunks


def _index_always_zero(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for entry in _tool_entries(chunks):
        entry["index"] = 0
    return chunks


def _continuation_fields(value: Any) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def apply(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for entry in _tool_entries(chunks):
            if "id" not in entry:
                entry["id"] = value
                entry["type"] = value if value is None else "function"
                entry["function"]["name"] = value
        return chunks

    return apply


def _id_on_every_chunk(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids: dict[int, Any] = {}
    for entry in _tool_entries(chunks):
        if "id" in entry:
            ids[entry["index"]] = entry["id"]
        else:
            entry["id"] = ids[entry["index"]]
    return chunks


def _id_late(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The id moves from the header to the call's last delta (DeepSeek V4, vLLM)."""
    last: dict[int, dict[str, Any]] = {}
    ids: dict[int, Any] = {}
    for entry in _tool_entries(chunks):
        if "id" in entry:
            ids[entry["index"]] = entry.pop("id")
        last[entry["index"]] = entry
    for index, entry in last.items():
        entry["id"] = ids[index]
    return chunks


def _name_restated(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names: dict[int, str] = {}
    for entry in _tool_entries(chunks):
        if entry["function"].get("name"):
            names[entry["index"]] = entry["function"]["name"]
        else:
            entry["function"]["name"] = names[entry["index"]]
    return chunks


def _whole_call_per_chunk(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call arrives complete in one chunk (xAI, Groq, Mistral, Ollama)."""
    result: list[dict[str, Any]] = []
    by_index: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        entries = [e for choice in chunk.get("choices", []) for e in choice["delta"].get("tool_calls") or []]
        if not entries:
            result.append(chunk)
            continue
        for entry in entries:
            if entry["index"] in by_index:
                by_index[entry["index"]]["function"]["arguments"] += entry["function"]["arguments"]
            else:
                by_index[entry["index"]] = entry
                result.append(chunk)
    return result


def _cumulative_arguments(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    so_far: dict[int, str] = {}
    for entry in _tool_entries(chunks):
        so_far[entry["index"]] = so_far.get(entry["index"], "") + entry["function"].get("arguments", "")
        entry["function"]["arguments"] = so_far[entry["index"]]
    return chunks


def _object_arguments(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``arguments`` is a JSON object, not a string (Ollama-style servers, A11). Apply after whole_call_per_chunk."""
    for entry in _tool_entries(chunks):
        arguments = entry["function"].get("arguments")
        if isinstance(arguments, str) and arguments.strip():
            try:
                entry["function"]["arguments"] = json.loads(arguments)
            except json.JSONDecodeError:
                raise ValueError(
                    f"object_arguments needs each call's arguments whole in one entry (apply whole_call_per_chunk "
                    f"first); got the fragment {arguments!r}"
                ) from None
    return chunks


def _continuous_usage_stats(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every chunk carries the running usage (vLLM ``continuous_usage_stats``, SiliconFlow), not only the last."""
    final = next((chunk["usage"] for chunk in reversed(chunks) if chunk.get("usage")), None)
    prompt = final["prompt_tokens"] if final else 0
    ceiling = final["completion_tokens"] if final else len(chunks)
    for position, chunk in enumerate(chunks):
        if chunk.get("choices") and not chunk.get("usage"):
            completion = min(position, ceiling)
            chunk["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
    return chunks


def _azure_empty_first_chunk(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    }
    return [first, *chunks]


def _finish_stop_with_tools(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            if choice.get("finish_reason") == "tool_calls":
                choice["finish_reason"] = "stop"
    return chunks


def _tool_delta_with_finish(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last tool delta and finish_reason share one chunk (Mistral, Ollama, LiteLLM)."""
    for position, chunk in enumerate(chunks):
        choices = chunk.get("choices", [])
        if choices and choices[0].get("finish_reason") and position > 0:
            previous = chunks[position - 1]
            if previous.get("choices") and previous["choices"][0]["delta"].get("tool_calls"):
                previous["choices"][0]["finish_reason"] = choices[0]["finish_reason"]
                del chunks[position]
            break
    return chunks


def _message_and_delta(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every choice carries both ``delta`` and a snapshot-like ``message`` (Writer)."""
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            choice["message"] = copy.deepcopy(choice["delta"])
    return chunks


OPENAI_COMPAT_DIALECTS: dict[str, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
    "no_index": _no_index,
    "null_index": _null_index,
    "entry_without_function": _entry_without_function,
    "null_content_first_chunk": _null_content_first_chunk,
    "index_always_zero": _index_always_zero,
    "empty_string_continuations": _continuation_fields(""),
    "null_continuations": _continuation_fields(None),
    "id_on_every_chunk": _id_on_every_chunk,
    "id_late": _id_late,
    "name_restated": _name_restated,
    "whole_call_per_chunk": _whole_call_per_chunk,
    "cumulative_arguments": _cumulative_arguments,
    "object_arguments": _object_arguments,
    "continuous_usage_stats": _continuous_usage_stats,
    "azure_empty_first_chunk": _azure_empty_first_chunk,
    "finish_stop_with_tools": _finish_stop_with_tools,
    "tool_delta_with_finish": _tool_delta_with_finish,
    "message_and_delta": _message_and_delta,
}
