"""``toolcall-conformance rerun``: saved counterexamples replayed exactly as saved.

The files record the target they were saved from (its spec, capabilities, adapter, or a bridge's
command), but that record is data: a saved-failures folder from a pull request or an issue
attachment could name any module or shell command. So ``rerun`` runs only a target named on its
own command line (``--handler``, ``--accumulator``, ``--bridge``); the saved one is shown, and
used only with an explicit ``--use-saved-target``. Files that name no target run against the
reference.
"""

from __future__ import annotations

import argparse
import logging
import shlex
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, EXIT_VIOLATIONS, UsageError, refuse_blank_targets
from conformance.cli.targets import HandlerTarget, add_capability_options, handler_target, resolve_target
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
            "Replay saved scenario files (from run --save-failures) exactly as saved, with every check, against "
            "the target named here. The target the files were saved from is shown, and started only with "
            "--use-saved-target (the files are data: they may come from someone else)."
        ),
    )
    parser.add_argument("paths", type=Path, nargs="+", metavar="FILE_OR_DIR")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--handler", metavar="MODULE:FACTORY", help="run the files against this handler instead")
    target.add_argument(
        "--accumulator", metavar="MODULE:FACTORY", help="run the files against this accumulator instead"
    )
    target.add_argument("--bridge", metavar="COMMAND", help="run the files against this bridge command instead")
    target.add_argument(
        "--use-saved-target",
        action="store_true",
        help="run the files against the target they name (imports its module or starts its command: only for "
        "files you trust)",
    )
    add_capability_options(parser)
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    """Re-run the saved scenarios; exit 0 when every check passes on them."""
    refuse_blank_targets(args, ("handler", "accumulator", "bridge"))
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
    target = _chosen_target(args, saved)
    if isinstance(target, str):
        return _rerun_bridge(target, scenarios, args)
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


def _chosen_target(args: argparse.Namespace, saved: dict[str, Any] | None) -> HandlerTarget | str:
    """The target named on the command line (a bridge as its command); the saved one only when asked."""
    if args.bridge is not None:
        return str(args.bridge)
    if args.handler is not None or args.accumulator is not None:
        kind = "handler" if args.handler is not None else "accumulator"
        return resolve_target(args.handler or args.accumulator, kind, args)
    if saved is None:
        return resolve_target(None, "handler", args)
    if not args.use_saved_target:
        raise UsageError(
            f"these files were saved from {_saved_command_line(saved)}; name the target to run them against "
            "(--handler, --accumulator or --bridge), or add --use-saved-target to import or start that one "
            "(only for files you trust: the name comes from the files)"
        )
    if saved.get("kind") == "bridge":
        command = saved.get("command")
        if not isinstance(command, str) or not command.strip():
            raise UsageError(f"the saved bridge target has no command to start: {saved!r}")
        return command
    return handler_target(saved, deadline=args.deadline or None)


def _saved_command_line(saved: dict[str, Any]) -> str:
    """The saved target as the option that names it (shown, never run, without --use-saved-target)."""
    if saved.get("kind") == "bridge":
        return f"--bridge {shlex.quote(str(saved.get('command') or ''))}"
    return f"--{saved.get('kind') or 'handler'} {saved.get('spec')!r}"


def _rerun_bridge(command: str, scenarios: list[Any], args: argparse.Namespace) -> int:
    """Start a bridge command and replay exactly the files."""
    from conformance.bridge import run_bridge
    from conformance.bridge.process import DEFAULT_TIMEOUT

    try:
        timeout = args.deadline or DEFAULT_TIMEOUT
        report = run_bridge(command, profile=Profile("rerun", 0), scenarios=scenarios, timeout=timeout)
    except TargetError as error:
        raise UsageError(f"cannot run --bridge {command!r}: {error}") from error
    print(f"re-running {len(scenarios)} saved scenario(s) against --bridge {command!r}")
    print(render_terminal(report))
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS
