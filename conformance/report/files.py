"""Report files: the documented JSON (``docs/report-schema.md``) and JUnit XML for CI dashboards."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from conformance.report.terminal import failure_lines
from conformance.verdict import Report

__all__ = ["write_json", "write_junit"]


def write_json(report: Report, path: Path) -> None:
    """Write the documented JSON report (schema in docs/report-schema.md)."""
    path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_junit(report: Report, path: Path, *, rerun: str = "") -> None:
    """Write JUnit XML: one testcase per check; a failure carries what the terminal shows for it (counts,
    harm, realism, counterexamples, how to fix) and ``rerun``, the command that runs it again."""
    suite = ET.Element(
        "testsuite",
        name="toolcall-conformance",
        tests=str(len(report.results)),
        failures=str(len(report.by_status("failed"))),
        # A check never errors: a target that could not run at all is exit 2 and no report.
        errors="0",
        skipped=str(len(report.by_status("skipped"))),
        time=f"{report.seconds:.3f}",
        timestamp=datetime.now(UTC).replace(microsecond=0).isoformat(),
        hostname=socket.gethostname(),
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("profile", report.profile), ("seed", str(report.seed)), ("rerun", rerun)):
        if value:
            ET.SubElement(properties, "property", name=name, value=value)
    for result in report.results:
        case = ET.SubElement(suite, "testcase", classname=result.target or "toolcall_conformance", name=result.check.id)
        if result.status == "failed":
            # type: the worst harm of the check's failing runs, so a dashboard can sort findings by it.
            harm = result.harm.value if result.harm else "not_classified"
            failure = ET.SubElement(case, "failure", message=result.message[:500], type=harm)
            details = failure_lines(result)[1:]
            if rerun:
                details.append(f"re-run: {rerun}")
            failure.text = "\n".join(details)
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", message=result.skipped_reason)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
