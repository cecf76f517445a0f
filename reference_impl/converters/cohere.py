"""Cohere v2 chat stream (``POST /v2/chat`` with ``stream: true``, SSE) -> ``ChunkResponse``.

Input: the objects of ``cohere.ClientV2().chat_stream(...)`` (the ``V2ChatStreamResponse`` union:
``MessageStartV2ChatStreamResponse``, ``ToolCallStartV2ChatStreamResponse``...), or the SSE
payloads as plain dicts. Dispatch is on ``type``.

* ``tool-plan-delta`` (``delta.message.tool_plan``; may be absent): the model's plan before its
  calls. It is reasoning-like text and goes to ``reasoning`` (the next request echoes it as the
  assistant message's ``tool_plan``).
* ``tool-call-start`` carries the call's stream ``index``, ``delta.message.tool_calls.id`` and
  ``function.name`` (and ``function.arguments``, normally ``""``); ``tool-call-delta`` carries the
  same ``index`` and an argument fragment in ``delta.message.tool_calls.function.arguments``,
  forwarded verbatim (some models pretty-print their arguments: the whitespace is kept, the
  handler's JSON parser does not care); ``tool-call-end`` completes the call. Wire indexes are
  mapped through ``ToolCallTracker`` to dense indexes. A tool without parameters gets start then
  end with no delta: no argument text, which the handler reads as ``{}``.
* ``content-start`` / ``content-delta`` (``delta.message.content.text``, or ``.thinking`` for
  reasoning models) -> ``content`` / ``reasoning``; ``content-end``, ``citation-start`` /
  ``citation-end`` and ``debug`` carry nothing for the handler.
* ``message-end`` is the terminal event: ``delta.finish_reason`` (``COMPLETE``, ``STOP_SEQUENCE``,
  ``TOOL_CALL`` are normal; ``MAX_TOKENS`` is ``truncated``; ``ERROR`` / ``TIMEOUT`` or a
  ``delta.error`` message are ``provider_error``) and ``delta.usage`` (``tokens.input_tokens`` /
  ``output_tokens``, the tokens the model really used; ``billed_units`` only when ``tokens`` is
  missing).

Some servers end the SSE body with ``data: [DONE]``; the cohere library stops there, and dicts
never contain it. The cohere library also drops, with a logged warning, every event whose
``type`` it does not know, so the converter only sees unknown types when fed dicts; they are
counted in ``unknown_events``. A stream that ends without ``message-end`` is ``incomplete``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from reference_impl.converters._library_errors import resolve_errors
from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    clean_id,
    clean_name,
    get_field,
    raw_string,
)
from reference_impl.tracker import ToolCallTracker, TrackerError
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["CohereV2Converter"]

_QUIET_EVENTS = frozenset({"content-end", "citation-start", "citation-end", "debug"})

# cohere's own errors derive from cohere.core.api_error.ApiError (HTTP error statuses); a
# connection that breaks mid-stream surfaces as httpx's TransportError, which cohere does not wrap.
_API_ERRORS = (("cohere.core.api_error", "ApiError"), ("httpx", "TransportError"))
_CONNECTION_ERRORS = (("httpx", "TransportError"),)
# cohere's SSE decoder raises SSEError, an httpx.TransportError subclass, for a protocol
# violation (a response that is not text/event-stream, an oversized line): the server sent
# something that is not the stream, which is a provider error, not a dropped connection.
_PROTOCOL_ERRORS = (("cohere.core.http_sse", "SSEError"),)


class CohereV2Converter(StreamConverter):
    """``cohere.ClientV2().chat_stream()`` events (``V2ChatStreamResponse``) -> ``ChunkResponse``."""

    api: ClassVar[str] = "cohere-v2"
    NORMAL_REASONS: ClassVar[frozenset[str]] = frozenset({"COMPLETE", "STOP_SEQUENCE", "TOOL_CALL"})
    TRUNCATION_REASONS: ClassVar[frozenset[str]] = frozenset({"MAX_TOKENS"})

    def __init__(self) -> None:
        super().__init__()
        self.tracker = ToolCallTracker()
        self._finish_reason: str | None = None

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        """cohere's ``ApiError`` family and httpx's transport errors (which cohere lets through)."""
        return resolve_errors(_API_ERRORS)

    @property
    def connection_errors(self) -> tuple[type[BaseException], ...]:
        """httpx's transport errors: the connection broke mid-stream (-> ``incomplete``)."""
        return resolve_errors(_CONNECTION_ERRORS)

    def fail(self, exc: BaseException) -> list[ChunkResponse]:
        """As ``StreamConverter.fail``, except that cohere's ``SSEError`` is a ``provider_error``."""
        if not self._complete and isinstance(exc, resolve_errors(_PROTOCOL_ERRORS)):
            error = StreamError("provider_error", f"{type(exc).__name__}: {exc}")
            return self._terminal(ChunkAssembler(), finish_reason=self._finish_reason, error=error)
        return super().fail(exc)

    def _convert(self, event: Any) -> list[ChunkResponse]:
        kind = get_field(event, "type")
        pieces = ChunkAssembler()
        delta = get_field(event, "delta")
        message = get_field(delta, "message")
        if kind == "tool-call-delta":
            call = get_field(message, "tool_calls")
            self._arguments(get_field(event, "index"), get_field(get_field(call, "function"), "arguments"), pieces)
        elif kind in {"content-delta", "content-start"}:
            content = get_field(message, "content")
            thinking = get_field(content, "thinking")
            pieces.reasoning(thinking if isinstance(thinking, str) else None)
            text = get_field(content, "text")
            pieces.content(text if isinstance(text, str) else None)
        elif kind == "tool-plan-delta":
            plan = get_field(message, "tool_plan")
            pieces.reasoning(plan if isinstance(plan, str) else None)
        elif kind == "tool-call-start":
            self._start(get_field(event, "index"), get_field(message, "tool_calls"), pieces)
        elif kind == "tool-call-end":
            self._end_call(get_field(event, "index"))
        elif kind == "message-start":
            # The opening message is normally empty; a proxy may put a tool plan there.
            plan = get_field(message, "tool_plan")
            pieces.reasoning(plan if isinstance(plan, str) else None)
        elif kind == "message-end":
            return self._message_end(delta, pieces)
        elif kind in _QUIET_EVENTS:
            pass
        else:
            self._unknown(f"event {kind!r}")
        return pieces.build()

    # -- tool calls ------------------------------------------------------------------------------

    def _start(self, index: Any, call: Any, pieces: ChunkAssembler) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            self._problem(f"tool-call-start without an integer index ({index!r}); call skipped")
            return
        function = get_field(call, "function")
        try:
            tracked = self.tracker.start_call(
                index, call_id=clean_id(get_field(call, "id")), name=clean_name(get_field(function, "name"))
            )
        except TrackerError as error:
            self._problem(f"tool-call-start {index} skipped: {error}")
            return
        pieces.tool(ToolCallDelta(tracked.index, tracked.call_id, tracked.name))
        self._arguments(index, get_field(function, "arguments"), pieces)

    def _arguments(self, index: Any, fragment: Any, pieces: ChunkAssembler) -> None:
        if not isinstance(fragment, str) or not fragment:
            return
        if not isinstance(index, int) or isinstance(index, bool):
            self._problem(f"tool-call-delta without an integer index ({index!r}); dropped")
            return
        call = self.tracker.lookup(index)
        if call is None:
            self._problem(f"tool-call-delta for index {index} before its tool-call-start; started a nameless call")
            call = self.tracker.start_call(index)
        try:
            self.tracker.append_arguments(index, fragment)
        except TrackerError as error:
            self._problem(f"tool-call-delta dropped: {error}")
            return
        pieces.tool(ToolCallDelta(call.index, arguments_delta=fragment))

    def _end_call(self, index: Any) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            return
        call = self.tracker.lookup(index)
        if call is not None and not call.completed:
            self.tracker.complete_call(index)

    # -- the end ---------------------------------------------------------------------------------

    def _message_end(self, delta: Any, pieces: ChunkAssembler) -> list[ChunkResponse]:
        usage = self._usage_of(get_field(delta, "usage"))
        if usage is not None:
            self._usage = usage
        reason = raw_string(get_field(delta, "finish_reason"))
        self._finish_reason = reason
        message = get_field(delta, "error")
        error = None
        if isinstance(message, str) and message:
            error = StreamError("provider_error", message)
        elif reason in self.TRUNCATION_REASONS:
            error = StreamError("truncated", f"finish_reason={reason!r}: the output hit the token limit")
        elif reason is not None and reason not in self.NORMAL_REASONS:
            error = StreamError("provider_error", f"finish_reason={reason!r}")
        return self._terminal(pieces, finish_reason=reason, error=error)

    @staticmethod
    def _usage_of(usage: Any) -> TokenUsage | None:
        if usage is None:
            return None
        for group in ("tokens", "billed_units"):
            counts = get_field(usage, group)
            prompt = as_count(get_field(counts, "input_tokens"))
            completion = as_count(get_field(counts, "output_tokens"))
            if prompt is not None or completion is not None:
                return TokenUsage(prompt or 0, completion or 0)
        return None

    def _finish_reason_so_far(self) -> str | None:
        return self._finish_reason

    def _finish(self) -> list[ChunkResponse]:
        return self._incomplete(ChunkAssembler(), "message-end")
