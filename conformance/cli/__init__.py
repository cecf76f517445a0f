"""The ``toolcall-conformance`` command line: one module per subcommand, each with ``add_parser`` and ``run``.

Exit codes: 0 conformant, 1 violations found, 2 the suite could not run (see ``conformance.cli.common``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import reference_impl
from conformance.cli import cassettes, demo, matrix, record, replay, repro, rerun
from conformance.cli import run as run_command
from conformance.cli.common import EXIT_USAGE, UsageError, load_factory, load_formatter
from conformance.cli.targets import load_adapter

__all__ = ["UsageError", "load_adapter", "load_factory", "load_formatter", "main"]

_COMMANDS = (run_command, replay, rerun, repro, record, cassettes, demo, matrix)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="toolcall-conformance",
        description=(
            "Conformance suite for streaming LLM tool-call handlers, converters, round-trip formatters and whole "
            "provider stacks."
        ),
        epilog="Exit codes: 0 conformant, 1 violations found, 2 the suite could not run.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {reference_impl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolcall-conformance`` console script."""
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(given)
    args.argv = given  # what was typed, for the re-run line of the reports
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        code: int = args.command_main(args)
    except UsageError as error:
        print(f"toolcall-conformance: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    sys.exit(main())
