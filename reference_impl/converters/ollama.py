"""Ollama native chat stream (``POST /api/chat``, NDJSON) -> ``ChunkResponse``.

Input: the ``ollama.ChatResponse`` objects of ``ollama.Client().chat(..., stream=True)`` (or the
``AsyncClient``), one per NDJSON line, or the lines as plain dicts.

Each line is a whole message fragment: ``message.thinking`` (thinking models with ``think=True``)
-> ``reasoning``; ``message.content`` -> ``content``; ``message.tool_calls`` -> tool calls. Within
one line they are emitted in that order.

Tool calls are never streamed as fragments: each entry of ``message.tool_calls`` is one complete
call (``function.name`` and ``function.arguments`` as a JSON **object**), usually in its own line
and usually without an id. Every entry is a new call with the next dense index; the wire's
``function.index`` (omitted for 0, then 1, 2...) is not a key: ollama-python's ``ToolCall`` model
drops it, together with the ``id`` newer servers send, so neither reaches a converter fed by the
library. A ``tool_calls[].id`` that does arrive (plain dicts) is the call id. ``arguments`` are
serialised once with ``json.dumps(ensure_ascii=False)`` (as Gemini's ``args``); absent or null
arguments give no argument text, which the handler reads as ``{}``; an argument *string* (some
Ollama-compatible servers) is forwarded verbatim.

Thinking models that were not asked to think, or older servers, stream their reasoning as
``<think>...</think>`` inside ``content``: that text is left in ``content`` untouched (telling it
apart is the job of a text-format parser, not of the wire converter).

End: the line with ``done: true``. Its ``done_reason`` is ``"stop"`` even after tool calls, so it
never says whether calls were made; ``"length"`` means the output hit ``num_predict`` or the
context and is ``truncated``. Usage is ``prompt_eval_count`` / ``eval_count`` of that line. A
stream that ends without a ``done`` line is ``incomplete``. An ``{"error": ...}`` line makes
ollama-python raise ``ResponseError`` (see ``fail()``); as a dict it is a ``provider_error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from reference_impl.converters._library_errors import resolve_errors
from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    clean_id,
    clean_name,
    describe_error,
    get_field,
    raw_string,
)
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["OllamaConverter"]

_TRUNCATION_REASONS = frozenset({"length"})

# ollama-python raises its own ResponseError for an ``{"error": ...}`` line or an HTTP error
# status, and lets everything else escape from its stream iterator as it is: httpx's transport
# errors when the connection breaks, json.JSONDecodeError for a line that is not JSON and
# pydantic's ValidationError for a line its models reject (no ``message``, arguments that are
# not an object). ``iter_chunks`` catches these only around the library's ``next()``, never
# around the converter, so a converter bug cannot be mistaken for one of them.
_API_ERRORS = (
    ("ollama", "ResponseError"),
    ("ollama", "RequestError"),
    ("httpx", "TransportError"),
    ("json", "JSONDecodeError"),
    ("pydantic", "ValidationError"),
)
_CONNECTION_ERRORS = (("httpx", "TransportError"),)


class OllamaConverter(StreamConverter):
    """``ollama.ChatResponse`` stream (``/api/chat`` NDJSON lines) -> ``ChunkResponse``."""

    api: ClassVar[str] = "ollama"
    TRUNCATION_REASONS: ClassVar[frozenset[str]] = _TRUNCATION_REASONS

    def __init__(self) -> None:
        super().__init__()
        self._count = 0
        self._done_reason: str | None = None

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        """ollama's ``ResponseError`` / ``RequestError`` and what ollama-python lets escape unwrapped."""
        return resolve_errors(_API_ERRORS)

    @property
    def connection_errors(self) -> tuple[type[BaseException], ...]:
        """httpx's transport errors: the connection broke mid-stream (-> ``incomplete``)."""
        return resolve_errors(_CONNECTION_ERRORS)

    def _convert(self, event: Any) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        error = get_field(event, "error")
        if error:
            # Only reachable with dicts: ollama-python raises ResponseError for an error line.
            return self._terminal(
                pieces, finish_reason=self._done_reason, error=StreamError("provider_error", describe_error(error))
            )
        message = get_field(event, "message")
        done = get_field(event, "done") is True
        if message is None and not done:
            self._unknown("line without message or done")
            return pieces.build()
        if message is not None:
            thinking = get_field(message, "thinking")
            pieces.reasoning(thinking if isinstance(thinking, str) else None)
            content = get_field(message, "content")
            pieces.content(content if isinstance(content, str) else None)
            for entry in get_field(message, "tool_calls") or ():
                for delta in self._tool_call(entry):
                    pieces.tool(delta)
        if not done:
            return pieces.build()
        self._done_reason = raw_string(get_field(event, "done_reason"))
        usage = self._usage_of(event)
        if usage is not None:
            self._usage = usage
        return self._end(pieces)

    def _tool_call(self, entry: Any) -> list[ToolCallDelta]:
        function = get_field(entry, "function")
        if function is None:
            self._unknown("tool call without function")
            return []
        index = self._count
        self._count += 1
        head = ToolCallDelta(index, clean_id(get_field(entry, "id")), clean_name(get_field(function, "name")))
        if head.name is None:
            self._problem(f"tool call {index} has no name")
        arguments = get_field(function, "arguments")
        if arguments is None:
            return [head]
        if isinstance(arguments, str):
            text = arguments
        else:
            # A pydantic model's Mapping field may hold a dict or any Mapping: serialise it as a dict.
            value = dict(arguments) if isinstance(arguments, Mapping) else arguments
            text = json.dumps(value, ensure_ascii=False)
        if not text:
            return [head]
        return [head, ToolCallDelta(index, arguments_delta=text)]

    @staticmethod
    def _usage_of(event: Any) -> TokenUsage | None:
        prompt = as_count(get_field(event, "prompt_eval_count"))
        completion = as_count(get_field(event, "eval_count"))
        if prompt is None and completion is None:
            return None
        return TokenUsage(prompt or 0, completion or 0)

    def _end(self, pieces: ChunkAssembler) -> list[ChunkResponse]:
        reason = self._done_reason
        error = None
        if reason in self.TRUNCATION_REASONS:
            error = StreamError("truncated", f"done_reason={reason!r}: the output hit the token limit")
        return self._terminal(pieces, finish_reason=reason, error=error)

    def _finish_reason_so_far(self) -> str | None:
        return self._done_reason

    def _finish(self) -> list[ChunkResponse]:
        return self._incomplete(ChunkAssembler(), "a line with done: true")
