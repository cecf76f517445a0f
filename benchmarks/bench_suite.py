"""Section 5, the suite itself: how long a conformance run takes, and how fast the properties search.

Each measurement is a subprocess of the interpreter running the benchmarks, from the repository root:

* ``toolcall-conformance run --profile ci`` (no target: the reference API handler, the three text
  parsers, the four converters and the round-trip formatter): wall time and the verdict line;
* the same run as pytest tests, one per target (``benchmarks/suite_targets.py``), without and with
  ``-n 2`` (pytest-xdist): does the work spread over cores?
* the split-invariance properties in ``tests/`` (a response re-fragmented at arbitrary delta
  boundaries gives the same segments; a recorded body split at arbitrary bytes gives the same
  result through the real SDK): ``--hypothesis-show-statistics`` gives each test's generate-phase
  time and example count, hence examples per second; the same selection under ``-n 2`` gives the
  aggregate rate when two cores share the work.

Child CPU time (``resource.getrusage(RUSAGE_CHILDREN)``) is recorded beside each wall time: a
``-n 2`` run that is no faster in wall time but uses twice the CPU is waiting for a busy machine,
not failing to scale. For the same reason the per-test durations of the serial run are kept, and
the wall time the same tests would take on ``-n`` free cores is computed from them (longest test
first to the least loaded worker, worker start-up not included): ``ideal_makespan_s``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import load_average, log

ROOT = Path(__file__).resolve().parents[1]

# The split-invariance properties: delta-level (handlers) and byte-level (SDK + converters).
PROPERTY_TESTS = (
    "tests/test_api_handler_properties.py::test_fragmentation_does_not_change_the_segments",
    "tests/test_api_handler_properties.py::test_invocations_equal_the_logical_response_and_the_unfragmented_stream",
    "tests/test_parsers_properties.py::test_xml_rendered_responses_survive_any_chunking",
    "tests/test_parsers_properties.py::test_json_rendered_responses_survive_any_chunking",
    "tests/test_parsers_properties.py::test_sentinel_rendered_responses_survive_any_chunking",
    "tests/test_parsers_properties.py::test_arbitrary_markup_soup_is_lossless_and_chunking_invariant",
    "tests/test_converters_common.py::test_real_recordings_give_the_same_result_under_any_byte_split",
    "tests/test_converters_openai_chat.py::test_any_byte_split_gives_the_one_piece_result",
    "tests/test_converters_openai_responses.py::test_any_byte_split_gives_the_one_piece_result",
    "tests/test_converters_anthropic.py::test_any_byte_split_gives_the_one_piece_result",
    "tests/test_converters_gemini.py::test_any_byte_split_gives_the_one_piece_result",
)

_STAT_TEST = re.compile(r"^(tests/\S+::\S+):\s*$")
_STAT_PHASE = re.compile(r"during generate phase \(([\d.]+) seconds\)")
_STAT_COUNTS = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid")
_DURATION = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+)", re.MULTILINE)


def _timed(command: list[str], env: dict[str, str] | None = None, timeout: float = 3600) -> dict[str, Any]:
    load_before = load_average()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in process.stdout.splitlines() if line.strip()]
    return {
        "command": " ".join(command[2:] if command[1] == "-m" else command[1:]),
        "exit_code": process.returncode,
        "wall_s": round(wall, 2),
        "child_cpu_s": round(cpu, 2),
        "load_before": load_before,
        "load_after": load_average(),
        "last_lines": lines[-2:],
        "stdout": process.stdout,
        "stderr_tail": process.stderr.strip().splitlines()[-5:],
    }


def _pytest(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    return _timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], env)


def test_durations(stdout: str) -> dict[str, float]:
    """Seconds per test (setup + call + teardown), from ``--durations=0``."""
    found: dict[str, float] = {}
    for seconds, nodeid in _DURATION.findall(stdout):
        found[nodeid] = found.get(nodeid, 0.0) + float(seconds)
    return found


def ideal_makespan(durations: list[float], workers: int) -> float:
    """Wall time of the tests on ``workers`` free cores, longest first to the least loaded (LPT); no start-up."""
    loads = [0.0] * workers
    for seconds in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += seconds
    return max(loads) if loads else 0.0


def hypothesis_statistics(stdout: str) -> list[dict[str, Any]]:
    """Per test: generate-phase seconds and example counts, from ``--hypothesis-show-statistics``."""
    found: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in stdout.splitlines():
        test = _STAT_TEST.match(line)
        if test:
            current = {"test": test.group(1)}
            found.append(current)
            continue
        if current is None:
            continue
        phase = _STAT_PHASE.search(line)
        if phase and "generate_s" not in current:
            current["generate_s"] = float(phase.group(1))
        counts = _STAT_COUNTS.search(line)
        if counts and "passing" not in current:
            current["passing"], current["failing"], current["invalid"] = map(int, counts.groups())
    for entry in found:
        seconds = entry.get("generate_s")
        if seconds and "passing" in entry:
            entry["examples_per_s"] = round((entry["passing"] + entry["failing"] + entry["invalid"]) / seconds, 1)
            entry["valid_examples_per_s"] = round(entry["passing"] / seconds, 1)
    return [entry for entry in found if "examples_per_s" in entry]


def run(profile: str = "ci", *, workers: int = 2) -> dict[str, Any]:
    log(f"-- the suite itself: profile {profile}, -n {workers}; load {load_average()}")
    xdist = importlib.util.find_spec("xdist") is not None
    section: dict[str, Any] = {"profile": profile, "workers": workers, "xdist": xdist}

    cli = _timed([sys.executable, "-m", "conformance.cli", "run", "--profile", profile])
    cli.pop("stdout")
    section["cli"] = cli
    log(f"toolcall-conformance run --profile {profile}: {cli['wall_s']} s wall, exit {cli['exit_code']}")

    env = {"TOOLCALL_BENCH_PROFILE": profile}
    serial = _pytest(["benchmarks/suite_targets.py", "--durations=0"], env)
    durations = test_durations(serial.pop("stdout"))
    serial["test_s"] = {nodeid.split("::", 1)[-1]: round(seconds, 2) for nodeid, seconds in durations.items()}
    serial["ideal_makespan_s"] = round(ideal_makespan(list(durations.values()), workers), 2)
    section["pytest_serial"] = serial
    log(
        f"same run as pytest, -n 0: {serial['wall_s']} s wall, {serial['child_cpu_s']} s CPU, "
        f"exit {serial['exit_code']}"
    )
    if xdist:
        parallel = _pytest(["benchmarks/suite_targets.py", "-n", str(workers)], env)
        parallel.pop("stdout")
        section["pytest_parallel"] = parallel
        section["pytest_speedup"] = round(serial["wall_s"] / parallel["wall_s"], 2) if parallel["wall_s"] else None
        log(
            f"same run as pytest, -n {workers}: {parallel['wall_s']} s wall, {parallel['child_cpu_s']} s CPU "
            f"(speed-up {section['pytest_speedup']}x)"
        )

    properties = _pytest(["--hypothesis-show-statistics", "--hypothesis-seed=0", "--durations=0", *PROPERTY_TESTS])
    stdout = properties.pop("stdout")
    stats = hypothesis_statistics(stdout)
    property_durations = test_durations(stdout)
    properties["ideal_makespan_s"] = round(ideal_makespan(list(property_durations.values()), workers), 2)
    properties["tests_s"] = round(sum(property_durations.values()), 2)
    examples = sum(entry["passing"] + entry["failing"] + entry["invalid"] for entry in stats)
    generate_s = sum(entry["generate_s"] for entry in stats)
    section["properties"] = {
        "run": properties,
        "tests": stats,
        "examples": examples,
        "generate_s": round(generate_s, 2),
        "examples_per_s": round(examples / generate_s, 1) if generate_s else None,
    }
    log(
        f"split-invariance properties ({len(stats)} tests): {examples} examples in {generate_s:.1f} s of "
        f"generation = {section['properties']['examples_per_s']} examples/s; {properties['wall_s']} s wall in all"
    )
    if xdist:
        parallel_props = _pytest(["--hypothesis-seed=0", "-n", str(workers), *PROPERTY_TESTS])
        parallel_props.pop("stdout")
        section["properties"]["parallel_run"] = parallel_props
        if parallel_props["wall_s"]:
            section["properties"]["parallel_speedup"] = round(properties["wall_s"] / parallel_props["wall_s"], 2)
            section["properties"]["parallel_examples_per_wall_s"] = round(examples / parallel_props["wall_s"], 1)
            section["properties"]["serial_examples_per_wall_s"] = round(examples / properties["wall_s"], 1)
        log(
            f"the same properties with -n {workers}: {parallel_props['wall_s']} s wall "
            f"(speed-up {section['properties'].get('parallel_speedup')}x)"
        )
    return section
