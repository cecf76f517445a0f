"""``python -m benchmarks``: every benchmark of issue 5, one command (see ``benchmarks/README.md``).

    python -m benchmarks              # the full run (about 10 min on 2 cores): writes benchmarks/results.json,
                                      # benchmarks/scaling.png and the figures in benchmarks/README.md
    python -m benchmarks --quick      # smoke test (small sizes, no suite runs): writes build/benchmarks-quick/
    python -m benchmarks --sections scaling,peers --output-dir /tmp/b   # part of it, elsewhere

Sections: ``scaling`` (1), ``overhead`` (2), ``peers`` (3), ``memory`` (4), ``suite`` (5).
Needs the ``bench`` extra (``pip install -e '.[bench]'``) for the langchain-core peer, the plot and
the ``-n 2`` runs; without it those parts are reported as skipped and everything else runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import bench_memory, bench_overhead, bench_peers, bench_scaling, bench_suite, report
from benchmarks._common import Verdict, load_average, log, machine

HERE = Path(__file__).resolve().parent
SECTIONS = ("scaling", "overhead", "peers", "memory", "suite")
SCALES_WITH_CORES = 1.2  # -n 2 wall-time speed-up above which the suite is said to scale with cores


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    repeat: int
    min_time: float
    peer_sizes: tuple[int, ...]
    peer_budget: float
    overhead_events: int
    overhead_repeat: int
    memory_bytes: int
    memory_deltas: tuple[int, ...]
    suite_profile: str
    profiles: bool  # profile the overhead of every wire API that misses the target


FULL = Config(
    sizes=(1_000, 10_000, 100_000, 1_000_000),
    repeat=3,
    min_time=0.3,
    peer_sizes=(1_000, 10_000, 100_000, 1_000_000),
    peer_budget=60.0,
    overhead_events=10_000,
    overhead_repeat=5,
    memory_bytes=100_000_000,
    memory_deltas=(65_536, 1_024, 64),
    suite_profile="ci",
    profiles=True,
)
QUICK = Config(
    sizes=(200, 1_000),
    repeat=1,
    min_time=0.02,
    peer_sizes=(1_000,),
    peer_budget=0.5,
    overhead_events=300,
    overhead_repeat=1,
    memory_bytes=1_000_000,
    memory_deltas=(4_096, 64),
    suite_profile="dev",
    profiles=False,
)


def run_sections(config: Config, sections: Sequence[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if "scaling" in sections:
        results["scaling"] = bench_scaling.run(config.sizes, repeat=config.repeat, min_time=config.min_time)
    if "overhead" in sections:
        results["overhead"] = bench_overhead.run(
            config.overhead_events, repeat=config.overhead_repeat, profile_misses=config.profiles
        )
    if "peers" in sections:
        results["peers"] = bench_peers.run(
            config.peer_sizes, repeat=config.repeat, min_time=config.min_time, budget=config.peer_budget
        )
    if "memory" in sections:
        results["memory"] = bench_memory.run(config.memory_bytes, config.memory_deltas)
    if "suite" in sections:
        results["suite"] = bench_suite.run(config.suite_profile)
    return results


def verdicts(sections: dict[str, Any]) -> list[Verdict]:
    found: list[Verdict] = []
    if "scaling" in sections and len(sections["scaling"]["sizes"]) > 1:
        result = bench_scaling.verdicts(sections["scaling"])
        for mode, label in (("on", "GC on (as shipped)"), ("off", "GC off (the handlers' own work)")):
            ratios = {name: r[mode] for name, r in result["ratios"].items() if mode in r}
            if not ratios:
                continue
            worst = max(ratios, key=lambda name: ratios[name])
            found.append(
                Verdict(
                    f"1. scaling, {label}: µs/delta at {result['largest_n']:,} <= 1.3x that at "
                    f"{min(sections['scaling']['sizes']):,}",
                    all(ratio <= bench_scaling.TARGET_RATIO for ratio in ratios.values()),
                    f"worst {ratios[worst]:.2f} ({worst}); best {min(ratios.values()):.2f}",
                    {"ratios": ratios},
                )
            )
    if "overhead" in sections:
        result = bench_overhead.verdicts(sections["overhead"])
        found.append(
            Verdict(
                "2. converter + handler add <= 15% to the SDK's own cost",
                result["met"],
                ", ".join(f"{api} {value:+.1%}" for api, value in result["per_api"].items()),
                result,
            )
        )
    if "peers" in sections:
        result = bench_peers.verdicts(sections["peers"])
        found.append(
            Verdict(
                "3a. the reference is the fastest at every N",
                result["fastest_everywhere"],
                "slower than: " + ", ".join(f"{p} at N={n:,} ({r}x)" for p, n, r in result["not_fastest"])
                if result["not_fastest"]
                else "faster than every peer at every N",
                result,
            )
        )
        if result["factor_met"] is not None:
            quadratic = result["quadratic_peers_at_1e5"]
            found.append(
                Verdict(
                    "3b. >= 10x faster than any quadratic peer at N = 10^5",
                    bool(result["factor_met"]),
                    ", ".join(f"{p} {r:,.1f}x{' (projected)' if proj else ''}" for p, r, proj in quadratic)
                    or "no peer is quadratic by 10^5",
                    {},
                )
            )
    if "memory" in sections:
        result = bench_memory.verdicts(sections["memory"])
        found.append(
            Verdict(
                "4. peak memory while streaming the arguments < 3x their size",
                result["met_all"],
                ", ".join(f"{size:,} B deltas {factor:.2f}x" for size, factor in result["per_delta_size"].items()),
                result,
            )
        )
    if "suite" in sections:
        suite = sections["suite"]
        props = suite["properties"]
        workers = suite["workers"]
        serial = suite["pytest_serial"]
        found.append(
            Verdict(
                "5a. suite: `toolcall-conformance run` (ci) against the reference; split-invariance examples/s",
                suite["cli"]["exit_code"] == 0,
                f"{suite['cli']['wall_s']:.0f} s wall, exit {suite['cli']['exit_code']}; "
                f"{props['examples_per_s']} examples/s over {len(props['tests'])} properties",
                {},
            )
        )
        speedups = [suite.get("pytest_speedup"), props.get("parallel_speedup")]
        if all(speedup is not None for speedup in speedups):
            ideal = serial.get("ideal_makespan_s")
            found.append(
                Verdict(
                    f"5b. the same runs with -n {workers} (pytest-xdist) are faster: they scale with cores",
                    all(speedup > SCALES_WITH_CORES for speedup in speedups),
                    f"suite {speedups[0]}x (ideal on {workers} free cores: {serial['wall_s']:.0f} s -> {ideal} s), "
                    f"properties {speedups[1]}x",
                    {},
                )
            )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: tiny sizes, no suite runs, a few seconds")
    parser.add_argument("--sections", default=None, help=f"comma list of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument(
        "--output-dir", type=Path, default=None, help="default: benchmarks/ (with --quick: build/benchmarks-quick)"
    )
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite the figures in README.md")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the other sections of an existing results.json (re-measure only --sections)",
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else FULL
    default_sections = [s for s in SECTIONS if s != "suite"] if args.quick else list(SECTIONS)
    sections = [s.strip() for s in args.sections.split(",")] if args.sections else default_sections
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    output = args.output_dir or (HERE.parent / "build" / "benchmarks-quick" if args.quick else HERE)
    output.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    load_before = load_average()
    log(f"python -m benchmarks{' --quick' if args.quick else ''}: sections {', '.join(sections)} -> {output}")
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    measured = run_sections(config, sections)
    for name in measured:
        measured[name]["measured_at"] = stamp
    previous = output / "results.json"
    command = "python -m benchmarks" + (" --quick" if args.quick else "")
    if args.merge and previous.exists():
        old = json.loads(previous.read_text(encoding="utf-8"))
        measured = {**old.get("sections", {}), **measured}
        command = f"{old.get('command', command)}, then {command} --sections {','.join(sections)} --merge"
    found = verdicts(measured)
    results = {
        "command": command,
        "started": stamp,
        "total_s": round(time.perf_counter() - started, 1),
        "load_before": load_before,
        "load_after": load_average(),
        "machine": machine(),
        "config": config.__dict__,
        "verdicts": [v.as_dict() for v in found],
        "sections": measured,
    }
    (output / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    plotted = report.plot(results, output / "scaling.png")
    if not args.no_readme:
        report.update_readme(output / "README.md", results)
    log("")
    if args.quick:
        log("--quick: tiny sizes and single runs, to see that everything runs; the verdicts below mean nothing")
    for verdict in found:
        log(f"{'MET   ' if verdict.met else 'MISSED'} {verdict.target}: {verdict.detail}")
    log(
        f"wrote {output / 'results.json'}"
        + (f", {output / 'scaling.png'}" if plotted else " (no plot: matplotlib is not installed)")
        + ("" if args.no_readme else f", {output / 'README.md'}")
        + f" in {results['total_s']:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
