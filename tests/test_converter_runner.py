"""How the converter runner calls a user's factory, and how it reports a converter that crashes.

A converter class for one wire API (no constructor arguments) is a factory too; a callable that can
be called neither way is refused before the run (exit 2 from the CLI). A replay that raised is the
converter_outcome_matches finding; every other check says it was not checked, never "not applicable".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.converter import ConverterFactoryError, as_converter_factory, run_converter_conformance
from conformance.wire import bundled_cassette_dir
from reference_impl.converters import AnthropicConverter


class _CrashingConverter:
    """Raises on the first event: nothing comes out for any check but converter_outcome_matches."""

    def convert(self, event: Any) -> list[Any]:
        raise RuntimeError("converter failure injected by the test")

    def finish(self) -> list[Any]:
        return []


class _NeedsTwoArguments:
    def __init__(self, first: str, second: str) -> None:
        del first, second


def test_a_zero_argument_converter_class_is_a_factory_for_its_one_api() -> None:
    report = run_converter_conformance(AnthropicConverter, [bundled_cassette_dir()], profile="dev", apis=["anthropic"])
    outcome = next(r for r in report.results if r.check.id == "converter_outcome_matches")
    assert outcome.status == "passed" and outcome.scenarios_run == report.scenarios > 5
    assert report.conformant


def test_a_factory_taking_the_api_is_called_with_it() -> None:
    seen: list[str] = []

    def make(api: str, **options: Any) -> Any:
        seen.append(api)
        return AnthropicConverter(**options)

    as_converter_factory(make)("anthropic")
    assert seen == ["anthropic"]


def test_a_factory_callable_neither_way_is_refused_with_its_signature() -> None:
    with pytest.raises(ConverterFactoryError, match=r"_NeedsTwoArguments\(first, second\)"):
        as_converter_factory(_NeedsTwoArguments)


def test_the_cli_exits_2_for_an_unusable_factory(tmp_path: Path) -> None:
    (tmp_path / "twoargs.py").write_text("class TwoArgs:\n    def __init__(self, a, b):\n        pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--converter", "twoargs:TwoArgs", "--format", "anthropic"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "TwoArgs(a, b) can be called neither as factory(api" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_crashing_converter_fails_once_and_every_other_check_says_not_checked() -> None:
    report = run_converter_conformance(_CrashingConverter, [bundled_cassette_dir()], profile="dev", apis=["anthropic"])
    by_id = {result.check.id: result for result in report.results}
    assert by_id["converter_outcome_matches"].status == "failed"
    assert "RuntimeError" in by_id["converter_outcome_matches"].message
    for check_id, result in by_id.items():
        if check_id == "converter_outcome_matches":
            continue
        assert result.status == "skipped", check_id
        assert result.not_judged == report.scenarios and result.not_applicable == []
        assert result.skipped_reason.startswith("not checked: the replay raised on all")
