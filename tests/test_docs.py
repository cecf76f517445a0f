"""Generated documentation stays in step with the code."""

from __future__ import annotations

from pathlib import Path

from conformance.handler.checks import CHECKS
from conformance.report.checks_reference import render_checks_reference
from conformance.report.realism_reference import render_realism_reference
from conformance.roundtrip import ROUNDTRIP_CHECKS

ROOT = Path(__file__).resolve().parents[1]


def test_check_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert committed == render_checks_reference(), (
        "regenerate with: python -m conformance.report.checks_reference > docs/checks.md"
    )


def test_realism_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "realism.md").read_text(encoding="utf-8")
    assert committed == render_realism_reference(), (
        "regenerate with: python -m conformance.report.realism_reference > docs/realism.md"
    )


def test_check_reference_lists_handler_and_round_trip_checks_with_taxonomy() -> None:
    text = render_checks_reference()
    handler_part, roundtrip_part = text.split("\n## Round-trip checks\n", 1)
    for check in CHECKS:
        assert f"## `{check.id}`" in handler_part
    for check in ROUNDTRIP_CHECKS:
        row = next(line for line in roundtrip_part.splitlines() if line.startswith(f"| `{check.id}` |"))
        assert row.endswith(f"| {', '.join(check.taxonomy) or '-'} |")
        assert f"### `{check.id}`" in roundtrip_part and check.how_to_fix in roundtrip_part
    assert "| `tool_schemas_accepted` | " in roundtrip_part and "| format_tools | G12 |" in roundtrip_part
