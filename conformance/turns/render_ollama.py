"""Render a turn as Ollama ``/api/chat`` stream lines (NDJSON; framed by ``conformance.wire.framing``).

Ollama parses each tool call whole before sending it: a call is one line whose
``message.tool_calls`` entry carries ``function.name`` and ``function.arguments`` as a JSON
object; ``function.index`` is left out for 0 (Go's ``omitempty``). Per-turn variations in
``turn.extras``: ``ollama_think_tags`` (reasoning streamed as ``<think>...</think>`` inside
``content``, as thinking models do without ``think: true``), ``ollama_call_ids`` (calls carry
``id``, as newer servers send). The last line has ``done: true``, ``done_reason`` and the counts.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn

__all__ = ["render_ollama"]


def _arguments(call: Call) -> dict[str, Any]:
    if not call.arguments.strip():
        return {}
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        raise ValueError(
            f"Ollama sends whole calls only; the arguments of {call.name!r} are not complete JSON"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(f"Ollama arguments are a JSON object; {call.name!r} has {type(value).__name__}")
    return value


class _Lines:
    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.lines: list[dict[str, Any]] = []
        self._clock = itertools.count()
        self._calls = itertools.count()

    def add(self, message: dict[str, Any], **fields: Any) -> dict[str, Any]:
        stamp = f"2026-01-15T10:00:{next(self._clock) % 60:02d}.000000Z"
        line = {
            "model": self.turn.model,
            "created_at": stamp,
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
            **fields,
        }
        self.lines.append(line)
        return line

    def call(self, item: Call) -> None:
        index = next(self._calls)
        function: dict[str, Any] = {"name": item.name, "arguments": _arguments(item)}
        if index:  # Go's omitempty: index 0 is left out
            function = {"index": index, **function}
        entry: dict[str, Any] = {"function": function}
        if item.call_id and self.turn.extras.get("ollama_call_ids"):
            entry = {"id": item.call_id, **entry}
        self.add({"tool_calls": [entry]})

    def reasoning(self, item: Reasoning) -> None:
        if self.turn.extras.get("ollama_think_tags"):
            for piece in ("<think>", *item.pieces, "</think>"):
                self.add({"content": piece})
        else:
            for piece in item.pieces:
                self.add({"thinking": piece})


def render_ollama(turn: Turn) -> list[dict[str, Any]]:
    """The stream's lines, the ``done: true`` line last (none when cut; an ``{"error"}`` line on error)."""
    lines = _Lines(turn)
    for item in turn.items:
        if isinstance(item, Reasoning):
            lines.reasoning(item)
        elif isinstance(item, Text):
            for piece in item.pieces:
                lines.add({"content": piece})
        elif isinstance(item, ServerCall):
            raise ValueError("Ollama streams no provider-executed tools")
        else:
            lines.call(item)
    if turn.ending == "error":
        lines.lines.append({"error": turn.error_message})
    elif turn.ending != "cut":
        prompt, completion = turn.usage
        lines.add(
            {},
            done=True,
            done_reason="length" if turn.ending == "length" else "stop",
            total_duration=912_000_000,
            load_duration=21_000_000,
            prompt_eval_count=prompt,
            prompt_eval_duration=100_000_000,
            eval_count=completion,
            eval_duration=700_000_000,
        )
    return lines.lines
