"""The adapters' declarations: one per library, consistent, and importable without the libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance import CHECKS, Capabilities
from conformance.adapters import AdapterInfo, adapter, adapters
from conformance.adapters.arguments import decode_arguments
from conformance.stack import StackCapabilities


def test_every_adapter_declares_a_consistent_target() -> None:
    infos = adapters()
    assert [i.name for i in infos] == [
        "langchain-core",
        "pydantic-ai",
        "litellm",
        "openai-agents",
        "openai",
        "anthropic",
    ]
    check_ids = {check.id for check in CHECKS}
    for info in infos:
        assert callable(info.load())
        if info.kind == "stack":
            assert isinstance(info.capabilities, StackCapabilities) and not info.excluded
        else:
            assert isinstance(info.capabilities, Capabilities)
            assert info.capabilities.events == (info.kind == "handler")
            assert set(info.excluded) <= check_ids
        assert info.extra == "adapters" and info.distributions


def test_labels_carry_the_installed_version() -> None:
    info = adapter("openai")
    assert info.version is not None and info.label == f"openai {info.version}"
    assert info.versions == {"openai": info.version}
    missing = AdapterInfo("x", ("no-such-distribution",), ("no_such_module",), "accumulator", "m:f", Capabilities(), "")
    assert missing.version is None and missing.label == "x (not installed)" and missing.missing() == ["no_such_module"]
    with pytest.raises(KeyError, match="known: langchain-core"):
        adapter("nope")


def test_importing_the_adapters_imports_none_of_the_libraries() -> None:
    code = (
        "import sys, conformance.adapters as a; a.adapters(); "
        "print(sorted(m for m in ('langchain_core', 'litellm', 'pydantic_ai', 'agents') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("raw", "runs"),
    [
        ("", True),
        ('{"a": 1}', True),
        ("[1]", False),
        ("null", False),
        ('{"a": ', False),
        ("{}{}", False),
        ({"a": 1}, False),
    ],
)
def test_decode_arguments_is_json_loads_of_an_object(raw: object, runs: bool) -> None:
    assert isinstance(decode_arguments(raw), dict) == runs
