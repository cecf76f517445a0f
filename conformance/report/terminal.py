"""The terminal summary of a ``Report``: one line per check, then each failure with its counterexample."""

from __future__ import annotations

from conformance.verdict import Report

__all__ = ["render_terminal"]


def render_terminal(report: Report, *, verbose: bool = False) -> str:
    """A summary grouped by check, with the first minimal counterexample of each failing check."""
    lines = [
        f"toolcall-conformance: {report.target}",
        f"profile {report.profile}, seed {report.seed}: {report.scenarios} scenarios, "
        f"{report.examples} handler runs in {report.seconds:.1f}s",
        "",
    ]
    width = max((len(result.check.id) for result in report.results), default=10)
    marks = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}
    targets = list(dict.fromkeys(result.target for result in report.results))
    for target in targets:
        if len(targets) > 1:
            lines.append(f"{target}:")
        for result in (r for r in report.results if r.target == target):
            detail = result.skipped_reason if result.status == "skipped" else result.check.title
            lines.append(f"  {marks[result.status]}  {result.check.id.ljust(width)}  {detail}")
        if len(targets) > 1:
            lines.append("")
    failed = report.by_status("failed")
    for result in failed:
        where = f" [{result.target}]" if len(targets) > 1 else ""
        lines += [
            "",
            f"--- {result.check.id}{where}: {result.check.title}",
            f"why it matters: {result.check.rationale}",
        ]
        if result.counterexample:
            lines += ["minimal counterexample:", *("  " + line for line in result.counterexample.splitlines())]
        lines.append(f"how to fix: {result.check.how_to_fix}")
    lines += [
        "",
        f"{len(report.by_status('passed'))} passed, {len(failed)} failed, {len(report.by_status('skipped'))} skipped",
        "CONFORMANT" if report.conformant else "NOT CONFORMANT",
    ]
    return "\n".join(lines)
