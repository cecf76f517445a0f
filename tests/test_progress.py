"""Progress: every runner reports units done / total as it goes, and ``run`` shows it on a terminal or on demand.

The runners call ``on_progress`` with a ``ProgressStep`` (a ``str``, so ``print`` still works)
whose ``done`` / ``total`` count the units of the current phase; ``conformance.cli.run`` shows
them with the elapsed time, live on a terminal, as throttled lines with ``--progress``, and not at
all in a CI log otherwise.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from conformance import run_conformance
from conformance.cli import run as run_command
from conformance.converter import run_converter_conformance
from conformance.handler.scenarios import BUILTIN_SCENARIOS
from conformance.roundtrip import run_roundtrip_conformance
from conformance.stack import run_stack_conformance
from conformance.verdict import Profile, ProgressStep
from conformance.wire import bundled_cassette_dir
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.converters import converter_for
from reference_impl.followup import ReferenceFormatter
from tests import stack_targets

TINY = Profile("tiny", 2)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recordings")
    for name in ("single_call", "parallel_two_tools", "text_only"):
        for suffix in (".yaml", ".expected.json"):
            shutil.copy(bundled_cassette_dir() / "openai-chat" / f"{name}{suffix}", folder)
    return folder


def _phases(steps: list[str]) -> list[list[ProgressStep]]:
    """The steps split where the count starts again (a new phase: search, then shrinking)."""
    phases: list[list[ProgressStep]] = []
    for step in steps:
        assert isinstance(step, ProgressStep), step
        if not phases or step.done == 0:
            phases.append([])
        phases[-1].append(step)
    return phases


def _assert_counted(steps: list[str], total: int | None = None) -> None:
    for phase in _phases(steps):
        assert [step.done for step in phase] == list(range(len(phase)))
        assert {step.total for step in phase} == {len(phase)}
    if total is not None:
        assert _phases(steps)[0][0].total == total


def test_the_handler_runner_counts_its_scenarios(recordings: Path) -> None:
    steps: list[str] = []
    scenarios = BUILTIN_SCENARIOS[:3]
    run_conformance(ApiToolCallStreamingResponseHandler, scenarios=scenarios, profile=TINY, on_progress=steps.append)
    _assert_counted(steps)
    assert steps[0].startswith(scenarios[0].name)


def test_the_converter_stack_and_round_trip_runners_count_their_inputs(recordings: Path) -> None:
    steps: list[str] = []
    run_converter_conformance(converter_for, [recordings], profile=TINY, on_progress=steps.append)
    _assert_counted(steps, total=3)
    steps = []
    run_stack_conformance(stack_targets.chat_stack, [recordings], profile=TINY, on_progress=steps.append)
    _assert_counted(steps, total=3)
    assert steps == ["parallel_two_tools.yaml", "single_call.yaml", "text_only.yaml"]
    steps = []
    run_roundtrip_conformance(ReferenceFormatter(), targets=["anthropic"], profile=TINY, on_progress=steps.append)
    _assert_counted(steps)
    assert str(steps[0]).startswith("anthropic/")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_display_is_live_on_a_terminal_and_absent_elsewhere_unless_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    show = run_command.progress_display("my.stack:target")
    assert show is not None
    show(ProgressStep("openai-chat/single_call.yaml", 3, 35))
    show("a step without counts")
    assert terminal.getvalue() == (
        "\r\033[Kmy.stack:target: [3/35, 0s] openai-chat/single_call.yaml"
        "\r\033[Kmy.stack:target: [0s] a step without counts"
    )
    log = io.StringIO()
    monkeypatch.setattr("sys.stderr", log)
    assert run_command.progress_display("my.stack:target") is None
    forced = run_command.progress_display("my.stack:target", forced=True)
    assert forced is not None
    for done in range(5):
        forced(ProgressStep(f"recording {done}", done, 5))
    # Off a terminal: the first line, then at most one every few seconds, and the phase's last unit.
    assert log.getvalue().splitlines() == [
        "my.stack:target: [0/5, 0s] recording 0",
        "my.stack:target: [4/5, 0s] recording 4",
    ]
