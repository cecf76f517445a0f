"""Adapters: widely used libraries' own streaming accumulation, run as targets of the suite.

One module per library, each an optional extra (``pip install 'toolcall-conformance[adapters]'``), except
the Node libraries, which run in Node over the bridge (``npm ci`` in ``examples/bridge/vercel`` for the
Vercel AI SDK, in ``examples/bridge/node-sdks`` for the others: ``conformance.adapters.node``).
Every adapter goes through the suite's public extension points only and is kept minimal, so that
a failure is the library's behaviour and not the adapter's; its module docstring says what it
maps and what it cannot, and its ``ADAPTER`` (an ``AdapterInfo``) how the suite runs it, what it
declares and which checks it cannot judge. Importing this package imports none of the libraries.

``toolcall-conformance matrix`` runs every adapter whose library is installed; one adapter also runs
on its own, e.g. ``toolcall-conformance run --accumulator conformance.adapters.litellm:make_accumulator
--no-stream-errors`` (the flags are its declared capabilities).
"""

from __future__ import annotations

import importlib

from conformance.adapters.base import AdapterInfo, Kind, NodePackages, distribution_version

__all__ = ["ADAPTER_MODULES", "AdapterInfo", "Kind", "NodePackages", "adapter", "adapters", "distribution_version"]

# The order of the matrix columns (after the reference).
ADAPTER_MODULES = (
    "conformance.adapters.langchain",
    "conformance.adapters.pydantic_ai",
    "conformance.adapters.litellm",
    "conformance.adapters.openai_agents",
    "conformance.adapters.openai_sdk",
    "conformance.adapters.anthropic_sdk",
    "conformance.adapters.smolagents",
    "conformance.adapters.agno",
    "conformance.adapters.strands",
    "conformance.adapters.haystack",
    "conformance.adapters.vercel_ai_sdk",
    "conformance.adapters.openai_node",
    "conformance.adapters.anthropic_node",
    "conformance.adapters.langchain_js",
    "conformance.adapters.mastra",
)


def adapters() -> tuple[AdapterInfo, ...]:
    """Every adapter's ``AdapterInfo``, in matrix order (whether or not its library is installed)."""
    found = []
    for name in ADAPTER_MODULES:
        info = getattr(importlib.import_module(name), "ADAPTER", None)
        if not isinstance(info, AdapterInfo):
            raise TypeError(f"{name} has no ADAPTER of type AdapterInfo")
        found.append(info)
    return tuple(found)


def adapter(name: str) -> AdapterInfo:
    """The adapter whose column is ``name``; ``KeyError`` lists the known names."""
    for info in adapters():
        if info.name == name:
            return info
    raise KeyError(f"unknown adapter {name!r}; known: {', '.join(info.name for info in adapters())}")
