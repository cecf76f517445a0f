"""Run the suite against the reference and every installed adapter, and read the reports into a ``Matrix``.

Handler-level targets (the reference handler, adapters of kind ``handler`` or ``accumulator``) run
``conformance.run_conformance`` on the built-in and generated scenarios; converter-level targets
(the reference stack, adapters of kind ``stack``) run ``conformance.stack.run_stack_conformance``
on the bundled recordings. Same profile and seed for all, so a fixed profile and seed give the
same cells every time.
"""

from __future__ import annotations

import datetime
import logging
import os
import platform
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import reference_impl
from conformance.adapters import AdapterInfo, adapters
from conformance.handler import CHECKS, Capabilities, run_conformance
from conformance.matrix.model import CELL_KINDS, Cell, Column, Finding, Matrix, Row, finding_kind
from conformance.matrix.reference import (
    REFERENCE_CAPABILITIES,
    REFERENCE_STACK_CAPABILITIES,
    reference_handler,
    reference_stack,
)
from conformance.matrix.reproductions import SUITE_BUGS, reproductions_for, script_for
from conformance.stack import STACK_CHECKS, Stack, StackCapabilities, run_stack_conformance
from conformance.verdict import DEFAULT_COUNTEREXAMPLES, CheckResult, Counterexample, Harm, Report, worst
from conformance.wire import bundled_cassette_dir

__all__ = ["REFERENCE", "MatrixRun", "run_matrix"]

REFERENCE = "reference"

_HANDLER_ONLY = (
    "runs the stack checks on recordings and generated bodies (byte level), not the chunk-level handler checks"
)
_STACK_ONLY = "runs the chunk-level handler checks, not the stack checks on the recordings"


@dataclass
class MatrixRun:
    """A measured matrix, and the counterexample texts of its failing cells (by column, then check)."""

    matrix: Matrix
    counterexamples: dict[str, dict[str, str]] = field(default_factory=dict)
    skipped_columns: dict[str, str] = field(default_factory=dict)  # adapters not run: why
    keep: int | None = DEFAULT_COUNTEREXAMPLES  # distinct counterexamples kept per failing cell (None: all)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the libraries' logging and warnings: they run thousands of times."""
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(logging.NOTSET)


def _short(reason: str, requires: Sequence[str], capabilities: Capabilities | None) -> str:
    """The few words a skipped cell shows: the capabilities that excluded it, or what else did."""
    if capabilities is not None:
        missing = sorted(name for name in requires if not capabilities.has(name))
        if missing:
            return "no " + ", no ".join(name.replace("_", " ") for name in missing)
    if reason.startswith(("ran on no applicable input", "no recording")):
        return "no applicable input"
    return "not judged"


def _finding(
    result: CheckResult,
    counterexample: Counterexample,
    column: str,
    policies: Mapping[str, str],
    outside: Mapping[str, str],
) -> Finding:
    harm = counterexample.harm
    realism = counterexample.realism
    policy = policies.get(harm.cause, "") if harm is not None and harm.cause else ""
    # The input's shapes the library does not claim to read (its maintainers would close the report).
    untargeted = [f"{shape}: {outside[shape]}" for shape in (realism.shapes if realism else ()) if shape in outside]
    return Finding(
        message=counterexample.message,
        harm=harm.harm.value if harm is not None else "",
        harm_why=harm.why if harm is not None else "",
        realism=realism.level if realism is not None else "",
        realism_note=realism.describe() if realism is not None else "",
        reproductions=reproductions_for(column, result.check.id, counterexample.message, counterexample.recordings),
        policy=policy,
        outside_target="; ".join(untargeted),
    )


def _kind(findings: Sequence[Finding]) -> str:
    """A failing cell's kind: that of its gravest finding, in the order of ``CELL_KINDS`` (defect,
    caller_decides, outside_target, theoretical, deviation)."""
    return min((finding_kind(f) for f in findings), key=CELL_KINDS.index, default="deviation")


def _cell(
    result: CheckResult,
    column: str,
    capabilities: Capabilities | None,
    policies: Mapping[str, str] | None = None,
    outside: Mapping[str, str] | None = None,
) -> Cell:
    if result.status == "skipped":
        reason = result.skipped_reason
        return Cell("skip", reason=reason, short=_short(reason, sorted(result.check.requires), capabilities))
    if result.status == "passed":
        return Cell("pass", examples=result.examples_run)
    findings = [_finding(result, c, column, policies or {}, outside or {}) for c in result.counterexamples]
    kind = _kind(findings)
    # The headline harm is that of the findings that make the cell what it is: a defect cell does not
    # show the harm of a finding its library leaves to its caller.
    worst_harm = worst(Harm(f.harm) for f in findings if f.harm and finding_kind(f) == kind)
    return Cell(
        "fail",
        failing_scenarios=len(result.failing_scenarios) or 1,
        examples=result.examples_run,
        reason=result.message,
        counterexample=f"counterexamples/{column}/{result.check.id}.txt",
        reproductions=list(dict.fromkeys(node for f in findings for node in f.reproductions)),
        script=script_for(column, result.check.id),
        suite_bug=SUITE_BUGS.get((column, result.check.id), ""),
        kind=kind,
        harm=worst_harm.value if worst_harm is not None else "",
        findings=findings,
    )


def _counterexample_text(result: CheckResult, label: str, profile: str, seed: int) -> str:
    parts = [
        f"{result.check.id}: {result.check.title}",
        f"target: {label} (profile {profile}, seed {seed})",
        f"failing: {len(result.failing_scenarios)} scenarios ({', '.join(sorted(result.failing_scenarios))}), "
        f"{result.failing_examples} of {result.examples_run} runs",
        "",
    ]
    for number, counterexample in enumerate(result.counterexamples, 1):
        parts += [f"--- minimal counterexample {number}", counterexample.text, ""]
    # Recordings are named from the bundled corpus, not from wherever this checkout lives.
    return "\n".join(parts).replace(str(bundled_cassette_dir()) + os.sep, "cassettes/")


def _fill(
    run: MatrixRun,
    column: Column,
    report: Report,
    capabilities: Capabilities | None,
    suite: str,
    *,
    policies: Mapping[str, str] | None = None,
    outside: Mapping[str, str] | None = None,
) -> None:
    matrix = run.matrix
    column.seconds = round(report.seconds, 1)
    column.examples = report.examples
    column.notes += report.notes + ([report.stopped] if report.stopped else [])
    by_id = {result.check.id: result for result in report.results}
    for row in matrix.rows:
        if row.suite != suite:
            continue
        result = by_id.get(row.check)
        if result is None:
            continue  # excluded by the adapter: filled by the caller
        cell = _cell(result, column.name, capabilities, policies, outside)
        matrix.cells[row.check][column.name] = cell
        if cell.status == "fail":
            text = _counterexample_text(result, column.label, matrix.profile, matrix.seed)
            run.counterexamples.setdefault(column.name, {})[row.check] = text


def _not_applicable(matrix: Matrix, column: str, suite: str) -> None:
    reason = _HANDLER_ONLY if suite == "stack" else _STACK_ONLY
    for row in matrix.rows:
        if row.suite != suite:
            matrix.cells[row.check][column] = Cell("n/a", reason=reason, short="other suite")


def _run_reference(run: MatrixRun, progress: Callable[[str], None]) -> None:
    matrix = run.matrix
    column = Column(
        REFERENCE,
        "reference",
        {"toolcall-conformance": reference_impl.__version__},
        summary="reference_impl: ApiToolCallStreamingResponseHandler (handler checks), and the reference converters "
        "into it (stack checks)",
        factory="reference_impl:ApiToolCallStreamingResponseHandler",
    )
    matrix.columns.append(column)
    progress("reference handler")
    report = run_conformance(
        reference_handler,
        capabilities=REFERENCE_CAPABILITIES,
        profile=matrix.profile,
        seed=matrix.seed,
        target=column.label,
        keep_counterexamples=run.keep,
    )
    _fill(run, column, report, REFERENCE_CAPABILITIES, "handler")
    progress("reference stack")
    stack_report = run_stack_conformance(
        reference_stack,
        [bundled_cassette_dir()],
        capabilities=REFERENCE_STACK_CAPABILITIES,
        profile=matrix.profile,
        seed=matrix.seed,
        target=column.label,
    )
    _fill(run, column, stack_report, None, "stack")
    column.seconds = round(report.seconds + stack_report.seconds, 1)
    column.examples = report.examples + stack_report.examples


@contextmanager
def _opened_stack(info: AdapterInfo) -> Iterator[Stack]:
    """The adapter's stack. A Node library's factory returns a running target (``.stack``, ``.capabilities``,
    ``close()``): its process is closed when the run ends, however it ends, and what it declares in its
    hello must be what its ``AdapterInfo`` declares (the column shows the latter)."""
    made = info.load()()
    if info.node is None:
        yield made
        return
    try:
        if made.capabilities != info.capabilities:
            raise ValueError(
                f"{info.name}: the target declares {made.capabilities}, its AdapterInfo {info.capabilities}"
            )
        yield made.stack
    finally:
        made.close()


def _run_adapter(run: MatrixRun, info: AdapterInfo) -> None:
    matrix = run.matrix
    for key, value in info.environment.items():
        os.environ.setdefault(key, value)
    capabilities = info.capabilities
    column = Column(
        info.name,
        info.kind,
        info.versions,
        summary=info.summary,
        factory=info.factory,
        capabilities=capabilities.declared() if isinstance(capabilities, Capabilities) else dict(vars(capabilities)),
    )
    matrix.columns.append(column)
    if isinstance(capabilities, StackCapabilities):
        with _opened_stack(info) as stack:
            report = run_stack_conformance(
                stack,
                [bundled_cassette_dir()],
                capabilities=capabilities,
                profile=matrix.profile,
                seed=matrix.seed,
                target=info.label,
                excluded=info.recordings_excluded,
            )
        _fill(run, column, report, None, "stack", policies=info.policies, outside=info.outside_target)
        _not_applicable(matrix, info.name, "stack")
        return
    report = run_conformance(
        info.load(),
        capabilities=capabilities,
        profile=matrix.profile,
        seed=matrix.seed,
        target=info.label,
        checks=[check for check in CHECKS if check.id not in info.excluded],
        keep_counterexamples=run.keep,
    )
    _fill(run, column, report, capabilities, "handler", policies=info.policies, outside=info.outside_target)
    for check, why in info.excluded.items():
        matrix.cells[check][info.name] = Cell("skip", reason=f"not judged by the adapter: {why}", short="adapter")
    _not_applicable(matrix, info.name, "handler")


def run_matrix(
    *,
    profile: str = "ci",
    seed: int = 0,
    only: Sequence[str] | None = None,
    reference: bool = True,
    keep_counterexamples: int | None = DEFAULT_COUNTEREXAMPLES,
    on_progress: Callable[[str], None] | None = None,
) -> MatrixRun:
    """Measure the matrix: the reference (unless ``reference`` is False) and every installed adapter
    (``only``: just these names; an unknown name is a ``KeyError``), keeping up to
    ``keep_counterexamples`` distinct minimal counterexamples per failing cell (None: all)."""
    known = adapters()
    if only:
        unknown = sorted(set(only) - {info.name for info in known})
        if unknown:
            raise KeyError(f"unknown adapter {', '.join(unknown)}; known: {', '.join(i.name for i in known)}")
        known = tuple(info for info in known if info.name in only)
    python = f"{platform.python_implementation()} {platform.python_version()}"
    matrix = Matrix(
        profile=profile,
        seed=seed,
        measured=datetime.datetime.now(datetime.UTC).date().isoformat(),
        suite_version=reference_impl.__version__,
        python=python,
        rows=[Row(c.id, c.title, "handler", c.rule) for c in CHECKS]
        + [Row(c.id, c.title, "stack", c.rule) for c in STACK_CHECKS],
    )
    matrix.cells = {row.check: {} for row in matrix.rows}
    run = MatrixRun(matrix, keep=keep_counterexamples)
    progress = on_progress or (lambda _step: None)
    with _quiet():
        if reference:
            _run_reference(run, progress)
        for info in known:
            missing = info.missing()
            if missing:
                run.skipped_columns[info.name] = info.install_hint(missing)
                continue
            progress(info.label)
            _run_adapter(run, info)
    return run
