"""``toolcall-conformance repro SAVED_FAILURE --client openai|anthropic``: a standalone reproduction script.

The script (``conformance.stack.repro``) imports only the SDK (and, with ``--call``, the user's
module), embeds the saved body and what the stream says, and exits 1 while the defect is there, 0
once it is fixed. ``SAVED_FAILURE`` is a body written by ``run --stack ... --save-failures DIR``
(or any recording with ``<name>.expected.json`` beside it).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, UsageError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``repro`` subcommand and its options."""
    from conformance.stack.repro import CLIENTS

    parser = commands.add_parser(
        "repro",
        help="write a standalone script reproducing a saved failing recording with the SDK alone",
        description=(
            "Write a Python script that imports only the SDK (never this suite), embeds the saved body, serves it "
            "through the SDK's own HTTP client offline, runs the library under test (the SDK's own stream helper, "
            "or --call MODULE:FUNCTION), prints what it returned and what the stream says, and exits 1 while the "
            "defect is there, 0 once it is fixed."
        ),
        epilog="Exit codes: 0 the script was written, 2 the saved failure cannot be reproduced this way.",
    )
    parser.add_argument(
        "saved_failure",
        type=Path,
        metavar="SAVED_FAILURE",
        help="a body saved by run --save-failures (<name>.sse with <name>.expected.json beside it)",
    )
    parser.add_argument(
        "--client",
        required=True,
        choices=sorted(CLIENTS),
        help="the SDK: openai (Chat Completions and Responses bodies) or anthropic (Messages bodies)",
    )
    parser.add_argument(
        "--call",
        metavar="MODULE:FUNCTION",
        help="the library under test: a function f(client) -> result (calls with arguments only when it would run "
        "them, text, error; docs/stacks.md); default: the SDK's own stream helper",
    )
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the script here (default: stdout)")
    parser.set_defaults(command_main=run)


def _installed(distribution: str) -> str:
    """The installed version of the SDK, for the script's install hint ("" when it is not installed)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def run(args: argparse.Namespace) -> int:
    """Write the reproduction script; a saved failure that cannot be read or reproduced is exit 2."""
    from conformance.stack import load_saved_failure
    from conformance.stack.repro import ReproError, reproduction_script
    from conformance.wire import WireFormatError

    try:
        saved = load_saved_failure(args.saved_failure)
        script = reproduction_script(saved, client=args.client, call=args.call, sdk_version=_installed(args.client))
    except (WireFormatError, ReproError) as error:
        raise UsageError(str(error)) from error
    if args.out is None:
        sys.stdout.write(script)
        return EXIT_CONFORMANT
    if args.out.is_dir():
        raise UsageError(f"--out {args.out}: is a directory; give a file path")
    try:
        args.out.write_text(script, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--out {args.out}: cannot be written: {error.strerror or error}") from error
    print(f"wrote {args.out}: run it with `python {args.out}` (exit 1: the defect is there, 0: fixed)")
    return EXIT_CONFORMANT
