"""How long a verdict takes: ``run --handler`` at profile ``ci``, and one pytest class serial vs ``-n 2``.

    python -m benchmarks.bench_verdict [--profile ci] [--repeat 3] [--json PATH]

Issue 15 asks ``toolcall-conformance run --handler`` at profile ``ci`` to stay within 20 s for an
API handler and 30 s for a text parser on a 2-core machine; issue 11 asks one pytest class run
with ``-n 2`` to be faster than serial. Each measurement is a subprocess from the repository root,
best of ``--repeat`` by wall time, with its child CPU time and the load average around it (a run
on a busy machine is slower in wall time, not in CPU time). In the same run:

* ``startup``: ``toolcall-conformance --help`` (interpreter, imports): the floor every run pays;
* ``api handler``: the reference API handler;
* ``text parser``: the reference xml parser, declared with its own hold-back;
* ``pytest serial`` / ``pytest -n 2``: the same API handler as the generated pytest class;
* ``failing pytest serial`` / ``failing pytest -n 2``: the seed-000 design's handler, which fails
  ten checks: most of its run is shrinking, which ``-n 2`` divides between the workers.

Ratios are taken within the run: the search's own time is the run's minus ``startup``, and the
``-n 2`` speed-up is serial wall time over ``-n 2`` wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import load_average, log, machine
from benchmarks.bench_suite import _timed

HANDLER = "reference_impl:ApiToolCallStreamingResponseHandler"
FAILING_HANDLER = "examples.seed000_handler:make_handler"
XML_PARSER = "benchmarks.suite_targets:xml_parser"
CLI = [sys.executable, "-m", "conformance.cli"]


def _best(command: list[str], repeat: int) -> dict[str, Any]:
    runs = [_timed(command) for _ in range(repeat)]
    best = min(runs, key=lambda run: run["wall_s"])
    best["walls_s"] = [run["wall_s"] for run in runs]
    best.pop("stdout", None)
    return best


def measure(profile: str = "ci", repeat: int = 3) -> dict[str, Any]:
    """Every measurement of the module docstring, in one run."""
    from benchmarks.suite_targets import xml_parser_lag

    log(f"-- verdict speed: profile {profile}, best of {repeat}; load {load_average()}")
    pytest_base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--toolcall-profile", profile]
    pytest_args = [*pytest_base, "--toolcall-handler", HANDLER, "toolcall_conformance_generated.py"]
    failing_args = [*pytest_base, "--toolcall-handler", FAILING_HANDLER, "--toolcall-no-reasoning"]
    failing_args += ["toolcall_conformance_generated.py"]
    text_parser = [*CLI, "run", "--handler", XML_PARSER, "--text-format", "xml", "--text-lag", str(xml_parser_lag())]
    rows = {
        "startup": _best([*CLI, "--help"], repeat),
        "api handler": _best([*CLI, "run", "--handler", HANDLER, "--profile", profile], repeat),
        "text parser": _best([*text_parser, "--profile", profile], repeat),
        "pytest serial": _best(pytest_args, repeat),
        "pytest -n 2": _best([*pytest_args, "-n", "2"], repeat),
        "failing pytest serial": _best(failing_args, repeat),
        "failing pytest -n 2": _best([*failing_args, "-n", "2"], repeat),
    }
    startup = rows["startup"]["wall_s"]
    summary = {
        "api_handler_search_s": round(rows["api handler"]["wall_s"] - startup, 2),
        "text_parser_search_s": round(rows["text parser"]["wall_s"] - startup, 2),
        "pytest_n2_speedup": round(rows["pytest serial"]["wall_s"] / rows["pytest -n 2"]["wall_s"], 2),
        "failing_pytest_n2_speedup": round(
            rows["failing pytest serial"]["wall_s"] / rows["failing pytest -n 2"]["wall_s"], 2
        ),
    }
    return {"profile": profile, "repeat": repeat, "machine": machine(), "rows": rows, "summary": summary}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"profile {result['profile']}, best of {result['repeat']} (wall s; child CPU s; load before/after)",
        "",
        "| run | wall s | CPU s | exit | load before -> after |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["rows"].items():
        lines.append(
            f"| {name} | {row['wall_s']} | {row['child_cpu_s']} | {row['exit_code']} | "
            f"{row['load_before']} -> {row['load_after']} |"
        )
    summary = result["summary"]
    lines += [
        "",
        f"API handler: {summary['api_handler_search_s']} s beyond start-up (target: 20 s in all)",
        f"text parser: {summary['text_parser_search_s']} s beyond start-up (target: 30 s in all)",
        f"pytest -n 2 vs serial, one class: {summary['pytest_n2_speedup']}x (conformant handler), "
        f"{summary['failing_pytest_n2_speedup']}x (failing handler)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.profile, args.repeat)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
