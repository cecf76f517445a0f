"""Offline multi-turn tool calling, end to end, for each wire API: tools called, results sent back, final answer.

Run it from the repository root (no network, no API key)::

    python examples/roundtrip_demo.py                    # every cassette under cassettes/multiturn
    python examples/roundtrip_demo.py --api anthropic    # one wire API
    python examples/roundtrip_demo.py --chunk-bytes 7    # serve the responses in 7-byte pieces

For each multi-turn cassette the reference agent (``reference_impl.agent.Agent``) talks to the
real SDK (``openai``, ``anthropic``, ``google-genai``) through an in-process ``httpx2.MockTransport``
that serves the cassette's scripted (written, not captured) model responses in order. The agent
streams each turn through the reference converter and handler, executes detected tools (in
parallel, each with a timeout) as soon as the handler reports them on the event bus, formats the
follow-up with
``reference_impl.followup.format_followup`` and continues until the model answers. What the demo
prints under "sent back" is read from the JSON the SDK actually sent for the next request.

The same demo ships with the package: ``toolcall-conformance demo``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.wire import bundled_cassette_dir
from reference_impl.demo import DEMO_APIS, run_demo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", choices=DEMO_APIS, help="only this wire API")
    parser.add_argument("--cassette-dir", type=Path, help="multi-turn cassettes (default: cassettes/multiturn)")
    parser.add_argument("--chunk-bytes", type=int, help="serve each response in pieces of this many bytes")
    args = parser.parse_args(argv)
    return run_demo(args.cassette_dir or bundled_cassette_dir() / "multiturn", args.api, chunk_bytes=args.chunk_bytes)


if __name__ == "__main__":
    sys.exit(main())
