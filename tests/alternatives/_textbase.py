"""Shared machinery of the three text-format parsers: prose, code fences, opener hold-back, blocks.

A parser reads ``chunk.content`` only (seed 000 5.2). Prose is emitted as it arrives, except the
characters that could still be the start of a tool block (a proper prefix of the opener), which
are held back and released as text as soon as they cannot be. Inside a ````` fence nothing is
held back and nothing is a tool block. Once the opener is complete the parser is committed: the
block ends as a call or, if malformed or never closed, as an error END (never as text, never run).

A format supplies ``opener_state(held)`` and a ``Block`` that consumes the block's characters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from tests.alternatives.events import (
    ContentEvent,
    EndEvent,
    Event,
    EventSink,
    HandlerClosedError,
    Invocation,
    StartEvent,
    new_id,
)

__all__ = ["Block", "JsonScanner", "OpenerState", "TextToolParser"]

logger = logging.getLogger(__name__)

OpenerState = Literal["prefix", "match", "no"]


class JsonScanner:
    """Tracks JSON nesting depth outside strings, one character at a time."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def push(self, ch: str) -> None:
        if self.in_string:
            if self.escaped:
                self.escaped = False
            elif ch == "\\":
                self.escaped = True
            elif ch == '"':
                self.in_string = False
        elif ch == '"':
            self.in_string = True
        elif ch in "{[":
            self.depth += 1
        elif ch in "}]":
            self.depth -= 1


class Block:
    """One tool block being read. ``push`` returns True when ``ch`` completed the block."""

    def __init__(self, opener: str) -> None:
        self.raw = opener
        self.name: str | None = None

    def push(self, ch: str) -> bool:
        raise NotImplementedError

    def take_content(self) -> str:
        """Text to emit as CONTENT now (called after START only)."""
        raise NotImplementedError

    def rest_content(self) -> str:
        """Whatever CONTENT was held back, at the block's end."""
        return ""

    def result(self) -> tuple[str | None, dict[str, Any] | None, str | None]:
        """(name, arguments, error) of the complete block."""
        raise NotImplementedError

    def raw_arguments(self) -> str:
        return self.raw


class TextToolParser:
    """The handler: feed(chunk) -> events, finalize(), get_all_events(), get_all_invocations(), reset()."""

    tool_segment_type = "tool_call"
    text_segment_type = "text"

    def __init__(
        self,
        on_segment_event: Callable[[Event], object] | None = None,
        on_tool_invocation: Callable[[Invocation], object] | None = None,
    ) -> None:
        self._sink = EventSink(on_segment_event, on_tool_invocation)
        self._reset_state()

    # ------------------------------------------------------------------ format hooks
    def opener_state(self, held: str) -> OpenerState:
        raise NotImplementedError

    def can_open(self, ch: str) -> bool:
        return self.opener_state(ch) != "no"

    def new_block(self, opener: str) -> Block:
        raise NotImplementedError

    # ------------------------------------------------------------------ public API
    def _reset_state(self) -> None:
        self._sink.clear()
        self._text_id: str | None = None
        self._pending_text: list[str] = []
        self._held = ""
        self._in_fence = False
        self._backticks = 0
        self._block: Block | None = None
        self._block_id: str | None = None
        self._closed = False

    def feed(self, chunk: Any) -> list[Event]:
        if self._closed:
            raise HandlerClosedError("this handler was finalized; call reset() to reuse it")
        content = getattr(chunk, "content", None)
        if isinstance(content, str) and content:
            try:
                for ch in content:
                    self._step(ch)
                self._flush()
            except Exception:
                logger.exception("error while parsing text; chunk ignored from here")
        return self._sink.take()

    def finalize(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        try:
            if self._block is not None:
                self._fail_block("the tool block never closed; it is not run")
            held, self._held = self._held, ""
            for ch in held:
                self._text_char(ch)
            self._flush()
            self._end_text()
        except Exception:
            logger.exception("error while finalizing")
        return self._sink.take()

    def get_all_events(self) -> list[Event]:
        return list(self._sink.events)

    def get_all_invocations(self) -> list[Invocation]:
        return list(self._sink.invocations)

    def reset(self) -> None:
        self._reset_state()

    # ------------------------------------------------------------------ prose
    def _text_char(self, ch: str) -> None:
        if ch == "`":
            self._backticks += 1
            if self._backticks == 3:
                self._in_fence = not self._in_fence
        else:
            self._backticks = 0
        self._pending_text.append(ch)

    def _flush(self) -> None:
        if not self._pending_text:
            return
        text = "".join(self._pending_text)
        self._pending_text = []
        if self._text_id is None:
            self._text_id = new_id()
            self._sink.emit(StartEvent(self._text_id, self.text_segment_type))
        self._sink.emit(ContentEvent(self._text_id, text))

    def _end_text(self) -> None:
        if self._text_id is not None:
            self._sink.emit(EndEvent(self._text_id))
            self._text_id = None

    def _step(self, ch: str) -> None:
        if self._block is not None:
            self._block_char(ch)
            return
        if not self._held and (self._in_fence or not self.can_open(ch)):
            self._text_char(ch)
            return
        self._held += ch
        state = self.opener_state(self._held)
        if state == "prefix":
            return
        if state == "match":
            opener, self._held = self._held, ""
            self._open_block(opener)
            return
        # Not an opener after all: the first held character is text; rescan the rest.
        held, self._held = self._held, ""
        self._text_char(held[0])
        for rest in held[1:]:
            self._step(rest)

    # ------------------------------------------------------------------ blocks
    def _open_block(self, opener: str) -> None:
        self._flush()
        self._end_text()
        self._block = self.new_block(opener)
        self._block_id = None
        self._maybe_start()

    def _maybe_start(self) -> None:
        block = self._block
        if block is None or self._block_id is not None or block.name is None:
            return
        self._start_block(block.name)

    def _start_block(self, name: str | None) -> None:
        assert self._block is not None
        self._block_id = new_id()
        self._sink.emit(StartEvent(self._block_id, self.tool_segment_type, {"tool_name": name}))
        self._emit_block_content()

    def _emit_block_content(self) -> None:
        assert self._block is not None and self._block_id is not None
        text = self._block.take_content()
        if text:
            self._sink.emit(ContentEvent(self._block_id, text))

    def _block_char(self, ch: str) -> None:
        block = self._block
        assert block is not None
        done = block.push(ch)
        self._maybe_start()
        if self._block_id is not None:
            self._emit_block_content()
        if done:
            self._close_block()

    def _close_block(self) -> None:
        block = self._block
        assert block is not None
        name, arguments, error = block.result()
        if self._block_id is None:
            block.name = name
            self._start_block(name)
        assert self._block_id is not None
        rest = block.rest_content()
        if rest:
            self._sink.emit(ContentEvent(self._block_id, rest))
        self._end_block(name, arguments, error)

    def _fail_block(self, error: str) -> None:
        block = self._block
        assert block is not None
        if self._block_id is None:
            self._start_block(block.name)
        assert self._block_id is not None
        rest = block.rest_content()
        if rest:
            self._sink.emit(ContentEvent(self._block_id, rest))
        self._end_block(block.name, None, error)

    def _end_block(self, name: str | None, arguments: dict[str, Any] | None, error: str | None) -> None:
        block, segment_id = self._block, self._block_id
        assert block is not None and segment_id is not None
        self._block, self._block_id = None, None
        if error is None and not name:
            error = "the tool block names no tool"
        if error is not None or arguments is None or not name:
            meta = {"tool_name": name, "error": error or "invalid tool block", "raw_arguments": block.raw}
            self._sink.emit(EndEvent(segment_id, meta))
            return
        self._sink.emit(EndEvent(segment_id, {"tool_name": name, "arguments": arguments}))
        self._sink.invoke(Invocation(segment_id, name, arguments))
