"""``toolcall-conformance cassettes check``: cassette hygiene (schema, decode, expectation, secrets)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, EXIT_VIOLATIONS, UsageError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``cassettes`` subcommand and its options."""
    parser = commands.add_parser("cassettes", help="work with cassette files")
    cassette_commands = parser.add_subparsers(dest="cassettes_command", metavar="SUBCOMMAND", required=True)
    check = cassette_commands.add_parser(
        "check",
        help="validate cassettes: schema, body decodes, expectation present, no secrets",
        description=(
            "Exit 1 naming file and line for every problem; exit 2 when a path is missing or holds no file. "
            "Usable as a pre-commit hook."
        ),
    )
    check.add_argument("paths", type=Path, nargs="+")
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    from conformance.corpus.hygiene import NothingToCheckError, cassette_files, check_cassettes, is_recording

    try:
        files = cassette_files(args.paths)
    except NothingToCheckError as error:
        raise UsageError(str(error)) from None
    findings = check_cassettes(args.paths)
    for finding in findings:
        print(finding, file=sys.stderr)
    if findings:
        print(f"{len(findings)} problem(s) found", file=sys.stderr)
        return EXIT_VIOLATIONS
    recordings = sum(1 for path in files if is_recording(path))
    print(
        f"cassettes check: {', '.join(str(p) for p in args.paths)}: clean "
        f"({recordings} recording(s), {len(files) - recordings} other file(s) scanned for secrets)"
    )
    return EXIT_CONFORMANT
