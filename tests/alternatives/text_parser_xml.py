"""Tool calls embedded in text as ``<tool name="N"><arguments><arg name="k">v</arg></arguments></tool>``.

Choices: the opener is ``<tool name="`` (or ``'``), so at most 11 characters of prose are ever
held back; a tool segment's CONTENT is the block's raw markup, tags included, as it arrives; the
block is parsed with ``xml.etree`` at ``</tool>``: nested ``<arg>`` children make an object,
``<item>`` children a list, anything else is the element's text (a string); a repeated argument
name or any other shape is an error, never a guess. Tool segments are typed ``xml_tool``.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from typing import Any

from tests.alternatives._textbase import Block, OpenerState, TextToolParser

__all__ = ["TEXT_LAG_CHARS", "XmlToolParser", "make_handler"]

OPENERS = ('<tool name="', "<tool name='")
TEXT_LAG_CHARS = len(OPENERS[0]) - 1
CLOSER = "</tool>"


class _Malformed(ValueError):
    pass


def _value(element: ET.Element) -> Any:
    children = list(element)
    if not children:
        return element.text or ""
    if (element.text or "").strip():
        raise _Malformed(f"<{element.tag}> mixes text and elements")
    tags = {child.tag for child in children}
    if tags == {"item"}:
        return [_value(child) for child in children]
    if tags == {"arg"}:
        return _object(element)
    raise _Malformed(f"<{element.tag}> has children {sorted(tags)}; expected only <arg> or only <item>")


def _object(element: ET.Element) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for child in element:
        if child.tag != "arg":
            raise _Malformed(f"unexpected <{child.tag}> among arguments")
        key = child.get("name")
        if key is None:
            raise _Malformed("an <arg> without a name attribute")
        if key in result:
            raise _Malformed(f"argument {key!r} given twice")
        if (child.tail or "").strip():
            raise _Malformed(f"text after <arg name={key!r}>")
        result[key] = _value(child)
    return result


class _XmlBlock(Block):
    def __init__(self, opener: str) -> None:
        super().__init__(opener)
        self._quote = opener[-1]
        self._in_tag = True
        self._name_done = False
        self._name_chars: list[str] = []
        self._sent = 0

    def push(self, ch: str) -> bool:
        self.raw += ch
        if self._in_tag:
            if not self._name_done:
                if ch == self._quote:
                    self._name_done = True
                else:
                    self._name_chars.append(ch)
                return False
            if ch == ">":
                self._in_tag = False
                self.name = html.unescape("".join(self._name_chars))
                return self.raw.endswith("/>")
            return False
        return self.raw.endswith(CLOSER)

    def take_content(self) -> str:
        text = self.raw[self._sent :]
        self._sent = len(self.raw)
        return text

    def result(self) -> tuple[str | None, dict[str, Any] | None, str | None]:
        try:
            root = ET.fromstring(self.raw)
        except ET.ParseError as error:
            return self.name, None, f"malformed tool markup: {error}"
        name = root.get("name")
        try:
            children = list(root)
            if (root.text or "").strip() or any((c.tail or "").strip() for c in children):
                raise _Malformed("text outside <arguments>")
            if not children:
                return name, {}, None
            if len(children) != 1 or children[0].tag != "arguments":
                raise _Malformed("a <tool> holds exactly one <arguments> element")
            return name, _object(children[0]), None
        except _Malformed as error:
            return name, None, f"malformed tool arguments: {error}"


class XmlToolParser(TextToolParser):
    tool_segment_type = "xml_tool"

    def opener_state(self, held: str) -> OpenerState:
        if held in OPENERS:
            return "match"
        if any(opener.startswith(held) for opener in OPENERS):
            return "prefix"
        return "no"

    def can_open(self, ch: str) -> bool:
        return ch == "<"

    def new_block(self, opener: str) -> Block:
        return _XmlBlock(opener)


def make_handler(**callbacks: Any) -> XmlToolParser:
    return XmlToolParser(**callbacks)
