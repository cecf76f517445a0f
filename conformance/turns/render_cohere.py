"""Render a turn as Cohere v2 chat stream events (``POST /v2/chat``, SSE with ``event:`` lines).

``message-start``; reasoning as ``tool-plan-delta`` events (or, with
``turn.extras["cohere_thinking_content"]``, a ``thinking`` content block as reasoning models send);
text as ``content-start`` / ``content-delta`` / ``content-end`` at a content index; each call as
``tool-call-start`` (id, name, ``arguments: ""``), ``tool-call-delta`` fragments and
``tool-call-end`` at a call index; ``message-end`` with the finish reason (``COMPLETE``,
``TOOL_CALL``, ``MAX_TOKENS``, ``ERROR`` with ``error``) and usage. An interrupted call gets no
``tool-call-end``; a cut stream no ``message-end``.
"""

from __future__ import annotations

import itertools
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn

__all__ = ["render_cohere_v2"]


def _content(index: int, field: str, pieces: tuple[str, ...]) -> list[dict[str, Any]]:
    start = {"type": field, field: ""}
    events: list[dict[str, Any]] = [{"type": "content-start", "index": index, "delta": {"message": {"content": start}}}]
    events += [
        {"type": "content-delta", "index": index, "delta": {"message": {"content": {field: piece}}}} for piece in pieces
    ]
    events.append({"type": "content-end", "index": index})
    return events


def _call(index: int, item: Call) -> list[dict[str, Any]]:
    call = {
        "id": item.call_id or f"{item.name}_{index}",
        "type": "function",
        "function": {"name": item.name, "arguments": ""},
    }
    events: list[dict[str, Any]] = [
        {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}
    ]
    events += [
        {
            "type": "tool-call-delta",
            "index": index,
            "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
        }
        for p in item.argument_pieces
        if p
    ]
    return events


def _end(turn: Turn) -> dict[str, Any]:
    prompt, completion = turn.usage
    counts = {"input_tokens": prompt, "output_tokens": completion}
    usage = {"billed_units": dict(counts), "tokens": dict(counts)}
    if turn.ending == "error":
        delta: dict[str, Any] = {"finish_reason": "ERROR", "error": turn.error_message, "usage": usage}
    else:
        finish = "MAX_TOKENS" if turn.ending == "length" else ("TOOL_CALL" if turn.calls else "COMPLETE")
        delta = {"finish_reason": finish, "usage": usage}
    return {"type": "message-end", "delta": delta}


def render_cohere_v2(turn: Turn) -> list[dict[str, Any]]:
    """The stream's events in wire order (see the module docstring)."""
    empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events: list[dict[str, Any]] = [
        {"id": "5f7e0b6a-0000-4000-8000-000000000001", "type": "message-start", "delta": {"message": empty}}
    ]
    contents = itertools.count()
    calls = itertools.count()
    interrupted = turn.ending in ("length", "cut", "error")
    for item in turn.items:
        if isinstance(item, Reasoning) and not turn.extras.get("cohere_thinking_content"):
            events += [{"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}} for p in item.pieces]
        elif isinstance(item, (Text, Reasoning)):
            events += _content(next(contents), "thinking" if isinstance(item, Reasoning) else "text", item.pieces)
        elif isinstance(item, ServerCall):
            raise ValueError("Cohere v2 streams no provider-executed tools")
        else:
            index = next(calls)
            events += _call(index, item)
            if interrupted and item is turn.items[-1]:
                break  # an interrupted call never gets its tool-call-end
            events.append({"type": "tool-call-end", "index": index})
    if turn.ending != "cut":
        events.append(_end(turn))
    return events
