"""The conformance matrix: rows are checks, columns are implementations, each cell one verdict.

A cell is ``pass``, ``fail``, ``skip`` (with the capability or declaration that excluded it) or
``n/a`` (the check belongs to the other kind of suite: handler checks judge chunk-level targets,
stack checks byte-level ones). A failing cell lists its findings (one check plus one minimal
input shape: its harm, its realism, its direct reproductions) and is of one kind:

* ``defect``: a finding of harm ``misidentified`` or worse (what runs, or what the follow-up says,
  is wrong), not covered by a policy the library documents;
* ``caller_decides``: every such finding is a policy the library documents as its caller's
  (running calls of a truncated turn, where it exposes the stop reason: ``AdapterInfo.policies``);
* ``outside_target``: every such finding's input has a shape the library does not claim to read,
  with the evidence (``AdapterInfo.outside_target``: e.g. tool deltas without ``index`` for the
  OpenAI SDK, whose maintainers closed that report for a compatible server): shown, never a defect;
* ``theoretical``: every such finding's input has a shape no server has been seen sending (its
  realism is ``theoretical``): shown with what would happen, never published as a defect;
* ``deviation``: ``stream_shape`` findings only (what runs is right; the event stream differs).

What ``.ci/run`` compares between two measurements is ``Cell.key``: the status, the kind, the worst
harm and the number of findings, nothing that varies from run to run (counterexample texts may
carry generated ids).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from conformance.verdict.harm import Harm, at_least

__all__ = [
    "CELL_KINDS",
    "MATRIX_SCHEMA",
    "Cell",
    "Column",
    "Finding",
    "Matrix",
    "Row",
    "cell_differences",
    "finding_kind",
]

MATRIX_SCHEMA = 2

CellStatus = Literal["pass", "fail", "skip", "n/a"]
CELL_KINDS = ("defect", "caller_decides", "outside_target", "theoretical", "deviation")


@dataclass
class Finding:
    """One finding of a failing cell: a minimal counterexample, what it does to the user, how real its
    input is, and the tests that show it on the library alone."""

    message: str
    harm: str  # a ``conformance.verdict.Harm`` value ("" when not classified)
    harm_why: str = ""
    realism: str = ""  # observed | theoretical
    realism_note: str = ""
    reproductions: list[str] = field(default_factory=list)
    policy: str = ""  # the library's documented policy that covers it (a caller_decides finding)
    outside_target: str = ""  # the shape of its input the library does not claim to read, and why

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value not in ("", [])}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(**data)


# Findings at least this harmful make a cell a defect (unless a policy, the target or realism says why not).
DEFECT_HARM = Harm.MISIDENTIFIED


def finding_kind(finding: Finding) -> str:
    """The kind of cell this finding alone would make (one of ``CELL_KINDS``)."""
    if finding.harm and not at_least(Harm(finding.harm), DEFECT_HARM):
        return "deviation"
    if finding.policy:
        return "caller_decides"
    if finding.outside_target:
        return "outside_target"
    return "theoretical" if finding.realism == "theoretical" else "defect"


@dataclass
class Cell:
    """One check's verdict for one implementation."""

    status: CellStatus
    failing_scenarios: int = 0
    examples: int = 0
    reason: str = ""  # skip / n/a: the full reason; fail: the first violation
    short: str = ""  # skip: the capabilities (or declaration) that excluded it, in a few words
    counterexample: str = ""  # fail: path of the counterexample file, relative to the matrix folder
    reproductions: list[str] = field(default_factory=list)  # fail: every test behind its findings
    # fail: the standalone script that reproduces it without this project ("docs/matrix/repro/x.py CHECK")
    script: str = ""
    suite_bug: str = ""  # fail: why this failure is suspected to be the suite's, not the library's
    kind: str = ""  # fail: one of CELL_KINDS
    harm: str = ""  # fail: the worst harm of its findings
    findings: list[Finding] = field(default_factory=list)  # fail: one per distinct failure, smallest input

    @property
    def key(self) -> str:
        """What a re-measurement must reproduce exactly: ``pass``, ``skip``, ``n/a``, or for a failing cell
        its kind, worst harm and number of findings (``fail defect ran_wrong 2``)."""
        if self.status != "fail":
            return self.status
        return f"fail {self.kind} {self.harm or 'unclassified'} {len(self.findings)}"

    def to_json(self) -> dict[str, Any]:
        data = {
            key: value
            for key, value in asdict(self).items()
            if key != "findings" and (value not in ("", [], 0) or key == "status")
        }
        if self.findings:
            data["findings"] = [finding.to_json() for finding in self.findings]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cell:
        values = dict(data)
        findings = [Finding.from_json(item) for item in values.pop("findings", [])]
        return cls(**values, findings=findings)


@dataclass
class Column:
    """One implementation: its name, how it was run, and the exact versions it ran against."""

    name: str
    kind: str  # reference | handler | accumulator | stack
    versions: dict[str, str]
    summary: str = ""
    factory: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    examples: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The column heading: the name and the library's exact version."""
        version = self.versions.get(next(iter(self.versions), ""), "")
        return f"{self.name} {version}".strip()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Column:
        return cls(**data)


@dataclass
class Row:
    """One check: its id, title, the suite it belongs to and the contract rule it enforces."""

    check: str
    title: str
    suite: str  # handler | stack
    rule: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Matrix:
    """Every implementation's verdict on every check, with what was measured and when."""

    profile: str
    seed: int
    measured: str  # ISO date (UTC) of the measurement
    suite_version: str
    python: str
    rows: list[Row] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)  # check id -> column name -> cell

    def cell(self, check: str, column: str) -> Cell:
        return self.cells[check][column]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": MATRIX_SCHEMA,
            "profile": self.profile,
            "seed": self.seed,
            "measured": self.measured,
            "suite_version": self.suite_version,
            "python": self.python,
            "rows": [row.to_json() for row in self.rows],
            "columns": [column.to_json() for column in self.columns],
            "cells": {
                check: {name: cell.to_json() for name, cell in by_column.items()}
                for check, by_column in self.cells.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Matrix:
        """Read a ``matrix.json``; ``ValueError`` says what is wrong with it."""
        if not isinstance(data, dict) or data.get("schema") != MATRIX_SCHEMA:
            raise ValueError(f"not a matrix.json of schema {MATRIX_SCHEMA}")
        try:
            return cls(
                profile=data["profile"],
                seed=data["seed"],
                measured=data["measured"],
                suite_version=data["suite_version"],
                python=data["python"],
                rows=[Row(**row) for row in data["rows"]],
                columns=[Column.from_json(column) for column in data["columns"]],
                cells={
                    check: {name: Cell.from_json(cell) for name, cell in by_column.items()}
                    for check, by_column in data["cells"].items()
                },
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"malformed matrix.json: {type(error).__name__}: {error}") from error


def cell_differences(published: Matrix, measured: Matrix) -> list[str]:
    """Every published cell the new measurement does not reproduce, and every version that differs.

    Columns absent from the new measurement (their library is not installed) are reported too:
    a CI run is meant to measure every published column.
    """
    problems = []
    measured_columns = {column.name: column for column in measured.columns}
    for column in published.columns:
        now = measured_columns.get(column.name)
        if now is None:
            problems.append(f"{column.name}: not measured (is its library installed?)")
            continue
        if now.versions != column.versions:
            problems.append(f"{column.name}: measured with {now.versions}, published with {column.versions}")
        for row in published.rows:
            before = published.cells.get(row.check, {}).get(column.name)
            after = measured.cells.get(row.check, {}).get(column.name)
            if before is None:
                continue
            if after is None:
                problems.append(f"{column.name} / {row.check}: published {before.key}, not measured")
            elif after.key != before.key:
                problems.append(f"{column.name} / {row.check}: published {before.key}, measured {after.key}")
    for name in measured_columns.keys() - {column.name for column in published.columns}:
        problems.append(f"{name}: measured but not published")
    return problems
