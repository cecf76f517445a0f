"""``toolcall-conformance record``: a provider cassette recorded with the real SDK, scrubbed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conformance.cli.common import EXIT_CONFORMANT, UsageError, writable_dir
from conformance.corpus.record import PROVIDERS, SCENARIOS

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``record`` subcommand and its options."""
    parser = commands.add_parser(
        "record",
        help="record a provider cassette with the real SDK (keys from the usual environment variables)",
        description=(
            "Send one scenario's request with the real SDK or client library under vcrpy, scrub credentials, and "
            "write the cassette with an expectation read by the SDK. Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY, "
            "GEMINI_API_KEY or GOOGLE_API_KEY, CO_API_KEY or COHERE_API_KEY; Bedrock uses the AWS credential chain; "
            "Ollama needs none. With --base-url a missing key is replaced by a placeholder (a local server may need "
            "none). Exit 2 when nothing could be recorded (no key, a server that cannot be reached or fails)."
        ),
    )
    parser.add_argument("--provider", required=True, choices=sorted(PROVIDERS))
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--model", help="model name (default: a small current model of the provider)")
    parser.add_argument(
        "--base-url",
        help="another endpoint for the API: an OpenAI-compatible server, a proxy, a local Ollama, a Bedrock endpoint",
    )
    parser.add_argument("--out", type=Path, default=Path("cassettes/recorded"), help="output folder")
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    from conformance.corpus.record import RecordingError, record_cassette

    writable_dir(args.out, "--out")  # before the provider is called (and paid)
    try:
        cassette, expected = record_cassette(
            args.provider, args.scenario, args.out, model=args.model, base_url=args.base_url
        )
    except RecordingError as error:
        raise UsageError(str(error)) from error
    except OSError as error:  # a full device, a folder removed meanwhile
        raise UsageError(f"--out {args.out}: the recording could not be written: {error.strerror or error}") from None
    print(f"recorded {cassette}\nexpectation {expected}")
    return EXIT_CONFORMANT
