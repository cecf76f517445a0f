"""What an adapter declares: the library it wraps, how the suite runs it, and what it cannot judge.

An adapter makes one library's own streaming accumulation look like a target of the suite, through
the suite's public extension points only (``run_conformance`` for handlers and final-result
accumulators, ``run_stack_conformance`` for converter-level stacks). ``AdapterInfo`` is the one place
that says, for the matrix and for a user reading the code, how it is run and what it declares.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from conformance.handler.capabilities import Capabilities
from conformance.stack import StackCapabilities

__all__ = ["AdapterInfo", "Kind", "distribution_version"]

Kind = Literal["handler", "accumulator", "stack"]


def distribution_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (``importlib.metadata``), or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter, as the matrix and the CLI see it.

    ``name`` is the matrix column (the library's distribution name); ``distributions`` are the
    installed distributions whose exact versions every report records (the library first);
    ``imports`` the modules that must be importable for the adapter to run; ``kind`` how the suite
    drives it; ``factory`` (``MODULE:ATTRIBUTE``) what ``toolcall-conformance run`` takes for it;
    ``capabilities`` what it declares; ``excluded`` the checks the adapter cannot judge faithfully,
    each with the reason shown in its skipped cell; ``extra`` the pip extra that installs it;
    ``environment`` variables set before the library is imported (a library that fetches from the
    network on import, otherwise).
    """

    name: str
    distributions: tuple[str, ...]
    imports: tuple[str, ...]
    kind: Kind
    factory: str
    capabilities: Capabilities | StackCapabilities
    summary: str
    excluded: Mapping[str, str] = field(default_factory=dict)
    extra: str = "adapters"
    environment: Mapping[str, str] = field(default_factory=dict)

    @property
    def version(self) -> str | None:
        """The library's installed version, or None when it is not installed."""
        return distribution_version(self.distributions[0])

    @property
    def versions(self) -> dict[str, str]:
        """Every recorded distribution with its installed version (missing ones left out)."""
        found = {name: distribution_version(name) for name in self.distributions}
        return {name: version for name, version in found.items() if version is not None}

    @property
    def label(self) -> str:
        """The target label every report carries: the library and its exact version."""
        return f"{self.name} {self.version or '(not installed)'}"

    def missing(self) -> list[str]:
        """The modules the adapter needs that cannot be imported (empty: it can run)."""
        return [module for module in self.imports if importlib.util.find_spec(module) is None]

    def load(self) -> Callable[..., Any]:
        """Import the adapter's factory (the library itself is imported lazily, on first use)."""
        module_name, _, attribute = self.factory.partition(":")
        module = importlib.import_module(module_name)
        target: Callable[..., Any] = getattr(module, attribute)
        return target
