"""The suite's provider-agnostic chunks as OpenAI Chat Completions stream chunks (the wire most libraries read).

Adapters for libraries that consume OpenAI-shaped streams (litellm's chunk builder, pydantic-ai's
``OpenAIChatModel``, openai-agents' ``OpenAIChatCompletionsModel``) translate each ``ChunkResponse``
into exactly one ``chat.completion.chunk``, the way an OpenAI-compatible server would send it:

* ``content`` -> ``delta.content``; ``reasoning`` -> ``delta.reasoning_content`` (DeepSeek, vLLM);
* each ``ToolCallDelta`` -> one ``delta.tool_calls`` entry; a field that is None is left off the
  wire (as OpenAI does on continuation deltas), ``""`` is sent as ``""``;
* ``finish_reason`` -> ``choices[0].finish_reason``;
* the stream's end: a stream that ended normally gets a terminal chunk (``finish_reason``
  ``tool_calls`` or ``stop``, unless one was sent) and ``[DONE]``; ``StreamError("truncated")``
  is a terminal chunk with its finish reason (``length``); ``StreamError("provider_error")`` an
  in-band ``{"error": ...}`` event that ends the body; ``StreamError("incomplete")`` a body that
  just stops (no terminal chunk, no ``[DONE]``).

The first chunk of every stream is the role-only chunk OpenAI always sends.

The run's wire dialects (``conformance.handler.wire_dialects``) change the bytes the way
OpenAI-compatible servers do, never what the stream says: ``no_index`` leaves ``index`` off every
entry, ``null_index`` sends ``"index": null``, ``entry_without_function`` sends an id-only entry
without a ``function`` object, ``null_content_first_chunk`` sends ``"content": null`` in the
role chunk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from conformance.handler.wire_dialects import current_wire_dialects
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = [
    "INDEX_REQUIRED",
    "StreamEnd",
    "chunk_dict",
    "error_event",
    "role_chunk",
    "sse_event",
    "stream_end",
    "terminal_chunk",
]

# Why tool deltas without a usable ``index`` are outside what a library reading OpenAI's stream through
# the openai SDK's types claims to read (``AdapterInfo.outside_target``).
INDEX_REQUIRED = (
    "`ChoiceDeltaToolCall.index` is a required int in the openai SDK's types and OpenAI always sends it; the "
    "report for Gemini's OpenAI-compatible endpoint (https://github.com/openai/openai-python/issues/2806) was closed"
)

_ID = "chatcmpl-conformance"
_MODEL = "gpt-conformance"


def _envelope(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": _ID,
        "object": "chat.completion.chunk",
        "created": 1,
        "model": _MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }


def role_chunk() -> dict[str, Any]:
    """The role-only first chunk OpenAI sends before any content (``content`` null in that dialect)."""
    content = None if "null_content_first_chunk" in current_wire_dialects() else ""
    return _envelope({"role": "assistant", "content": content})


def _tool_entry(delta: ToolCallDelta, dialects: frozenset[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if "null_index" in dialects:
        entry["index"] = None
    elif "no_index" not in dialects:
        entry["index"] = delta.index
    if delta.call_id is not None:
        entry["id"] = delta.call_id
    if delta.call_id is not None or delta.name is not None:
        entry["type"] = "function"
    function: dict[str, Any] = {}
    if delta.name is not None:
        function["name"] = delta.name
    if delta.arguments_delta is not None:
        function["arguments"] = delta.arguments_delta
    if function or "entry_without_function" not in dialects:
        entry["function"] = function
    return entry


def chunk_dict(chunk: ChunkResponse) -> dict[str, Any] | None:
    """The ``chat.completion.chunk`` for one ``ChunkResponse`` (None: it carries nothing to send).

    An in-band error is not a chunk (``error_event``); a truncation's finish reason is sent here.
    """
    delta: dict[str, Any] = {}
    if chunk.reasoning:
        delta["reasoning_content"] = chunk.reasoning
    if chunk.content:
        delta["content"] = chunk.content
    if chunk.tool_calls:
        dialects = current_wire_dialects()
        delta["tool_calls"] = [_tool_entry(d, dialects) for d in chunk.tool_calls]
    finish = chunk.finish_reason
    if chunk.error is not None and chunk.error.kind == "truncated":
        finish = finish or "length"
    if not delta and finish is None:
        return None
    return _envelope(delta, finish)


def terminal_chunk(saw_tool_calls: bool) -> dict[str, Any]:
    """The terminal chunk of a stream that ended normally without sending a finish reason."""
    return _envelope({}, "tool_calls" if saw_tool_calls else "stop")


def error_event(message: str) -> dict[str, Any]:
    """The in-band error object an OpenAI-compatible server sends inside a 200 stream."""
    return {"error": {"message": message, "type": "server_error", "code": None, "param": None}}


@dataclass
class StreamEnd:
    """How a stream of ``ChunkResponse`` ends on the wire (see the module docstring)."""

    finished: bool = False  # a finish reason was sent
    error_kind: str | None = None
    error_message: str = ""
    saw_tool_calls: bool = False

    def note(self, chunk: ChunkResponse) -> None:
        """Record what this chunk says about the end of the stream (the first error wins)."""
        self.saw_tool_calls = self.saw_tool_calls or bool(chunk.tool_calls)
        if chunk.finish_reason is not None or (chunk.error is not None and chunk.error.kind == "truncated"):
            self.finished = True
        if chunk.error is not None and self.error_kind is None:
            self.error_kind = chunk.error.kind
            self.error_message = chunk.error.message

    @property
    def stopped(self) -> bool:
        """Nothing more goes on the wire after this point (an in-band error or a cut ended it)."""
        return self.error_kind in ("provider_error", "incomplete")


def stream_end(chunks: Iterable[ChunkResponse]) -> StreamEnd:
    """What the chunks say about how their stream ends."""
    end = StreamEnd()
    for chunk in chunks:
        end.note(chunk)
    return end


def sse_event(payload: dict[str, Any] | str) -> bytes:
    """One SSE event (``data: ...``) carrying ``payload`` (a dict as JSON, or ``[DONE]``)."""
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()
