"""The direct reproductions of the Vercel AI SDK findings (``tests/repro_vercel/*.mjs``) still reproduce.

Each script replays a minimal body through the pinned SDK offline and prints ``REPRODUCED`` (exit 0)
or ``NOT REPRODUCED`` (exit 1). A script that stops reproducing means the SDK changed: update the
finding (``conformance.adapters.vercel_ai_sdk``) and the report, do not delete the test.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.bridge_targets.node import NODE, ROOT, needs_node, needs_vercel_modules

REPRO_DIR = ROOT / "tests" / "repro_vercel"
SCRIPTS = sorted(path.name for path in REPRO_DIR.glob("[a-z]*.mjs"))


def test_there_are_reproductions() -> None:
    assert len(SCRIPTS) >= 10


@needs_node
@needs_vercel_modules
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_reproduction_still_reproduces(script: str) -> None:
    done = subprocess.run([str(NODE), script], cwd=REPRO_DIR, capture_output=True, text=True, timeout=120, check=False)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0 and last.startswith("REPRODUCED: "), f"{script}:\n{done.stdout}\n{done.stderr}"
