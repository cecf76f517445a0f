"""Smoke test of ``benchmarks/bench_bridge.py``: a few scenarios, one repetition, every target it can start."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ and examples/ live at the repository root, outside the package
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_bridge import measure, render  # noqa: E402
from tests.bridge_targets.node import NODE  # noqa: E402


def test_the_bridge_benchmark_measures_each_target_against_in_process() -> None:
    result = measure(6, 1)
    targets = {row["target"] for row in result["rows"]}
    assert targets == {"in-process", "bridge (python)"} | ({"bridge (node)"} if NODE else set())
    for row in result["rows"]:
        assert row["us_per_scenario"] > 0
        if row["target"] == "in-process":
            assert row["ratio"] == 1.0 and row["requests_per_scenario"] == 0
        else:  # new, feeds, finalize, the getters: several requests per scenario
            assert row["requests_per_scenario"] >= 4
    assert "ratio" in render(result)
