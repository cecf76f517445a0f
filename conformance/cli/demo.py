"""``toolcall-conformance demo``: the offline multi-turn agent demo."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conformance.cli.common import (
    UsageError,
)
from conformance.wire import SDK_APIS, bundled_cassette_dir

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``demo`` subcommand and its options."""
    parser = commands.add_parser(
        "demo",
        help="the offline multi-turn agent demo: tools called, results sent back, final answer",
        description=(
            "Run the reference agent against the bundled multi-turn cassettes through the real SDKs, offline: "
            "the tool calls detected, the results the next request sent back, and the final answer."
        ),
    )
    parser.add_argument("--api", choices=SDK_APIS, help="only this wire API (default: all four SDK APIs)")
    parser.add_argument("--chunk-bytes", type=int, metavar="N", help="serve each response body in pieces of N bytes")
    parser.add_argument(
        "--cassette-dir", type=Path, metavar="DIR", help="multi-turn cassettes to run (default: the bundled ones)"
    )
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    """The offline multi-turn demo (``reference_impl.demo.run_demo``) on the bundled or given cassettes."""
    from reference_impl.demo import load_multiturn_cassette, multiturn_cassette_paths, run_demo

    if args.chunk_bytes is not None and args.chunk_bytes < 1:
        raise UsageError("--chunk-bytes must be a positive size")
    if args.cassette_dir is not None and not args.cassette_dir.is_dir():
        raise UsageError(f"--cassette-dir {args.cassette_dir}: no such directory")
    # Cassettes live in <dir>/<api>/<name>.yaml; run_demo filters the same way.
    directory = args.cassette_dir or bundled_cassette_dir() / "multiturn"
    paths = [p for p in multiturn_cassette_paths(directory) if args.api is None or p.parent.name == args.api]
    if not paths:
        where = args.cassette_dir or "the bundled cassettes"
        raise UsageError(f"no multi-turn cassettes{' for ' + args.api if args.api else ''} under {where}")
    for path in paths:  # a folder holding something other than multi-turn cassettes is a usage error
        try:
            load_multiturn_cassette(path)
        except Exception as error:  # YAML errors, missing keys, not a multi-turn cassette
            detail = str(error) if str(path) in str(error) else f"{path}: {type(error).__name__}: {error}"
            raise UsageError(f"cannot run the demo: {detail}") from error
    return run_demo(directory, args.api, chunk_bytes=args.chunk_bytes)
