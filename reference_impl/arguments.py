"""The single place where accumulated tool-argument text becomes a JSON object, or a typed error.

Policy (taxonomy appendix 4, items 1, 5 and 6):

* empty or whitespace-only text means "no arguments": ``{}``;
* anything else must be exactly one JSON object; invalid, truncated, non-object or multi-object
  text is an ``ArgumentsError`` that says what went wrong and at which character offset. It is
  never coerced to ``{}`` (the seed's ``except JSONDecodeError: parsed_args = {}`` runs tools with
  silently missing arguments);
* literal control characters inside strings are accepted (models emit raw tabs and newlines
  there; strict JSON would reject the whole call for a cosmetic reason);
* ``NaN``/``Infinity`` are rejected: they are not JSON and no provider's schema accepts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = ["ArgumentsError", "parse_arguments"]


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


# One decoder for the whole process: constructing a JSONDecoder per call is measurable in the hot path.
_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant)


@dataclass(frozen=True, slots=True)
class ArgumentsError:
    """Why an argument string is not a usable JSON object. ``offset`` is a character offset."""

    message: str
    offset: int

    def __str__(self) -> str:
        return self.message


def _describe_json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def parse_arguments(text: str) -> dict[str, Any] | ArgumentsError:
    """Parse complete tool-argument text into a dict, or explain why it cannot be used.

    >>> parse_arguments('{"city": "Paris"}')
    {'city': 'Paris'}
    >>> parse_arguments("  ")
    {}
    >>> print(parse_arguments('{"city": "Pa'))
    truncated arguments: the JSON ends before the object is complete (at offset 12 of 12)
    """
    start = len(text) - len(text.lstrip())
    if start == len(text):
        return {}
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        if error.pos >= len(text.rstrip()):
            return ArgumentsError(
                f"truncated arguments: the JSON ends before the object is complete "
                f"(at offset {error.pos} of {len(text)})",
                error.pos,
            )
        return ArgumentsError(
            f"invalid JSON arguments: {error.msg} at offset {error.pos} (line {error.lineno}, column {error.colno})",
            error.pos,
        )
    except ValueError as error:  # NaN / Infinity via parse_constant
        return ArgumentsError(f"invalid JSON arguments: {error}", start)
    except RecursionError:
        return ArgumentsError("invalid JSON arguments: nesting is too deep to decode", start)
    trailing = len(text) - len(text[end:].lstrip())
    if trailing < len(text):
        return ArgumentsError(
            f"trailing data after the arguments object at offset {trailing} "
            f"(several JSON values in one call's arguments are never merged or split)",
            trailing,
        )
    if not isinstance(value, dict):
        return ArgumentsError(
            f"arguments must be a JSON object, got {_describe_json_type(value)} at offset {start}",
            start,
        )
    return value
