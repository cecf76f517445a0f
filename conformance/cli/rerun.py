"""``toolcall-conformance rerun``: saved counterexamples replayed exactly as saved, against the same target.

Without ``--handler`` / ``--accumulator`` the target is the one the files were saved from (they
record its spec, capabilities and adapter); with one, the files run against that target instead.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, EXIT_VIOLATIONS, UsageError
from conformance.cli.targets import add_capability_options, handler_target, resolve_target
from conformance.handler import TargetError, run_conformance
from conformance.handler.scenario_files import ScenarioFileError, load_scenarios, load_target
from conformance.report import render_terminal
from conformance.verdict import Profile

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``rerun`` subcommand and its options."""
    parser = commands.add_parser(
        "rerun",
        help="re-run saved counterexample scenarios (by default against the target they were saved from)",
        description=(
            "Replay saved scenario files (from run --save-failures) exactly as saved, with every check. Without "
            "--handler or --accumulator, against the target the files name."
        ),
    )
    parser.add_argument("paths", type=Path, nargs="+", metavar="FILE_OR_DIR")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--handler", metavar="MODULE:FACTORY", help="run the files against this handler instead")
    target.add_argument(
        "--accumulator", metavar="MODULE:FACTORY", help="run the files against this accumulator instead"
    )
    add_capability_options(parser)
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    """Re-run the saved scenarios; exit 0 when every check passes on them."""
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    try:
        scenarios = load_scenarios(args.paths)
        saved = load_target(args.paths)
    except ScenarioFileError as error:
        raise UsageError(str(error)) from error
    if not scenarios:
        raise UsageError(f"no scenario files (*.json) under {', '.join(map(str, args.paths))}")
    if saved is not None and saved.get("kind") == "bridge" and not (args.handler or args.accumulator):
        return _rerun_bridge(saved, scenarios, args)
    if args.handler or args.accumulator:
        kind = "handler" if args.handler else "accumulator"
        target = resolve_target(args.handler or args.accumulator, kind, args)
    elif saved is not None:
        target = handler_target(saved, deadline=args.deadline or None)
    else:
        target = resolve_target(None, "handler", args)
    logging.disable(logging.CRITICAL)
    try:
        # Exactly the saved chunks: no re-fragmentation, no generated streams.
        report = run_conformance(
            target.factory,
            capabilities=target.capabilities,
            profile=Profile("rerun", 0),
            scenarios=scenarios,
            adapter=target.adapter,
            target=target.spec,
            deadline=target.deadline,
        )
    except TargetError as error:
        raise UsageError(f"cannot run {target.spec}: {error}") from error
    finally:
        logging.disable(logging.NOTSET)
    print(f"re-running {len(scenarios)} saved scenario(s) against {target.command_line()}")
    print(render_terminal(report))
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS


def _rerun_bridge(saved: dict[str, Any], scenarios: list[Any], args: argparse.Namespace) -> int:
    """Saved from a ``--bridge`` run: start the same command again and replay exactly the files."""
    from conformance.bridge import run_bridge
    from conformance.bridge.process import DEFAULT_TIMEOUT

    command = saved.get("command")
    if not isinstance(command, str) or not command.strip():
        raise UsageError(f"the saved bridge target has no command to start: {saved!r}")
    try:
        timeout = args.deadline or DEFAULT_TIMEOUT
        report = run_bridge(command, profile=Profile("rerun", 0), scenarios=scenarios, timeout=timeout)
    except TargetError as error:
        raise UsageError(f"cannot run --bridge {command!r}: {error}") from error
    print(f"re-running {len(scenarios)} saved scenario(s) against --bridge {command!r}")
    print(render_terminal(report))
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS
