"""The cost of the JSON-lines bridge per scenario, against an in-process Python handler, in one run.

    python -m benchmarks.bench_bridge [--scenarios 400] [--repeat 5] [--suite-profile dev] [--json PATH]

The same chunk sequences (the built-in scenarios and streams generated from the whole input space,
drawn once with a fixed seed) are run by the suite's own driver (``HandlerTarget.run``, what
``run_conformance`` calls for every scenario) against:

* ``in-process``: seed 000's handler (``examples/seed000_handler.py``), in this interpreter;
* ``bridge (python)``: the same handler behind the bridge (``tests/bridge_targets/py_target.py``):
  the cost of the protocol alone (one request per handler call, JSON both ways, a second process);
* ``bridge (node)``: seed 001's handler in Node (``examples/bridge/seed001_handler.mjs``), the
  cross-language case.

Each workload runs without probes (a re-fragmented or generated scenario) and with them (a
scenario as written: second finalize, late feed, copies, reset replay, raising-callback replay).
The three targets run interleaved, ``--repeat`` times, and the best wall time of each is kept
(the bridge's cost is mostly waiting for the other process, so CPU time of this process would hide
it). The ratio is bridge time / in-process time per scenario, measured in the same run.

Then whole ``run_conformance`` runs at ``--suite-profile`` (the search, the judging and the
shrinking included), per handler run: what a user of ``run --bridge`` waits for. Seed 001 fails
differently from seed 000 (it crashes, so fewer probes and other shrinks): compare the python
bridge row, the same handler on both sides, for the cost of the bridge alone.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from conformance import BUILTIN_SCENARIOS, Capabilities  # noqa: E402
from conformance.bridge import BridgeProcess, handler_target  # noqa: E402
from conformance.handler.drive import HandlerTarget  # noqa: E402
from conformance.handler.generate import wire_scenarios  # noqa: E402
from examples.seed000_handler import make_handler  # noqa: E402
from reference_impl.types import ChunkResponse  # noqa: E402

CAPABILITIES = Capabilities(reasoning=False)
_PY_TARGET = [
    sys.executable,
    str(ROOT / "tests/bridge_targets/py_target.py"),
    "examples.seed000_handler:make_handler",
    "--capabilities",
    json.dumps({"reasoning": False}),
]


def chunk_sequences(count: int, seed: int = 0) -> list[list[ChunkResponse]]:
    """The built-in scenarios as written, then generated streams, ``count`` in all (drawn once)."""
    sequences = [list(scenario.chunks) for scenario in BUILTIN_SCENARIOS]
    drawn: list[list[ChunkResponse]] = []

    @settings(
        max_examples=max(count - len(sequences), 1),
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(wire_scenarios(with_reasoning=False, with_errors=True, several_deltas_per_chunk=False))
    def draw(scenario: Any) -> None:
        drawn.append(list(scenario.chunks))

    del seed  # derandomized: the same streams every run
    draw()
    return (sequences + drawn)[:count]


def _workload(probe: bool) -> str:
    return "probed" if probe else "plain"


def time_target(target: HandlerTarget, sequences: Sequence[list[ChunkResponse]], *, probe: bool) -> float:
    """Wall seconds to run ``target`` over every sequence (the suite's driver, probes or not)."""
    started = time.perf_counter()
    for chunks in sequences:
        transcript = target.run(chunks, probe=probe)
        if transcript.hung:
            raise RuntimeError("a target hung")
    return time.perf_counter() - started


def measure(count: int, repeat: int) -> dict[str, Any]:
    """Best wall time per scenario of each target and workload; the ratios against in-process."""
    logging.disable(logging.CRITICAL)
    sequences = chunk_sequences(count)
    chunks = sum(len(s) for s in sequences)
    processes: dict[str, BridgeProcess] = {}
    targets: dict[str, HandlerTarget] = {"in-process": HandlerTarget(make_handler, CAPABILITIES, deadline=None)}
    commands = {
        "bridge (python)": [
            sys.executable,
            str(ROOT / "tests/bridge_targets/py_target.py"),
            "examples.seed000_handler:make_handler",
            "--capabilities",
            json.dumps({"reasoning": False}),
        ]
    }
    node = shutil.which("node")
    if node is not None:
        commands["bridge (node)"] = [node, str(ROOT / "examples/bridge/seed001_handler.mjs")]
    started_up: dict[str, float] = {}
    for label, command in commands.items():
        process = BridgeProcess(command, cwd=ROOT)
        began = time.perf_counter()
        factory, capabilities = handler_target(process)
        started_up[label] = time.perf_counter() - began
        processes[label] = process
        targets[label] = HandlerTarget(factory, capabilities, deadline=None, label=label)
        targets[label].check_factory()
    best: dict[tuple[str, bool], float] = {}
    requests: dict[str, int] = {}
    try:
        for _ in range(repeat):
            for probe in (False, True):
                for label, target in targets.items():
                    process = processes.get(label)
                    before = process.requests if process else 0
                    seconds = time_target(target, sequences, probe=probe)
                    key = (label, probe)
                    best[key] = min(best.get(key, seconds), seconds)
                    if process is not None:
                        requests[f"{label} {_workload(probe)}"] = process.requests - before
    finally:
        for process in processes.values():
            process.close()
    rows = []
    for probe in (False, True):
        base = best[("in-process", probe)] / count
        for label in targets:
            per = best[(label, probe)] / count
            rows.append(
                {
                    "workload": _workload(probe),
                    "target": label,
                    "us_per_scenario": round(per * 1e6, 1),
                    "ratio": round(per / base, 2),
                    "bridge_cost_us": round((per - base) * 1e6, 1),
                    "requests_per_scenario": round(
                        requests.get(f"{label} {'probed' if probe else 'plain'}", 0) / count, 1
                    ),
                }
            )
    return {
        "scenarios": count,
        "chunks": chunks,
        "repeat": repeat,
        "start_up_s": {label: round(seconds, 3) for label, seconds in started_up.items()},
        "rows": rows,
    }


def measure_suite(profile: str) -> list[dict[str, Any]]:
    """Whole ``run_conformance`` runs (search, judging, shrinking included): what a user waits for."""
    from conformance import run_conformance
    from conformance.bridge import run_bridge

    logging.disable(logging.CRITICAL)
    runs: list[tuple[str, Callable[[], Any]]] = [
        ("in-process", lambda: run_conformance(make_handler, capabilities=CAPABILITIES, profile=profile, seed=0)),
        ("bridge (python)", lambda: run_bridge(_PY_TARGET, profile=profile, seed=0, cwd=ROOT)),
    ]
    node = shutil.which("node")
    if node is not None:
        command = [node, str(ROOT / "examples/bridge/seed001_handler.mjs")]
        runs.append(("bridge (node)", lambda: run_bridge(command, profile=profile, seed=0, cwd=ROOT)))
    rows = []
    for label, run in runs:
        started = time.perf_counter()
        report = run()
        seconds = time.perf_counter() - started
        rows.append({"target": label, "seconds": round(seconds, 2), "runs": report.examples})
    base = rows[0]["seconds"] / rows[0]["runs"]
    for row in rows:
        row["us_per_run"] = round(row["seconds"] / row["runs"] * 1e6, 1)
        row["ratio"] = round(row["seconds"] / row["runs"] / base, 2)
    return rows


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['scenarios']} scenarios ({result['chunks']} chunks), best wall time of {result['repeat']} runs each",
        f"{'workload':8} {'target':16} {'us/scenario':>12} {'ratio':>7} {'bridge cost':>12} {'requests':>9}",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['workload']:8} {row['target']:16} {row['us_per_scenario']:12.1f} {row['ratio']:6.2f}x "
            f"{row['bridge_cost_us']:10.1f}us {row['requests_per_scenario']:9.1f}"
        )
    start_up = ", ".join(f"{label} {seconds * 1000:.0f} ms" for label, seconds in result["start_up_s"].items())
    lines.append(f"start-up (spawn + hello): {start_up}")
    for row in result.get("suite", []):
        lines.append(
            f"whole run ({result['suite_profile']} profile) {row['target']:16} {row['seconds']:6.2f} s for "
            f"{row['runs']} runs: {row['us_per_run']:.0f} us/run, {row['ratio']:.2f}x"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenarios", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--suite-profile", default="dev", help="also time whole runs at this profile ('' to skip)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.scenarios, args.repeat)
    if args.suite_profile:
        result["suite_profile"] = args.suite_profile
        result["suite"] = measure_suite(args.suite_profile)
    out(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
