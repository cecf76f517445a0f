"""A stack that raises on a recording cut by the token limit surfaces the truncation (rule R13).

Found while measuring the matrix: openai's ``get_final_completion()`` raises ``LengthFinishReasonError``
on a ``length`` stop, its documented way of surfacing truncation, and the stack check counted it as
a crash because the recording's expectation records the truncation as a finish reason, not an error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.stack import run_stack_conformance
from conformance.wire import bundled_cassette_dir


@pytest.mark.parametrize("api", ["openai-chat", "anthropic", "openai-responses"])
def test_raising_on_a_truncated_recording_is_conformant(api: str, tmp_path: Path) -> None:
    for path in (bundled_cassette_dir() / api).glob("truncated_max_tokens.*"):
        shutil.copy(path, tmp_path)

    def raising(api: str, pieces: object, options: object) -> object:
        raise RuntimeError("the length limit was reached")

    report = run_stack_conformance(raising, [tmp_path], profile="dev")
    outcome = report.results[0]
    assert outcome.check.id == "stack_outcome_matches"
    assert (outcome.status, outcome.examples_run) == ("passed", 1), outcome.message


def test_raising_on_a_complete_recording_is_still_a_failure(tmp_path: Path) -> None:
    for path in (bundled_cassette_dir() / "openai-chat").glob("single_call.*"):
        shutil.copy(path, tmp_path)

    def raising(api: str, pieces: object, options: object) -> object:
        raise RuntimeError("boom")

    report = run_stack_conformance(raising, [tmp_path], profile="dev")
    assert report.results[0].status == "failed"
