"""How two parsed JSON values compare: exactly (the default), or with their numbers as IEEE doubles.

A target declares how it reads JSON numbers (``json_numbers``). ``"exact"``: as Python's ``json``
does, integers of any size and floats as written, so ``9007199254740993`` and ``0.0`` must come
out as such. ``"double"``: as JavaScript's ``JSON.parse`` (and any reader whose numbers are
IEEE-754 doubles) does: ``9007199254740993`` *is* ``9007199254740992``, ``0.0`` *is* ``0`` and
``1e400`` is Infinity. Comparing such a target exactly charges it with its language, never with
its code; comparing both sides as doubles still catches any number that changed (``1.5`` run as
``2``), a number that became a string or a boolean, and everything else.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["JSON_NUMBERS", "as_doubles", "canonical_json", "numbers_note", "same_json"]

# How a target may read JSON numbers; the first is the default.
JSON_NUMBERS = ("exact", "double")


def as_doubles(value: Any) -> Any:
    """``value`` with every number read as an IEEE double, as ``JSON.parse`` reads it.

    An integer becomes its nearest double (``float()`` rounds half to even, as ``JSON.parse``
    does), one beyond the double range becomes +/-infinity, and ``-0.0`` becomes ``0.0`` (equal as
    doubles, and ``JSON.stringify(-0)`` writes ``0``). Booleans stay booleans (``True`` is no number
    in JSON, even though Python's ``bool`` is an ``int``); strings and ``null`` are left alone.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        try:
            return float(value) + 0.0
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, float):
        return value + 0.0  # -0.0 + 0.0 is 0.0
    if isinstance(value, Mapping):
        return {key: as_doubles(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_doubles(item) for item in value]
    return value


def canonical_json(value: Any, *, numbers: str = "exact") -> str:
    """A canonical JSON text of a parsed value (key order and spacing never matter), its numbers
    read as ``numbers`` says; two values compare equal when their canonical texts do."""
    if numbers not in JSON_NUMBERS:
        raise ValueError(f"numbers must be one of {', '.join(JSON_NUMBERS)}, got {numbers!r}")
    shown = as_doubles(value) if numbers == "double" else value
    return json.dumps(shown, ensure_ascii=False, sort_keys=True, default=repr)


def same_json(left: Any, right: Any, *, numbers: str = "exact") -> bool:
    """Whether two parsed JSON values are equal, their numbers compared as ``numbers`` says."""
    return canonical_json(left, numbers=numbers) == canonical_json(right, numbers=numbers)


def numbers_note(declared_by: str = "the target") -> str:
    """What a report says when it compared numbers as doubles (the verdict depends on it)."""
    return (
        f"numbers compared as IEEE doubles, as declared by {declared_by} (json_numbers: double): an argument "
        "number equals what JSON.parse reads (9007199254740993 equals 9007199254740992, 0.0 equals 0); a number "
        "that changed value as a double still fails"
    )
