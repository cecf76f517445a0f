"""The layering of ``ARCHITECTURE.md`` holds: imports only point down, no suite imports another.

Read from the source by AST (every ``import`` and ``from ... import``, also inside functions), so
a lazy import that crosses a layer the wrong way fails here as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "conformance"

# The rank of each part of ``conformance``: a part may import only parts of a lower rank.
LAYERS: dict[str, int] = {
    "verdict": 0,  # the result model: knows no target
    "wire": 1,  # bodies, SDK replay, outcomes of recordings
    "turns": 2,  # logical turns and their rendering per wire API
    "handler": 3,  # the suites: none imports another
    "converter": 3,
    "roundtrip": 3,
    "stack": 3,
    "corpus": 4,  # tooling and reports over the suites
    "http_replay": 4,
    "report": 4,
    "strategies": 4,
    "bridge": 4,  # another way to reach targets, for the handler and stack suites
    "adapters": 5,  # third-party libraries as targets
    "matrix": 6,
    "cli": 7,  # entry points
    "pytest_plugin": 8,
    "__init__": 9,
    "__main__": 9,
}


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


def _crossings() -> list[str]:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = _part(path)
        for line, module in _imports(path):
            if module == "conformance":
                target = "__init__"
            elif module.startswith("conformance."):
                target = module.split(".")[1]
            else:
                continue
            if target == part:
                continue
            if target not in LAYERS or part not in LAYERS:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {part} or {target} has no layer in LAYERS")
            elif LAYERS[target] >= LAYERS[part]:
                wrong.append(
                    f"{path.relative_to(ROOT)}:{line}: {part} (layer {LAYERS[part]}) imports {module} "
                    f"(layer {LAYERS[target]})"
                )
    return wrong


def test_every_part_of_the_suite_has_a_layer() -> None:
    parts = {_part(path) for path in PACKAGE.rglob("*.py")}
    assert parts <= set(LAYERS), sorted(parts - set(LAYERS))


def test_imports_only_point_down_and_no_suite_imports_another() -> None:
    assert _crossings() == []


@pytest.mark.parametrize("package", ["reference_impl"])
def test_the_reference_never_imports_the_suite(package: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, module in _imports(path)
        if module == "conformance" or module.startswith("conformance.")
    ]
    assert found == []
