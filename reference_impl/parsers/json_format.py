"""The ``json`` text format: tool calls written as JSON values in the text.

Three shapes (the ecosystem's), plus a list form:

* **tool**: ``{"tool": {"function": "NAME", "parameters": {...}}}``;
* **tool_calls** (OpenAI-like): ``{"tool_calls": [{"function": {"name": "NAME", "arguments": ARGS}}, ...]}``
  where ``ARGS`` is an object or a JSON string holding the argument JSON (decoded once, then
  parsed; a double-encoded string is an error, never unwrapped twice); other keys such as
  ``"id"`` or ``"type"`` are allowed and ignored; each element is its own tool call;
* **name/args** (Gemini-like): ``{"name": "NAME", "args": {...}}``;
* **list**: ``[call, call, ...]`` where each element is a *tool* or *name/args* object.

**Detection rule.** A ``{`` or ``[`` outside a fence starts a candidate, which is scanned by an
incremental JSON tokenizer (strings and escapes are tracked, so braces and markers inside strings
do not count). The value becomes a tool block, *committed*, at the first of these points:

* the first key of the object is ``"tool"`` and its value begins with ``{``, or
* the first key is ``"tool_calls"`` (top-level object only) and its value begins with ``[``, or
* the first key is ``"name"`` with a string value, the second key is ``"args"``, and the
  ``"args"`` value begins with ``{``;

where "the object" is the top-level object, or for a top-level ``[`` its first element. Keys are
compared after JSON string decoding. Until then the candidate's text is held back (at most
``max_holdback_chars``). If the value turns out not to be a tool call (another first key, a
non-string name, a second key other than ``"args"``, a value of another JSON type for
``"tool"``/``"tool_calls"``/``"args"``, a first list element that is not an object, or the
limit is reached), its text is released and *the whole JSON value* stays text,
including nested objects that would look like calls on their own: it is data in prose. If the
text stops being JSON at all (a syntax error, such as ``{curly braces}`` in prose), the text
before the offending character is released and that character is examined again; JSON whose
first key is not one of the shapes' is therefore text even in the rare case where key order
differs (``{"args": ..., "name": ...}``), because detection must not hold prose indefinitely.

**Segments and content.** One tool segment per call. Tool content is raw text and covers the whole
JSON value: the first segment starts at the value's first character; each later call's segment
starts at that call's first character (so separators such as ``,`` belong to the previous
segment); the last segment runs to the value's last character. Concatenating text and tool
content in emission order therefore reproduces the input exactly. A segment's START is emitted
when its tool name is known (its name string has closed; raw content read so far follows
immediately); its END when the next call begins or the value closes. A call whose name never
arrives gets START with ``tool_name=None`` and an error END.

**Errors.** A call without a name, with two names or two argument values, with arguments that
are not exactly one JSON object (``reference_impl.arguments.parse_arguments`` decides), or a
``tool_calls`` value without any call, ends in an error (a missing arguments key means no
arguments: ``{}``). A JSON syntax error inside a committed block makes the call in progress an error
(a call whose object already closed keeps its result; the rest becomes a nameless error
segment), and the block then extends, string-aware, to the bracket that balances its opening
one. A block still open at the end of the stream is an unterminated error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reference_impl.arguments import ArgumentsError, parse_arguments
from reference_impl.parsers._base import (
    BLOCK,
    COMPLETE,
    FAIL,
    MORE,
    OUTSIDE,
    REJECT_SKIP,
    SKIP,
    WHITESPACE,
    JsonStringSpan,
    TextToolParser,
    ToolCallFailure,
    ToolCallSink,
    ToolResult,
)

__all__ = ["JsonToolParser"]

_WS_RUN = re.compile(r"[ \t\r\n]+")
_STRING_SPECIAL = re.compile(r'["\\]')
_SCALAR_RUN = re.compile(r"[0-9A-Za-z.+\-]+")
_SCALAR_VALID = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_SCALAR_START = frozenset("-0123456789tfn")
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_LENIENT_SPECIAL = re.compile(r'[{}\[\]"]')
# One decoder for string literals (keys, names, string-encoded arguments): control characters are
# accepted inside strings, as in parse_arguments.
_STRING_DECODER = json.JSONDecoder(strict=False)

# What the tokenizer expects next.
_E_VALUE = 0
_E_VALUE_OR_CLOSE = 1  # after "["
_E_KEY_OR_CLOSE = 2  # after "{"
_E_KEY = 3  # after "," in an object
_E_COLON = 4
_E_COMMA_OR_CLOSE = 5
_E_DONE = 6

# Kinds of values.
K_OBJECT = "object"
K_ARRAY = "array"
K_STRING = "string"
K_SCALAR = "scalar"

# Keys are decoded (and so can be matched against the shapes) only this deep.
_KEY_DEPTH = 4


class _JsonScanner:
    """Incremental JSON tokenizer reporting structure to ``JsonToolParser`` (its listener).

    ``stack`` holds one ``[is_object, label, count]`` per open container: ``label`` is the current
    key (object; ``None`` when too deep to decode) or element index (array), ``count`` the number of
    keys or elements so far. Values are never built: only the listener's strings are decoded.
    """

    __slots__ = (
        "capture",
        "escape",
        "expect",
        "failed",
        "in_scalar",
        "in_string",
        "interrupt",
        "key_depth",
        "listener",
        "scalar",
        "stack",
        "string_is_key",
    )

    def __init__(self, listener: JsonToolParser) -> None:
        self.listener = listener
        self.stack: list[list[Any]] = []
        self.expect = _E_VALUE
        self.in_string = False
        self.string_is_key = False
        self.escape = 0  # 0: none; 1: after "\"; 2-5: hex digits of "\u" still expected
        self.capture: list[str] | None = None
        self.in_scalar = False
        self.scalar: list[str] = []
        self.key_depth = _KEY_DEPTH
        self.interrupt = False
        self.failed = False

    @property
    def done(self) -> bool:
        return self.expect == _E_DONE

    def scan(self, text: str, pos: int, end: int) -> int:
        """Consume ``text[pos:end]`` until the end, the value's end, an error or an interrupt."""
        self.interrupt = False
        steps = self._STEPS
        while pos < end and not self.interrupt:
            if self.in_string:
                pos = self._scan_string(text, pos, end)
            elif self.in_scalar:
                match = _SCALAR_RUN.match(text, pos, end)
                if match is not None:
                    self.scalar.append(match.group())
                    pos = match.end()
                if pos < end:
                    self._end_scalar(pos)
            elif text[pos] in WHITESPACE:
                match = _WS_RUN.match(text, pos, end)
                assert match is not None
                pos = match.end()
            else:
                pos = steps[self.expect](self, text, pos)
        return pos

    # Structural steps: each examines the non-whitespace character at ``text[pos]`` for what the
    # tokenizer expects next and returns the position after what it consumed (after an error: ``pos``).

    def _value(self, text: str, pos: int) -> int:
        char = text[pos]
        if char == "]" and self.expect == _E_VALUE_OR_CLOSE:
            return self._close(pos)
        if char == "{":
            self._begin_value(K_OBJECT, pos)
            self.stack.append([True, None, 0])
            self.expect = _E_KEY_OR_CLOSE
        elif char == "[":
            self._begin_value(K_ARRAY, pos)
            self.stack.append([False, None, 0])
            self.expect = _E_VALUE_OR_CLOSE
        elif char == '"':
            capture = self._begin_value(K_STRING, pos)
            self.in_string = True
            self.string_is_key = False
            self.capture = [] if capture else None
        elif char in _SCALAR_START:
            self._begin_value(K_SCALAR, pos)
            self.in_scalar = True
            self.scalar = []
            return pos  # the scalar run takes this character
        else:
            return self._error(f"expected a JSON value, found {char!r}", pos)
        return pos + 1

    def _key(self, text: str, pos: int) -> int:
        char = text[pos]
        if char == '"':
            self.in_string = True
            self.string_is_key = True
            self.capture = [] if len(self.stack) <= self.key_depth else None
            return pos + 1
        if char == "}" and self.expect == _E_KEY_OR_CLOSE:
            return self._close(pos)
        return self._error(f"expected a string key, found {char!r}", pos)

    def _colon(self, text: str, pos: int) -> int:
        char = text[pos]
        if char != ":":
            return self._error(f"expected ':' after a key, found {char!r}", pos)
        self.expect = _E_VALUE
        return pos + 1

    def _comma_or_close(self, text: str, pos: int) -> int:
        char = text[pos]
        is_object = self.stack[-1][0]
        if char == ",":
            self.expect = _E_KEY if is_object else _E_VALUE
            return pos + 1
        if char == ("}" if is_object else "]"):
            return self._close(pos)
        closer = "'}'" if is_object else "']'"
        return self._error(f"expected ',' or {closer}, found {char!r}", pos)

    def _finished(self, text: str, pos: int) -> int:  # pragma: no cover - the listener stops feeding a finished value
        self.interrupt = True
        return pos

    # Indexed by the expectations _E_VALUE .. _E_DONE.
    _STEPS: ClassVar[tuple[Callable[[_JsonScanner, str, int], int], ...]] = (
        _value,
        _value,
        _key,
        _key,
        _colon,
        _comma_or_close,
        _finished,
    )

    def _begin_value(self, kind: str, pos: int) -> bool:
        stack = self.stack
        if stack and not stack[-1][0]:
            frame = stack[-1]
            frame[1] = frame[2]
            frame[2] += 1
        return self.listener.on_value_start(kind, pos)

    def _end_value(self, after: int) -> None:
        self.listener.on_value_end(after)
        if self.stack:
            self.expect = _E_COMMA_OR_CLOSE
        else:
            self.expect = _E_DONE
            self.interrupt = True
            self.listener.on_done(after)

    def _close(self, pos: int) -> int:
        self.stack.pop()
        self._end_value(pos + 1)
        return pos + 1

    def _end_scalar(self, pos: int) -> None:
        token = "".join(self.scalar)
        self.in_scalar = False
        self.scalar = []
        if _SCALAR_VALID.fullmatch(token) is None:
            self._error(f"invalid JSON literal {token[:20]!r}", pos, pos - len(token))
            return
        self._end_value(pos)

    def _scan_string(self, text: str, pos: int, end: int) -> int:
        start = pos
        if self.escape:  # the previous piece ended inside an escape sequence
            pos = self._scan_escape(text, pos, end)
        while pos < end and not self.interrupt:
            match = _STRING_SPECIAL.search(text, pos, end)
            if match is None:
                pos = end
                break
            pos = match.start()
            if text[pos] == '"':
                if self.capture is not None:
                    self.capture.append(text[start:pos])
                self.in_string = False
                self._end_string(pos + 1)
                return pos + 1
            if pos + 1 < end and text[pos + 1] in _SIMPLE_ESCAPES:  # a whole one-character escape
                pos += 2
                continue
            # "\u", an invalid escape, or one cut by ``end``.
            self.escape = 1
            pos = self._scan_escape(text, pos + 1, end)
        if self.capture is not None:
            self.capture.append(text[start:pos])
        return pos

    def _scan_escape(self, text: str, pos: int, end: int) -> int:
        """Consume the rest of an escape sequence (after its backslash), as far as ``end``."""
        while pos < end and self.escape:
            char = text[pos]
            escape = self.escape
            if escape == 1:
                if char == "u":
                    self.escape = 2
                elif char in _SIMPLE_ESCAPES:
                    self.escape = 0
                else:
                    return self._error(f"invalid escape '\\{char}' in a string", pos)
            elif char not in _HEX:
                return self._error("invalid \\u escape in a string", pos)
            else:
                self.escape = 0 if escape == 5 else escape + 1
            pos += 1
        return pos

    def _end_string(self, after: int) -> None:
        capture = self.capture
        self.capture = None
        decoded = None if capture is None else _STRING_DECODER.decode('"' + "".join(capture) + '"')
        if self.string_is_key:
            frame = self.stack[-1]
            frame[1] = decoded
            frame[2] += 1
            self.expect = _E_COLON
            return
        if decoded is not None:
            self.listener.on_string(decoded, after)
        self._end_value(after)

    def _error(self, message: str, pos: int, at: int | None = None) -> int:
        """A syntax error: scanning stops before ``text[pos]``; ``at`` is where to report it."""
        self.failed = True
        self.interrupt = True
        self.listener.on_error(message, pos, pos if at is None else at)
        return pos


# Shapes.
_SHAPE_TOOL = "tool"
_SHAPE_TOOL_CALLS = "tool_calls"
_SHAPE_NAME_ARGS = "name/args"
_SHAPE_LIST = "list"

_NAME_PATHS = {
    _SHAPE_TOOL: '"tool" -> "function"',
    _SHAPE_TOOL_CALLS: '"function" -> "name"',
    _SHAPE_NAME_ARGS: '"name"',
    _SHAPE_LIST: '"name" or "tool" -> "function"',
}

# Roles of a value inside a committed block.
_R_NONE = 0
_R_CALL = 1
_R_NAME = 2
_R_ARGS = 3

_Stack = list[list[Any]]  # _JsonScanner.stack: one [is_object, label, count] per open container

# The roles of the members of the objects that hold a call's name and arguments.
_TOOL_FIELDS = {"function": _R_NAME, "parameters": _R_ARGS}  # {"tool": {...}}
_NAME_ARGS_FIELDS = {"name": _R_NAME, "args": _R_ARGS}
_FUNCTION_FIELDS = {"name": _R_NAME, "arguments": _R_ARGS}  # {"tool_calls": [{"function": {...}}]}


def _role_in_tool(stack: _Stack) -> int:
    """``{"tool": {"function": NAME, "parameters": ARGS}}``: the role of the value starting under ``stack``."""
    depth = len(stack)
    if depth == 0:
        return _R_CALL
    if depth == 2 and stack[0][1] == "tool":
        return _TOOL_FIELDS.get(stack[1][1], _R_NONE)
    return _R_NONE


def _role_in_name_args(stack: _Stack) -> int:
    """``{"name": NAME, "args": ARGS}``."""
    depth = len(stack)
    if depth == 0:
        return _R_CALL
    if depth == 1:
        return _NAME_ARGS_FIELDS.get(stack[0][1], _R_NONE)
    return _R_NONE


def _role_in_tool_calls(stack: _Stack) -> int:
    """``{"tool_calls": [{"function": {"name": NAME, "arguments": ARGS}}, ...]}``."""
    depth = len(stack)
    if depth < 2 or stack[0][1] != "tool_calls" or not isinstance(stack[1][1], int):
        return _R_NONE
    if depth == 2:
        return _R_CALL
    if depth == 4 and stack[2][1] == "function":
        return _FUNCTION_FIELDS.get(stack[3][1], _R_NONE)
    return _R_NONE


def _role_in_list(stack: _Stack) -> int:
    """``[call, ...]``, each call a *name/args* or a *tool* object."""
    depth = len(stack)
    if depth == 1:
        return _R_CALL
    if depth == 2:
        return _NAME_ARGS_FIELDS.get(stack[1][1], _R_NONE)
    if depth == 3 and stack[1][1] == "tool":
        return _TOOL_FIELDS.get(stack[2][1], _R_NONE)
    return _R_NONE


_ROLE_OF_SHAPE: dict[str, Callable[[_Stack], int]] = {
    _SHAPE_TOOL: _role_in_tool,
    _SHAPE_NAME_ARGS: _role_in_name_args,
    _SHAPE_TOOL_CALLS: _role_in_tool_calls,
    _SHAPE_LIST: _role_in_list,
}

# Parser modes (meaningful while a candidate, block or skipped value is being scanned).
_M_CANDIDATE = 0
_M_COMMITTED = 1
_M_SKIP = 2

# Candidate decisions.
_D_COMMIT = 1
_D_REJECT = 2
_D_FAIL = 3
_D_DONE = 4


@dataclass(slots=True)
class _Segment:
    """One tool segment of a committed block."""

    start: int = 0  # stream offset of its first character
    pending: list[str] = field(default_factory=list)  # content read before START
    started: bool = False
    call_assigned: bool = False
    value_closed: bool = False
    name: str | None = None
    name_seen: bool = False
    args_parts: list[str] | None = None
    args_kind: str = ""
    args_start: int = 0
    error: str | None = None


class JsonToolParser(TextToolParser):
    """Streaming parser for tool calls written as JSON values; see the module docstring."""

    format_name: ClassVar[str] = "json"
    # '{"name": "<name>", "args":' is ~20 characters plus the name (tool names are at most 64-128
    # characters in the major APIs), with room for pretty-printing whitespace and escapes.
    DEFAULT_MAX_HOLDBACK_CHARS: ClassVar[int] = 256
    _START_CHARS: ClassVar[frozenset[str]] = frozenset("{[")
    _NEXT_INTERESTING: ClassVar[re.Pattern[str]] = re.compile(r"[{\[`]")

    def __init__(self, sink: ToolCallSink, max_holdback_chars: int | None = None) -> None:
        super().__init__(sink, max_holdback_chars)
        self._scanner = _JsonScanner(self)
        self._mode = _M_CANDIDATE
        self._decision = 0
        self._shape = ""
        self._role_of: Callable[[_Stack], int] = _role_in_list
        self._root_is_array = False
        self._seg = _Segment()
        self._cur_text = ""
        self._emit_from = 0
        self._capturing_args = False
        self._capturing_name = False
        self._args_depth = 0
        self._cap_from = 0
        self._lenient = False
        self._lenient_depth = 0
        self._lenient_strings = JsonStringSpan()

    # -- candidate ---------------------------------------------------------------------------------

    def _begin_candidate(self) -> None:
        self._scanner = _JsonScanner(self)
        self._mode = _M_CANDIDATE
        self._decision = 0
        self._shape = ""
        self._root_is_array = False
        self._seg = _Segment()
        self._capturing_args = False
        self._capturing_name = False
        self._lenient = False

    def _consume_candidate(self, text: str, pos: int, end: int) -> tuple[int, int]:
        self._decision = 0
        new_pos = self._run_scanner(text, pos, end)
        decision = self._decision
        if decision == 0:
            return MORE, new_pos
        if decision == _D_COMMIT:
            return COMPLETE, new_pos
        if decision == _D_REJECT:
            return REJECT_SKIP, new_pos
        return FAIL, new_pos  # _D_FAIL (the offending character is examined again) or _D_DONE

    def _abandon_candidate(self) -> int:
        self._enter_skip()
        return SKIP

    def _enter_skip(self) -> None:
        self._mode = _M_SKIP
        self._scanner.key_depth = 0
        self._scanner.capture = None

    def _commit(self, text: str, pos: int) -> None:
        opener = self._take_held()
        seg = self._seg
        seg.start = self._abs(pos) - len(opener)
        seg.pending = [opener]
        seg.call_assigned = self._shape != _SHAPE_TOOL_CALLS
        self._cur_text = text
        self._emit_from = pos
        if seg.name is not None:
            self._start_segment()

    def _run_scanner(self, text: str, pos: int, end: int) -> int:
        self._cur_text = text
        if self._capturing_args:
            self._cap_from = pos
        new_pos = self._scanner.scan(text, pos, end)
        if self._capturing_args and new_pos > self._cap_from:
            parts = self._seg.args_parts
            assert parts is not None
            parts.append(text[self._cap_from : new_pos])
            self._cap_from = new_pos
        return new_pos

    # -- listener interface (called by _JsonScanner) -----------------------------------------------

    def on_value_start(self, kind: str, pos: int) -> bool:
        mode = self._mode
        if mode == _M_SKIP:
            return False
        stack = self._scanner.stack
        depth = len(stack)
        if mode == _M_CANDIDATE:
            return self._candidate_value_start(kind, pos, stack)
        if depth > _KEY_DEPTH:
            return False
        role = self._role_of(stack)
        if role == _R_CALL:
            self._begin_call(pos)
        elif role == _R_NAME:
            seg = self._seg
            if seg.name_seen:
                self._segment_error(seg, "the call has more than one tool name", pos)
            elif kind != K_STRING:
                seg.name_seen = True
                self._segment_error(seg, f"the tool name is a JSON {kind}, not a string", pos)
            else:
                self._capturing_name = True
                return True
        elif role == _R_ARGS:
            seg = self._seg
            if seg.args_parts is not None:
                self._segment_error(seg, "the call has more than one arguments value", pos)
            else:
                self._begin_args(kind, pos, depth)
        return False

    def on_value_end(self, after: int) -> None:
        if self._mode != _M_COMMITTED:
            if self._mode == _M_CANDIDATE and self._root_is_array and len(self._scanner.stack) == 1:
                self._reject()  # the first list element closed without a tool shape
            return
        stack = self._scanner.stack
        if self._capturing_args and len(stack) == self._args_depth:
            parts = self._seg.args_parts
            assert parts is not None
            parts.append(self._cur_text[self._cap_from : after])
            self._capturing_args = False
        if len(stack) <= _KEY_DEPTH and self._role_of(stack) == _R_CALL:
            self._seg.value_closed = True

    def on_string(self, value: str, after: int) -> None:
        if self._mode == _M_CANDIDATE:
            self._seg.name = value
            self._seg.name_seen = True
        elif self._mode == _M_COMMITTED and self._capturing_name:
            self._capturing_name = False
            seg = self._seg
            seg.name = value
            seg.name_seen = True
            if not seg.started:
                self._flush_content(after)
                self._start_segment()

    def on_error(self, message: str, pos: int, at: int) -> None:
        if self._mode == _M_CANDIDATE:
            self._decision = _D_FAIL
        elif self._mode == _M_COMMITTED:
            self._committed_error(message, pos, at)

    def on_done(self, after: int) -> None:
        if self._mode == _M_CANDIDATE:
            self._decision = _D_DONE
        elif self._mode == _M_COMMITTED:
            self._flush_content(after)
            self._end_segment()
            self._state = OUTSIDE

    # -- shape detection ---------------------------------------------------------------------------

    def _candidate_value_start(self, kind: str, pos: int, stack: list[list[Any]]) -> bool:
        depth = len(stack)
        if depth == 0:
            self._root_is_array = kind == K_ARRAY
            return False
        call_depth = 1 if self._root_is_array else 0
        if depth == call_depth:  # the first element of a top-level list
            if kind != K_OBJECT:
                self._reject()
            return False
        frame = stack[call_depth]
        key, count = frame[1], frame[2]
        if count == 1:
            if key == "tool" and kind == K_OBJECT:
                self._commit_shape(_SHAPE_LIST if self._root_is_array else _SHAPE_TOOL)
                return False
            if key == "tool_calls" and kind == K_ARRAY and not self._root_is_array:
                self._commit_shape(_SHAPE_TOOL_CALLS)
                return False
            if key == "name" and kind == K_STRING:
                return True  # the name is decoded; the next key decides
        elif count == 2 and key == "args" and kind == K_OBJECT and self._seg.name is not None:
            self._commit_shape(_SHAPE_LIST if self._root_is_array else _SHAPE_NAME_ARGS)
            self._begin_args(kind, pos, depth)
            return False
        self._reject()
        return False

    def _commit_shape(self, shape: str) -> None:
        self._shape = shape
        self._role_of = _ROLE_OF_SHAPE[shape]
        self._mode = _M_COMMITTED
        self._decision = _D_COMMIT
        self._scanner.interrupt = True

    def _reject(self) -> None:
        self._decision = _D_REJECT
        self._scanner.interrupt = True
        self._enter_skip()

    # -- committed block ---------------------------------------------------------------------------

    def _scan_block(self, text: str, pos: int) -> int:
        if self._lenient:
            return self._scan_lenient(text, pos)
        self._emit_from = pos
        new_pos = self._run_scanner(text, pos, len(text))
        if self._state == BLOCK and not self._lenient:
            self._flush_content(new_pos)
        return new_pos

    def _begin_args(self, kind: str, pos: int, depth: int) -> None:
        seg = self._seg
        seg.args_parts = []
        seg.args_kind = kind
        seg.args_start = self._abs(pos)
        self._capturing_args = True
        self._cap_from = pos
        self._args_depth = depth

    def _begin_call(self, pos: int) -> None:
        if self._seg.call_assigned:
            self._flush_content(pos)
            self._end_segment()
            self._seg = _Segment(start=self._abs(pos))
        self._seg.call_assigned = True

    def _flush_content(self, upto: int) -> None:
        if upto <= self._emit_from:
            return
        piece = self._cur_text[self._emit_from : upto]
        self._emit_from = upto
        seg = self._seg
        if seg.started:
            self._sink.tool_content(piece)
        else:
            seg.pending.append(piece)

    def _start_segment(self) -> None:
        seg = self._seg
        seg.started = True
        pending, seg.pending = seg.pending, []
        self._start_tool(seg.name or None, "".join(pending))

    def _end_segment(self) -> None:
        seg = self._seg
        if not seg.started:
            self._start_segment()
        self._sink.tool_end(self._segment_result(seg))

    def _segment_error(self, seg: _Segment, message: str, pos: int) -> None:
        if seg.error is None:
            seg.error = f"{message} (at offset {self._abs(pos) - seg.start} of the tool block)"

    def _segment_result(self, seg: _Segment) -> ToolResult:
        if seg.error is not None:
            return ToolCallFailure(seg.error)
        if not seg.call_assigned:
            return ToolCallFailure('the "tool_calls" value contains no tool call')
        if seg.name is None:
            return ToolCallFailure(f"the tool call has no name (expected at {_NAME_PATHS[self._shape]})")
        if not seg.name:
            return ToolCallFailure("the tool name is empty")
        if seg.args_parts is None:
            return {}
        raw = "".join(seg.args_parts)
        offset = seg.args_start - seg.start
        if seg.args_kind == K_STRING and self._shape == _SHAPE_TOOL_CALLS:
            decoded: str = _STRING_DECODER.decode(raw)
            parsed = parse_arguments(decoded)
            if isinstance(parsed, ArgumentsError):
                return ToolCallFailure(
                    f'{parsed.message} (in the decoded "arguments" string, '
                    f"which starts at offset {offset} of the block)"
                )
            return parsed
        parsed = parse_arguments(raw)
        if isinstance(parsed, ArgumentsError):
            return ToolCallFailure(f"{parsed.message} (the arguments value starts at offset {offset} of the block)")
        return parsed

    def _committed_error(self, message: str, pos: int, at: int) -> None:
        self._flush_content(pos)
        self._capturing_args = False
        self._capturing_name = False
        if self._seg.call_assigned and self._seg.value_closed:
            self._end_segment()
            self._seg = _Segment(start=self._abs(pos), call_assigned=True)
        seg = self._seg
        self._segment_error(seg, f"invalid JSON: {message}", at)
        if not seg.started:
            self._start_segment()
        scanner = self._scanner
        self._lenient = True
        self._lenient_depth = len(scanner.stack)
        self._lenient_strings = JsonStringSpan(in_string=scanner.in_string)

    def _scan_lenient(self, text: str, pos: int) -> int:
        """After a syntax error: string-aware bracket counting to the block's balancing bracket."""
        start = pos
        n = len(text)
        strings = self._lenient_strings
        done = False
        while pos < n and not done:
            if strings.in_string:
                pos = strings.skip(text, pos, n)
                continue
            match = _LENIENT_SPECIAL.search(text, pos)
            if match is None:
                pos = n
                break
            pos = match.end()
            char = text[pos - 1]
            if char == '"':
                strings.in_string = True
            elif char in "{[":
                self._lenient_depth += 1
            else:
                self._lenient_depth -= 1
                done = self._lenient_depth <= 0
        if pos > start:
            self._sink.tool_content(text[start:pos])
        if done:
            self._lenient = False
            self._state = OUTSIDE
            self._end_segment()
        return pos

    def _finish_block(self) -> None:
        seg = self._seg
        if not seg.started:
            self._start_segment()
        depth = self._lenient_depth if self._lenient else len(self._scanner.stack)
        earlier = f"; earlier: {seg.error}" if seg.error is not None else ""
        self._state = OUTSIDE
        self._sink.tool_end(
            ToolCallFailure(
                f"unterminated JSON tool block: the stream ended with {depth} bracket(s) still open{earlier}",
                unterminated=True,
            )
        )

    # -- skipped (non-tool) JSON values --------------------------------------------------------------

    def _scan_skip(self, text: str, pos: int) -> int:
        scanner = self._scanner
        new_pos = scanner.scan(text, pos, len(text))
        self._text(text[pos:new_pos])
        if scanner.failed or scanner.done:
            self._state = OUTSIDE
        return new_pos
