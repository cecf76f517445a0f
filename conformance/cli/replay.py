"""``toolcall-conformance replay``: a recorded stream through SDK, converter and reference handler."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, UsageError
from conformance.wire import WIRE_APIS

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``replay`` subcommand and its options."""
    parser = commands.add_parser(
        "replay",
        help="replay a recorded stream through SDK, converter and reference handler",
        description=(
            "Read a vcrpy cassette, a raw body (SSE, Ollama NDJSON, a Bedrock AWS event stream), JSON lines or a "
            "Gemini JSON array; print the normalised deltas, the segments and the final tool calls. Exit 2 when "
            "the file cannot be read."
        ),
    )
    parser.add_argument("path", type=Path)
    parser.add_argument("--format", choices=WIRE_APIS, help="the wire API (detected when unambiguous)")
    parser.add_argument(
        "--via-sdk",
        action="store_true",
        help="go through the SDK's (or client library's) own HTTP client and stream decoder (offline)",
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
        # --json needs only the outcome: the body is then read from its file as it is replayed.
        body = load_body(args.path, args.format, hold=not args.json)
        pieces = _pieces(body.chunks(), args.chunk_bytes) if args.chunk_bytes else None
        result = replay_body(body, pieces, via_sdk=args.via_sdk, keep_chunks=not args.json)
    except WireFormatError as error:
        raise UsageError(str(error)) from None
    try:
        if args.json:
            # Written piece by piece: a huge call's arguments are never encoded into one more string.
            json.dump(result.outcome.to_json(), sys.stdout, ensure_ascii=False, indent=2)
            print()
        else:
            _print_result(body.api, body.source, result, via_sdk=args.via_sdk)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``replay ... | head``): nothing more to say, and no traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_CONFORMANT


def _pieces(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    """The body re-cut into pieces of exactly ``size`` bytes (the last may be shorter)."""
    pending = b""
    for chunk in chunks:
        data = pending + chunk if pending else chunk
        whole = len(data) - len(data) % size
        for start in range(0, whole, size):
            yield data[start : start + size]
        pending = data[whole:]
    if pending:
        yield pending


def _print_result(api: str, source: str, result: Any, *, via_sdk: bool = False) -> None:
    from conformance.handler.fragment import describe_chunks
    from conformance.handler.observe import observe_event

    print(f"format: {api}   source: {source}")
    print(f"\n{len(result.chunks)} chunks:")
    for chunk in result.chunks:
        print("  " + describe_chunks([chunk]))
    print(f"\n{len(result.events)} segment events:")
    for event in result.events:
        print("  " + observe_event(event).describe())
    print("\ntool calls:")
    for position, call in enumerate(result.outcome.tool_calls):
        verdict = json.dumps(call.arguments, ensure_ascii=False) if call.may_run else f"REJECTED [{call.why_not}]"
        why = f"   ({call.error})" if call.error else ""
        print(f"  [{position}] {call.name} id={call.call_id!r} -> {verdict}{why}")
    if not result.outcome.tool_calls:
        print("  (none)")
    if result.unknown_events:
        print(f"\nskipped unknown event types: {result.unknown_events}")
    print(f"finish_reason: {result.outcome.finish_reason!r}   error: {result.outcome.error!r}")
    if via_sdk and result.outcome.error and "Error: " in result.outcome.error:
        # The SDK's own reader raised (a line it refuses, a provider error): an application using
        # it loses what followed, and so does this replay. Say so, rather than let it read as the end.
        print(
            "note: the SDK raised while reading this body; nothing after that point was read, as in an "
            "application using the SDK. Without --via-sdk, the payloads are read one by one and a payload "
            "of unknown shape is skipped (and counted above)."
        )
