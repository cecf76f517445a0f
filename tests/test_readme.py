"""The README's two commands are the ones CI runs: if they drift apart, a newcomer's path is untested."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


def _replay_idiom() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("**Your own client, against recordings.**", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]


def _user_pytest(folder: Path, test_file: str) -> subprocess.CompletedProcess[str]:
    """``pytest`` on a user's test file in ``folder``, as the README says to run it, with no API keys."""
    environment = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    environment.pop("PYTEST_ADDOPTS", None)
    alias = ("-p", "conformance.pytest_plugin.httpx_alias")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *alias, test_file],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_replay_idiom_runs_exactly_the_calls_that_may_run(tmp_path: Path) -> None:
    """The README's ``toolcall_replay`` example, run as a user's test file, passes on the example
    assistant, and fails on the one that runs every call whose arguments parse, however the stream
    ended (what ``arguments`` alone would have a test accept)."""
    idiom = _replay_idiom()
    assert "if c.may_run" in idiom
    (tmp_path / "test_my_assistant.py").write_text(idiom, encoding="utf-8")
    planted = idiom.replace("import Assistant ", "import AssistantIgnoringTheEnd as Assistant ")
    assert planted != idiom
    (tmp_path / "test_planted.py").write_text(planted, encoding="utf-8")
    kept = _user_pytest(tmp_path, "test_my_assistant.py")
    assert kept.returncode == 0 and " passed" in kept.stdout, kept.stdout[-3000:]
    ran = int(re.search(r"(\d+) passed", kept.stdout).group(1))  # type: ignore[union-attr]
    assert ran == 16 + 18 + 1, kept.stdout[-3000:]  # the OpenAI Chat recordings, the dialects, the cut test
    caught = _user_pytest(tmp_path, "test_planted.py")
    assert caught.returncode == 1 and "stream_cut_after_arguments" in caught.stdout, caught.stdout[-3000:]
