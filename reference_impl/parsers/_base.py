"""Machinery shared by the text-embedded tool-call parsers (``xml``, ``json``, ``sentinel``).

A parser turns the concatenated ``chunk.content`` of a stream into calls on a ``ToolCallSink``:
``text`` for prose, and ``tool_start`` / ``tool_content`` / ``tool_end`` for each tool block.
It is a character-level state machine, so its output depends only on the characters fed, never
on where the chunk boundaries fall (INV-RECHUNK in the bug taxonomy): the chunking changes only
how text is grouped into ``text`` / ``tool_content`` calls.

Rules common to every format (each parser's module docstring adds its own grammar):

* **Holding.** A character that may begin a tool opener (``<``, ``[``, ``{``) starts a
  *candidate*. Candidate characters are held back, not emitted, while they are still a prefix of
  a valid opener. The candidate ends in one of three ways: the opener completes (a tool block
  begins); a character proves it is not an opener (the held text is released as text and that
  character is examined again, so ``<<tool ...`` still finds the second ``<``); or the candidate
  reaches ``max_holdback_chars`` held characters without completing, and the next character
  releases it as text. Released text is not scanned again for openers (that keeps every character's
  cost O(1)); the xml grammar is designed so that nothing but the failing character can start an
  opener inside a failed candidate; for the sentinel header and json values the consequences are
  documented in their modules.
* **Fences.** Fence state is computed over everything emitted as text: a run of three or more
  backticks opens a fence, a later run at least as long closes it (CommonMark's rule for
  backtick fences; a run in the middle of a line counts too, so inline triple-backtick spans are
  covered). While a fence is open, no opener is recognised: markup in a code example is text.
  Single and double backtick inline code spans are not tracked (an unmatched backtick would
  otherwise disable tool calls for the rest of the stream). Tool block content is not text and
  does not change the fence state.
* **Blocks.** Once an opener is complete the block has begun: every character up to and
  including its closer is tool content (never text), whatever it contains. A block still open at
  the end of the stream ends with an error (``ToolCallFailure(unterminated=True)``), never as
  text and never as a call. An incomplete opener at the end of the stream is text.
* **Cost.** Text is kept in lists of parts and joined once; runs of ordinary characters are
  skipped with compiled regular expressions; no buffer is ever re-scanned from its start.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

__all__ = [
    "FenceTracker",
    "JsonStringSpan",
    "TextToolParser",
    "ToolCallFailure",
    "ToolCallSink",
    "ToolResult",
    "decode_xml_entities",
]


@dataclass(frozen=True, slots=True)
class ToolCallFailure:
    """Why a tool block did not yield a call. ``unterminated``: the stream ended inside the block."""

    message: str
    unterminated: bool = False


ToolResult = dict[str, Any] | ToolCallFailure
"""What ``tool_end`` receives: the parsed arguments object, or why there is none."""


class ToolCallSink(Protocol):
    """Receiver of a parser's output, in stream order.

    Tool blocks never overlap and text never arrives while a block is open. The name passed to
    ``tool_start`` is ``None`` only for a block that is clearly a tool call but names no tool; its
    ``tool_end`` then always carries a ``ToolCallFailure``.
    """

    def text(self, delta: str) -> None: ...

    def tool_start(self, name: str | None) -> None: ...

    def tool_content(self, delta: str) -> None: ...

    def tool_end(self, result: ToolResult) -> None: ...


_TICK_RUN = re.compile(r"`+")


class FenceTracker:
    """Tracks whether a backtick code fence is open, over text fed in arbitrary pieces."""

    __slots__ = ("fence_len", "run")

    def __init__(self) -> None:
        self.fence_len = 0  # length of the opening run of the open fence; 0 when none is open
        self.run = 0  # backticks seen at the end of the text so far, not yet followed by another char

    def feed(self, text: str) -> None:
        n = len(text)
        pos = 0
        while pos < n:
            tick = text.find("`", pos)
            if tick < 0:
                self.settle()
                return
            if tick > pos:
                self.settle()
            match = _TICK_RUN.match(text, tick)
            assert match is not None
            self.run += match.end() - tick
            pos = match.end()
            if pos < n:
                self.settle()

    def settle(self) -> None:
        """The pending backtick run has ended (the next character is not a backtick)."""
        run = self.run
        if not run:
            return
        self.run = 0
        if self.fence_len == 0:
            if run >= 3:
                self.fence_len = run
        elif run >= self.fence_len:
            self.fence_len = 0

    def is_open(self) -> bool:
        """Whether a fence is open at a position whose character is not a backtick."""
        self.settle()
        return self.fence_len > 0


_STRING_SPECIAL = re.compile(r'["\\]')


class JsonStringSpan:
    """Where a JSON string ends, over text fed in pieces: string- and escape-aware scans share it.

    ``in_string``: the scan is inside a string; ``escaped``: the next character follows a backslash.
    """

    __slots__ = ("escaped", "in_string")

    def __init__(self, in_string: bool = False) -> None:
        self.in_string = in_string
        self.escaped = False

    def skip(self, text: str, pos: int, end: int) -> int:
        """Consume string content from ``text[pos]`` through the closing quote, or to ``end``.

        After the closing quote ``in_string`` is False.
        """
        while pos < end:
            if self.escaped:
                self.escaped = False
                pos += 1
                continue
            match = _STRING_SPECIAL.search(text, pos, end)
            if match is None:
                return end
            pos = match.end()
            if text[pos - 1] == '"':
                self.in_string = False
                return pos
            self.escaped = True
        return pos


# Entity grammar shared by the streaming XML tokenizer and ``decode_xml_entities``: ``&`` then 1-12
# characters of ``[#0-9A-Za-z]`` then ``;``, valid when the body is a predefined name or a numeric
# reference to a Unicode scalar value other than NUL. Anything else is literal text.
ENTITY_BODY_CHARS = frozenset("#0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
ENTITY_MAX_BODY = 12
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_ENTITY_RE = re.compile(r"&([#0-9A-Za-z]{1,12});")


def resolve_entity(body: str) -> str | None:
    """The character for an entity body (between ``&`` and ``;``), or None if it is not one."""
    named = _NAMED_ENTITIES.get(body)
    if named is not None:
        return named
    if len(body) < 2 or body[0] != "#":
        return None
    digits = body[1:]
    try:
        if digits[0] in "xX":
            if len(digits) < 2 or not all(c in "0123456789abcdefABCDEF" for c in digits[1:]):
                return None
            code = int(digits[1:], 16)
        else:
            if not digits.isascii() or not digits.isdigit():
                return None
            code = int(digits)
    except ValueError:  # pragma: no cover - guarded by the checks above
        return None
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code)


def decode_xml_entities(text: str) -> str:
    """Decode the XML entities in ``text``; anything that is not a valid entity stays literal."""
    if "&" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        resolved = resolve_entity(match.group(1))
        return match.group(0) if resolved is None else resolved

    return _ENTITY_RE.sub(replace, text)


# Parser states.
OUTSIDE = 0
CANDIDATE = 1
BLOCK = 2
SKIP = 3

# Results of ``_consume_candidate``.
MORE = 0  # every character up to the returned position is part of the candidate; need more
COMPLETE = 1  # the opener is complete at the returned position (exclusive)
FAIL = 2  # not an opener: release the held text; the character at the returned position is examined again
SHIFT = 3  # consumed up to the returned position; release only the first held character (overlapping prefix)
REJECT_SKIP = 4  # not a tool (json only): release the held text and continue in the SKIP state

WHITESPACE = frozenset(" \t\r\n")


class TextToolParser(ABC):
    """Base class: outside-text scanning, fences, candidate holding, text coalescing.

    Subclasses define the opener grammar (``_begin_candidate`` / ``_consume_candidate`` /
    ``_commit``) and the block grammar (``_scan_block`` / ``_finish_block``).
    """

    format_name: ClassVar[str]
    DEFAULT_MAX_HOLDBACK_CHARS: ClassVar[int]
    # Characters that may start an opener, and a pattern finding the next one or a backtick.
    _START_CHARS: ClassVar[frozenset[str]]
    _NEXT_INTERESTING: ClassVar[re.Pattern[str]]

    def __init__(self, sink: ToolCallSink, max_holdback_chars: int | None = None) -> None:
        if max_holdback_chars is None:
            max_holdback_chars = self.DEFAULT_MAX_HOLDBACK_CHARS
        if isinstance(max_holdback_chars, bool) or not isinstance(max_holdback_chars, int) or max_holdback_chars < 1:
            raise ValueError(f"max_holdback_chars must be a positive int, got {max_holdback_chars!r}")
        self.max_holdback_chars: int = max_holdback_chars
        """The most characters held back as a possible opener before they are released as text."""
        self._sink = sink
        self._fence = FenceTracker()
        self._state = OUTSIDE
        self._text_parts: list[str] = []
        self._held: list[str] = []
        self._held_len = 0
        self._consumed = 0  # characters fed before the text currently being fed
        self._finished = False

    # -- public ---------------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        """Consume the next piece of content."""
        if self._finished:
            raise RuntimeError(f"{type(self).__name__}.feed() called after finish()")
        n = len(text)
        pos = 0
        while pos < n:
            state = self._state
            if state == OUTSIDE:
                pos = self._scan_outside(text, pos)
            elif state == CANDIDATE:
                pos = self._scan_candidate(text, pos)
            elif state == BLOCK:
                pos = self._scan_block(text, pos)
            else:
                pos = self._scan_skip(text, pos)
        self._consumed += n
        self._flush_text()

    def finish(self) -> None:
        """End of stream: an incomplete opener becomes text, an open block an error."""
        if self._finished:
            return
        self._finished = True
        if self._state == CANDIDATE:
            self._release_held()
        elif self._state == BLOCK:
            self._flush_text()
            self._finish_block()
        self._state = OUTSIDE
        self._flush_text()

    @property
    def is_holding(self) -> bool:
        """Whether text is currently held back as a possible opener."""
        return self._state == CANDIDATE

    # -- text ------------------------------------------------------------------------------------

    def _text(self, delta: str) -> None:
        if delta:
            self._text_parts.append(delta)
            self._fence.feed(delta)

    def _flush_text(self) -> None:
        parts = self._text_parts
        if parts:
            self._text_parts = []
            self._sink.text(parts[0] if len(parts) == 1 else "".join(parts))

    def _start_tool(self, name: str | None, content: str) -> None:
        self._flush_text()
        self._sink.tool_start(name)
        if content:
            self._sink.tool_content(content)

    # -- outside text ----------------------------------------------------------------------------

    def _scan_outside(self, text: str, pos: int) -> int:
        char = text[pos]
        if char == "`":
            match = _TICK_RUN.match(text, pos)
            assert match is not None
            self._text(text[pos : match.end()])
            return match.end()
        if self._fence.is_open():
            tick = text.find("`", pos)
            end = len(text) if tick < 0 else tick
            self._text(text[pos:end])
            return end
        if char in self._START_CHARS:
            self._held = []
            self._held_len = 0
            self._state = CANDIDATE
            self._begin_candidate()
            return pos
        match = self._NEXT_INTERESTING.search(text, pos + 1)
        end = len(text) if match is None else match.start()
        self._text(text[pos:end])
        return end

    # -- candidates --------------------------------------------------------------------------------

    def _scan_candidate(self, text: str, pos: int) -> int:
        room = self.max_holdback_chars - self._held_len
        if room <= 0:
            # One more character would exceed the limit: this is not an opener we accept.
            self._state = self._abandon_candidate()
            self._release_held()
            return pos
        end = min(len(text), pos + room)
        status, new_pos = self._consume_candidate(text, pos, end)
        if new_pos > pos:
            self._held.append(text[pos:new_pos])
            self._held_len += new_pos - pos
        if status == MORE:
            return new_pos
        if status == COMPLETE:
            self._state = BLOCK
            self._commit(text, new_pos)
            return new_pos
        if status == SHIFT:
            joined = "".join(self._held)
            self._text(joined[0])
            self._held = [joined[1:]]
            self._held_len -= 1
            return new_pos
        self._state = SKIP if status == REJECT_SKIP else OUTSIDE
        self._release_held()
        return new_pos

    def _release_held(self) -> None:
        held = "".join(self._held)
        self._held = []
        self._held_len = 0
        if self._state == CANDIDATE:
            self._state = OUTSIDE
        self._text(held)

    def _take_held(self) -> str:
        held = "".join(self._held)
        self._held = []
        self._held_len = 0
        return held

    def _abandon_candidate(self) -> int:
        """The state after a candidate reached ``max_holdback_chars``; its text is released."""
        return OUTSIDE

    @abstractmethod
    def _begin_candidate(self) -> None:
        """Reset the opener matcher; the next character consumed is the start character."""

    @abstractmethod
    def _consume_candidate(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """Advance the opener matcher over ``text[pos:end]``; return ``(status, position)``."""

    @abstractmethod
    def _commit(self, text: str, pos: int) -> None:
        """The opener completed just before ``text[pos]``; ``_take_held()`` returns its text."""

    # -- blocks ----------------------------------------------------------------------------------

    @abstractmethod
    def _scan_block(self, text: str, pos: int) -> int:
        """Consume block content from ``pos``; set ``self._state = OUTSIDE`` when the block ends."""

    @abstractmethod
    def _finish_block(self) -> None:
        """The stream ended inside a block: end it with an unterminated failure."""

    def _scan_skip(self, text: str, pos: int) -> int:  # pragma: no cover - only the json parser skips
        raise AssertionError(f"{type(self).__name__} has no SKIP state")

    def _abs(self, pos: int) -> int:
        """Stream offset of ``text[pos]`` for the text currently being fed."""
        return self._consumed + pos
