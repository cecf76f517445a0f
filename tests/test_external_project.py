"""A project outside the source tree, on the built wheel: its own client class, the fixture, ``-n 2``, the CLI.

The wheel is built from this checkout (``pip wheel --no-deps``) and installed with ``--no-deps
--no-index`` into a fresh virtualenv under ``tmp_path``. Its third-party dependencies are the ones
already installed for this test run (a ``.pth`` line puts their ``site-packages`` on the path, so
no package index and no network is needed); ``pip check`` confirms they satisfy the wheel's
requirements, and every import of ``conformance`` / ``examples`` is asserted to come from the
wheel, not from the checkout. The project has a client class on the real ``anthropic`` SDK that
reads the raw event stream itself, in a clean and a buggy variant (it decodes and splits each
received piece on its own, the classic chunk-boundary bug), and pytest settings that name the
``-p`` alias plugin in ``addopts``, as the README tells users to. One virtualenv serves every
assertion, so the whole module builds and installs once.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import re
import site
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CLIENT = '''
"""A weather bot whose Anthropic client lives inside the class, as in most applications."""

import json

import anthropic


class WeatherBot:
    def __init__(self):
        self.client = anthropic.Anthropic(max_retries=0)

    def tool_calls(self, prompt):
        """The tool calls of one streamed answer: [(id, name, input)]."""
        calls, order = {}, []
        with self.client.messages.with_streaming_response.create(
            model="claude-test-model", max_tokens=1024, stream=True,
            messages=[{"role": "user", "content": prompt}],
        ) as response:
            for event in self.events(response):
                if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
                    block = event["content_block"]
                    calls[event["index"]] = [block["id"], block["name"], ""]
                    order.append(event["index"])
                elif event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
                    calls[event["index"]][2] += event["delta"]["partial_json"]
        return [(calls[i][0], calls[i][1], json.loads(calls[i][2] or "{}")) for i in order]

    def events(self, response):
        for line in response.iter_lines():
            if line.startswith("data: "):
                yield json.loads(line[len("data: "):])


class BuggyWeatherBot(WeatherBot):
    """The planted bug: each received piece is decoded and split into lines on its own."""

    def events(self, response):
        for piece in response.iter_bytes():
            for line in piece.decode("utf-8").split("\\n"):
                if line.startswith("data: "):
                    yield json.loads(line[len("data: "):])
'''

TESTS = """
import pytest

from weatherbot import BuggyWeatherBot, WeatherBot

RECORDINGS = ("anthropic/single_call", "anthropic/parallel_two_tools", "anthropic/raw_unicode_split")


def expected_calls(replay):
    return [(call.call_id, call.name, call.arguments) for call in replay.expected.tool_calls]


@pytest.fixture(params=[WeatherBot, BuggyWeatherBot], ids=["clean", "buggy"])
def bot_class(request):
    return request.param


@pytest.mark.toolcall_cassettes(*RECORDINGS)
def test_whole_body(toolcall_replay, toolcall_case, bot_class):
    with toolcall_replay(toolcall_case) as replay:
        calls = bot_class().tool_calls("Weather in Paris?")
    assert calls == expected_calls(replay)


@pytest.mark.toolcall_cassettes(*RECORDINGS)
def test_any_cut(toolcall_replay, toolcall_case, bot_class):
    def scenario(replay):
        assert bot_class().tool_calls("Weather in Paris?") == expected_calls(replay)

    toolcall_replay.fuzz(toolcall_case, scenario)
"""

PYPROJECT = """
[tool.pytest.ini_options]
addopts = "-p conformance.pytest_plugin.httpx_alias"
"""


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """Run a command with no API keys, no PYTHONPATH and no PYTEST_ADDOPTS from this environment."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith(("_API_KEY", "_AUTH_TOKEN")) and key not in {"PYTHONPATH", "PYTEST_ADDOPTS"}
    }
    environment.update(env or {})
    return subprocess.run(args, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(project folder, its virtualenv's python)``, the wheel installed and the project written."""
    work = tmp_path_factory.mktemp("external")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(ROOT)], work)
    wheels = list((work / "dist").glob("toolcall_conformance-*.whl"))
    assert built.returncode == 0 and len(wheels) == 1, built.stderr[-2000:]
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheels[0]),
        ],
        work,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work
    ).stdout.strip()
    # The dependencies already installed for this run: a plain path line, so their .pth files
    # (this checkout's editable install among them) are not processed.
    (Path(purelib) / "zz_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    folder = work / "project"
    (folder / "weatherbot").mkdir(parents=True)
    (folder / "weatherbot" / "__init__.py").write_text(CLIENT, encoding="utf-8")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_weatherbot.py").write_text(TESTS, encoding="utf-8")
    (folder / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return folder, python


def test_the_wheel_is_what_runs_and_its_requirements_are_met(project: tuple[Path, Path]) -> None:
    folder, python = project
    where = _run(
        [str(python), "-c", "import conformance, examples, reference_impl; print(conformance.__file__)"], folder
    )
    assert where.returncode == 0, where.stderr
    assert str(python.parent.parent) in where.stdout and str(ROOT) not in where.stdout
    checked = _run([str(python), "-m", "pip", "check"], folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.fixture(scope="module")
def xdist_run(project: tuple[Path, Path]) -> subprocess.CompletedProcess[str]:
    folder, python = project
    return _run([str(python), "-m", "pytest", "-n", "2", "-rA", "-p", "no:cacheprovider"], folder)


def _statuses(stdout: str) -> dict[str, str]:
    return {
        match.group(2): match.group(1)
        for match in re.finditer(r"^(PASSED|FAILED|ERROR) (\S+)", stdout, flags=re.MULTILINE)
    }


def test_clean_client_passes_and_the_planted_bug_is_caught_under_xdist(
    xdist_run: subprocess.CompletedProcess[str],
) -> None:
    statuses = _statuses(xdist_run.stdout)
    assert len(statuses) == 12, xdist_run.stdout[-3000:] + xdist_run.stderr[-2000:]
    assert "created: 2/2 workers" in xdist_run.stdout
    assert {node for node, status in statuses.items() if "[clean-" in node and status != "PASSED"} == set()
    caught = {node for node, status in statuses.items() if status == "FAILED"}
    # Whole bodies hide the bug; cut ones reveal it on every recording.
    assert caught == {
        f"tests/test_weatherbot.py::test_any_cut[buggy-anthropic/{name}]"
        for name in ("single_call", "parallel_two_tools", "raw_unicode_split")
    }
    assert xdist_run.returncode == 1


def test_failure_report_prints_seed_and_cuts(xdist_run: subprocess.CompletedProcess[str]) -> None:
    assert xdist_run.stdout.count("toolcall replay") >= 3
    assert "seed=0" in xdist_run.stdout
    assert re.search(r"cut at \[\d+(, \d+)*\]", xdist_run.stdout)
    assert "replay exactly: replay_cassette('anthropic/single_call', cuts=[" in xdist_run.stdout


def test_a_node_id_from_the_report_reruns_the_same_failure(
    project: tuple[Path, Path], xdist_run: subprocess.CompletedProcess[str]
) -> None:
    folder, python = project
    node = "tests/test_weatherbot.py::test_any_cut[buggy-anthropic/parallel_two_tools]"
    assert f"re-run: pytest '{node}'" in xdist_run.stdout
    before = re.search(r"anthropic/parallel_two_tools: the code under test fails [^\n]*", xdist_run.stdout)
    assert before, xdist_run.stdout[-3000:]
    rerun = _run([str(python), "-m", "pytest", "-rA", "-p", "no:cacheprovider", node], folder)
    assert _statuses(rerun.stdout) == {node: "FAILED"}
    assert before.group(0) in rerun.stdout  # same seed, same shrunk cuts, same wording


def test_the_cli_writes_junit_and_json_reports(project: tuple[Path, Path]) -> None:
    folder, python = project
    cli = python.parent / "toolcall-conformance"
    result = _run(
        [
            str(cli), "run", "--handler", "examples.seed000_handler:make_handler", "--no-reasoning",
            "--profile", "dev", "--junit-xml", "junit.xml", "--report-json", "report.json",
        ],
        folder,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    failed = [check for check in report["checks"] if check["status"] == "failed"]
    assert report["conformant"] is False and failed
    junit = (folder / "junit.xml").read_text(encoding="utf-8")
    assert f'failures="{len(failed)}"' in junit


def test_the_bundled_example_runs_from_the_wheel(project: tuple[Path, Path]) -> None:
    folder, python = project
    command = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--pyargs", "examples"]
    result = _run(command, folder)
    assert re.search(r"\b70 passed\b", result.stdout), result.stdout[-3000:]  # with the dialects (@openai-chat)
    planted = _run(command, folder, env={"TOOLCALL_EXAMPLE_PLANTED_BUG": "1"})
    assert re.search(r"\b6 failed, 64 passed\b", planted.stdout), planted.stdout[-3000:]
    assert "openai-chat/truncated_max_tokens" in planted.stdout


def test_without_the_alias_option_the_user_is_told_what_to_add(project: tuple[Path, Path]) -> None:
    folder, python = project
    result = _run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-k", "whole_body and clean"],
        folder,
    )
    assert "HttpxAliasError" in result.stdout
    assert 'addopts = "-p conformance.pytest_plugin.httpx_alias"' in textwrap.dedent(result.stdout)
    assert "3 failed" in result.stdout


# -- action.yml, step by step, as the runner would run it ---------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def run_action(project: tuple[Path, Path], inputs: dict[str, str]) -> dict[str, Any]:
    """Run the ``run:`` steps of ``action.yml`` in order with bash, as a GitHub runner does.

    ``${{ inputs.* }}``, ``${{ steps.<id>.outputs.* }}`` and ``${{ github.action_path }}`` are
    expanded in each step's ``env``; a failed step skips the following steps unless their ``if``
    says ``always()``; ``uses:`` steps (the artifact upload) are skipped. Returns the exit code
    of each step run (by name), the step outputs (by id), the summary and the log.
    """
    import yaml

    folder, _python = project
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    unknown = set(inputs) - set(action["inputs"])
    assert not unknown, f"not inputs of action.yml: {unknown}"
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()} | inputs
    outputs: dict[str, dict[str, str]] = {}
    summary = folder / "step-summary.md"
    summary.write_text("", encoding="utf-8")

    def expand(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("inputs."):
                return values[expression.removeprefix("inputs.")]
            if expression == "github.action_path":
                return str(ROOT)
            step, _, key = expression.removeprefix("steps.").partition(".outputs.")
            return outputs.get(step, {}).get(key, "")

        return EXPRESSION.sub(value, text)

    codes: dict[str, int] = {}
    log, failed = [], False
    # The venv is NOT on PATH: every step must call the suite through the `python` input, as on a
    # runner where that input points into a virtualenv (`toolcall-conformance` from PATH: exit 127).
    base = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(folder))}
    for position, step in enumerate(action["runs"]["steps"]):
        condition = str(step.get("if", ""))
        if "uses" in step or (failed and "always()" not in condition):
            continue
        output = folder / f"step-{position}.out"
        output.write_text("", encoding="utf-8")
        env = base | {key: expand(str(raw)) for key, raw in (step.get("env") or {}).items()}
        env |= {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        codes[step["name"]] = done.returncode
        log.append(f"--- {step['name']} (exit {done.returncode})\n{done.stdout}{done.stderr}")
        failed = failed or done.returncode != 0
        if "id" in step:
            lines = output.read_text(encoding="utf-8").splitlines()
            outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
    return {"codes": codes, "outputs": outputs, "summary": summary.read_text(encoding="utf-8"), "log": "\n".join(log)}


def test_action_yml_is_valid_against_the_published_github_action_schema() -> None:
    import jsonschema
    import yaml

    vendored = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads(vendored.joinpath("github-actions.json").read_text(encoding="utf-8"))
    assert schema["$id"] == "https://json.schemastore.org/github-action.json"
    validator = jsonschema.validators.validator_for(schema)(schema)
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert [error.message for error in validator.iter_errors(action)] == []
    # The schema has teeth: a composite step without its shell is refused.
    broken = {**action, "runs": {"using": "composite", "steps": [{"run": "echo"}]}}
    assert list(validator.iter_errors(broken))


def test_the_action_runs_every_target_reports_each_and_fails_on_violations(project: tuple[Path, Path]) -> None:
    folder, python = project
    wheel = next((folder.parent / "dist").glob("*.whl"))
    result = run_action(
        project,
        {
            "python": str(python),
            "suite": str(wheel),
            "pip-args": "--no-deps --no-index",
            "install": "",
            "report-dir": "reports",
            "profile": "dev",
            # The seed-000 handler violates 10 checks; the reference converter and formatter pass.
            "handler": "examples.seed000_handler:make_handler",
            "handler-args": "--no-reasoning",
            "converter": "reference_impl.converters:AnthropicConverter",
            "converter-format": "anthropic",
            "formatter": "reference_impl.followup:ReferenceFormatter",
            "formatter-args": "--target anthropic",
        },
    )
    log = result["log"]
    assert "Installing toolcall-conformance from: " + str(wheel) in log
    # The handler fails, and the converter and formatter steps still run, each with its own reports.
    assert {step: result["outputs"][step]["status"] for step in ("handler", "converter", "formatter")} == {
        "handler": "1",
        "converter": "0",
        "formatter": "0",
    }, log[-4000:]
    reports = folder / "reports"
    for target in ("handler", "converter", "formatter"):
        assert json.loads((reports / f"{target}.json").read_text(encoding="utf-8"))["checks"], target
        assert (reports / f"{target}.xml").is_file(), target
    assert list((reports / "handler-failures").iterdir())
    summary = result["summary"]
    assert "| handler | violations |" in summary
    assert "| converter | conformant |" in summary and "| formatter | conformant |" in summary
    assert "| handler | `invalid_arguments_flagged` |" in summary
    # Workflow-command properties escape ":" and ","; the message escapes "%" and newlines.
    assert "::error title=toolcall-conformance handler%3A invalid_arguments_flagged::" in log
    # Every step but the verdict succeeded; the verdict fails the action.
    assert [code for name, code in result["codes"].items() if name != "Verdict"] == [0] * 5
    assert result["codes"]["Verdict"] == 1
    assert result["outputs"]["verdict"] == {"conformant": "false"}


def test_the_action_with_no_target_is_not_conformant(project: tuple[Path, Path]) -> None:
    folder, python = project
    wheel = next((folder.parent / "dist").glob("*.whl"))
    # A report left by an earlier run is this action's to clear, not to summarise as this run's;
    # the user's own files in the folder stay.
    stale = folder / "empty-reports"
    stale.mkdir(exist_ok=True)
    (stale / "handler.xml").write_text(
        '<testsuite><testcase name="old"><failure message="old"/></testcase></testsuite>'
    )
    (stale / "notes.txt").write_text("mine")
    result = run_action(
        project,
        {"python": str(python), "suite": str(wheel), "pip-args": "--no-deps --no-index", "install": "",
         "report-dir": "empty-reports"},
    )  # fmt: skip
    assert not (stale / "handler.xml").exists() and (stale / "notes.txt").read_text() == "mine"
    assert "| handler | not run |" in result["summary"]
    assert result["codes"]["Verdict"] == 2
    assert result["outputs"]["verdict"] == {"conformant": "false"}
    assert "no target ran" in result["log"]
