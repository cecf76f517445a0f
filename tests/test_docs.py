"""Generated documentation stays in step with the code."""

from __future__ import annotations

from pathlib import Path

from conformance.docs import render_checks_reference

ROOT = Path(__file__).resolve().parents[1]


def test_check_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    assert committed == render_checks_reference(), "regenerate with: python -m conformance.docs > docs/checks.md"
