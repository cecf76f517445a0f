"""``toolcall-conformance matrix``: the suite against the reference and every installed adapter, as one table.

Writes ``matrix.json``, ``index.html`` (one static page), the counterexample files and a Markdown
table. With ``--expect`` it compares the measured cells with a published ``matrix.json`` and exits 1
when any differs (what ``.ci/run`` does with the pinned library versions).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_VIOLATIONS, UsageError
from conformance.verdict import DEFAULT_COUNTEREXAMPLES, PROFILES

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``matrix`` subcommand and its options."""
    parser = commands.add_parser(
        "matrix",
        help="run the suite against the reference and every installed adapter; write the conformance matrix",
        description=(
            "Run the suite against the reference implementation and every adapter whose library is installed "
            "(conformance.adapters; pip install 'toolcall-conformance[adapters]'), with one profile and seed, and "
            "write matrix.json, a Markdown table and a static HTML page (rows: checks; columns: implementations "
            "with their versions; failing cells link their minimal counterexample and direct reproduction)."
        ),
        epilog="Exit codes: 0 written (and, with --expect, every published cell reproduced), 1 a published cell "
        "changed, 2 the matrix could not be measured or written, 130 interrupted.",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="ci", help="how hard to search (default: ci)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed; the same seed gives the same cells")
    parser.add_argument(
        "--out", type=Path, default=Path("toolcall-matrix"), metavar="DIR", help="where to write (default: %(default)s)"
    )
    parser.add_argument(
        "--markdown", type=Path, metavar="PATH", help="write the Markdown table here (default: DIR/matrix.md)"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="run only this adapter (repeatable)"
    )
    parser.add_argument("--no-reference", action="store_true", help="leave the reference implementation out")
    parser.add_argument(
        "--all-counterexamples",
        action="store_true",
        help=f"write every distinct failure of a cell (default: the first {DEFAULT_COUNTEREXAMPLES})",
    )
    parser.add_argument(
        "--expect",
        type=Path,
        metavar="MATRIX_JSON",
        help="compare the measured cells with this published matrix.json; exit 1 if any differs",
    )
    parser.set_defaults(command_main=run)


def _published(path: Path | None) -> Any:
    from conformance.matrix import Matrix

    if path is None:
        return None
    try:
        return Matrix.from_json(json.loads(path.read_text(encoding="utf-8")))
    except OSError as error:
        raise UsageError(f"--expect {path}: cannot read it: {error.strerror or error}") from error
    except ValueError as error:
        raise UsageError(f"--expect {path}: {error}") from error


def _writable(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--out {out}: cannot create it: {error.strerror or error}") from error


def _progress(step: str) -> None:
    print(f"  running {step} ...", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Measure the matrix, write its outputs, and compare with ``--expect`` when given."""
    from conformance.adapters import adapters
    from conformance.matrix import cell_differences, run_matrix
    from conformance.matrix.render import write_outputs

    known = {info.name for info in adapters()}
    unknown = sorted(set(args.only) - known)
    if unknown:
        raise UsageError(f"--only {', '.join(unknown)}: unknown adapter; known: {', '.join(sorted(known))}")
    published = _published(args.expect)
    _writable(args.out)
    started = time.perf_counter()
    try:
        measured = run_matrix(
            profile=args.profile,
            seed=args.seed,
            only=args.only or None,
            reference=not args.no_reference,
            keep_counterexamples=None if args.all_counterexamples else DEFAULT_COUNTEREXAMPLES,
            on_progress=_progress,
        )
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C): nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    paths = write_outputs(measured, args.out, args.markdown)
    matrix = measured.matrix
    for name, why in measured.skipped_columns.items():
        print(f"  {name}: {why}")
    for column in matrix.columns:
        failing = sum(
            1
            for row in matrix.rows
            if matrix.cells[row.check].get(column.name, None) and matrix.cells[row.check][column.name].status == "fail"
        )
        print(f"  {column.label:32} {failing} failing checks ({column.examples} runs, {column.seconds} s)")
    unconfirmed = [
        f"{column.name} / {row.check}"
        for column in matrix.columns
        for row in matrix.rows
        if (cell := matrix.cells[row.check].get(column.name)) is not None
        and cell.status == "fail"
        and not cell.reproductions
        and not cell.suite_bug
    ]
    if unconfirmed:
        print("failing cells without a direct reproduction (unconfirmed): " + ", ".join(unconfirmed))
    print(f"wrote {paths[0]}, {paths[1]}, {paths[2]} ({time.perf_counter() - started:.0f} s)")
    if published is None:
        return EXIT_CONFORMANT
    differences = cell_differences(published, matrix)
    if differences:
        print(f"{len(differences)} published cells changed (compared with {args.expect}):")
        for difference in differences:
            print(f"  {difference}")
        return EXIT_VIOLATIONS
    print(f"every published cell of {args.expect} reproduced")
    return EXIT_CONFORMANT
