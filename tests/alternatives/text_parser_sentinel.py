"""Tool calls embedded in text as ``[[SEG_START {"type": "tool_call", "tool_name": "N"}]] {...} [[SEG_END]]``.

Choices: the opener is ``[[SEG_START`` (at most 10 characters of prose held back); the header is
the JSON object up to the first ``]]`` outside a string, and must say ``"type": "tool_call"``
with a ``tool_name`` (anything else makes the block an error); START comes when the header is
read; CONTENT is only the body between the header and ``[[SEG_END]]`` (markup excluded, a
possible partial ``[[SEG_END]]`` held back), the body stripped of whitespace must be one JSON
object (empty means ``{}``). Prose segments are typed ``prose``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.alternatives._textbase import Block, JsonScanner, OpenerState, TextToolParser

__all__ = ["TEXT_LAG_CHARS", "SentinelToolParser", "make_handler"]

OPENER = "[[SEG_START"
CLOSER = "[[SEG_END]]"
TEXT_LAG_CHARS = len(OPENER) - 1


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _SentinelBlock(Block):
    def __init__(self, opener: str) -> None:
        super().__init__(opener)
        self._scanner = JsonScanner()
        self._header: list[str] = []
        self._in_header = True
        self._header_error: str | None = None
        self._body: list[str] = []
        self._sent = 0

    def push(self, ch: str) -> bool:
        self.raw += ch
        if self._in_header:
            self._header.append(ch)
            self._scanner.push(ch)
            if ch == "]" and not self._scanner.in_string and "".join(self._header[-2:]) == "]]":
                self._in_header = False
                self._read_header("".join(self._header[:-2]))
            return False
        self._body.append(ch)
        if ch == "]" and "".join(self._body[-len(CLOSER) :]) == CLOSER:
            del self._body[-len(CLOSER) :]
            return True
        return False

    def _read_header(self, text: str) -> None:
        try:
            header = json.loads(text)
        except ValueError as error:
            self._header_error = f"the sentinel header is not JSON: {error}"
            self.name = ""
            return
        if not isinstance(header, dict) or header.get("type") != "tool_call":
            self._header_error = f"the sentinel header {text.strip()!r} does not open a tool_call"
            self.name = header.get("tool_name") if isinstance(header, dict) else None
            self.name = self.name if isinstance(self.name, str) else ""
            return
        name = header.get("tool_name")
        if not isinstance(name, str) or not name:
            self._header_error = "the sentinel header has no tool_name"
            self.name = ""
            return
        self.name = name

    def take_content(self) -> str:
        body = "".join(self._body)
        # Hold back a suffix that may still become [[SEG_END]].
        keep = 0
        for size in range(min(len(CLOSER) - 1, len(body)), 0, -1):
            if CLOSER.startswith(body[-size:]):
                keep = size
                break
        text = body[self._sent : len(body) - keep]
        self._sent = max(self._sent, len(body) - keep)
        return text

    def rest_content(self) -> str:
        body = "".join(self._body)
        text = body[self._sent :]
        self._sent = len(body)
        return text

    def raw_arguments(self) -> str:
        return "".join(self._body)

    def result(self) -> tuple[str | None, dict[str, Any] | None, str | None]:
        name = self.name or None
        if self._header_error is not None:
            return name, None, self._header_error
        body = "".join(self._body).strip()
        if not body:
            return name, {}, None
        try:
            value = json.loads(body, parse_constant=_reject_constant)
        except json.JSONDecodeError as error:
            return name, None, f"arguments are not valid JSON: {error.msg} at offset {error.pos}"
        except ValueError as error:
            return name, None, f"arguments are not valid JSON: {error}"
        if not isinstance(value, dict):
            return name, None, f"arguments must be a JSON object, got {type(value).__name__}"
        return name, value, None


class SentinelToolParser(TextToolParser):
    text_segment_type = "prose"

    def opener_state(self, held: str) -> OpenerState:
        if held == OPENER:
            return "match"
        return "prefix" if OPENER.startswith(held) else "no"

    def can_open(self, ch: str) -> bool:
        return ch == "["

    def new_block(self, opener: str) -> Block:
        return _SentinelBlock(opener)


def make_handler(**callbacks: Any) -> SentinelToolParser:
    return SentinelToolParser(**callbacks)
