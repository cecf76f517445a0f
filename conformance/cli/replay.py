"""``toolcall-conformance replay``: a recorded stream through SDK, converter and reference handler."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from conformance.cli.common import (
    UsageError,
)
from conformance.wire import WIRE_APIS

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``replay`` subcommand and its options."""
    parser = commands.add_parser(
        "replay",
        help="parser a recorded stream through converter and reference handler",
        description=(
            "Read a vcrpy cassette, a raw SSE body, JSON lines or a Gemini JSON array; print the normalised "
            "deltas, the segments and the final tool calls."
        ),
    )
    parser.add_argument("path", type=Path)
    parser.add_argument("--format", choices=WIRE_APIS, help="the wire API (detected when unambiguous)")
    parser.add_argument(
        "--via-sdk", action="store_true", help="go through the SDK's own HTTP client and SSE decoder (offline)"
    )
    parser.add_argument(
        "--chunk-bytes", type=int, metavar="N", help="with --via-sdk, serve the body in pieces of N bytes"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (schema in docs/replay-schema.md)")
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    from conformance.wire import WireFormatError, load_body
    from conformance.wire.replay import replay_body

    if args.chunk_bytes is not None and (args.chunk_bytes < 1 or not args.via_sdk):
        raise UsageError("--chunk-bytes needs --via-sdk and a positive size")
    try:
        body = load_body(args.path, args.format)
    except WireFormatError as error:
        raise UsageError(str(error)) from error
    pieces = None
    if args.chunk_bytes:
        pieces = [body.sse[i : i + args.chunk_bytes] for i in range(0, len(body.sse), args.chunk_bytes)]
    result = replay_body(body, pieces, via_sdk=args.via_sdk)
    if args.json:
        print(json.dumps(result.outcome.to_json(), ensure_ascii=False, indent=2))
        return 0
    from conformance.handler.fragment import describe_chunks

    print(f"format: {body.api}   source: {body.source}")
    print(f"\n{len(result.chunks)} chunks:")
    for chunk in result.chunks:
        print("  " + describe_chunks([chunk]))
    print(f"\n{len(result.events)} segment events:")
    from conformance.handler.observe import observe_event

    for event in result.events:
        print("  " + observe_event(event).describe())
    print("\ntool calls:")
    for position, call in enumerate(result.outcome.tool_calls):
        verdict = json.dumps(call.arguments, ensure_ascii=False) if call.arguments is not None else "REJECTED"
        print(f"  [{position}] {call.name} id={call.call_id!r} -> {verdict}")
    if not result.outcome.tool_calls:
        print("  (none)")
    if result.unknown_events:
        print(f"\nskipped unknown event types: {result.unknown_events}")
    print(f"finish_reason: {result.outcome.finish_reason!r}   error: {result.outcome.error!r}")
    return 0
