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
from collections.abc import Callable
from typing import ClassVar

from reference_impl.arguments import ArgumentsError, parse_arguments
from reference_impl.parsers._base import (
    COMPLETE,
    FAIL,
    MORE,
    OUTSIDE,
    SHIFT,
    WHITESPACE,
    JsonStringSpan,
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

_SEG_END_LEN = len(SEG_END)


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
        self._strings = JsonStringSpan()  # strings in the header, then in the block's arguments
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
        steps = self._OPENER_STEPS
        while pos < end:
            status, pos = steps[self._ostate](self, text, pos, end)
            if status != MORE:
                return status, pos
        return MORE, pos

    # Each opener step consumes from ``text[pos]`` (``pos < end``) in the state it is named after and
    # returns ``(status, position)`` as ``_consume_candidate`` does.

    def _match_literal(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """``[[SEG_START``, case-sensitively."""
        index = self._oindex
        while pos < end:
            char = text[pos]
            if char != SEG_START[index]:
                if index == 2 and char == "[":
                    # "[[[": the candidate continues one character later, with "[[" matched.
                    self._oindex = index
                    return SHIFT, pos + 1
                return FAIL, pos
            pos += 1
            index += 1
            if index == len(SEG_START):
                self._ostate = _S_WS
                break
        self._oindex = index
        return MORE, pos

    def _match_header_start(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """Whitespace, then the ``{`` that opens the header."""
        char = text[pos]
        if char == "{":
            self._ostate = _S_HEADER
            self._depth = 1
            self._strings = JsonStringSpan()
            self._header = ["{"]
        elif char not in WHITESPACE:
            return FAIL, pos
        return MORE, pos + 1

    def _match_header(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """The header object, up to and including its closing brace."""
        new_pos = self._scan_header(text, pos, end)
        self._header.append(text[pos:new_pos])
        if self._depth == 0:
            self._ostate = _S_AFTER
        return MORE, new_pos

    def _match_first_bracket(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """Whitespace, then the first ``]``."""
        char = text[pos]
        if char == "]":
            self._ostate = _S_BRACKET
        elif char not in WHITESPACE:
            return FAIL, pos
        return MORE, pos + 1

    def _match_second_bracket(self, text: str, pos: int, end: int) -> tuple[int, int]:
        """The second ``]``: the opener is complete; its header decides whether it begins a tool block."""
        if text[pos] != "]":
            return FAIL, pos
        if not self._read_header():
            return FAIL, pos + 1  # a complete sentinel opener, but not a tool call: text
        return COMPLETE, pos + 1

    # Indexed by the opener states _S_LITERAL .. _S_BRACKET.
    _OPENER_STEPS: ClassVar[tuple[Callable[[SentinelToolParser, str, int, int], tuple[int, int]], ...]] = (
        _match_literal,
        _match_header_start,
        _match_header,
        _match_first_bracket,
        _match_second_bracket,
    )

    def _scan_header(self, text: str, pos: int, end: int) -> int:
        """Advance the header brace counter; stop after the closing brace or at ``end``."""
        strings = self._strings
        while pos < end:
            if strings.in_string:
                pos = strings.skip(text, pos, end)
                continue
            match = _HEADER_SPECIAL.search(text, pos, end)
            if match is None:
                return end
            pos = match.end()
            char = text[pos - 1]
            if char == '"':
                strings.in_string = True
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
        self._strings = JsonStringSpan()
        self._start_tool(self._name, opener)

    # -- block -------------------------------------------------------------------------------------

    def _scan_block(self, text: str, pos: int) -> int:
        start = pos
        n = len(text)
        strings = self._strings
        while pos < n:
            # Strings are skipped inline (JsonStringSpan.skip, unrolled): this runs once per delta
            # while a string argument streams.
            if strings.escaped:
                strings.escaped = False
                pos += 1
                continue
            if strings.in_string:
                match = _STRING_SPECIAL.search(text, pos)
                if match is None:
                    pos = n
                    break
                pos = match.end()
                if text[pos - 1] == "\\":
                    strings.escaped = True
                else:
                    strings.in_string = False
                continue
            if self._closer_index == 0:
                match = _ARGS_SPECIAL.search(text, pos)
                if match is None:
                    pos = n
                    break
                pos = match.start()
            pos = self._step_closer(text, pos)
            if self._closer_index == _SEG_END_LEN:
                break
        # Every call consumes at least one character.
        piece = text[start:pos]
        self._args.append(piece)
        self._sink.tool_content(piece)
        if self._closer_index == _SEG_END_LEN:
            self._state = OUTSIDE
            self._sink.tool_end(self._result())
        return pos

    def _step_closer(self, text: str, pos: int) -> int:
        """Consume one character outside strings: a ``[`` or ``"``, or the next one of a partial ``[[SEG_END]]``."""
        char = text[pos]
        self._closer_index, consumed = _closer_step(self._closer_index, char)
        if not consumed and char == '"':
            self._strings.in_string = True
        return pos + 1

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
        where = " inside a JSON string" if self._strings.in_string else ""
        problem = f"; also: {self._name_problem}" if self._name_problem else ""
        self._state = OUTSIDE
        self._sink.tool_end(
            ToolCallFailure(
                f"unterminated sentinel block: the stream ended{where} before {SEG_END}{problem}",
                unterminated=True,
            )
        )
