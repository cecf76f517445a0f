"""The README's two commands are the ones CI runs: if they drift apart, a newcomer's path is untested."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", quick_start, flags=re.S)]


def test_readme_has_exactly_two_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2, commands
    assert "toolcall-conformance run" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_commands_verbatim() -> None:
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in _readme_commands():
        assert command in ci_script, f"README command not run by .ci/run: {command}"
