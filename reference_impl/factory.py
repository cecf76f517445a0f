"""Choosing a streaming handler from the tool-call format setting (seed 000 sections 9 and 10).

The format comes from an explicit argument or, failing that, from the ``AUTOBYTEUS_STREAM_PARSER``
environment variable:

* ``api_tool_call``: the provider streams structured tool calls (``ChunkResponse.tool_calls``);
  ``ApiToolCallStreamingResponseHandler``;
* ``xml`` / ``json`` / ``sentinel``: tool calls are embedded in the text;
  ``ParsingStreamingResponseHandler(parser_name=...)`` when tools were offered, otherwise
  ``PassThroughStreamingResponseHandler``.

Default when neither is set: ``xml``. That is what seed 000 section 9.1 does: with no override
and tools offered it builds the parsing handler with ``parser_name="xml"``, and with no tools
a pass-through handler. (A later upstream version switched its default to ``api_tool_call``; the
seed is this project's contract, so the reference follows the seed. Pass ``"api_tool_call"`` or set
the variable to get provider-native tool calls.)

Corrections to the seed's helper, which returned ``None`` for anything it did not recognise and
so silently fell back to XML parsing: an unknown value is an error naming the valid values and
where the bad value came from, and the legacy value ``native`` (removed in seed 000 section 12)
says what replaced it. Values are case-insensitive and surrounding whitespace is ignored; an
environment variable that is set but empty counts as unset (``VAR= command`` in a shell).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

from reference_impl.handlers import (
    ApiToolCallStreamingResponseHandler,
    PassThroughStreamingResponseHandler,
    StreamingResponseHandler,
)
from reference_impl.handlers.base import SegmentEventCallback, ToolInvocationCallback

__all__ = [
    "API_TOOL_CALL",
    "DEFAULT_TOOL_CALL_FORMAT",
    "STREAM_PARSER_ENV_VAR",
    "TEXT_TOOL_CALL_FORMATS",
    "TOOL_CALL_FORMATS",
    "UnknownToolCallFormatError",
    "create_streaming_handler",
    "resolve_tool_call_format",
]

STREAM_PARSER_ENV_VAR = "AUTOBYTEUS_STREAM_PARSER"
"""The environment variable that selects the tool-call format (seed 000 section 10.1)."""

API_TOOL_CALL = "api_tool_call"
TEXT_TOOL_CALL_FORMATS: tuple[str, ...] = ("xml", "json", "sentinel")
"""Formats whose tool calls are embedded in the text and found by ``ParsingStreamingResponseHandler``."""
TOOL_CALL_FORMATS: tuple[str, ...] = (*TEXT_TOOL_CALL_FORMATS, API_TOOL_CALL)
"""Every valid format value."""
DEFAULT_TOOL_CALL_FORMAT = "xml"
"""The format when neither an argument nor the environment chooses one (seed 000 section 9.1)."""

_REMOVED_FORMATS = {"native": API_TOOL_CALL}


class UnknownToolCallFormatError(ValueError):
    """A tool-call format value that is not one of ``TOOL_CALL_FORMATS``.

    ``value`` is the value as given; ``source`` says where it came from (``"argument"`` or the
    environment variable's name).
    """

    def __init__(self, message: str, *, value: str, source: str) -> None:
        super().__init__(message)
        self.value = value
        self.source = source


def resolve_tool_call_format(value: str | None = None, *, env: Mapping[str, str] | None = None) -> str:
    """Return the tool-call format to use: one of ``TOOL_CALL_FORMATS``, lower-case.

    ``value`` wins when it is not ``None``; otherwise ``env`` (default ``os.environ``) is read for
    ``AUTOBYTEUS_STREAM_PARSER``; otherwise ``DEFAULT_TOOL_CALL_FORMAT``. Raises
    ``UnknownToolCallFormatError`` for ``native`` (removed: use ``api_tool_call``), for any other
    unknown value and for an explicit empty argument; ``TypeError`` for a value that is not a str.

    >>> resolve_tool_call_format(" JSON ")
    'json'
    >>> resolve_tool_call_format(env={"AUTOBYTEUS_STREAM_PARSER": "api_tool_call"})
    'api_tool_call'
    >>> resolve_tool_call_format(env={})
    'xml'
    """
    if value is not None:
        if not isinstance(value, str):
            raise TypeError(f"the tool-call format must be a str or None, got {type(value).__name__}: {value!r}")
        return _normalise(value, "argument")
    environment = os.environ if env is None else env
    raw = environment.get(STREAM_PARSER_ENV_VAR)
    if raw is None or not raw.strip():
        return DEFAULT_TOOL_CALL_FORMAT
    return _normalise(raw, f"environment variable {STREAM_PARSER_ENV_VAR}")


def _normalise(raw: str, source: str) -> str:
    candidate = raw.strip().lower()
    if candidate in TOOL_CALL_FORMATS:
        return candidate
    valid = ", ".join(repr(name) for name in TOOL_CALL_FORMATS)
    if candidate in _REMOVED_FORMATS:
        replacement = _REMOVED_FORMATS[candidate]
        message = (
            f"tool-call format {raw!r} (from the {source}) was removed: use {replacement!r} for "
            f"provider-native tool calls (valid values: {valid})"
        )
    else:
        message = f"unknown tool-call format {raw!r} (from the {source}); valid values: {valid}"
    raise UnknownToolCallFormatError(message, value=raw, source=source)


def create_streaming_handler(
    format: str | None = None,
    *,
    parse_tool_calls: bool = True,
    on_segment_event: SegmentEventCallback | None = None,
    on_tool_invocation: ToolInvocationCallback | None = None,
    segment_id_prefix: str = "",
    env: Mapping[str, str] | None = None,
) -> StreamingResponseHandler:
    """Build the handler for one response, following seed 000 section 9.1.

    * format ``api_tool_call``: ``ApiToolCallStreamingResponseHandler``, whatever
      ``parse_tool_calls`` says (the seed checks this first: structured tool calls need no parsing,
      and a provider only sends them when tools were offered);
    * ``xml`` / ``json`` / ``sentinel`` and ``parse_tool_calls``: ``ParsingStreamingResponseHandler``
      with that ``parser_name``;
    * otherwise (``parse_tool_calls=False``, no tools offered): ``PassThroughStreamingResponseHandler``.

    ``format`` and ``env`` are resolved by ``resolve_tool_call_format`` (its errors propagate);
    the callbacks and ``segment_id_prefix`` are passed to the handler.
    """
    resolved = resolve_tool_call_format(format, env=env)
    if resolved == API_TOOL_CALL:
        return ApiToolCallStreamingResponseHandler(
            on_segment_event=on_segment_event,
            on_tool_invocation=on_tool_invocation,
            segment_id_prefix=segment_id_prefix,
        )
    if parse_tool_calls:
        # Imported here: the parsing handler pulls in the text parsers, which api_tool_call and
        # pass-through users never need.
        parsing = importlib.import_module("reference_impl.handlers.parsing")
        handler = parsing.ParsingStreamingResponseHandler(
            parser_name=resolved,
            on_segment_event=on_segment_event,
            on_tool_invocation=on_tool_invocation,
            segment_id_prefix=segment_id_prefix,
        )
        if not isinstance(handler, StreamingResponseHandler):  # pragma: no cover - guards the dynamic import
            raise TypeError(f"ParsingStreamingResponseHandler built a {type(handler).__name__}, not a handler")
        return handler
    return PassThroughStreamingResponseHandler(
        on_segment_event=on_segment_event,
        on_tool_invocation=on_tool_invocation,
        segment_id_prefix=segment_id_prefix,
    )
