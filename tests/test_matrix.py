"""The conformance matrix: its model, its outputs, the CLI, and the published table's promises.

Every failing cell of the published ``docs/matrix/matrix.json`` must name direct reproduction tests
that exist (they assert the defect without the suite), its columns must have been measured at the
versions ``docs/matrix/constraints.txt`` pins, and the Markdown and HTML pages must be what the
renderer makes of the JSON. Re-measuring is ``.ci/run``'s job (minutes); these tests take seconds.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters import adapter, adapters
from conformance.cli import main
from conformance.handler import CHECKS
from conformance.matrix import Cell, Column, Matrix, Row, cell_differences
from conformance.matrix.model import Finding
from conformance.matrix.render import render_html, render_markdown, repository_root
from conformance.matrix.reproductions import REPRODUCTIONS, SCRIPTS, SUITE_BUGS
from conformance.matrix.runner import MatrixRun
from conformance.stack import STACK_CHECKS
from tests.bridge_targets.node import needs_node, needs_vercel_modules

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "docs" / "matrix" / "matrix.json"


def published() -> Matrix:
    return Matrix.from_json(json.loads(PUBLISHED.read_text(encoding="utf-8")))


def _tiny() -> Matrix:
    matrix = Matrix("dev", 0, "2026-01-01", "0.1.0", "CPython 3.11", rows=[Row("no_crash", "t", "handler")])
    matrix.columns = [Column("lib", "accumulator", {"lib": "1.0"}), Column("other", "accumulator", {"other": "2.0"})]
    matrix.cells = {
        "no_crash": {
            "lib": Cell(
                "fail",
                2,
                10,
                "raised",
                counterexample="counterexamples/lib/no_crash.txt",
                reproductions=["tests/test_repro_litellm.py::test_call_without_any_id_is_dropped_silently"],
                kind="defect",
                harm="crashed",
                findings=[
                    Finding(
                        "the target raised KeyError",
                        "crashed",
                        "the turn raised KeyError: 0",
                        "observed",
                        "observed: no_index (Mistral API)",
                        ["tests/test_repro_litellm.py::test_call_without_any_id_is_dropped_silently"],
                    )
                ],
            ),
            "other": Cell("skip", reason="declared without callbacks", short="no callbacks"),
        }
    }
    return matrix


# -- the model ---------------------------------------------------------------------------------


def test_matrix_json_round_trips_and_cells_compare_by_kind_harm_and_findings() -> None:
    matrix = _tiny()
    again = Matrix.from_json(json.loads(json.dumps(matrix.to_json())))
    assert again.to_json() == matrix.to_json()
    assert cell_differences(matrix, again) == []
    again.cells["no_crash"]["lib"].failing_scenarios = 3  # scenario counts are not what a cell promises
    assert cell_differences(matrix, again) == []
    again.cells["no_crash"]["lib"].findings.append(Finding("another", "stream_shape"))
    again.columns[1].versions = {"other": "2.1"}
    assert cell_differences(matrix, again) == [
        "lib / no_crash: published fail defect crashed 1, measured fail defect crashed 2",
        "other: measured with {'other': '2.1'}, published with {'other': '2.0'}",
    ]
    again.columns = again.columns[:1]
    assert "other: not measured (is its library installed?)" in cell_differences(matrix, again)


def test_malformed_matrix_json_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="schema"):
        Matrix.from_json({"schema": 99})
    with pytest.raises(ValueError, match="malformed"):
        Matrix.from_json({"schema": 2, "profile": "ci"})


# -- the renderers -----------------------------------------------------------------------------


def test_markdown_and_html_link_counterexamples_and_reproductions(tmp_path: Path) -> None:
    matrix = _tiny()
    root = repository_root()
    assert root == ROOT
    markdown = render_markdown(matrix, tmp_path / "out", tmp_path, root)
    repro = Path(os.path.relpath(ROOT / "tests" / "test_repro_litellm.py", tmp_path)).as_posix()
    assert (
        f"| `no_crash` | **DEFECT** crashed, 1 finding [counterexample](out/counterexamples/lib/no_crash.txt) "
        f"[repro]({repro}) |" in markdown
    )
    assert (
        "  - [DEFECT] crashed, observed: the target raised KeyError (the turn raised KeyError: 0; observed: no_index"
        in markdown
    )
    assert "skip: no callbacks" in markdown and "lib 1.0" in markdown
    page = render_html(matrix, tmp_path / "out", root)
    assert '<a href="counterexamples/lib/no_crash.txt">counterexample</a>' in page
    assert "<script" not in page
    href = re.search(r'href="([^"]*test_repro_litellm\.py)"', page)
    assert href is not None and (tmp_path / "out" / href.group(1)).resolve() == ROOT / "tests" / "test_repro_litellm.py"


# -- the CLI -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--only", "no-such-library"], "unknown adapter"),
        (["--expect", "no/such/matrix.json"], "cannot read it"),
    ],
)
def test_bad_input_is_exit_code_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", *argv]) == 2
    assert message in capsys.readouterr().err


def test_out_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["matrix", "--only", "langchain-core", "--out", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_small_matrix_is_measured_and_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("langchain_core", reason="langchain-core is not installed (pip install '.[adapters]')")
    from conformance.matrix import run_matrix
    from conformance.matrix.render import write_outputs

    run = run_matrix(profile="dev", seed=0, only=["langchain-core"], reference=False)
    assert isinstance(run, MatrixRun)
    paths = write_outputs(run, tmp_path)
    assert {p.name for p in paths[:3]} == {"matrix.json", "index.html", "matrix.md"}
    matrix = Matrix.from_json(json.loads((tmp_path / "matrix.json").read_text()))
    assert [c.name for c in matrix.columns] == ["langchain-core"]
    cells = {row.check: matrix.cells[row.check]["langchain-core"] for row in matrix.rows}
    assert cells["segment_lifecycle"].status == "skip" and cells["segment_lifecycle"].short == "no events"
    assert cells["stack_outcome_matches"].status == "n/a"
    assert cells["tool_names_whole"].status == "fail"
    assert (tmp_path / cells["tool_names_whole"].counterexample).is_file()


@needs_node
@needs_vercel_modules
def test_the_vercel_column_is_measured_and_its_node_process_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.adapters.vercel_ai_sdk as vercel
    from conformance.adapters.vercel_ai_sdk import FINDINGS
    from conformance.matrix import run_matrix

    processes = []
    opened = vercel.open_stack_target

    def recording_open() -> vercel.VercelStackTarget:
        target = opened()
        assert target.process.running  # the Node process was started
        processes.append(target.process)
        return target

    monkeypatch.setattr(vercel, "open_stack_target", recording_open)
    run = run_matrix(profile="dev", seed=0, only=["vercel-ai-sdk"], reference=False)
    assert len(processes) == 1 and not processes[0].running
    matrix = run.matrix
    assert [c.name for c in matrix.columns] == ["vercel-ai-sdk"] and not run.skipped_columns
    cells = {row.check: matrix.cells[row.check]["vercel-ai-sdk"] for row in matrix.rows}
    outcome = cells.pop("stack_outcome_matches")
    # Exactly the documented findings fail, each linked to its direct reproduction.
    # Of the recordings exactly the documented defects fail; generated bodies may fail too, each under
    # one of those findings (every finding has its reproduction, below).
    defects = {name for name, finding in FINDINGS.items() if finding.kind == "defect"}
    text = run.counterexamples["vercel-ai-sdk"]["stack_outcome_matches"]
    listed = re.search(r"^failing: \d+ scenarios \((.*)\), ", text, flags=re.M)
    assert listed is not None, text[:300]
    failing = set(listed.group(1).split(", "))
    assert {name for name in failing if not name.startswith("generated/")} == defects
    assert outcome.status == "fail" and outcome.failing_scenarios == len(failing)
    assert outcome.findings and all(finding.reproductions for finding in outcome.findings)
    assert set(outcome.reproductions) <= {r.node for r in REPRODUCTIONS[("vercel-ai-sdk", "stack_outcome_matches")]}
    assert set(run.counterexamples["vercel-ai-sdk"]) == {"stack_outcome_matches"}
    assert cells.pop("stack_byte_split_invariant").status == "pass"
    assert {cell.status for cell in cells.values()} == {"n/a"}


@needs_node
@needs_vercel_modules
def test_the_vercel_process_is_closed_when_the_run_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.adapters.vercel_ai_sdk as vercel
    import conformance.matrix.runner as runner
    from conformance.matrix import run_matrix

    processes = []
    opened = vercel.open_stack_target

    def recording_open() -> vercel.VercelStackTarget:
        target = opened()
        assert target.process.running  # the Node process was started
        processes.append(target.process)
        return target

    def failing_run(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the run broke")

    monkeypatch.setattr(vercel, "open_stack_target", recording_open)
    monkeypatch.setattr(runner, "run_stack_conformance", failing_run)
    with pytest.raises(RuntimeError, match="the run broke"):
        run_matrix(profile="dev", seed=0, only=["vercel-ai-sdk"], reference=False)
    assert len(processes) == 1 and not processes[0].running


def test_a_column_whose_library_is_missing_is_skipped_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.matrix import run_matrix

    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    run = run_matrix(profile="dev", seed=0, only=["vercel-ai-sdk"], reference=False)
    assert run.matrix.columns == []
    assert run.skipped_columns == {"vercel-ai-sdk": "`node` is not on PATH: install Node >= 20"}


# -- the published table -----------------------------------------------------------------------


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


# The Node libraries' reproductions: a parametrized test of each file names a script of its folder.
_SCRIPT_FOLDERS = {
    "test_bridge_repro_vercel.py": "repro_vercel",
    "test_bridge_node_sdks.py": "repro_node_sdks",
    "test_bridge_node_fw.py": "repro_node_fw",
}
_REPRODUCTION_FILES = ("test_repro_", "test_bridge_repro_", "test_bridge_node_")


def _reproduction_exists(node: str) -> bool:
    """A test of this repository named by its pytest node id; a parametrized one of a Node
    library's test file (``_SCRIPT_FOLDERS``) names a script of its folder."""
    path, _, name = node.partition("::")
    function, _, parameter = name.partition("[")
    if function not in _test_functions(ROOT / path):
        return False
    if not parameter:
        return True
    folder = _SCRIPT_FOLDERS.get(Path(path).name)
    return folder is not None and (ROOT / "tests" / folder / parameter[:-1]).is_file()


def test_every_reproduction_names_a_test_that_exists() -> None:
    for (column, check), reproductions in REPRODUCTIONS.items():
        assert reproductions, f"{column} / {check}: no reproduction"
        for reproduction in reproductions:
            node = reproduction.node
            assert _reproduction_exists(node), f"{column} / {check}: {node} does not exist"
            assert Path(node.partition("::")[0]).name.startswith(_REPRODUCTION_FILES), node
            re.compile(reproduction.finding)


def test_every_published_finding_has_a_direct_reproduction_that_exists() -> None:
    matrix = published()
    failing = [
        (column.name, row.check, matrix.cells[row.check][column.name])
        for column in matrix.columns
        for row in matrix.rows
        if matrix.cells[row.check][column.name].status == "fail"
    ]
    assert failing, "the published matrix has no failing cell: was it measured?"
    for column, check, cell in failing:
        assert cell.findings, f"{column} / {check}: a failing cell without findings"
        for finding in cell.findings:
            assert finding.reproductions or cell.suite_bug, f"{column} / {check}: no direct reproduction of {finding}"
            assert finding.harm, f"{column} / {check}: a finding without its harm"
            assert finding.realism in ("observed", "theoretical"), f"{column} / {check}: {finding}"
        assert cell.suite_bug == SUITE_BUGS.get((column, check), "")
        for node in cell.reproductions:
            path = node.partition("::")[0]
            assert _reproduction_exists(node), f"{column} / {check}: {node} does not exist"
            expected = ("test_matrix_suite_bugs.py",) if cell.suite_bug else _REPRODUCTION_FILES
            assert Path(path).name.startswith(expected), node
        assert (PUBLISHED.parent / cell.counterexample).is_file(), cell.counterexample
    assert not set(REPRODUCTIONS) - {(column, check) for column, check, _ in failing}, "reproductions of no cell"


def test_published_matrix_covers_every_check_and_adapter_at_the_pinned_versions() -> None:
    matrix = published()
    assert [row.check for row in matrix.rows] == [c.id for c in CHECKS] + [c.id for c in STACK_CHECKS]
    assert [c.name for c in matrix.columns] == ["reference"] + [info.name for info in adapters()]
    pins = dict(
        line.split("==", 1)
        for line in (ROOT / "docs" / "matrix" / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    for column in matrix.columns[1:]:
        node = adapter(column.name).node
        if node is not None:  # a Node library: pinned by its package-lock.json
            assert column.versions == node.versions, f"{column.name}: not measured at {node.directory}'s lock file"
            continue
        for distribution, version in column.versions.items():
            assert pins.get(distribution) == version, f"{column.name}: {distribution} {version} is not pinned"
    assert (matrix.profile, matrix.seed) == ("ci", 0)


def test_published_pages_are_what_the_renderer_makes_of_the_json() -> None:
    matrix = published()
    page = (PUBLISHED.parent / "index.html").read_text(encoding="utf-8")
    assert page == render_html(matrix, PUBLISHED.parent.resolve(), ROOT)
    markdown = (ROOT / "docs" / "matrix.md").read_text(encoding="utf-8")
    assert markdown == render_markdown(matrix, PUBLISHED.parent.resolve(), (ROOT / "docs").resolve(), ROOT)
    for match in re.findall(r"\]\(([^)#]+)\)", markdown):
        assert (ROOT / "docs" / match).exists(), match


def _finding_of(harm: str, *, policy: str = "", outside: str = "", realism: str = "observed") -> Finding:
    return Finding(message="m", harm=harm, realism=realism, policy=policy, outside_target=outside)


@pytest.mark.parametrize(
    ("findings", "kind"),
    [
        ([_finding_of("ran_wrong")], "defect"),
        ([_finding_of("misidentified")], "defect"),
        ([_finding_of("stream_shape")], "deviation"),
        ([_finding_of("ran_wrong", policy="p")], "caller_decides"),
        ([_finding_of("lost", outside="no_index: typed int")], "outside_target"),
        ([_finding_of("lost", outside="o"), _finding_of("ran_wrong", policy="p")], "caller_decides"),
        ([_finding_of("lost", outside="o"), _finding_of("crashed")], "defect"),
        ([_finding_of("stream_shape"), _finding_of("crashed", outside="o")], "outside_target"),
        ([_finding_of("ran_wrong", realism="theoretical")], "theoretical"),
        ([_finding_of("ran_wrong", realism="theoretical"), _finding_of("lost")], "defect"),
        ([_finding_of("ran_wrong", realism="theoretical"), _finding_of("lost", outside="o")], "outside_target"),
        ([_finding_of("ran_wrong", realism="theoretical"), _finding_of("stream_shape")], "theoretical"),
    ],
)
def test_a_cell_is_a_defect_while_one_harmful_finding_is_observed_in_target_and_no_policy(
    findings: list[Finding], kind: str
) -> None:
    from conformance.matrix.runner import _kind

    assert _kind(findings) == kind


def test_a_finding_is_outside_target_only_for_a_shape_its_input_has() -> None:
    from conformance.matrix.runner import _finding
    from conformance.verdict import CheckResult
    from conformance.verdict.check import Counterexample
    from conformance.verdict.harm import Harm, HarmVerdict
    from conformance.wire.shapes import realism_of

    result = CheckResult(STACK_CHECKS[0])
    outside = {"no_index": "index is a required int"}

    def finding(*shapes: str) -> Finding:
        harm = HarmVerdict(Harm.CRASHED, "raised")
        counterexample = Counterexample("t", "the stack raised TypeError", harm=harm, realism=realism_of(shapes))
        return _finding(result, counterexample, "openai", {}, outside)

    assert finding("arguments_fragmented", "no_index").outside_target == "no_index: index is a required int"
    assert finding("arguments_fragmented", "null_continuation_fields").outside_target == ""


def test_every_adapter_declares_real_shapes_and_causes() -> None:
    from conformance.wire.may_run import WHY_NOT
    from conformance.wire.shapes import SHAPES

    for info in adapters():
        assert set(info.outside_target) <= set(SHAPES), f"{info.name}: unknown shapes"
        assert set(info.policies) <= set(WHY_NOT), f"{info.name}: unknown causes"
        assert all(why.strip() for why in [*info.outside_target.values(), *info.policies.values()]), info.name


def test_a_stack_finding_names_the_reproductions_of_the_recordings_it_failed_on() -> None:
    from conformance.matrix.reproductions import reproductions_for

    gemini = reproductions_for("vercel-ai-sdk", "stack_outcome_matches", "got 2", ["gemini/restated_call_same_id.yaml"])
    assert gemini == [
        "tests/test_bridge_repro_vercel.py::test_the_reproduction_still_reproduces[gemini_restated_call_executes_twice.mjs]"
    ]
    both = reproductions_for(
        "vercel-ai-sdk",
        "stack_outcome_matches",
        "got 0",
        ["anthropic/error_event_mid_call.yaml", "openai-responses/stream_cut_mid_call.yaml"],
    )
    assert [node.rsplit("[", 1)[1] for node in both] == [
        "anthropic_unclosed_tool_block_dropped.mjs]",
        "responses_unfinished_call_dropped.mjs]",
    ]


def test_a_cells_headline_harm_is_that_of_the_findings_that_make_its_kind() -> None:
    # openai: a cut stream left to the caller (ran_wrong, a policy) beside a crash on null fields (a
    # defect): the defect cell's harm is crashed, not the policy's ran_wrong.
    from conformance.matrix.runner import _cell
    from conformance.verdict import CheckResult
    from conformance.verdict.check import Counterexample
    from conformance.verdict.harm import Harm, HarmVerdict
    from conformance.wire.shapes import realism_of

    result = CheckResult(STACK_CHECKS[0])
    result.status = "failed"
    shapes = realism_of(["arguments_fragmented"])
    result.counterexamples = [
        Counterexample("a", "cut", harm=HarmVerdict(Harm.RAN_WRONG, "ran", "incomplete"), realism=shapes),
        Counterexample("b", "the stack raised AssertionError", harm=HarmVerdict(Harm.CRASHED, "x"), realism=shapes),
    ]
    cell = _cell(result, "openai", None, {"incomplete": "finish_reason None"})
    assert (cell.kind, cell.harm) == ("defect", "crashed")


# -- the standalone scripts the failing cells link --------------------------------------------------

# Runs a script the way a maintainer would, except that this project cannot be imported at all: a
# script that needed it would fail here, not on the maintainer's machine.
_CUT_OFF = (
    "import runpy, sys\n"
    "for name in ('conformance', 'reference_impl', 'tests'):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _run_script(path: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", _CUT_OFF, str(ROOT / path), *args],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT.parent,
    )  # fmt: skip


def test_every_defect_cell_of_a_python_library_links_a_standalone_script() -> None:
    matrix = published()
    for column in SCRIPTS:
        path, cells = SCRIPTS[column]
        assert (ROOT / path).is_file(), path
        defects = {row.check for row in matrix.rows if matrix.cells[row.check][column].kind == "defect"}
        assert defects <= cells, f"{column}: defect cells without a script: {sorted(defects - cells)}"
        for check in cells:
            cell = matrix.cells[check][column]
            assert cell.status == "fail", f"{column} / {check}: the script shows a cell that passes"
            assert cell.script == f"{path} {check}", f"{column} / {check}: the published cell does not link it"
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8")))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
        }
        assert not imported & {"conformance", "reference_impl", "tests", "pytest"}, f"{path}: imports {imported}"


@pytest.mark.parametrize("column", sorted(SCRIPTS))
def test_each_standalone_script_reproduces_its_cells_without_this_project(column: str) -> None:
    path, cells = SCRIPTS[column]
    library = {
        "langchain-core": "langchain_core",
        "pydantic-ai": "pydantic_ai",
        "openai-agents": "agents",
        "strands-agents": "strands",
        "haystack-ai": "haystack",
    }
    pytest.importorskip(library.get(column, column), reason=f"{column} is not installed (pip install '.[adapters]')")
    matrix = published()
    for check in sorted(cells):
        done = _run_script(path, check)
        # Exit 1 while a defect of the cell is there; a cell whose findings are not defects (a job the
        # library leaves to another layer) is shown but exits 0.
        expected = 1 if matrix.cells[check][column].kind == "defect" else 0
        assert done.returncode == expected, f"{path} {check}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert f"[{check}]" in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert _run_script(path, "no_such_cell").returncode == 2
