"""The adapters' declarations: one per library, consistent, and importable without the libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance import CHECKS, Capabilities
from conformance.adapters import AdapterInfo, NodePackages, adapter, adapters
from conformance.adapters.arguments import decode_arguments
from conformance.stack import StackCapabilities
from tests.bridge_targets.node import VERCEL_DIR, needs_node, needs_vercel_modules


def test_every_adapter_declares_a_consistent_target() -> None:
    infos = adapters()
    assert [i.name for i in infos] == [
        "langchain-core",
        "pydantic-ai",
        "litellm",
        "openai-agents",
        "openai",
        "anthropic",
        "smolagents",
        "agno",
        "strands-agents",
        "haystack-ai",
        "vercel-ai-sdk",
        "openai-node",
        "anthropic-node",
        "langchain-js",
        "mastra",
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
        if info.node is None:
            assert info.extra == "adapters" and info.distributions and info.imports
        else:  # a Node library: versions from its lock file, installed with npm ci, not pip
            assert info.kind == "stack" and not info.extra and not info.distributions and not info.imports


def test_labels_carry_the_installed_version() -> None:
    info = adapter("openai")
    assert info.version is not None and info.label == f"openai {info.version}"
    assert info.versions == {"openai": info.version}
    missing = AdapterInfo("x", ("no-such-distribution",), ("no_such_module",), "accumulator", "m:f", Capabilities(), "")
    assert missing.version is None and missing.label == "x (not installed)" and missing.missing() == ["no_such_module"]
    with pytest.raises(KeyError, match="known: langchain-core"):
        adapter("nope")


def test_the_vercel_column_records_the_versions_its_lock_file_pins() -> None:
    from conformance.adapters.vercel_ai_sdk import pinned_versions

    info = adapter("vercel-ai-sdk")
    pinned = pinned_versions()
    assert info.versions == {
        name: pinned[name] for name in ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google")
    }
    assert info.version == pinned["ai"] and info.label == f"vercel-ai-sdk {pinned['ai']}"
    assert info.node is not None and info.node.directory == VERCEL_DIR


def test_a_node_library_is_missing_without_node_or_node_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "package-lock.json").write_text('{"packages": {"node_modules/lib": {"version": "1.2.3"}}}')
    node = NodePackages(tmp_path, ("lib",))
    info = AdapterInfo("lib", (), (), "stack", "m:f", StackCapabilities(), "", extra="", node=node)
    assert info.versions == {"lib": "1.2.3"} and info.label == "lib 1.2.3"
    (fake_node := tmp_path / "bin" / "node").parent.mkdir()
    fake_node.write_text("#!/bin/sh\n")
    fake_node.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake_node.parent))
    missing = info.missing()
    assert missing == [f"{tmp_path}/node_modules is not installed: run `npm ci` in {tmp_path}"]
    assert info.install_hint(missing) == missing[0]
    (tmp_path / "node_modules" / "lib").mkdir(parents=True)
    (tmp_path / "node_modules" / "lib" / "package.json").write_text("{}")
    assert info.missing() == []
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert info.missing() == ["`node` is not on PATH: install Node >= 20"]


def test_a_python_library_is_missing_with_the_pip_extra() -> None:
    info = AdapterInfo("x", ("no-such-distribution",), ("no_such_module",), "accumulator", "m:f", Capabilities(), "")
    assert (
        info.install_hint(info.missing())
        == "not installed (no_such_module): pip install 'toolcall-conformance[adapters]'"
    )


@needs_node
@needs_vercel_modules
def test_the_vercel_column_declares_what_its_bridge_declares() -> None:
    info = adapter("vercel-ai-sdk")
    assert info.missing() == []
    with info.load()() as target:
        assert target.capabilities == info.capabilities


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
