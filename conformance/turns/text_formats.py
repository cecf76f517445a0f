"""Tool calls embedded in text: the xml, json and sentinel formats, rendered from a name and arguments.

The formats are the ones ``reference_impl.handlers.ParsingStreamingResponseHandler`` reads (the
ecosystem the seeds come from)::

    xml:      <tool name="NAME"><arguments><arg name="k">v</arg></arguments></tool>
    json:     {"tool": {"function": "NAME", "parameters": {...}}}
    sentinel: [[SEG_START {"type": "tool_call", "tool_name": "NAME"}]] {...} [[SEG_END]]
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

__all__ = ["TEXT_FORMATS", "render_call"]

TEXT_FORMATS = ("xml", "json", "sentinel")


def _xml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "".join(f"<arg name={quoteattr(k)}>{_xml_value(v)}</arg>" for k, v in value.items())
    if isinstance(value, list):
        return "".join(f"<item>{_xml_value(v)}</item>" for v in value)
    return escape(str(value))


def render_call(fmt: str, name: str, arguments: dict[str, Any]) -> str:
    """The markup for one call. xml values are strings: pass string leaves for a lossless round trip."""
    if fmt == "xml":
        return f"<tool name={quoteattr(name)}><arguments>{_xml_value(arguments)}</arguments></tool>"
    if fmt == "json":
        return json.dumps({"tool": {"function": name, "parameters": arguments}}, ensure_ascii=False)
    if fmt == "sentinel":
        header = json.dumps({"type": "tool_call", "tool_name": name})
        return f"[[SEG_START {header}]] {json.dumps(arguments, ensure_ascii=False)} [[SEG_END]]"
    raise ValueError(f"unknown text format {fmt!r}; expected one of {', '.join(TEXT_FORMATS)}")
