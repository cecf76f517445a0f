"""``toolcall-conformance rerun``: saved counterexamples replayed exactly as saved."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import reference_impl
from conformance.cli.common import (
    EXIT_CONFORMANT,
    EXIT_VIOLATIONS,
    UsageError,
    load_factory,
)
from conformance.handler import Capabilities, run_conformance
from conformance.report import render_terminal
from conformance.verdict import Profile

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``rerun`` subcommand and its options."""
    parser = commands.add_parser(
        "rerun",
        help="re-run saved counterexample scenarios against a handler",
        description="Replay saved scenario files (from run --save-failures) exactly as saved, with every check.",
    )
    parser.add_argument("paths", type=Path, nargs="+", metavar="FILE_OR_DIR")
    parser.add_argument("--handler", metavar="MODULE:FACTORY", help="default: the reference handler")
    parser.add_argument("--no-reasoning", action="store_true", help="the handler does not support chunk.reasoning")
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    from conformance.handler.scenario_files import ScenarioFileError, load_scenarios

    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    try:
        scenarios = load_scenarios(args.paths)
    except ScenarioFileError as error:
        raise UsageError(str(error)) from error
    if not scenarios:
        raise UsageError("no scenario files (*.json) found")
    factory = load_factory(args.handler) if args.handler else reference_impl.ApiToolCallStreamingResponseHandler
    logging.disable(logging.CRITICAL)
    try:
        # Exactly the saved chunks: no re-fragmentation, so the counterexample is what runs.
        report = run_conformance(
            factory,
            capabilities=Capabilities(reasoning=not args.no_reasoning),
            profile=Profile("rerun", 0),
            scenarios=scenarios,
            target=args.handler or "reference implementation",
        )
    finally:
        logging.disable(logging.NOTSET)
    print(render_terminal(report))
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS
