"""Streaming parsers for tool calls embedded in response text: ``xml``, ``json`` and ``sentinel``.

Each parser is a character-level state machine fed ``chunk.content`` piece by piece; it reports
text and tool blocks to a ``ToolCallSink`` (``ParsingStreamingResponseHandler`` turns those into
SegmentEvents). The rules shared by all formats (holding, fences, unterminated blocks, cost) are in
``reference_impl.parsers._base``; each format's grammar is in its module's docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from reference_impl.parsers._base import TextToolParser, ToolCallFailure, ToolCallSink, ToolResult
from reference_impl.parsers.json_format import JsonToolParser
from reference_impl.parsers.sentinel import SentinelToolParser
from reference_impl.parsers.xml import XmlToolParser

__all__ = [
    "DEFAULT_MAX_HOLDBACK_CHARS",
    "PARSERS",
    "JsonToolParser",
    "SentinelToolParser",
    "TextToolParser",
    "ToolCallFailure",
    "ToolCallSink",
    "ToolResult",
    "XmlToolParser",
    "create_parser",
]

PARSERS: Mapping[str, type[TextToolParser]] = MappingProxyType(
    {"json": JsonToolParser, "sentinel": SentinelToolParser, "xml": XmlToolParser}
)
"""Parser classes by ``parser_name`` (read-only)."""

DEFAULT_MAX_HOLDBACK_CHARS: Mapping[str, int] = MappingProxyType(
    {name: cls.DEFAULT_MAX_HOLDBACK_CHARS for name, cls in PARSERS.items()}
)
"""How many characters each format holds back, at most, as a possible opener (see each class)."""


def create_parser(parser_name: str, sink: ToolCallSink, max_holdback_chars: int | None = None) -> TextToolParser:
    """A new parser for ``parser_name``; ``ValueError`` naming the valid names for anything else."""
    cls = PARSERS.get(parser_name) if isinstance(parser_name, str) else None
    if cls is None:
        valid = ", ".join(repr(name) for name in sorted(PARSERS))
        raise ValueError(f"unknown parser_name {parser_name!r}; valid names: {valid}")
    return cls(sink, max_holdback_chars)
