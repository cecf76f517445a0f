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

# Opener matcher states.
_O_LT = -1  # the "<" that started the candidate
_O_TOOL = 0  # matching "tool" after "<"
_O_WS1 = 1  # at least one whitespace character
_O_WS = 2  # whitespace, then the attribute name
_O_ATTR = 3  # matching "name"
_O_EQ = 4  # whitespace, then "="
_O_QUOTE = 5  # whitespace, then the opening quote
_O_VALUE = 6  # inside the quoted value
_O_END = 7  # whitespace, then ">" or "/"
_O_SLASH = 8  # ">" after "/"

# In-block tokenizer states.
_B_TEXT = 0
_B_TAG = 1
_B_ENTITY = 2

# Tag matcher states (after "<").
_T_START = 0  # first character: "/" or a letter
_T_NAME = 1  # letters of the tag name
_T_CLOSE_END = 2  # closing tag: whitespace, then ">"
_T_OPEN_END = 3  # <arguments / <item: whitespace, then ">" or "/"
_T_ARG_WS1 = 4  # <arg: at least one whitespace character
_T_ARG_WS = 5  # whitespace, then "name"
_T_ARG_ATTR = 6  # matching "name"
_T_ARG_EQ = 7
_T_ARG_QUOTE = 8
_T_ARG_VALUE = 9
_T_ARG_END = 10  # whitespace, then ">" or "/"
_T_SLASH = 11  # ">" after "/"

# Tag matcher step results.
_TAG_MORE = 0
_TAG_DONE = 1
_TAG_FAIL = 2


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
        # Opener matcher.
        self._ostate = _O_TOOL
        self._oindex = 0
        self._oquote = '"'
        self._ovalue: list[str] = []
        self._oname = ""
        self._oself_closing = False
        # Block tokenizer.
        self._bstate = _B_TEXT
        self._block_start = 0
        self._entity: list[str] = []
        self._entity_offset = 0
        self._tstate = _T_START
        self._tclosing = False
        self._tname = ""  # at most len("arguments") characters
        self._tindex = 0
        self._tquote = '"'
        self._traw: list[str] = []
        self._tvalue: list[str] = []
        self._tself_closing = False
        self._toffset = 0
        self._stack: list[_Frame] = []
        self._seen_arguments = False
        self._error: str | None = None
        self._block_done = False

    # -- opener ------------------------------------------------------------------------------------

    def _begin_candidate(self) -> None:
        self._ostate = _O_LT
        self._oindex = 0
        self._ovalue = []
        self._oself_closing = False

    def _consume_candidate(self, text: str, pos: int, end: int) -> tuple[int, int]:
        state = self._ostate
        while pos < end:
            char = text[pos]
            if state == _O_VALUE:
                match = _ATTR_STOP[self._oquote].search(text, pos, end)
                stop = end if match is None else match.start()
                if stop > pos:
                    self._ovalue.append(text[pos:stop])
                pos = stop
                if pos >= end:
                    break
                if text[pos] == "<":
                    self._ostate = state
                    return FAIL, pos
                self._oname = decode_xml_entities("".join(self._ovalue))
                state = _O_END
            elif state == _O_LT:
                state = _O_TOOL  # the base class only starts a candidate at "<"
            elif state == _O_TOOL:
                if char.lower() != "tool"[self._oindex]:
                    return FAIL, pos
                self._oindex += 1
                if self._oindex == 4:
                    state = _O_WS1
            elif state == _O_WS1:
                if char not in WHITESPACE:
                    return FAIL, pos
                state = _O_WS
            elif state == _O_WS:
                if char in "nN":
                    state = _O_ATTR
                    self._oindex = 1
                elif char not in WHITESPACE:
                    return FAIL, pos
            elif state == _O_ATTR:
                if char.lower() != "name"[self._oindex]:
                    return FAIL, pos
                self._oindex += 1
                if self._oindex == 4:
                    state = _O_EQ
            elif state == _O_EQ:
                if char == "=":
                    state = _O_QUOTE
                elif char not in WHITESPACE:
                    return FAIL, pos
            elif state == _O_QUOTE:
                if char in "\"'":
                    self._oquote = char
                    state = _O_VALUE
                elif char not in WHITESPACE:
                    return FAIL, pos
            elif state == _O_END:
                if char == ">":
                    return COMPLETE, pos + 1
                if char == "/":
                    state = _O_SLASH
                    self._oself_closing = True
                elif char not in WHITESPACE:
                    return FAIL, pos
            else:  # _O_SLASH
                if char != ">":
                    return FAIL, pos
                return COMPLETE, pos + 1
            pos += 1
        self._ostate = state
        return MORE, pos

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
        if self._oself_closing:
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
                if text[stop] == "<":
                    self._bstate = _B_TAG
                    self._tstate = _T_START
                    self._tclosing = False
                    self._tname = ""
                    self._traw = ["<"]
                    self._tvalue = []
                    self._tself_closing = False
                    self._toffset = self._abs(stop) - self._block_start
                else:
                    self._bstate = _B_ENTITY
                    self._entity = []
                    self._entity_offset = self._abs(stop) - self._block_start
                pos = stop + 1
            elif state == _B_ENTITY:
                char = text[pos]
                if char == ";" and self._entity:
                    body = "".join(self._entity)
                    resolved = resolve_entity(body)
                    self._add_text(f"&{body};" if resolved is None else resolved, self._entity_offset)
                    self._bstate = _B_TEXT
                    pos += 1
                elif char in ENTITY_BODY_CHARS and len(self._entity) < ENTITY_MAX_BODY:
                    self._entity.append(char)
                    pos += 1
                else:
                    # Not an entity: "&" and the characters after it are literal; look at char again.
                    self._add_text("&" + "".join(self._entity), self._entity_offset)
                    self._bstate = _B_TEXT
            else:
                result, pos = self._tag_step(text, pos, n)
                if result == _TAG_DONE:
                    self._bstate = _B_TEXT
                    self._apply_tag()
                    if self._block_done:
                        return pos
                elif result == _TAG_FAIL:
                    # Not a tag: "<" is literal; the rest of what was read has no "<" in it, only
                    # possibly entities, so it is decoded as text; the failing character is examined again.
                    self._bstate = _B_TEXT
                    raw = "".join(self._traw)
                    self._add_text("<", self._toffset)
                    if len(raw) > 1:
                        self._add_text(decode_xml_entities(raw[1:]), self._toffset + 1)
        return n

    def _tag_step(self, text: str, pos: int, n: int) -> tuple[int, int]:
        """Advance the tag matcher; return ``(result, position)``. On FAIL the position is not consumed."""
        state = self._tstate
        while pos < n:
            char = text[pos]
            if state == _T_ARG_VALUE:
                match = _ATTR_STOP[self._tquote].search(text, pos)
                stop = n if match is None else match.start()
                if stop > pos:
                    piece = text[pos:stop]
                    self._tvalue.append(piece)
                    self._traw.append(piece)
                pos = stop
                if pos >= n:
                    break
                if text[pos] == "<":
                    self._tstate = state
                    return _TAG_FAIL, pos
                state = _T_ARG_END
                self._traw.append(text[pos])
                pos += 1
                continue
            if state == _T_START:
                if char == "/" and not self._tclosing:
                    self._tclosing = True
                elif char in _LETTERS:
                    state = _T_NAME
                    continue
                else:
                    return _TAG_FAIL, pos
            elif state == _T_NAME:
                prefixes = _CLOSE_PREFIXES if self._tclosing else _OPEN_PREFIXES
                if char in _LETTERS:
                    candidate = self._tname + char.lower()
                    if candidate not in prefixes:
                        return _TAG_FAIL, pos
                    self._tname = candidate
                else:
                    names = _CLOSE_NAMES if self._tclosing else _OPEN_NAMES
                    if self._tname not in names:
                        return _TAG_FAIL, pos
                    if self._tclosing:
                        state = _T_CLOSE_END
                    elif self._tname == "arg":
                        state = _T_ARG_WS1
                    else:
                        state = _T_OPEN_END
                    continue  # examine char in the new state
            elif state == _T_CLOSE_END:
                if char == ">":
                    self._traw.append(char)
                    return _TAG_DONE, pos + 1
                if char not in WHITESPACE:
                    return _TAG_FAIL, pos
            elif state in (_T_OPEN_END, _T_ARG_END):
                if char == ">":
                    self._traw.append(char)
                    return _TAG_DONE, pos + 1
                if char == "/":
                    self._tself_closing = True
                    state = _T_SLASH
                elif char not in WHITESPACE:
                    return _TAG_FAIL, pos
            elif state == _T_SLASH:
                if char != ">":
                    return _TAG_FAIL, pos
                self._traw.append(char)
                return _TAG_DONE, pos + 1
            elif state == _T_ARG_WS1:
                if char not in WHITESPACE:
                    return _TAG_FAIL, pos
                state = _T_ARG_WS
            elif state == _T_ARG_WS:
                if char in "nN":
                    state = _T_ARG_ATTR
                    self._tindex = 1
                elif char not in WHITESPACE:
                    return _TAG_FAIL, pos
            elif state == _T_ARG_ATTR:
                if char.lower() != "name"[self._tindex]:
                    return _TAG_FAIL, pos
                self._tindex += 1
                if self._tindex == 4:
                    state = _T_ARG_EQ
            elif state == _T_ARG_EQ:
                if char == "=":
                    state = _T_ARG_QUOTE
                elif char not in WHITESPACE:
                    return _TAG_FAIL, pos
            elif state == _T_ARG_QUOTE:
                if char in "\"'":
                    self._tquote = char
                    state = _T_ARG_VALUE
                elif char not in WHITESPACE:
                    return _TAG_FAIL, pos
            self._traw.append(char)
            pos += 1
        self._tstate = state
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
            self._block_done = True
            if self._error is None and len(self._stack) > 1:
                self._fail(offset, f"</tool> while {_describe(self._stack[-1])} is still open")
            return
        if self._error is not None:
            return
        stack = self._stack
        top = stack[-1]
        if self._tclosing:
            if top.kind != name:
                expected = f"</{top.kind}>" if top.kind != "tool" else "</tool>"
                self._fail(offset, f"unexpected </{name}> (expected {expected})")
                return
            stack.pop()
            if name != "arguments":
                self._store(top, self._value_of(top), offset)
            return
        if name == "arguments":
            if top.kind != "tool" or self._seen_arguments:
                self._fail(offset, "<arguments> is allowed once, directly inside <tool>")
                return
            self._seen_arguments = True
            if not self._tself_closing:
                stack.append(_Frame("arguments", offset, obj=top.obj))
            return
        if name == "arg":
            key = decode_xml_entities("".join(self._tvalue))
            if top.kind in ("arg", "item"):
                if top.lst is not None or top.has_text:
                    self._fail(offset, f"{_describe(top)} mixes <arg> children with other content")
                    return
                if top.obj is None:
                    top.obj = {}
            frame = _Frame("arg", offset, key=key)
        else:  # item
            if top.kind not in ("arg", "item"):
                self._fail(offset, "<item> outside an <arg> or <item> element")
                return
            if top.obj is not None or top.has_text:
                self._fail(offset, f"{_describe(top)} mixes <item> children with other content")
                return
            if top.lst is None:
                top.lst = []
            frame = _Frame("item", offset)
        if self._tself_closing:
            self._store(frame, "", offset)
        else:
            stack.append(frame)

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
