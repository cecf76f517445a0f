"""Skip markers for the tests that need Node (and the Vercel bridge's installed node_modules), by name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE_DIR = ROOT / "examples" / "bridge"
VERCEL_DIR = BRIDGE_DIR / "vercel"
NODE = shutil.which("node")


def _node_major() -> int:
    if NODE is None:
        return 0
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=False).stdout
    return int(version.strip().lstrip("v").split(".")[0] or 0)


needs_node = pytest.mark.skipif(
    _node_major() < 20, reason="needs Node >= 20 on PATH (`node --version`); the bridge examples are JavaScript"
)
needs_vercel_modules = pytest.mark.skipif(
    not (VERCEL_DIR / "node_modules" / "ai" / "package.json").is_file(),
    reason="needs the Vercel AI SDK installed: run `npm ci` in examples/bridge/vercel",
)
