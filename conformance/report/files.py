"""Report files: the documented JSON (``docs/report-schema.md``) and JUnit XML for CI dashboards."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.verdict import Report

__all__ = ["write_json", "write_junit"]


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
            # type: the worst harm of the check's failing runs, so a dashboard can sort findings by it.
            harm = result.harm.value if result.harm else "not_classified"
            failure = ET.SubElement(case, "failure", message=result.message[:500], type=harm)
            finding = result.counterexamples[0] if result.counterexamples else None
            details = [result.counterexample or result.message]
            if finding is not None and finding.harm is not None:
                details.append(f"harm: {finding.harm.harm.value}: {finding.harm.why}")
            if finding is not None and finding.realism is not None:
                details.append(f"realism: {finding.realism.describe()}")
            details += [
                f"fails this way ({c.message}): {', '.join(c.recordings)}"
                for c in result.counterexamples
                if c.recordings
            ]
            failure.text = "\n".join(details)
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", message=result.skipped_reason)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
