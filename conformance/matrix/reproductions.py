"""Which direct reproduction (a test in ``tests/`` that drives the library without the suite) backs each failing cell.

Every failing cell of the published matrix names at least one test here; ``tests/test_matrix.py``
checks that each named test exists, and the tests themselves assert the defect (and the correct
behaviours the suite passes), so a cell that flips is noticed twice. ``SUITE_BUGS`` holds the
failing cells suspected to be the suite's (or the adapter's) fault rather than the library's:
they are shown as such, never as the library's defect.
"""

from __future__ import annotations

__all__ = ["REPRODUCTIONS", "SUITE_BUGS"]

REPRODUCTIONS: dict[tuple[str, str], tuple[str, ...]] = {}

SUITE_BUGS: dict[tuple[str, str], str] = {}
