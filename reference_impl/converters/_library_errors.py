"""Error classes spread over several modules (a client library and its transport), resolved lazily.

``StreamConverter._sdk_errors`` names one module. The Ollama, Cohere and Bedrock client libraries
let some errors escape from their stream iterators unwrapped: the transport's own (``httpx`` for
ollama and cohere, ``urllib3`` for botocore) and, for ollama, the JSON decoder's and pydantic's.
Those converters name ``(module, class)`` pairs instead; importing a converter still imports no
library, and a library that is not installed contributes no classes.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

__all__ = ["resolve_errors"]

_CACHE: dict[tuple[tuple[str, str], ...], tuple[type[BaseException], ...]] = {}


def resolve_errors(specs: Sequence[tuple[str, str]]) -> tuple[type[BaseException], ...]:
    """The classes named by ``(module, qualified name)`` pairs, skipping modules that are not installed."""
    key = tuple(specs)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    found: list[type[BaseException]] = []
    for module_name, class_name in key:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        value = getattr(module, class_name, None)
        if isinstance(value, type) and issubclass(value, BaseException):
            found.append(value)
    result = tuple(found)
    _CACHE[key] = result
    return result
