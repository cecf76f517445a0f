"""``toolcall-conformance repro``: a standalone script that reproduces a saved failing recording with the SDK alone.

A script made from a saved failure of a planted-bug stack exits 1 (and 0 against the fixed
function); one for a body the SDK reads correctly exits 0; the script imports only the SDK (and the
``--call`` module), and runs in a fresh virtualenv that has nothing but ``openai`` installed.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Failing recordings saved from the planted-bug stacks, a stack that drops every call (so bodies the
    SDK reads right are saved too), and a stack that decodes each read alone (a split failure)."""
    folder = tmp_path_factory.mktemp("saved")
    for target in (
        "examples.stacks.openai_stack:stack_ignoring_the_end",
        "examples.stacks.anthropic_stack:stack_ignoring_the_end",
        "tests.stack_targets:decoding_each_read",
    ):
        assert main(["run", "--stack", target, "--profile", "dev", "--save-failures", str(folder / "bugs")]) == 1
    everything = ["--profile", "dev", "--save-failures", str(folder / "all")]
    assert main(["run", "--stack", "tests.stack_targets:TextOnlyStack", *everything]) == 1
    assert main(["run", "--stack", "tests.stack_targets:chat_stack", "--format", "openai-responses", *everything]) == 1
    return folder


def _script(saved_failure: Path, out: Path, *options: str) -> Path:
    assert main(["repro", str(saved_failure), "--out", str(out), *options]) == 0
    return out


def _run(script: Path, cwd: Path = ROOT, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH",)}
    return subprocess.run(
        [python, str(script)], check=False, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_the_planted_bug_reproduces_with_exit_1_and_the_fixed_function_exits_0(
    sdk: str, saved: Path, tmp_path: Path
) -> None:
    body = saved / "bugs" / ("openai-chat" if sdk == "openai" else "anthropic") / "stream_cut_after_arguments.sse"
    module = f"examples.stacks.{sdk}_stack"
    buggy = _run(_script(body, tmp_path / "buggy.py", "--client", sdk, "--call", f"{module}:ask_ignoring_the_end"))
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert "what the stream says:\n  write_file id=" in buggy.stdout
    assert ": may not run (incomplete)" in buggy.stdout
    assert "-> runs" in buggy.stdout
    assert "DEFECT: it runs write_file" in buggy.stdout and "which may not run (incomplete)" in buggy.stdout
    fixed = _run(_script(body, tmp_path / "fixed.py", "--client", sdk, "--call", f"{module}:ask"))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "FIXED: the library runs exactly the calls that may run" in fixed.stdout


@pytest.mark.parametrize(
    ("body", "client", "code"),
    [
        ("all/openai-chat/parallel_two_tools.sse", "openai", 0),  # the SDK's helper reads it right
        ("all/openai-responses/parallel_two_tools.sse", "openai", 0),
        ("bugs/openai-chat/stream_cut_after_arguments.sse", "openai", 1),  # the helper hands the cut call out
        ("bugs/anthropic/error_event_mid_call.sse", "anthropic", 0),  # the helper raises the error event
        ("bugs/openai-chat/raw_unicode_split.sse", "openai", 0),  # served in the reads that broke the other stack
    ],
)
def test_the_sdks_own_stream_helper_is_the_default_library_under_test(
    body: str, client: str, code: int, saved: Path, tmp_path: Path
) -> None:
    script = _script(saved / body, tmp_path / "repro.py", "--client", client)
    done = _run(script, cwd=tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout.startswith("library under test: client.")
    if "raw_unicode_split" in body:
        cuts = re.search(r"^CUTS = (\[.*\])$", script.read_text(), flags=re.M)
        assert cuts is not None and len(ast.literal_eval(cuts.group(1))) > 1
        assert f"served in {len(ast.literal_eval(cuts.group(1))) + 1} read(s)" in done.stdout


def test_the_script_imports_only_the_sdk_and_the_called_module(saved: Path, tmp_path: Path) -> None:
    body = saved / "bugs" / "openai-chat" / "stream_cut_after_arguments.sse"
    for options in ((), ("--call", "mypkg.agent:ask")):
        source = _script(body, tmp_path / "repro.py", "--client", "openai", *options).read_text()
        imported = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add(str(node.module).split(".")[0])
        assert imported == {"importlib", "json", "os", "sys", "openai"}
        assert "conformance" not in source.replace("toolcall-conformance", "")
        assert "reference_impl" not in source
        assert ('importlib.import_module("mypkg.agent")' in source) == bool(options)


def test_without_the_sdk_the_script_says_so_with_exit_2(saved: Path, tmp_path: Path) -> None:
    # A traceback's exit 1 would read as "the defect is there". `python -S`: no site-packages.
    body = saved / "bugs" / "openai-chat" / "stream_cut_after_arguments.sse"
    script = _script(body, tmp_path / "repro.py", "--client", "openai")
    done = subprocess.run([sys.executable, "-S", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot run: No module named 'openai'" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["bugs/anthropic/stream_cut_after_arguments.sse", "--client", "openai"],
            "its body is anthropic; --client openai reads openai-chat",
        ),
        (["bugs/openai-chat/stream_cut_after_arguments.sse", "--client", "openai", "--call", "nope"], "--call must"),
        (["bugs/openai-chat/stream_cut_after_arguments.expected.json", "--client", "openai"], "openai-chat"),
        (["bugs/openai-chat/no_such.sse", "--client", "openai"], "no such file"),
    ],
)
def test_what_cannot_be_reproduced_is_exit_2(
    argv: list[str], message: str, saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["repro", str(saved / argv[0]), *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err, err


def test_without_out_the_script_goes_to_stdout(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repro", str(saved / "all" / "openai-chat" / "single_call.sse"), "--client", "openai"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#!/usr/bin/env python3\n")
    compile(out, "repro.py", "exec")


# -- in a fresh virtualenv ----------------------------------------------------------------------


def _pinned(distribution: str) -> str:
    constraints = (ROOT / "docs" / "matrix" / "constraints.txt").read_text(encoding="utf-8")
    found = re.search(rf"^{distribution}==(\S+)$", constraints, flags=re.M)
    assert found is not None, f"{distribution} is not pinned in docs/matrix/constraints.txt"
    return found.group(1)


@pytest.mark.slow
def test_the_script_runs_in_a_fresh_virtualenv_with_only_openai(saved: Path, tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = str(environment / "bin" / "python")
    pin = f"openai=={_pinned('openai')}"
    installed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", pin],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if installed.returncode != 0:
        pytest.skip(f"cannot install {pin} into a fresh virtualenv (is the package index reachable?): "
                    f"{installed.stderr.strip().splitlines()[-1:]}")  # fmt: skip
    absent = subprocess.run([python, "-c", "import conformance"], check=False, cwd=tmp_path, capture_output=True)
    assert absent.returncode != 0, "the fresh virtualenv must not have this project"
    cut = saved / "bugs" / "openai-chat" / "stream_cut_after_arguments.sse"
    whole = saved / "all" / "openai-chat" / "parallel_two_tools.sse"
    assert _run(_script(cut, tmp_path / "cut.py", "--client", "openai"), tmp_path, python).returncode == 1
    assert _run(_script(whole, tmp_path / "whole.py", "--client", "openai"), tmp_path, python).returncode == 0
    # --call: a user's module beside the script (a copy of the example, which needs only openai).
    (tmp_path / "my_framework.py").write_text((ROOT / "examples" / "stacks" / "openai_stack.py").read_text())
    buggy = _script(cut, tmp_path / "buggy.py", "--client", "openai", "--call", "my_framework:ask_ignoring_the_end")
    fixed = _script(cut, tmp_path / "fixed.py", "--client", "openai", "--call", "my_framework:ask")
    done = _run(buggy, tmp_path, python)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _run(fixed, tmp_path, python).returncode == 0


@pytest.mark.slow
def test_under_openai_2_the_script_and_the_example_run_on_httpx(saved: Path, tmp_path: Path) -> None:
    """A library pinned to openai 2.x runs on plain httpx: the script picks it from the SDK, and the
    example works with `import httpx` in place of `import httpx2` (docs/stacks.md)."""
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = str(environment / "bin" / "python")
    installed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "openai>=2,<3"],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if installed.returncode != 0:
        pytest.skip(f"cannot install openai 2.x into a fresh virtualenv (is the package index reachable?): "
                    f"{installed.stderr.strip().splitlines()[-1:]}")  # fmt: skip
    base = subprocess.run(
        [python, "-c", "import openai; print(openai.DefaultHttpxClient.__mro__[1].__module__)"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert base.stdout.strip() == "httpx"
    cut = saved / "bugs" / "openai-chat" / "stream_cut_after_arguments.sse"
    assert _run(_script(cut, tmp_path / "cut.py", "--client", "openai"), tmp_path, python).returncode == 1
    example = (ROOT / "examples" / "stacks" / "openai_stack.py").read_text()
    (tmp_path / "my_framework.py").write_text(example.replace("import httpx2\n", "import httpx as httpx2\n"))
    buggy = _script(cut, tmp_path / "buggy.py", "--client", "openai", "--call", "my_framework:ask_ignoring_the_end")
    fixed = _script(cut, tmp_path / "fixed.py", "--client", "openai", "--call", "my_framework:ask")
    assert _run(buggy, tmp_path, python).returncode == 1
    done = _run(fixed, tmp_path, python)
    assert done.returncode == 0, done.stdout + done.stderr
