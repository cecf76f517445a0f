"""LangChain.js and Mastra at byte level, over the bridge: the pinned libraries, offline, on the bundled recordings.

Each column's failing recordings must be exactly its documented ones (``FINDINGS`` of
``conformance.adapters.langchain_js`` / ``conformance.adapters.mastra``), each defect with a direct
reproduction under ``tests/repro_node_fw/`` (a standalone script importing only the library, exit 1
while the defect is there); byte splits must never change a result; the capabilities each adapter
declares are what its program's hello says.
"""

from __future__ import annotations

import subprocess
from types import ModuleType

import pytest

from conformance.adapters import langchain_js, mastra
from conformance.adapters.node import NODE_SDKS
from conformance.stack import run_stack_conformance
from conformance.verdict import Report
from conformance.wire import bundled_cassette_dir
from tests.bridge_targets.node import NODE, ROOT, needs_node

REPRO_DIR = ROOT / "tests" / "repro_node_fw"
# Recording -> the script showing what a column does where the matrix finds no defect (a caller's
# decision or an input shape outside the target): exit 1 and a `SHOWN:` line while the behaviour is there.
SHOWN = {
    "openai-chat/stream_cut_after_arguments.yaml": "langchain_cut_stream_gives_no_error.mjs",
    "openai-compatible/dialect_no_index.yaml": "langchain_tool_deltas_without_index.mjs",
}
# A call without an id (only generated bodies have one): outside LangChain's target, shown all the same.
SHOWN_SCRIPTS = sorted([*SHOWN.values(), langchain_js.NO_ID_SCRIPT])
# The defect reproductions: every other script of the folder.
SCRIPTS = sorted(path.name for path in REPRO_DIR.glob("[a-z]*.mjs") if path.name not in SHOWN_SCRIPTS)
COLUMNS = [langchain_js, mastra]

needs_node_sdks = pytest.mark.skipif(
    not all((NODE_SDKS / "node_modules" / p / "package.json").is_file() for p in ("@langchain/openai", "@mastra/core")),
    reason="needs LangChain.js and Mastra installed: run `npm ci` in examples/bridge/node-sdks",
)


def failing_recordings(report: Report) -> set[str]:
    outcome = next(r for r in report.results if r.check.id == "stack_outcome_matches")
    return set(outcome.failing_scenarios)


def test_every_defect_script_exists_and_names_its_recordings() -> None:
    named: set[str] = set()
    for column in COLUMNS:
        for recording, script in column.FINDINGS.items():
            if script is None:
                continue
            named.add(script)
            text = (REPRO_DIR / script).read_text(encoding="utf-8")
            assert recording.removesuffix(".yaml") in text, f"{script} does not name {recording}"
    assert named == set(SCRIPTS)
    for recording, script in SHOWN.items():
        assert langchain_js.FINDINGS[recording] is None and (REPRO_DIR / script).is_file()
        assert recording.removesuffix(".yaml") in (REPRO_DIR / script).read_text(encoding="utf-8")


def test_what_is_not_a_defect_is_covered_by_a_policy_or_an_input_shape() -> None:
    # langchain-js: cut streams (policy "incomplete"), no index and object arguments (outside target).
    assert set(langchain_js.ADAPTER.policies) == {"incomplete"}
    assert {"no_index", "object_arguments"} <= set(langchain_js.ADAPTER.outside_target)
    assert {"no_index", "object_arguments"} <= set(mastra.ADAPTER.outside_target)
    assert "no_id" not in mastra.ADAPTER.outside_target  # @ai-sdk/openai 3.x mints an id: 2.x's throw is a defect


@needs_node
@needs_node_sdks
@pytest.mark.parametrize("column", COLUMNS, ids=["langchain-js", "mastra"])
def test_the_failing_recordings_are_exactly_the_findings(column: ModuleType) -> None:
    with column.open_stack_target() as target:
        assert target.capabilities == column.ADAPTER.capabilities  # the hello declares the AdapterInfo's
        report = run_stack_conformance(
            target.stack, [bundled_cassette_dir()], capabilities=target.capabilities, profile="dev", seed=0, generated=0
        )
    assert failing_recordings(report) == set(column.FINDINGS)
    split = next(r for r in report.results if r.check.id == "stack_byte_split_invariant")
    assert split.status == "passed" and split.examples_run > 100


@needs_node
@needs_node_sdks
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_reproduction_shows_the_defect(script: str) -> None:
    done = subprocess.run([str(NODE), script], cwd=REPRO_DIR, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 1 and "DEFECT: " in done.stdout, f"{script}:\n{done.stdout}\n{done.stderr}"


@needs_node
@needs_node_sdks
@pytest.mark.parametrize("script", SHOWN_SCRIPTS)
def test_the_reproduction_shows_the_behaviour(script: str) -> None:
    done = subprocess.run([str(NODE), script], cwd=REPRO_DIR, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 1 and "SHOWN: " in done.stdout, f"{script}:\n{done.stdout}\n{done.stderr}"
