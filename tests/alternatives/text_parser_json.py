"""Tool calls embedded in text as ``{"tool": {"function": "N", "parameters": {...}}}``.

Choices: the opener is ``{`` then up to 4 whitespace characters, ``"tool"``, up to 4 more and
``:`` (models often write ``{ "tool": ...``), so at most 15 characters of prose are held back. Any
JSON object opened that way is committed as a tool block: one that turns out not to be tool-shaped
(``{"tool": "hammer"}``) is an error, not text. The block ends where its braces balance (strings
and escapes respected); START comes as soon as ``"function"`` has been read (or at the end, if the
parameters come first); CONTENT is the block's raw JSON text. A missing ``parameters`` means ``{}``;
``NaN``/``Infinity`` and any other shape are errors.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.alternatives._textbase import Block, JsonScanner, OpenerState, TextToolParser

__all__ = ["TEXT_LAG_CHARS", "JsonToolParser", "make_handler"]

_SPACE = " \t\r\n"
_MAX_SPACE = 4
TEXT_LAG_CHARS = 1 + _MAX_SPACE + len('"tool"') + _MAX_SPACE
_NAME = re.compile(r'\{\s*"tool"\s*:\s*\{\s*"function"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _opener_state(held: str) -> OpenerState:
    """Match ``{ ws* "tool" ws* :`` (each ws run at most _MAX_SPACE long) against ``held``."""
    if not held.startswith("{"):
        return "no"
    rest = held[1:]
    stripped = rest.lstrip(_SPACE)
    if len(rest) - len(stripped) > _MAX_SPACE:
        return "no"
    word = '"tool"'
    if len(stripped) < len(word):
        return "prefix" if word.startswith(stripped) else "no"
    if not stripped.startswith(word):
        return "no"
    after = stripped[len(word) :]
    colon = after.lstrip(_SPACE)
    if len(after) - len(colon) > _MAX_SPACE:
        return "no"
    if not colon:
        return "prefix"
    return "match" if colon == ":" else "no"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _JsonBlock(Block):
    def __init__(self, opener: str) -> None:
        super().__init__(opener)
        self._scanner = JsonScanner()
        for ch in opener:
            self._scanner.push(ch)
        self._sent = 0

    def push(self, ch: str) -> bool:
        self.raw += ch
        self._scanner.push(ch)
        if self.name is None and ch == '"':
            found = _NAME.match(self.raw)
            if found:
                try:
                    self.name = json.loads(f'"{found.group(1)}"')
                except ValueError:
                    self.name = found.group(1)
        return self._scanner.depth == 0

    def take_content(self) -> str:
        text = self.raw[self._sent :]
        self._sent = len(self.raw)
        return text

    def result(self) -> tuple[str | None, dict[str, Any] | None, str | None]:
        try:
            value = json.loads(self.raw, parse_constant=_reject_constant)
        except json.JSONDecodeError as error:
            return self.name, None, f"tool block is not valid JSON: {error.msg} at offset {error.pos}"
        except ValueError as error:
            return self.name, None, f"tool block is not valid JSON: {error}"
        if not isinstance(value, dict) or set(value) != {"tool"} or not isinstance(value["tool"], dict):
            return self.name, None, 'a tool block is {"tool": {"function": ..., "parameters": {...}}}'
        tool = value["tool"]
        name = tool.get("function")
        if not isinstance(name, str) or not name:
            return self.name, None, "the tool block's function is not a non-empty string"
        parameters = tool.get("parameters", {})
        if not isinstance(parameters, dict):
            return name, None, f"parameters must be a JSON object, got {type(parameters).__name__}"
        return name, parameters, None


class JsonToolParser(TextToolParser):
    def opener_state(self, held: str) -> OpenerState:
        return _opener_state(held)

    def can_open(self, ch: str) -> bool:
        return ch == "{"

    def new_block(self, opener: str) -> Block:
        return _JsonBlock(opener)


def make_handler(**callbacks: Any) -> JsonToolParser:
    return JsonToolParser(**callbacks)
