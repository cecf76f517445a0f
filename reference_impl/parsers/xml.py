"""The ``xml`` text format: ``<tool name="NAME"><arguments><arg name="k">v</arg></arguments></tool>``.

Grammar (tag and attribute names are case-insensitive; whitespace is space, tab, CR, LF):

* **Opener** ``<tool`` WS+ ``name`` WS* ``=`` WS* quoted-value WS* ``>`` (or ``/>``: a call with no
  arguments). The value is in ``"`` or ``'``, may contain any character except ``<`` and its
  quote, and has its entities decoded. ``<tool>``, ``<toolbox>``, ``<tool id="x">`` are text.
  An empty name still begins a block (the model did try to call a tool), which ends in an error.
* **Block content**, up to the first ``</tool`` WS* ``>``: an optional ``<arguments>`` wrapper
  (at most one), then ``<arg name="k">value</arg>`` elements. An ``<arg>`` whose children are
  ``<arg>`` elements is an object, one whose children are ``<item>`` elements is a list, otherwise
  its text is a string (empty elements are ``""``; ``<arg name="k"/>`` and ``<item/>`` too).
  ``<item>`` contents follow the same rule. Whitespace between child elements and directly in
  ``<tool>``/``<arguments>`` is ignored; other text there, text mixed with child elements,
  a duplicate name, an ``<item>`` outside a list or a misplaced closing tag is an error.
* **Literal markup.** Only ``<arguments>``, ``</arguments>``, ``<arg name=...>``, ``</arg>``,
  ``<item>``, ``</item>`` (and their self-closing forms) and ``</tool>`` are tags inside a block; any
  other ``<`` is a literal character, and so is an ``&`` that does not start one of ``&lt;``
  ``&gt;`` ``&amp;`` ``&quot;`` ``&apos;`` ``&#N;`` ``&#xH;`` (models write code in arguments). A
  literal ``</tool>`` inside a value must be written ``&lt;/tool>``: the first ``</tool>`` ends the block.

The block's tool content is its raw text, opener and closer included. Values are built
incrementally with a stack, never by re-reading the block, and no XML library is used (they
reject the literal ``<`` that models write in code).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from reference_impl.parsers._base import (
    COMPLETE,
    ENTITY_BODY_CHARS,
    ENTITY_MAX_BODY,
    FAIL,
    MORE,
    OUTSIDE,
    WHITESPACE,
    TextToolParser,
    ToolCallFailure,
    ToolCallSink,
    ToolResult,
    decode_xml_entities,
    resolve_entity,
)

__all__ = ["XmlToolParser"]

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_OPEN_NAMES = ("arguments", "arg", "item")
_CLOSE_NAMES = ("arguments", "arg", "item", "tool")
_OPEN_PREFIXES = frozenset(name[:i] for name in _OPEN_NAMES for i in range(1, len(name) + 1))
_CLOSE_PREFIXES = frozenset(name[:i] for name in _CLOSE_NAMES for i in range(1, len(name) + 1))
_TEXT_SPECIAL = re.compile(r"[<&]")
_ATTR_STOP = {'"': re.compile(r'["<]'), "'": re.compile(r"['<]")}

_OPENER_WORD = "<tool"  # matched case-insensitively; the candidate starts at its "<"

# In-block tokenizer states.
_B_TEXT = 0
_B_TAG = 1
_B_ENTITY = 2

# _TagTail states: what follows a tag's name.
_A_WS1 = 0  # <tool, <arg: at least one whitespace character
_A_WS = 1  # whitespace, then "name"
_A_ATTR = 2  # matching "name"
_A_EQ = 3  # whitespace, then "="
_A_QUOTE = 4  # whitespace, then the opening quote
_A_VALUE = 5  # inside the quoted value
_A_END = 6  # whitespace, then ">" or "/"
_A_SLASH = 7  # ">" after "/"
_A_CLOSE = 8  # closing tag: whitespace, then ">"

# Tag matcher step results.
_TAG_MORE = 0
_TAG_DONE = 1
_TAG_FAIL = 2


class _TagTail:
    """Matches what follows a tag's name, fed in pieces.

    ``<tool`` and ``<arg`` (from ``_A_WS1``): ``WS+ name WS* = WS* quoted-value``, then as
    ``<arguments`` and ``<item`` (from ``_A_END``): ``WS* >`` or ``WS* />``; a closing tag (from
    ``_A_CLOSE``): ``WS* >``. The value may contain any character except ``<`` and its quote; it is
    kept raw, entities undecoded.
    """

    __slots__ = ("index", "quote", "self_closing", "state", "value")

    def __init__(self) -> None:
        self.reset(_A_WS1)

    def reset(self, state: int) -> None:
        self.state = state
        self.index = 0  # characters of "name" matched
        self.quote = '"'
        self.value: list[str] = []
        self.self_closing = False

    def feed(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """Advance over ``text[pos:end]``; return ``(status, position)``.

        ``(_TAG_DONE, after the ">")``, ``(_TAG_FAIL, at the offending character)`` or ``(_TAG_MORE, end)``.
        """
        steps = self._STEPS
        while pos < end:
            status, pos = steps[self.state](self, text, pos, end)
            if status != _TAG_MORE:
                return status, pos
        return _TAG_MORE, pos

    # Each step consumes from ``text[pos]`` (``pos < end``) in the state it is named after.

    def _ws1(self, text: str, pos: int, end: int) -> tuple[int, int]:
        if text[pos] not in WHITESPACE:
            return _TAG_FAIL, pos
        self.state = _A_WS
        return _TAG_MORE, pos + 1

    def _ws_then_name(self, text: str, pos: int, end: int) -> tuple[int, int]:
        char = text[pos]
        if char in "nN":
            self.state = _A_ATTR
            self.index = 1
        elif char not in WHITESPACE:
            return _TAG_FAIL, pos
        return _TAG_MORE, pos + 1

    def _name(self, text: str, pos: int, end: int) -> tuple[int, int]:
        if text[pos].lower() != "name"[self.index]:
            return _TAG_FAIL, pos
        self.index += 1
        if self.index == 4:
            self.state = _A_EQ
        return _TAG_MORE, pos + 1

    def _ws_then_equals(self, text: str, pos: int, end: int) -> tuple[int, int]:
        char = text[pos]
        if char == "=":
            self.state = _A_QUOTE
        elif char not in WHITESPACE:
            return _TAG_FAIL, pos
        return _TAG_MORE, pos + 1

    def _ws_then_quote(self, text: str, pos: int, end: int) -> tuple[int, int]:
        char = text[pos]
        if char in "\"'":
            self.quote = char
            self.state = _A_VALUE
        elif char not in WHITESPACE:
            return _TAG_FAIL, pos
        return _TAG_MORE, pos + 1

    def _quoted_value(self, text: str, pos: int, end: int) -> tuple[int, int]:
        match = _ATTR_STOP[self.quote].search(text, pos, end)
        stop = end if match is None else match.start()
        if stop > pos:
            self.value.append(text[pos:stop])
        if stop >= end:
            return _TAG_MORE, end
        if text[stop] == "<":
            return _TAG_FAIL, stop
        self.state = _A_END
        return _TAG_MORE, stop + 1

    def _ws_then_end(self, text: str, pos: int, end: int) -> tuple[int, int]:
        char = text[pos]
        if char == ">":
            return _TAG_DONE, pos + 1
        if char == "/":
            self.self_closing = True
            self.state = _A_SLASH
        elif char not in WHITESPACE:
            return _TAG_FAIL, pos
        return _TAG_MORE, pos + 1

    def _slash_end(self, text: str, pos: int, end: int) -> tuple[int, int]:
        if text[pos] != ">":
            return _TAG_FAIL, pos
        return _TAG_DONE, pos + 1

    def _ws_then_close(self, text: str, pos: int, end: int) -> tuple[int, int]:
        char = text[pos]
        if char == ">":
            return _TAG_DONE, pos + 1
        if char not in WHITESPACE:
            return _TAG_FAIL, pos
        return _TAG_MORE, pos + 1

    # Indexed by the states _A_WS1 .. _A_CLOSE.
    _STEPS: ClassVar[tuple[Callable[[_TagTail, str, int, int], tuple[int, int]], ...]] = (
        _ws1,
        _ws_then_name,
        _name,
        _ws_then_equals,
        _ws_then_quote,
        _quoted_value,
        _ws_then_end,
        _slash_end,
        _ws_then_close,
    )


class _Frame:
    """One open element while a block's arguments are built."""

    __slots__ = ("has_text", "key", "kind", "lst", "obj", "offset", "text_parts")

    def __init__(self, kind: str, offset: int, key: str = "", obj: dict[str, Any] | None = None) -> None:
        self.kind = kind  # "tool", "arguments", "arg" or "item"
        self.key = key
        self.offset = offset
        self.obj = obj
        self.lst: list[Any] | None = None
        self.text_parts: list[str] = []
        self.has_text = False  # non-whitespace text seen


def _is_blank(text: str) -> bool:
    return not text.strip(" \t\r\n")


class XmlToolParser(TextToolParser):
    """Streaming parser for ``<tool name="...">...</tool>`` blocks; see the module docstring."""

    format_name: ClassVar[str] = "xml"
    # '<tool name="">' is 15 characters plus the name; tool names are at most 64 (OpenAI, Gemini) or
    # 128 characters in the major APIs, so 256 leaves room for entities and whitespace in the opener.
    DEFAULT_MAX_HOLDBACK_CHARS: ClassVar[int] = 256
    _START_CHARS: ClassVar[frozenset[str]] = frozenset("<")
    _NEXT_INTERESTING: ClassVar[re.Pattern[str]] = re.compile(r"[<`]")

    def __init__(self, sink: ToolCallSink, max_holdback_chars: int | None = None) -> None:
        super().__init__(sink, max_holdback_chars)
        # Opener matcher: the characters of "<tool" matched, then the tag's tail.
        self._oindex = 0
        self._otail = _TagTail()
        self._oname = ""
        # Block tokenizer.
        self._bstate = _B_TEXT
        self._block_start = 0
        self._entity: list[str] = []
        self._entity_offset = 0
        # Tag matcher: "/" and the name, then the tag's tail.
        self._tin_name = True
        self._tclosing = False
        self._tname = ""  # at most len("arguments") characters
        self._ttail = _TagTail()
        self._traw: list[str] = []
        self._toffset = 0
        self._stack: list[_Frame] = []
        self._seen_arguments = False
        self._error: str | None = None
        self._block_done = False

    # -- opener ------------------------------------------------------------------------------------

    def _begin_candidate(self) -> None:
        self._oindex = 0
        self._otail.reset(_A_WS1)

    def _consume_candidate(self, text: str, pos: int, end: int) -> tuple[int, int]:
        index = self._oindex
        while index < len(_OPENER_WORD):
            if pos >= end:
                self._oindex = index
                return MORE, pos
            if text[pos].lower() != _OPENER_WORD[index]:
                return FAIL, pos
            index += 1
            pos += 1
        self._oindex = index
        status, pos = self._otail.feed(text, pos, end)
        if status == _TAG_DONE:
            self._oname = decode_xml_entities("".join(self._otail.value))
            return COMPLETE, pos
        return (FAIL if status == _TAG_FAIL else MORE), pos

    def _commit(self, text: str, pos: int) -> None:
        name = self._oname
        opener = self._take_held()
        self._block_start = self._abs(pos) - len(opener)
        self._start_tool(name or None, opener)
        self._stack = [_Frame("tool", 0, obj={})]
        self._seen_arguments = False
        self._error = None if name else "the <tool> opener has an empty name attribute"
        self._block_done = False
        self._bstate = _B_TEXT
        if self._otail.self_closing:
            self._end_block()

    # -- block -------------------------------------------------------------------------------------

    def _scan_block(self, text: str, pos: int) -> int:
        start = pos
        pos = self._tokenize(text, pos)
        if pos > start:
            self._sink.tool_content(text[start:pos])
        if self._block_done:
            self._end_block()
        return pos

    def _end_block(self) -> None:
        self._state = OUTSIDE
        self._sink.tool_end(self._result())

    def _result(self) -> ToolResult:
        if self._error is not None:
            return ToolCallFailure(f"invalid <tool> block: {self._error}")
        arguments = self._stack[0].obj
        assert arguments is not None
        return arguments

    def _finish_block(self) -> None:
        detail = f" (first problem: {self._error})" if self._error is not None else ""
        open_elements = self._stack[1:]
        where = f"; still open: {', '.join(_describe(frame) for frame in open_elements)}" if open_elements else ""
        self._state = OUTSIDE
        self._sink.tool_end(
            ToolCallFailure(
                f"unterminated <tool> block: the stream ended before </tool>{where}{detail}",
                unterminated=True,
            )
        )

    def _tokenize(self, text: str, pos: int) -> int:
        """Advance the block tokenizer; return the position after ``</tool>`` or ``len(text)``."""
        n = len(text)
        while pos < n:
            state = self._bstate
            if state == _B_TEXT:
                match = _TEXT_SPECIAL.search(text, pos)
                stop = n if match is None else match.start()
                if stop > pos:
                    self._add_text(text[pos:stop], self._abs(pos) - self._block_start)
                if stop >= n:
                    return n
                self._begin_markup(text[stop], self._abs(stop) - self._block_start)
                pos = stop + 1
            elif state == _B_ENTITY:
                pos = self._scan_entity(text, pos, n)
            else:
                pos = self._scan_tag(text, pos, n)
                if self._block_done:
                    return pos
        return n

    def _begin_markup(self, char: str, offset: int) -> None:
        """A ``<`` or an ``&`` at ``offset`` in the block: what follows may be a tag or an entity."""
        if char == "<":
            self._bstate = _B_TAG
            self._tin_name = True
            self._tclosing = False
            self._tname = ""
            self._traw = ["<"]
            self._toffset = offset
        else:
            self._bstate = _B_ENTITY
            self._entity = []
            self._entity_offset = offset

    def _scan_entity(self, text: str, pos: int, n: int) -> int:
        """After ``&``: the entity's body and ``;``, or literal text up to a character that ends it."""
        entity = self._entity
        while pos < n:
            char = text[pos]
            if char == ";" and entity:
                body = "".join(entity)
                resolved = resolve_entity(body)
                self._add_text(f"&{body};" if resolved is None else resolved, self._entity_offset)
                self._bstate = _B_TEXT
                return pos + 1
            if char not in ENTITY_BODY_CHARS or len(entity) >= ENTITY_MAX_BODY:
                # Not an entity: "&" and the characters after it are literal; look at char again.
                self._add_text("&" + "".join(entity), self._entity_offset)
                self._bstate = _B_TEXT
                return pos
            entity.append(char)
            pos += 1
        return pos

    def _scan_tag(self, text: str, pos: int, n: int) -> int:
        """After ``<``: a tag, applied once complete, or literal text up to a character that ends it."""
        start = pos
        result = _TAG_MORE
        if self._tin_name:
            result, pos = self._match_tag_name(text, pos, n)
        if result == _TAG_MORE and not self._tin_name:
            result, pos = self._ttail.feed(text, pos, n)
        self._traw.append(text[start:pos])  # what was read (on FAIL, not the failing character)
        if result == _TAG_DONE:
            self._bstate = _B_TEXT
            self._apply_tag()
        elif result == _TAG_FAIL:
            # Not a tag: "<" is literal; the rest of what was read has no "<" in it, only
            # possibly entities, so it is decoded as text; the failing character is examined again.
            self._bstate = _B_TEXT
            raw = "".join(self._traw)
            self._add_text("<", self._toffset)
            if len(raw) > 1:
                self._add_text(decode_xml_entities(raw[1:]), self._toffset + 1)
        return pos

    def _match_tag_name(self, text: str, pos: int, n: int) -> tuple[int, int]:
        """``/`` (a closing tag) and the letters of a known tag name; at its end, prepare its tail."""
        while pos < n:
            char = text[pos]
            if char in _LETTERS:
                candidate = self._tname + char.lower()
                if candidate not in (_CLOSE_PREFIXES if self._tclosing else _OPEN_PREFIXES):
                    return _TAG_FAIL, pos
                self._tname = candidate
            elif self._tname:
                return self._end_tag_name(pos)
            elif char == "/" and not self._tclosing:
                self._tclosing = True
            else:
                return _TAG_FAIL, pos
            pos += 1
        return _TAG_MORE, pos

    def _end_tag_name(self, pos: int) -> tuple[int, int]:
        """The name ended before ``text[pos]``: fail unless it is a whole tag name, else match its tail."""
        name = self._tname
        if name not in (_CLOSE_NAMES if self._tclosing else _OPEN_NAMES):
            return _TAG_FAIL, pos
        if self._tclosing:
            self._ttail.reset(_A_CLOSE)
        else:
            self._ttail.reset(_A_WS1 if name == "arg" else _A_END)
        self._tin_name = False
        return _TAG_MORE, pos

    # -- building values ---------------------------------------------------------------------------

    def _fail(self, offset: int, message: str) -> None:
        if self._error is None:
            self._error = f"{message} at offset {offset} of the block"

    def _add_text(self, piece: str, offset: int) -> None:
        """Add value text; ``offset``: where its first raw character is in the block.

        Error messages depend only on the characters, never on how they were chunked.
        """
        if self._error is not None or self._block_done:
            return
        frame = self._stack[-1]
        if frame.kind in ("tool", "arguments") or frame.obj is not None or frame.lst is not None:
            stripped = piece.lstrip(" \t\r\n")
            if stripped:
                where = offset + len(piece) - len(stripped)
                if frame.kind in ("tool", "arguments"):
                    self._fail(where, "text outside an <arg> element")
                else:
                    self._fail(where, f"{_describe(frame)} mixes text and child elements")
            return
        frame.text_parts.append(piece)
        if not frame.has_text and not _is_blank(piece):
            frame.has_text = True

    def _apply_tag(self) -> None:
        name = self._tname
        offset = self._toffset
        if self._tclosing and name == "tool":
            self._close_tool(offset)
        elif self._error is not None:
            return
        elif self._tclosing:
            self._close_element(name, offset)
        elif name == "arguments":
            self._open_arguments(offset)
        else:
            self._open_value_element(name, offset)

    def _close_tool(self, offset: int) -> None:
        self._block_done = True
        if self._error is None and len(self._stack) > 1:
            self._fail(offset, f"</tool> while {_describe(self._stack[-1])} is still open")

    def _close_element(self, name: str, offset: int) -> None:
        stack = self._stack
        top = stack[-1]
        if top.kind != name:
            expected = f"</{top.kind}>" if top.kind != "tool" else "</tool>"
            self._fail(offset, f"unexpected </{name}> (expected {expected})")
            return
        stack.pop()
        if name != "arguments":
            self._store(top, self._value_of(top), offset)

    def _open_arguments(self, offset: int) -> None:
        top = self._stack[-1]
        if top.kind != "tool" or self._seen_arguments:
            self._fail(offset, "<arguments> is allowed once, directly inside <tool>")
            return
        self._seen_arguments = True
        if not self._ttail.self_closing:
            self._stack.append(_Frame("arguments", offset, obj=top.obj))

    def _open_value_element(self, name: str, offset: int) -> None:
        """``<arg name=...>`` or ``<item>``: a child of the open element (which becomes an object or a list)."""
        top = self._stack[-1]
        frame = self._new_arg(top, offset) if name == "arg" else self._new_item(top, offset)
        if frame is None:
            return
        if self._ttail.self_closing:
            self._store(frame, "", offset)
        else:
            self._stack.append(frame)

    def _new_arg(self, top: _Frame, offset: int) -> _Frame | None:
        if top.kind in ("arg", "item"):
            if top.lst is not None or top.has_text:
                self._fail(offset, f"{_describe(top)} mixes <arg> children with other content")
                return None
            if top.obj is None:
                top.obj = {}
        return _Frame("arg", offset, key=decode_xml_entities("".join(self._ttail.value)))

    def _new_item(self, top: _Frame, offset: int) -> _Frame | None:
        if top.kind not in ("arg", "item"):
            self._fail(offset, "<item> outside an <arg> or <item> element")
            return None
        if top.obj is not None or top.has_text:
            self._fail(offset, f"{_describe(top)} mixes <item> children with other content")
            return None
        if top.lst is None:
            top.lst = []
        return _Frame("item", offset)

    @staticmethod
    def _value_of(frame: _Frame) -> Any:
        if frame.obj is not None:
            return frame.obj
        if frame.lst is not None:
            return frame.lst
        return "".join(frame.text_parts)

    def _store(self, frame: _Frame, value: Any, offset: int) -> None:
        parent = self._stack[-1]
        if frame.kind == "item":
            assert parent.lst is not None
            parent.lst.append(value)
            return
        target = parent.obj
        assert target is not None
        if frame.key in target:
            self._fail(frame.offset, f"duplicate argument name {frame.key!r}")
            return
        target[frame.key] = value


def _describe(frame: _Frame) -> str:
    if frame.kind == "arg":
        return f"<arg name={frame.key!r}> (offset {frame.offset})"
    return f"<{frame.kind}> (offset {frame.offset})"
