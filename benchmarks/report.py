"""Turn ``results.json`` into the tables of ``benchmarks/README.md`` and the plot ``scaling.png``.

The README's figures live between two marker lines and are rewritten by every full run; the text
around them (method, analysis, how to fuzz) is written by hand. ``python -m benchmarks.report``
re-renders both from an existing ``results.json`` without measuring anything.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BEGIN = "<!-- BEGIN GENERATED RESULTS (python -m benchmarks) -->"
END = "<!-- END GENERATED RESULTS -->"
HERE = Path(__file__).resolve().parent


def _n(n: int) -> str:
    exponent = round(math.log10(n)) if n > 0 else 0
    return f"10^{exponent}" if 10**exponent == n else f"{n:,}"


def _us(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _yes(met: bool | None) -> str:
    return "n/a" if met is None else ("**met**" if met else "**missed**")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


# -- sections ------------------------------------------------------------------------------------


def _machine(results: dict[str, Any]) -> list[str]:
    m = results["machine"]
    packages = ", ".join(f"{name} {version}" for name, version in m["packages"].items() if version)
    return [
        "### Machine",
        "",
        f"- CPU: {m['cpu']}, `nproc` = {m['nproc']}, {m['memory_gib']} GiB RAM; {m['platform']}",
        f"- Python: {m['python']} ({m['python_build']})",
        f"- Packages: {packages}",
        f"- Run: `{results['command']}` on {results['started']}, {results['total_s']:.0f} s in all; "
        f"load average {results['load_before']} before, {results['load_after']} after "
        "(1, 5, 15 min; the machine was shared, which is why every figure is CPU time, best of several runs)",
        "",
    ]


def _targets(results: dict[str, Any]) -> list[str]:
    rows = [[v["target"], v["detail"], _yes(v["met"])] for v in results.get("verdicts", [])]
    return ["### Targets", "", *_table(["target (issue 5)", "figure from this run", "verdict"], rows), ""]


def _scaling(section: dict[str, Any]) -> list[str]:
    sizes = section["sizes"]
    lines = [
        f"### 1. Scaling: reference handlers, µs per delta (CPU time, best run) and ratio to N = {_n(sizes[0])}",
        "",
        f"Argument deltas are {section['argument_fragment_chars']} characters on average, text chunks "
        f"{section['text_token_chars']}; embedded-call chunks are 5 characters. Target: ratio <= "
        f"{section['target_ratio']} at {_n(sizes[-1])}. Last column: µs per character at {_n(sizes[0])} "
        f"and at {_n(sizes[-1])}.",
        "",
    ]
    header = ["handler", "workload", "GC", *[_n(n) for n in sizes], f"ratio {_n(sizes[-1])}", "µs/char"]
    rows = []
    grouped: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for row in section["rows"]:
        grouped.setdefault((row["handler"], row["workload"]), {})[row["n"]] = row
    for (handler, workload), by_n in grouped.items():
        chars = next(iter(by_n.values()))["chars_per_unit"]
        for mode in section["gc_modes"]:
            cells = []
            for n in sizes:
                m = by_n.get(n, {}).get("modes", {}).get(mode)
                cells.append(f"{_us(m['us_per_unit'])} ({m['ratio']:.2f})" if m else "-")
            last = by_n.get(sizes[-1], {}).get("modes", {}).get(mode)
            verdict = f"**{last['ratio']:.2f}** {last['verdict']}" if last else "-"
            per_char = ", ".join(
                f"{by_n[n]['modes'][mode]['us_per_unit'] / chars:.2f}" for n in (sizes[0], sizes[-1]) if n in by_n
            )
            rows.append([handler, f"{workload} ({chars:g} ch/delta)", mode, *cells, verdict, per_char])
    lines += _table(header, rows)
    profiles = section.get("gc_profiles") or {}
    if profiles:
        lines += [
            "",
            "Where the GC-on time goes at the largest N (one run, every collection timed with `gc.callbacks`):",
            "",
        ]
        rows = []
        for label, p in profiles.items():
            gen2 = p["collections"]["gen2"]
            young = p["collections"]["gen0"]["count"] + p["collections"]["gen1"]["count"]
            rows.append(
                [
                    label,
                    _n(p["n"]),
                    f"{p['wall_s']:.2f}",
                    f"{p['gc_s']:.2f} ({p['gc_share']:.0%})",
                    f"{gen2['count']} / {gen2['seconds']:.2f} s",
                    young,
                    _us(p["us_per_unit_outside_gc"]),
                ]
            )
        lines += _table(
            ["workload", "N", "run s (wall)", "in GC s", "full collections / s", "young coll.", "µs/delta outside GC"],
            rows,
        )
    return [*lines, ""]


def _peers(section: dict[str, Any]) -> list[str]:
    sizes = section["sizes"]
    lines = [
        "### 3. Peers on the same input: µs per delta (GC on), and x the reference's time on the same input",
        "",
        f"`~` = not run (one run would exceed the {section['budget_s']:g} s budget): projected from the two "
        "largest measured sizes with t = aN + bN². Growth = µs/delta at 10^5 (or the largest measured N) over "
        "µs/delta at the smallest N; above 1.3 (section 1's linearity limit) the peer is counted as quadratic.",
        "",
    ]
    ratios = {(r["peer"], r["n"]): r for r in section["comparisons"]}
    rows = []
    for entry in section["contenders"]:
        if "unavailable" in entry:
            rows.append([entry["name"], "-", *["not installed" for _ in sizes], "-"])
            continue
        by_n = {p["n"]: p for p in entry["points"]}
        cells = []
        growth = "-"
        for n in sizes:
            point = by_n.get(n)
            if point is None:
                cells.append("-")
                continue
            text = ("~" if point["projected"] else "") + _us(point["us_per_unit"])
            comparison = ratios.get((entry["name"], n))
            if comparison is not None:
                text += f" (**{comparison['ratio']:,.1f}x**)"
                growth = f"{comparison['peer_growth']}" if comparison["peer_growth"] is not None else "-"
            cells.append(text)
        rows.append([entry["name"], entry["baseline"] or "(reference)", *cells, growth])
    lines += _table(["contender", "compared with", *[_n(n) for n in sizes], "growth"], rows)
    return [*lines, ""]


def _overhead(section: dict[str, Any]) -> list[str]:
    lines = [
        "### 2. Overhead over the SDK floor (offline replay through the real SDK, µs per SSE event, CPU time)",
        "",
    ]
    rows = [
        [
            row["api"],
            f"{row['events']:,}",
            f"{row['body_bytes'] / 1e6:.2f}",
            _us(row["floor_us_per_event"]),
            _us(row["full_us_per_event"]),
            _us(row["added_us_per_event"]),
            f"**{row['overhead']:+.1%}**",
            _us(row["alone_us_per_event"]),
            _yes(row["met"]),
        ]
        for row in section["rows"]
    ]
    lines += _table(
        [
            "wire API",
            "events",
            "MB",
            "SDK alone",
            "SDK + converter + handler",
            "added",
            "overhead",
            "converter + handler on pre-built events",
            f"<= {section['target_overhead']:.0%}",
        ],
        rows,
    )
    profiled = [row for row in section["rows"] if "profile" in row]
    if profiled:
        lines += [
            "",
            "cProfile of one SDK + converter + handler run: own time by package, and the reference's top functions:",
            "",
        ]
        rows = []
        for row in profiled:
            p = row["profile"]
            packages = ", ".join(f"{name} {share:.0%}" for name, share in list(p["share_by_package"].items())[:5])
            top = ", ".join(f"`{f['function']}` {f['share']:.1%}" for f in p["top_reference_functions"][:4])
            rows.append([row["api"], packages, top])
        lines += _table(["wire API", "own time by package", "reference functions with the most own time"], rows)
    return [*lines, ""]


def _memory(section: dict[str, Any]) -> list[str]:
    lines = [
        f"### 4. Memory: {section['total_bytes'] / 1e6:g} MB of arguments through the reference handler "
        "(tracemalloc, x the input size)",
        "",
    ]
    rows = [
        [
            f"{row['delta_bytes']:,} B",
            f"{row['deltas']:,}",
            f"{row['peak_bytes'] / 1e6:,.1f} MB",
            f"**{row['peak_factor']:.2f}x**",
            f"{row['after_feed_factor']:.2f}x",
            f"{row['finalize_peak_factor']:.2f}x",
            f"{row['retained_factor']:.2f}x",
            f"{row['per_delta_overhead_bytes']:.0f} B",
            _yes(row["met"]),
        ]
        for row in section["rows"]
    ]
    lines += _table(
        [
            "delta size",
            "deltas",
            "peak",
            "peak / input",
            "after the last delta",
            "peak in finalize()",
            "kept after finalize()",
            "kept per delta beyond its text",
            f"< {section['target_factor']:g}x",
        ],
        rows,
    )
    return [*lines, ""]


def _suite(section: dict[str, Any]) -> list[str]:
    lines = [f"### 5. The suite itself (profile `{section['profile']}`)", ""]
    cli = section["cli"]
    rows = [
        [
            "`toolcall-conformance run`",
            f"{cli['wall_s']:.1f}",
            f"{cli['child_cpu_s']:.1f}",
            f"exit {cli['exit_code']}: {' / '.join(cli['last_lines'])}",
        ]
    ]
    serial = section["pytest_serial"]
    rows.append(
        [
            "the same run as pytest (`benchmarks/suite_targets.py`)",
            f"{serial['wall_s']:.1f}",
            f"{serial['child_cpu_s']:.1f}",
            f"exit {serial['exit_code']}: {' '.join(serial['last_lines'][-1:])}; on {section['workers']} free cores "
            f"these tests would take {serial.get('ideal_makespan_s', '?')} s",
        ]
    )
    if "pytest_parallel" in section:
        parallel = section["pytest_parallel"]
        rows.append(
            [
                f"the same, `-n {section['workers']}`",
                f"{parallel['wall_s']:.1f}",
                f"{parallel['child_cpu_s']:.1f}",
                f"exit {parallel['exit_code']}; **{section['pytest_speedup']}x** faster in wall time",
            ]
        )
    props = section["properties"]
    rows.append(
        [
            f"split-invariance properties ({len(props['tests'])} tests)",
            f"{props['run']['wall_s']:.1f}",
            f"{props['run']['child_cpu_s']:.1f}",
            f"{props['examples']:,} examples, **{props['examples_per_s']} examples/s** during generation; "
            f"on {section['workers']} free cores these tests would take {props['run'].get('ideal_makespan_s', '?')} s",
        ]
    )
    if "parallel_run" in props:
        rows.append(
            [
                f"the same properties, `-n {section['workers']}`",
                f"{props['parallel_run']['wall_s']:.1f}",
                f"{props['parallel_run']['child_cpu_s']:.1f}",
                f"**{props.get('parallel_speedup')}x** faster in wall time; "
                f"{props.get('parallel_examples_per_wall_s')} vs {props.get('serial_examples_per_wall_s')} "
                "examples per wall second",
            ]
        )
    lines += _table(["run", "wall s", "CPU s", "result"], rows)
    loads = [
        run["load_before"]
        for run in (cli, serial, section.get("pytest_parallel"), props["run"], props.get("parallel_run"))
        if run and run.get("load_before")
    ]
    if loads:
        lines += ["", f"Load average (1 min) when each run started: {', '.join(str(load[0]) for load in loads)}."]
    lines += ["", "Per property (generate phase):", ""]
    lines += _table(
        ["test", "examples (valid + invalid)", "s", "examples/s"],
        [
            [
                f"`{t['test'].removeprefix('tests/')}`",
                f"{t['passing']} + {t['invalid']}",
                f"{t['generate_s']:.2f}",
                t["examples_per_s"],
            ]
            for t in props["tests"]
        ],
    )
    return [*lines, ""]


def render_markdown(results: dict[str, Any]) -> str:
    lines = [BEGIN, "", *_machine(results), *_targets(results)]
    sections = results["sections"]
    if "scaling" in sections:
        lines += _scaling(sections["scaling"])
    if "overhead" in sections:
        lines += _overhead(sections["overhead"])
    if "peers" in sections:
        lines += _peers(sections["peers"])
    if "memory" in sections:
        lines += _memory(sections["memory"])
    if "suite" in sections:
        lines += _suite(sections["suite"])
    lines += ["![time per delta against N, log axes](scaling.png)", "", END]
    return "\n".join(lines)


def update_readme(readme: Path, results: dict[str, Any]) -> None:
    """Replace the text between the markers (append the block if the markers are missing)."""
    block = render_markdown(results)
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _old, tail = rest.split(END, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(text, encoding="utf-8")


# -- the plot ------------------------------------------------------------------------------------


# Each reference in a strong colour, the peers measured against it in lighter shades of it.
_COLORS = {
    "reference ApiToolCall": "#1f77b4",
    "naive handler (seed 000 s.6)": "#6baed6",
    "langchain-core AIMessageChunk +": "#17becf",
    "reference via OpenAIChatConverter": "#d62728",
    "openai ChatCompletionStreamState": "#ff9896",
    "reference via AnthropicConverter": "#7b3294",
    "anthropic accumulate_event": "#c2a5cf",
}


def plot(results: dict[str, Any], path: Path) -> bool:
    """Time per delta against N on log axes: reference vs peers (left), every reference workload (right)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FormatStrFormatter
    except ImportError:
        return False
    sections = results["sections"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(15, 6.5))
    if "peers" in sections:
        _plot_peers(left, sections["peers"])
    if "scaling" in sections:
        _plot_scaling(right, sections["scaling"])
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("N (deltas in the stream)")
        axis.set_ylabel("µs per delta (CPU time, best run)")
        axis.grid(True, which="both", alpha=0.3)
        if axis.lines:
            axis.legend(fontsize=7.5, loc="best")
    right.yaxis.set_minor_formatter(FormatStrFormatter("%.1f"))  # a narrow range: label the minor ticks too
    machine = results["machine"]
    figure.suptitle(f"toolcall-conformance benchmarks: {machine['cpu']}, {machine['python']}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def _plot_peers(axis: Any, section: dict[str, Any]) -> None:
    """Each contender's measured points as a line; projected points dotted, hollow markers."""
    for entry in section["contenders"]:
        points = entry["points"]
        if not points:
            continue
        reference = entry["kind"] == "reference"
        style = {
            "linewidth": 2.4 if reference else 1.4,
            "marker": "o" if reference else "s",
            "color": _COLORS.get(entry["name"]),
        }
        measured = [p for p in points if not p["projected"]]
        line = axis.plot(
            [p["n"] for p in measured], [p["us_per_unit"] for p in measured], label=entry["name"], **style
        )[0]
        projected = [p for p in points if p["projected"]]
        if projected:
            tail = measured[-1:] + projected
            axis.plot(
                [p["n"] for p in tail],
                [p["us_per_unit"] for p in tail],
                linestyle=":",
                color=line.get_color(),
                marker="o",
                markerfacecolor="none",
            )
    axis.set_title("Reference vs peers, one tool call in N deltas (GC on)\nhollow markers, dotted: projected")


def _plot_scaling(axis: Any, section: dict[str, Any]) -> None:
    """Every reference handler and workload: GC on solid, GC off dashed in the same colour."""
    grouped: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for row in section["rows"]:
        label = f"{row['handler']} {row['workload']}"
        for mode, m in row["modes"].items():
            grouped.setdefault(label, {}).setdefault(mode, []).append((row["n"], m["us_per_unit"]))
    for label, modes in grouped.items():
        on = sorted(modes.get("on", []))
        line = axis.plot([n for n, _ in on], [t for _, t in on], marker="o", label=f"{label}")[0]
        off = sorted(modes.get("off", []))
        if off:
            axis.plot([n for n, _ in off], [t for _, t in off], linestyle="--", color=line.get_color())
    axis.set_title("Reference handlers (solid: GC on, dashed: GC off)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="re-render README tables and the plot from results.json")
    parser.add_argument("--results", type=Path, default=HERE / "results.json")
    parser.add_argument("--readme", type=Path, default=HERE / "README.md")
    parser.add_argument("--plot", type=Path, default=HERE / "scaling.png")
    args = parser.parse_args(argv)
    results = json.loads(args.results.read_text(encoding="utf-8"))
    update_readme(args.readme, results)
    plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
