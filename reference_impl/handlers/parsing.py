"""``ParsingStreamingResponseHandler``: tool calls embedded in the response text -> segments.

The correct version of seed 000 section 5.2. The parser (``reference_impl.parsers``) is a
character-level state machine over ``chunk.content``, so a marker split across chunks at any
character is found (E01, E02, E11), held text has a documented bound and is always released (E03,
E04), several calls in one chunk are all found (E09), markup inside a fenced code block is text
(E06), detection does not depend on line position (E07), text that is not a complete opener is
text (E10), a closing marker inside a JSON string does not end a call (E05), and an unterminated
block is an error, never text and never a call (E08). Arguments are parsed by
``reference_impl.arguments.parse_arguments`` (json, sentinel) or built by the xml tokenizer; a
failure is an error END, never ``{}``.

Event contract:

* within a chunk, ``reasoning`` first (REASONING segments), then ``content``; ``tool_calls`` are
  ignored (a provider's structured calls belong to ``ApiToolCallStreamingResponseHandler``);
* text outside tool blocks becomes TEXT segments that follow the stream (a tool START ends the
  open TEXT segment; later text opens a new one). Text that may still be the start of an opener
  is held back, at most ``max_holdback_chars`` characters, and emitted later, in order;
* each tool call is one TOOL_CALL segment: START ``{"tool_name", "call_id": None}`` as soon as the
  opener is complete (json: as soon as the call's name is known); CONTENT deltas carry the raw
  text of the block **including its opener and closer**, as it streams; END right after the
  closer: ``{"tool_name", "call_id": None, "arguments": dict}`` (one ``ToolInvocation``, id = the
  segment id) or ``{"tool_name", "call_id": None, "error": str, "raw_arguments": str}`` where
  ``raw_arguments`` is the block's complete raw text (the concatenated CONTENT) and no invocation;
* so concatenating every TEXT delta and every TOOL_CALL delta in emission order reproduces the
  concatenated ``chunk.content`` exactly;
* a block still open when the stream ends (``finalize()``, an ``is_complete`` chunk, or a chunk
  with ``error``) ends with an error END; after an abnormal end (``chunk.error``) it also carries
  ``truncated``/``incomplete``/``provider_error: True`` as the API handler's ENDs do.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from reference_impl.handlers.base import SegmentEmitterHandler, SegmentEventCallback, ToolInvocationCallback
from reference_impl.parsers import (
    DEFAULT_MAX_HOLDBACK_CHARS,
    PARSERS,
    TextToolParser,
    ToolCallFailure,
    ToolCallSink,
    ToolResult,
    create_parser,
)
from reference_impl.types import ChunkResponse, SegmentEvent, SegmentType, StreamError

__all__ = ["PARSER_NAMES", "ParsingStreamingResponseHandler"]

PARSER_NAMES: tuple[str, ...] = tuple(sorted(PARSERS))
"""Valid values of ``parser_name``."""


class _HandlerSink:
    """A parser's output wired to the handler's emitters (which stay off the handler's public interface).

    Built by the handler from its own bound methods, so the parser calls them directly.
    """

    __slots__ = ("text", "tool_content", "tool_end", "tool_start")

    def __init__(
        self,
        text: Callable[[str], None],
        tool_start: Callable[[str | None], None],
        tool_content: Callable[[str], None],
        tool_end: Callable[[ToolResult], None],
    ) -> None:
        self.text = text
        self.tool_start = tool_start
        self.tool_content = tool_content
        self.tool_end = tool_end


class ParsingStreamingResponseHandler(SegmentEmitterHandler):
    """Handler for tool calls embedded in ``chunk.content`` in the ``xml``, ``json`` or ``sentinel`` format.

    ``max_holdback_chars`` (keyword-only; default per format: ``DEFAULT_MAX_HOLDBACK_CHARS``,
    xml 256, json 256, sentinel 512) bounds how much text is held back while it may still be the
    start of a tool opener; an opener longer than that is not recognised and its text is released.
    """

    DEFAULT_MAX_HOLDBACK_CHARS = DEFAULT_MAX_HOLDBACK_CHARS

    def __init__(
        self,
        parser_name: str = "xml",
        on_segment_event: SegmentEventCallback | None = None,
        on_tool_invocation: ToolInvocationCallback | None = None,
        segment_id_prefix: str = "",
        *,
        max_holdback_chars: int | None = None,
    ) -> None:
        if not isinstance(parser_name, str) or parser_name not in PARSERS:
            valid = ", ".join(repr(name) for name in PARSER_NAMES)
            raise ValueError(f"unknown parser_name {parser_name!r}; valid names: {valid}")
        self._parser_name = parser_name
        self._max_holdback_override = max_holdback_chars
        # Validates max_holdback_chars before any state exists.
        create_parser(parser_name, self._parser_sink(), max_holdback_chars)
        super().__init__(on_segment_event, on_tool_invocation, segment_id_prefix)

    @property
    def parser_name(self) -> str:
        """The text format this handler parses: ``"xml"``, ``"json"`` or ``"sentinel"``."""
        return self._parser_name

    @property
    def max_holdback_chars(self) -> int:
        """The most characters held back as a possible tool opener before they are released as text."""
        return self._parser.max_holdback_chars

    # -- state -------------------------------------------------------------------------------------

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._parser: TextToolParser = create_parser(
            self._parser_name, self._parser_sink(), self._max_holdback_override
        )
        self._tool_id: str | None = None
        self._tool_name: str | None = None
        self._tool_raw: list[str] = []
        self._stream_error: StreamError | None = None

    # -- feeding -----------------------------------------------------------------------------------

    def _process_chunk(self, chunk: ChunkResponse) -> None:
        if chunk.reasoning:
            self._emit_reasoning(chunk.reasoning)
        if chunk.content:
            self._parser.feed(chunk.content)
        if chunk.error is not None:
            self._stream_error = chunk.error
            # An error ends the stream: nothing after it can be trusted to belong to this turn.
            self._finish()

    def _finish_stream(self) -> None:
        # Held text is released and an open block ends (with an error) before the text segment closes.
        self._parser.finish()
        super()._finish_stream()

    # -- parser output -----------------------------------------------------------------------------

    def _parser_sink(self) -> ToolCallSink:
        return _HandlerSink(
            partial(self._emit_text, SegmentType.TEXT), self._tool_start, self._tool_content, self._tool_end
        )

    def _tool_start(self, name: str | None) -> None:
        self._close_text_segment()
        self._tool_id = self._new_segment_id()
        self._tool_name = name
        self._tool_raw = []
        self._emit(SegmentEvent.start(self._tool_id, SegmentType.TOOL_CALL, tool_name=name, call_id=None))

    def _tool_content(self, delta: str) -> None:
        if not delta:
            return
        assert self._tool_id is not None
        self._tool_raw.append(delta)
        self._emit(SegmentEvent.content(self._tool_id, SegmentType.TOOL_CALL, delta))

    def _tool_end(self, result: ToolResult) -> None:
        assert self._tool_id is not None
        segment_id, name = self._tool_id, self._tool_name
        self._tool_id = None
        raw_parts, self._tool_raw = self._tool_raw, []
        if not isinstance(result, ToolCallFailure):
            self._emit(
                SegmentEvent.end(segment_id, SegmentType.TOOL_CALL, tool_name=name, call_id=None, arguments=result)
            )
            return
        raw = "".join(raw_parts)
        extra: dict[str, Any] = {}
        message = result.message
        if result.unterminated and self._stream_error is not None:
            kind = self._stream_error.kind
            extra[kind if kind in ("truncated", "incomplete") else "provider_error"] = True
            message = (
                f"{message} (the stream ended abnormally: {kind}: {self._stream_error.message}; "
                "the tool call is not executed)"
            )
        self._emit(
            SegmentEvent.end(
                segment_id,
                SegmentType.TOOL_CALL,
                tool_name=name,
                call_id=None,
                error=message,
                raw_arguments=raw,
                **extra,
            )
        )
