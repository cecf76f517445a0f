"""What every benchmark section shares: the clock, the garbage-collector modes, projections, the machine.

Clock. Every figure is the **best** of several runs (the least disturbed one), measured as process
CPU time (``time.process_time``: user + system time of this process, page faults included) with
the wall time beside it. The machine these figures come from is shared: another process on the
same core stretches the wall time of a run but not its CPU time, so CPU time is what the ratios
use. ``cpu_share`` (CPU time / wall time of the best run) says how much of a core the run got; a
best run under ``BUSY_CPU_SHARE`` is flagged.

Inputs are built before the clock starts, checked after it stops, and (for the pure-Python
sections) hidden from the garbage collector with ``gc.freeze()`` so that a million live input
chunks and every imported module do not count against the code being measured.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

BUSY_CPU_SHARE = 0.8
GC_MODES = ("on", "off")


@dataclass
class Timing:
    """The best of ``runs`` timed runs of one workload at one size, in one garbage-collector mode."""

    runs: int
    cpu_s: float  # CPU time of the best run
    wall_s: float  # wall time of that run
    units: int  # deltas / events / characters processed per run

    @property
    def us_per_unit(self) -> float:
        return self.cpu_s / self.units * 1e6

    @property
    def cpu_share(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "cpu_s": round(self.cpu_s, 6),
            "wall_s": round(self.wall_s, 6),
            "units": self.units,
            "us_per_unit": round(self.us_per_unit, 4),
            "cpu_share": round(self.cpu_share, 3),
        }


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Everything alive now (inputs, modules) is left out of every collection until the block ends.

    The garbage the block leaves is collected by the next ``gc.collect()`` (the next block's, or
    the next timed run's), not on the way out: with the SDKs imported a full collection takes 0.1 s.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def best_of(
    run: Callable[[], Any],
    check: Callable[[Any], None],
    units: int,
    *,
    repeat: int = 3,
    min_time: float = 0.3,
    max_runs: int = 1000,
    gc_mode: str = "on",
) -> Timing:
    """Run ``run()`` at least ``repeat`` times (more until ``min_time`` CPU seconds are spent), keep the best.

    ``gc_mode="off"`` disables the collector while the clock runs (the code's own work);
    ``"on"`` leaves CPython's default generational collector running, as in production.
    ``check(result)`` runs after every run, outside the clock: a broken fast path cannot pass.
    """
    if gc_mode not in GC_MODES:
        raise ValueError(f"gc_mode must be one of {GC_MODES}, got {gc_mode!r}")
    best_cpu = math.inf
    best_wall = math.inf
    runs = 0
    spent = 0.0
    while runs < repeat or (spent < min_time and runs < max_runs):
        gc.collect()
        if gc_mode == "off":
            gc.disable()
        try:
            wall_start = time.perf_counter()
            cpu_start = time.process_time()
            result = run()
            cpu = time.process_time() - cpu_start
            wall = time.perf_counter() - wall_start
        finally:
            gc.enable()
        check(result)
        del result
        if cpu < best_cpu:
            best_cpu, best_wall = cpu, wall
        spent += cpu
        runs += 1
    return Timing(runs, best_cpu, best_wall, units)


def fit_linear_quadratic(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """``(a, b)`` with total seconds ~= a*N + b*N**2, from the two largest measured sizes (b >= 0)."""
    if not points:
        return 0.0, 0.0
    if len(points) == 1:
        n, seconds = points[0]
        return seconds / n, 0.0
    (n1, t1), (n2, t2) = sorted(points)[-2:]
    # t = a n + b n^2  ->  t/n = a + b n: a line through (n1, t1/n1) and (n2, t2/n2).
    b = max((t2 / n2 - t1 / n1) / (n2 - n1), 0.0)
    a = max(t2 / n2 - b * n2, 0.0)
    return a, b


def project_seconds(points: Sequence[tuple[int, float]], n: int) -> float:
    """Seconds one run at size ``n`` would take, extrapolated with ``fit_linear_quadratic``."""
    a, b = fit_linear_quadratic(points)
    return a * n + b * n * n


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _nproc() -> int | None:
    try:
        return int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return os.cpu_count()


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def load_average() -> list[float] | None:
    if hasattr(os, "getloadavg"):
        return [round(value, 2) for value in os.getloadavg()]
    return None


def machine() -> dict[str, Any]:
    """Where the figures come from: CPU, cores, memory, OS, interpreter, the packages measured."""
    return {
        "cpu": _cpu_model(),
        "nproc": _nproc(),
        "memory_gib": _memory_gib(),
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_build": " ".join(platform.python_build()),
        "executable": sys.executable,
        "packages": {
            name: _version(name)
            for name in (
                "openai",
                "anthropic",
                "google-genai",
                "httpx2",
                "pydantic",
                "langchain-core",
                "hypothesis",
                "pytest-xdist",
            )
        },
    }


@dataclass
class Verdict:
    """One target of the issue: met or missed, with the figure that decides it."""

    target: str
    met: bool
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "met": self.met, "detail": self.detail, **self.extra}


def log(message: str) -> None:
    print(message, flush=True)
