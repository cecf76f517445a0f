"""How long a whole-stack verdict takes: ``run --stack`` at profile ``ci`` through real clients, against the reference.

    python -m benchmarks.bench_stack [--profile ci] [--repeat 2] [--json PATH]

Issue 19 asks a ``--stack`` run through a real framework's client at profile ``ci`` to take at most
60 s on 2 cores, as a ratio against the reference stack in the same run, and a ``--profile dev``
first verdict within 15 s. Each measurement is a subprocess from the repository root (the CLI a
user runs: recordings, then the generated search at byte level), best of ``--repeat`` by wall
time, with its child CPU time. In the same run, for the OpenAI Chat Completions recordings and
generated bodies (``--format openai-chat``):

* ``startup``: ``toolcall-conformance --help``: the floor every run pays;
* ``reference stack``: the SDK's own event decoding, the reference converter and handler
  (``conformance.matrix.reference:reference_stack``, the matrix's reference column), the baseline;
* ``openai example``: ``examples.stacks.openai_stack:stack``, a small framework on the ``openai``
  client (its own httpx2 transport, ``chat.completions.create(stream=True)``, its own folding);
* ``openai SDK accumulator``: the ``openai`` adapter (``ChatCompletionStreamState``);
* ``stream-helper framework``: ``examples.stacks.sdk_helper_stack:stack``, the README's walk-through
  (a framework turn on ``client.chat.completions.stream``; failing, so its findings are simplified);
* the same example at profile ``dev`` (the first verdict).

Ratios are of the search's own time (wall minus ``startup``) to the reference stack's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import load_average, log, machine
from benchmarks.bench_suite import _timed

CLI = [sys.executable, "-m", "conformance.cli"]
TARGETS = {
    "reference stack": "conformance.matrix.reference:reference_stack",
    "openai example": "examples.stacks.openai_stack:stack",
    "openai SDK accumulator": "conformance.adapters.openai_sdk:make_stack",
    "stream-helper framework": "examples.stacks.sdk_helper_stack:stack",
}


def _best(command: list[str], repeat: int) -> dict[str, Any]:
    runs = [_timed(command) for _ in range(repeat)]
    return min(runs, key=lambda run: run["wall_s"])


def measure(profile: str = "ci", repeat: int = 2) -> dict[str, Any]:
    """Every measurement of this benchmark, with the ratios to the reference stack."""
    results: dict[str, Any] = {"profile": profile, "repeat": repeat, "machine": machine()}
    results["startup"] = _best([*CLI, "--help"], repeat)
    log(f"startup: {results['startup']['wall_s']:.2f} s")
    floor = results["startup"]["wall_s"]
    for name, target in TARGETS.items():
        command = [*CLI, "run", "--stack", target, "--format", "openai-chat", "--profile", profile]
        results[name] = _best(command, repeat)
        log(f"{name}: {results[name]['wall_s']:.2f} s ({' / '.join(results[name]['last_lines'])})")
    dev = [*CLI, "run", "--stack", TARGETS["openai example"], "--format", "openai-chat", "--profile", "dev"]
    results["openai example, dev"] = _best(dev, repeat)
    baseline = max(results["reference stack"]["wall_s"] - floor, 1e-9)
    results["ratios"] = {
        name: round((results[name]["wall_s"] - floor) / baseline, 2) for name in TARGETS if name != "reference stack"
    }
    results["load_average"] = load_average()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    results = measure(args.profile, args.repeat)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
