"""The README's two commands are the ones CI runs: if they drift apart, a newcomer's path is untested."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.wire import SDK_APIS

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


def _roundtrip_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Round trips: tools, follow-ups and the agent loop", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        lines += [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    return lines


def test_round_trip_section_commands_parse_and_the_demos_run(capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    from conformance.cli import build_parser, main

    commands = _roundtrip_commands()
    assert any("run --formatter" in command for command in commands)
    demos = [command for command in commands if command.startswith("toolcall-conformance demo")]
    # The demo runs the multi-turn cassettes of the four SDK APIs.
    assert {api for api in SDK_APIS if any(f"--api {api}" in demo for demo in demos)} == set(SDK_APIS)
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "toolcall-conformance", command
        if "mypkg" in command:  # a placeholder formatter: the arguments must parse
            build_parser().parse_args(argv[1:])
        else:
            assert main(argv[1:]) == 0, command
            assert "final answer:" in capsys.readouterr().out
