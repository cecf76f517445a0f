"""Smoke test of ``benchmarks/`` (issue 5): the pure-Python parts at a tiny N, nothing from the ``bench`` extra.

Exercises what ``python -m benchmarks`` runs for the reference handlers, the naive peer and the
memory section, plus the README rendering, at sizes that take milliseconds. It never imports
matplotlib, langchain-core or pytest-xdist, and never runs the SDK replays or the suite runs:
those are measured by ``python -m benchmarks`` itself (``--quick`` for a smoke run of everything).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ and examples/ live at the repository root, outside the package
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_memory, bench_peers, bench_scaling, report  # noqa: E402
from benchmarks.__main__ import verdicts  # noqa: E402
from benchmarks._common import fit_linear_quadratic, machine, project_seconds  # noqa: E402


def test_scaling_runs_every_reference_workload_and_checks_its_output() -> None:
    section = bench_scaling.run([200, 400], repeat=1, min_time=0.0, modes=("on", "off"), profile_misses=False)
    labels = {f"{row['handler']} {row['workload']}" for row in section["rows"]}
    assert {
        "ApiToolCall tool-args",
        "ApiToolCall text",
        "PassThrough text",
        "Parsing[xml] embedded-call",
        "Parsing[json] embedded-call",
        "Parsing[sentinel] embedded-call",
    } <= labels
    for row in section["rows"]:
        for mode in ("on", "off"):
            timing = row["modes"][mode]
            assert timing["us_per_unit"] > 0 and timing["runs"] >= 1
            assert timing["verdict"] in {"base", "PASS", "MISS"}
    result = bench_scaling.verdicts(section)
    assert result["largest_n"] == 400 and set(result["ratios"]) == labels


def test_inputs_are_what_the_checks_expect() -> None:
    inputs = bench_scaling.tool_arg_inputs(300)
    assert len(inputs.chunks) == 300
    handler = bench_scaling.feed_all(bench_scaling.ApiToolCallStreamingResponseHandler, inputs.chunks)
    bench_scaling.check_tool_args(handler, inputs)
    for parser_name in ("xml", "json", "sentinel"):
        embedded = bench_scaling.embedded_call_inputs(parser_name)(300)
        assert len(embedded.chunks) == 300  # exactly N chunks of 5 characters


def test_peers_reference_and_naive_handler_are_compared_on_the_same_input() -> None:
    section = bench_peers.run([200, 400], repeat=1, min_time=0.0, budget=5.0, only=["reference ApiToolCall", "naive"])
    names = [entry["name"] for entry in section["contenders"]]
    assert names == ["reference ApiToolCall", "naive handler (seed 000 s.6)"]
    rows = section["comparisons"]
    assert [row["n"] for row in rows] == [200, 400]
    assert all(row["ratio"] > 0 and row["reference"] == "reference ApiToolCall" for row in rows)
    result = bench_peers.verdicts(section)
    assert result["factor_met"] is None  # 10^5 was not measured


def test_projection_recovers_a_quadratic() -> None:
    points = [(n, 2e-6 * n + 3e-9 * n * n) for n in (1_000, 10_000)]
    a, b = fit_linear_quadratic(points)
    assert abs(a - 2e-6) < 1e-12 and abs(b - 3e-9) < 1e-15
    assert abs(project_seconds(points, 100_000) - (0.2 + 30.0)) < 1e-6


def test_memory_accounts_for_the_kept_fragments_the_joined_text_and_the_parsed_value() -> None:
    row = bench_memory.stream(300_000, 4_096)
    assert row["events"] == row["deltas"] + 2
    # At least the fragments (kept by the events), the joined text and json.loads's result.
    assert 2.9 < row["peak_factor"] < 3.5
    assert row["event_bytes"] < 100  # CONTENT events keep no per-event payload dict


def test_readme_block_is_rendered_between_the_markers(tmp_path: Path) -> None:
    sections = {
        "scaling": bench_scaling.run([200, 400], repeat=1, min_time=0.0, only=["ApiToolCall tool-args"]),
        "memory": bench_memory.run(200_000, (4_096,)),
    }
    results = {
        "command": "pytest",
        "started": "now",
        "total_s": 1.0,
        "load_before": None,
        "load_after": None,
        "machine": machine(),
        "verdicts": [v.as_dict() for v in verdicts(sections)],
        "sections": sections,
    }
    readme = tmp_path / "README.md"
    readme.write_text(f"# Benchmarks\n\nhand-written\n\n{report.BEGIN}\nold\n{report.END}\n\nmore text\n")
    report.update_readme(readme, results)
    text = readme.read_text()
    assert "hand-written" in text and "more text" in text and "\nold\n" not in text
    assert "### 1. Scaling" in text and "### 4. Memory" in text and "### Targets" in text
    assert text.count(report.BEGIN) == 1 and text.count(report.END) == 1
