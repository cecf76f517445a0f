"""What an adapter declares: the library it wraps, how the suite runs it, and what it cannot judge.

An adapter makes one library's own streaming accumulation look like a target of the suite, through
the suite's public extension points only (``run_conformance`` for handlers and final-result
accumulators, ``run_stack_conformance`` for converter-level stacks). ``AdapterInfo`` is the one place
that says, for the matrix and for a user reading the code, how it is run and what it declares.

A library that is not Python (the Vercel AI SDK, run in Node over the bridge) declares ``node``
(a ``NodePackages``): its versions are then the ones its ``package-lock.json`` pins, and it is
missing when ``node`` is not on PATH or its ``node_modules`` is not installed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.handler.capabilities import Capabilities
from conformance.stack import StackCapabilities

__all__ = ["AdapterInfo", "Kind", "NodePackages", "distribution_version", "npm_lock_versions"]

Kind = Literal["handler", "accumulator", "stack"]


def distribution_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (``importlib.metadata``), or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def npm_lock_versions(directory: Path) -> dict[str, str]:
    """Every package ``directory/package-lock.json`` pins at the top level (``{"ai": "6.0.326", ...}``)."""
    lock = json.loads((directory / "package-lock.json").read_text(encoding="utf-8"))
    prefix = "node_modules/"
    return {
        path.removeprefix(prefix): str(entry["version"])
        for path, entry in lock.get("packages", {}).items()
        if path.startswith(prefix) and path.count(prefix) == 1 and "version" in entry
    }


@dataclass(frozen=True)
class NodePackages:
    """A library that runs in Node: the folder holding its ``package.json``, ``package-lock.json`` and (after
    ``npm ci``) ``node_modules``, and the packages whose pinned versions every report records (the library first)."""

    directory: Path
    packages: tuple[str, ...]

    @property
    def versions(self) -> dict[str, str]:
        """The recorded packages with the versions the lock file pins (ones it does not pin left out)."""
        pinned = npm_lock_versions(self.directory)
        return {name: pinned[name] for name in self.packages if name in pinned}

    def missing(self) -> list[str]:
        """What stops it from running, each with its fix (empty: it can run)."""
        if shutil.which("node") is None:
            return ["`node` is not on PATH: install Node >= 20"]
        if not (self.directory / "node_modules" / self.packages[0] / "package.json").is_file():
            shown = _shown(self.directory)
            return [f"{shown}/node_modules is not installed: run `npm ci` in {shown}"]
        return []


def _shown(directory: Path) -> str:
    """``directory`` relative to the source tree (``examples/bridge/vercel``) when it is inside it."""
    root = Path(__file__).resolve().parents[2]
    try:
        return directory.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(directory)


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter, as the matrix and the CLI see it.

    ``name`` is the matrix column (the library's distribution name); ``distributions`` are the
    installed distributions whose exact versions every report records (the library first);
    ``imports`` the modules that must be importable for the adapter to run; ``kind`` how the suite
    drives it; ``factory`` (``MODULE:ATTRIBUTE``) what ``toolcall-conformance run`` takes for it;
    ``capabilities`` what it declares; ``excluded`` the checks the adapter cannot judge faithfully,
    each with the reason shown in its skipped cell; ``recordings_excluded`` (stacks) the recordings
    it is not judged on, each with why (a legitimate alternative or a convention of our corpus,
    reproduced directly all the same): not applicable in its cell, never passes;
    ``policies`` what the library documents as its caller's decision, by the reason a call must not
    run (``truncated``, ``incomplete``, ``provider_error``: ``HarmVerdict.cause``), each with where it
    says so and how it exposes the reason: a finding covered by one is shown as "caller decides",
    never as the library's defect (the issue's rule: judge "must not run" at the layer that decides);
    ``outside_target`` the input shapes (ids of ``conformance.wire.shapes.SHAPES``) the library does
    not claim to read, each with the evidence (its documented or typed contract, a report its
    maintainers closed): a finding whose input has one is shown as "outside target", never as a
    defect (a crash on a value the library's own types admit is not outside it);
    ``extra`` the pip extra that installs it;
    ``environment`` variables set before the library is imported (a library that fetches from the
    network on import, otherwise). A library that runs in Node sets ``node`` instead of
    ``distributions`` and ``imports`` (and no ``extra``); its stack factory returns a target that
    holds a process (``.stack``, ``.capabilities``, ``close()``), which the matrix closes after the run.
    """

    name: str
    distributions: tuple[str, ...]
    imports: tuple[str, ...]
    kind: Kind
    factory: str
    capabilities: Capabilities | StackCapabilities
    summary: str
    excluded: Mapping[str, str] = field(default_factory=dict)
    recordings_excluded: Mapping[str, str] = field(default_factory=dict)
    policies: Mapping[str, str] = field(default_factory=dict)
    outside_target: Mapping[str, str] = field(default_factory=dict)
    extra: str = "adapters"
    environment: Mapping[str, str] = field(default_factory=dict)
    node: NodePackages | None = None

    @property
    def version(self) -> str | None:
        """The library's installed version (a Node library's pinned one), or None when it is not installed."""
        if self.node is not None:
            return self.node.versions.get(self.node.packages[0])
        return distribution_version(self.distributions[0])

    @property
    def versions(self) -> dict[str, str]:
        """Every recorded distribution with its installed version (missing ones left out); for a Node
        library, its recorded packages with the versions its lock file pins."""
        if self.node is not None:
            return self.node.versions
        found = {name: distribution_version(name) for name in self.distributions}
        return {name: version for name, version in found.items() if version is not None}

    @property
    def label(self) -> str:
        """The target label every report carries: the library and its exact version."""
        return f"{self.name} {self.version or '(not installed)'}"

    def missing(self) -> list[str]:
        """The modules the adapter needs that cannot be imported (empty: it can run); for a Node library,
        what is not installed, with its fix."""
        if self.node is not None:
            return self.node.missing()
        return [module for module in self.imports if importlib.util.find_spec(module) is None]

    def install_hint(self, missing: list[str]) -> str:
        """Why the matrix skips the column and how to install it (``missing`` from ``missing()``)."""
        if self.node is not None:
            return "; ".join(missing)
        return f"not installed ({', '.join(missing)}): pip install 'toolcall-conformance[{self.extra}]'"

    def load(self) -> Callable[..., Any]:
        """Import the adapter's factory (the library itself is imported lazily, on first use)."""
        module_name, _, attribute = self.factory.partition(":")
        module = importlib.import_module(module_name)
        target: Callable[..., Any] = getattr(module, attribute)
        return target
