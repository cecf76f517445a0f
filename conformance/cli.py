"""The ``toolcall-conformance`` command line.

Exit codes (documented in the README):
  0  conformant (every applicable check passed)
  1  the target violates at least one check
  2  usage error (bad arguments, unimportable or unusable factory)
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import reference_impl
from conformance.checks import Capabilities
from conformance.report import render_terminal, write_json, write_junit
from conformance.runner import PROFILES, run_conformance

EXIT_CONFORMANT = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A command-line problem the user can fix; printed without a traceback, exit code 2."""


def load_factory(spec: str) -> Callable[..., Any]:
    """Import ``MODULE:ATTRIBUTE`` and return the callable it names."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"--handler must look like MODULE:FACTORY (e.g. mypkg.handlers:make_handler), got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import module {module_name!r} from --handler {spec!r}: {error}") from error
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise UsageError(
                f"module {module_name!r} has no attribute {attribute!r} (from --handler {spec!r})"
            ) from error
    if not callable(target):
        raise UsageError(f"{spec!r} names a {type(target).__name__}, not a callable handler factory")
    return target  # type: ignore[no-any-return]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcall-conformance",
        description="Conformance suite for streaming LLM tool-call handlers and converters.",
        epilog="Exit codes: 0 conformant, 1 violations found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {reference_impl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run the conformance checks (default target: the reference implementation)",
        description="Run every contract check against a handler, on built-in scenarios re-fragmented by hypothesis.",
    )
    run.add_argument("--handler", metavar="MODULE:FACTORY", help="a callable returning a fresh seed-shaped handler")
    run.add_argument("--profile", choices=sorted(PROFILES), default="ci", help="how hard to search (default: ci)")
    run.add_argument("--seed", type=int, default=0, help="hypothesis seed; the same seed reproduces a run")
    run.add_argument("--no-reasoning", action="store_true", help="the handler does not support chunk.reasoning")
    run.add_argument("--no-stream-errors", action="store_true", help="the handler ignores ChunkResponse.error")
    run.add_argument(
        "--show-handler-logs",
        action="store_true",
        help="let the handler's own log records through (silenced by default: it runs thousands of times)",
    )
    run.add_argument("--report-json", type=Path, metavar="PATH", help="write the JSON report here")
    run.add_argument("--junit-xml", type=Path, metavar="PATH", help="write a JUnit XML report here")
    return parser


def _cmd_run(args: argparse.Namespace) -> int:
    if args.handler:
        factory = load_factory(args.handler)
        target = args.handler
    else:
        factory = reference_impl.ApiToolCallStreamingResponseHandler
        target = "reference_impl.ApiToolCallStreamingResponseHandler (reference implementation)"
    capabilities = Capabilities(reasoning=not args.no_reasoning, stream_errors=not args.no_stream_errors)
    if not args.show_handler_logs:
        logging.disable(logging.CRITICAL)
    try:
        report = run_conformance(
            factory, capabilities=capabilities, profile=args.profile, seed=args.seed, target=target
        )
    finally:
        logging.disable(logging.NOTSET)
    print(render_terminal(report))
    if args.report_json:
        write_json(report, args.report_json)
    if args.junit_xml:
        write_junit(report, args.junit_xml)
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolcall-conformance`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "run":
            return _cmd_run(args)
    except UsageError as error:
        print(f"toolcall-conformance: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


if __name__ == "__main__":
    sys.exit(main())
