"""The public namespaces say exactly what they export: every name in ``__all__`` exists, and every
public name defined there is in ``__all__`` (hypothesis-style: implementations live in private
modules, ``strategies`` and the package roots only re-export)."""

from __future__ import annotations

import importlib
import inspect

import pytest

NAMESPACES = ["conformance", "conformance.strategies", "conformance.handler", "conformance.converter"]


@pytest.mark.parametrize("name", NAMESPACES)
def test_all_lists_what_the_namespace_exports(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    missing = sorted(symbol for symbol in exported if not hasattr(module, symbol))
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"
    public = {
        symbol
        for symbol, value in vars(module).items()
        if not symbol.startswith("_") and not inspect.ismodule(value) and symbol != "annotations"
    }
    assert public <= exported, f"{name} has public names missing from __all__: {sorted(public - exported)}"
