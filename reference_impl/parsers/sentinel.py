"""The ``sentinel`` text format.

``[[SEG_START {"type": "tool_call", "tool_name": "NAME"}]] <json arguments> [[SEG_END]]``.

Grammar (markers are case-sensitive; whitespace is space, tab, CR, LF):

* **Opener** ``[[SEG_START`` WS* header WS* ``]]``, where the header is a JSON object, scanned
  with a string- and escape-aware brace counter (so ``]]`` or ``}`` inside a header string does not
  end it) and then parsed. A header whose ``"type"`` is ``"tool_call"`` begins a tool block; its
  ``"tool_name"`` must be a non-empty string, otherwise the block still begins (the model did
  try to call a tool) and ends in an error. Any other header (another segment type, invalid JSON,
  not an object) makes the whole opener text. ``[[[SEG_START`` finds the opener one character in.
  A failed opener is released as text without being searched again, so a ``[[SEG_START`` that
  sits *inside* the header of a failed one (within its braces) is text too; one that follows the
  character where the failure was detected is found.
* **Block**: everything after the opener up to the first ``[[SEG_END]]`` that is *outside* a JSON
  string (strings are tracked with their backslash escapes), so a closing marker inside a string
  argument does not end the call. The text between opener and closer is the arguments,
  parsed by ``reference_impl.arguments.parse_arguments`` (empty means ``{}``; anything but one
  JSON object is an error). An odd number of unescaped quotes therefore keeps the block open
  until the end of the stream, where it ends in an error with its raw text.

The block's tool content is its raw text, opener and closer included.
"""

from __future__ import annotations

import re
from typing import ClassVar

from reference_impl.arguments import ArgumentsError, parse_arguments
from reference_impl.parsers._base import (
    COMPLETE,
    FAIL,
    MORE,
    OUTSIDE,
    SHIFT,
    WHITESPACE,
    TextToolParser,
    ToolCallFailure,
    ToolCallSink,
)

__all__ = ["SEG_END", "SEG_START", "SentinelToolParser"]

SEG_START = "[[SEG_START"
SEG_END = "[[SEG_END]]"

_HEADER_SPECIAL = re.compile(r'[{}"\\]')
_STRING_SPECIAL = re.compile(r'["\\]')
_ARGS_SPECIAL = re.compile(r'["\[]')

# Opener matcher states.
_S_LITERAL = 0  # matching "[[SEG_START"
_S_WS = 1  # whitespace, then "{"
_S_HEADER = 2  # inside the header object
_S_AFTER = 3  # whitespace, then "]"
_S_BRACKET = 4  # the second "]"


def _closer_step(index: int, char: str) -> tuple[int, bool]:
    """Advance a match of ``[[SEG_END]]`` by ``char``: ``(new index, char consumed)``.

    The marker's only self-overlap is ``[[``: after ``[[`` another ``[`` keeps two matched.
    """
    if char == SEG_END[index]:
        return index + 1, True
    if char == "[":
        return (2 if index == 2 else 1), True
    return 0, False


class SentinelToolParser(TextToolParser):
    """Streaming parser for ``[[SEG_START {...}]] ... [[SEG_END]]`` blocks; see the module docstring."""

    format_name: ClassVar[str] = "sentinel"
    # "[[SEG_START " (12) + {"type": "tool_call", "tool_name": "<name>"} (~40 + name) + "]]", with room
    # for extra header keys, pretty-printing and JSON-escaped names.
    DEFAULT_MAX_HOLDBACK_CHARS: ClassVar[int] = 512
    _START_CHARS: ClassVar[frozenset[str]] = frozenset("[")
    _NEXT_INTERESTING: ClassVar[re.Pattern[str]] = re.compile(r"[\[`]")

    def __init__(self, sink: ToolCallSink, max_holdback_chars: int | None = None) -> None:
        super().__init__(sink, max_holdback_chars)
        self._ostate = _S_LITERAL
        self._oindex = 0
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._header: list[str] = []
        self._name: str | None = None
        self._name_problem: str | None = None
        # Block state.
        self._opener_len = 0
        self._args: list[str] = []
        self._closer_index = 0

    # -- opener ------------------------------------------------------------------------------------

    def _begin_candidate(self) -> None:
        self._ostate = _S_LITERAL
        self._oindex = 0

    def _consume_candidate(self, text: str, pos: int, end: int) -> tuple[int, int]:
        state = self._ostate
        while pos < end:
            if state == _S_HEADER:
                status_pos = self._scan_header(text, pos, end)
                self._header.append(text[pos:status_pos])
                pos = status_pos
                if self._depth == 0:
                    state = _S_AFTER
                continue
            char = text[pos]
            if state == _S_LITERAL:
                index = self._oindex
                if char == SEG_START[index]:
                    self._oindex = index + 1
                    if self._oindex == len(SEG_START):
                        state = _S_WS
                elif index == 2 and char == "[":
                    # "[[[": the candidate continues one character later.
                    return SHIFT, pos + 1
                else:
                    return FAIL, pos
            elif state == _S_WS:
                if char == "{":
                    state = _S_HEADER
                    self._depth = 1
                    self._in_string = False
                    self._escaped = False
                    self._header = ["{"]
                elif char not in WHITESPACE:
                    return FAIL, pos
            elif state == _S_AFTER:
                if char == "]":
                    state = _S_BRACKET
                elif char not in WHITESPACE:
                    return FAIL, pos
            else:  # _S_BRACKET
                if char != "]":
                    return FAIL, pos
                if not self._read_header():
                    return FAIL, pos + 1  # a complete sentinel opener, but not a tool call: text
                return COMPLETE, pos + 1
            pos += 1
        self._ostate = state
        return MORE, pos

    def _scan_header(self, text: str, pos: int, end: int) -> int:
        """Advance the header brace counter; stop after the closing brace or at ``end``."""
        while pos < end:
            if self._escaped:
                self._escaped = False
                pos += 1
                continue
            if self._in_string:
                match = _STRING_SPECIAL.search(text, pos, end)
                if match is None:
                    return end
                pos = match.start()
                if text[pos] == "\\":
                    self._escaped = True
                else:
                    self._in_string = False
                pos += 1
                continue
            match = _HEADER_SPECIAL.search(text, pos, end)
            if match is None:
                return end
            pos = match.start()
            char = text[pos]
            pos += 1
            if char == '"':
                self._in_string = True
            elif char == "{":
                self._depth += 1
            elif char == "}":
                self._depth -= 1
                if self._depth == 0:
                    return pos
            # A backslash outside a string is invalid JSON; the header parse reports it.
        return pos

    def _read_header(self) -> bool:
        """Whether the header begins a tool block; sets the tool name or the problem with it."""
        header = parse_arguments("".join(self._header))
        if isinstance(header, ArgumentsError) or header.get("type") != "tool_call":
            return False
        name = header.get("tool_name")
        if isinstance(name, str) and name:
            self._name, self._name_problem = name, None
        else:
            self._name = None
            self._name_problem = f'the [[SEG_START]] header has no usable "tool_name" (got {name!r})'
        return True

    def _commit(self, text: str, pos: int) -> None:
        opener = self._take_held()
        self._opener_len = len(opener)
        self._args = []
        self._closer_index = 0
        self._in_string = False
        self._escaped = False
        self._start_tool(self._name, opener)

    # -- block -------------------------------------------------------------------------------------

    def _scan_block(self, text: str, pos: int) -> int:
        start = pos
        n = len(text)
        done = False
        while pos < n:
            if self._escaped:
                self._escaped = False
                pos += 1
                continue
            if self._in_string:
                match = _STRING_SPECIAL.search(text, pos)
                if match is None:
                    pos = n
                    break
                pos = match.start()
                if text[pos] == "\\":
                    self._escaped = True
                else:
                    self._in_string = False
                pos += 1
                continue
            if self._closer_index == 0:
                match = _ARGS_SPECIAL.search(text, pos)
                if match is None:
                    pos = n
                    break
                pos = match.start()
            char = text[pos]
            self._closer_index, consumed = _closer_step(self._closer_index, char)
            if consumed:
                pos += 1
                if self._closer_index == len(SEG_END):
                    done = True
                    break
            elif char == '"':
                self._in_string = True
                pos += 1
            else:
                pos += 1
        if pos > start:
            piece = text[start:pos]
            self._args.append(piece)
            self._sink.tool_content(piece)
        if done:
            self._state = OUTSIDE
            self._sink.tool_end(self._result())
        return pos

    def _result(self) -> dict[str, object] | ToolCallFailure:
        if self._name_problem is not None:
            return ToolCallFailure(self._name_problem)
        arguments_text = "".join(self._args)[: -len(SEG_END)]
        parsed = parse_arguments(arguments_text)
        if isinstance(parsed, ArgumentsError):
            return ToolCallFailure(
                f"{parsed.message} (offset {self._opener_len + parsed.offset} of the block; "
                f"the arguments start at offset {self._opener_len})"
            )
        return parsed

    def _finish_block(self) -> None:
        where = " inside a JSON string" if self._in_string else ""
        problem = f"; also: {self._name_problem}" if self._name_problem else ""
        self._state = OUTSIDE
        self._sink.tool_end(
            ToolCallFailure(
                f"unterminated sentinel block: the stream ended{where} before {SEG_END}{problem}",
                unterminated=True,
            )
        )
