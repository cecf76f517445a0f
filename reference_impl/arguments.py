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

import decimal
import json
import math
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = ["ArgumentsError", "parse_arguments"]


class _BadNumber(ValueError):
    """A number literal the arguments cannot carry; ``literal`` locates it in the text."""

    def __init__(self, message: str, literal: str) -> None:
        super().__init__(message)
        self.literal = literal


def _reject_constant(name: str) -> NoReturn:
    raise _BadNumber(f"{name} is not valid JSON", name)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (math.inf, -math.inf):
        raise _BadNumber(f"the number {literal} overflows a 64-bit float (it would silently become Infinity)", literal)
    return value


def _big_int(literal: str) -> int:
    # Python refuses int(str) beyond 4300 digits (a DoS guard); Decimal has no such limit and
    # converts exactly. Only used on the retry path below, so ordinary ints stay on the C path.
    return int(decimal.Decimal(literal))


# One decoder for the whole process: constructing a JSONDecoder per call is measurable in the hot path.
_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant, parse_float=_finite_float)
_BIG_INT_DECODER = json.JSONDecoder(
    strict=False, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_big_int
)


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


def _is_truncation(text: str, error: json.JSONDecodeError) -> bool:
    """True when the text is a prefix of valid JSON that stopped early, not malformed JSON."""
    end = len(text.rstrip())
    if error.pos >= end:
        return True
    # The decoder reports an unterminated string (or a cut \\u escape) at its start, not at the end.
    if error.msg.startswith("Unterminated string"):
        return True
    return error.msg.startswith("Invalid \\uXXXX escape") and error.pos + 6 > end


def _literal_offset(text: str, start: int, literal: str) -> int:
    """Where ``literal`` first sits outside strings; only called on the error path."""
    in_string = escaped = False
    for position in range(start, len(text)):
        char = text[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith(literal, position):
            return position
    return start


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
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError as error:
            if "integer string conversion" not in str(error):
                raise
            value, end = _BIG_INT_DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        if _is_truncation(text, error):
            return ArgumentsError(
                "truncated arguments: the JSON ends before the object is complete "
                f"(at offset {len(text)} of {len(text)})",
                len(text),
            )
        return ArgumentsError(
            f"invalid JSON arguments: {error.msg} at offset {error.pos} (line {error.lineno}, column {error.colno})",
            error.pos,
        )
    except _BadNumber as error:  # NaN / Infinity / float overflow, from the parse hooks
        offset = _literal_offset(text, start, error.literal)
        return ArgumentsError(f"invalid JSON arguments: {error} (at offset {offset})", offset)
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
