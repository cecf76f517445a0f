"""How a caller runs the raw argument text a library hands back without parsing it."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["decode_arguments"]


def decode_arguments(raw: Any) -> Any:
    """What a caller of a raw-arguments library runs: ``json.loads`` of the text (``""`` means ``{}``).

    Returns the object, or a string saying why the text is not one (then the call does not run).
    Adapters whose library never parses arguments use it so calls can be compared at all; they
    exclude the checks whose verdict would then be this function's, not the library's.
    """
    if not isinstance(raw, str):  # a library that kept something else where its type says text
        return f"the arguments are a {type(raw).__name__}, not JSON text: {raw!r}"
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as error:
        return f"invalid JSON: {error}"
    return value if isinstance(value, dict) else f"not a JSON object: {raw!r}"
