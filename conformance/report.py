"""Rendering a ``Report``: the terminal summary, JSON and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.runner import Report

__all__ = ["render_terminal", "write_json", "write_junit"]


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


def write_json(report: Report, path: Path) -> None:
    """Write the documented JSON report (schema in docs/report-schema.md)."""
    path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_junit(report: Report, path: Path) -> None:
    """Write JUnit XML: one testcase per check, failures carry the counterexample."""
    suite = ET.Element(
        "testsuite",
        name="toolcall-conformance",
        tests=str(len(report.results)),
        failures=str(len(report.by_status("failed"))),
        skipped=str(len(report.by_status("skipped"))),
        time=f"{report.seconds:.3f}",
    )
    for result in report.results:
        case = ET.SubElement(suite, "testcase", classname=result.target or "toolcall_conformance", name=result.check.id)
        if result.status == "failed":
            failure = ET.SubElement(case, "failure", message=result.message[:500])
            failure.text = result.counterexample or result.message
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", message=result.skipped_reason)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
