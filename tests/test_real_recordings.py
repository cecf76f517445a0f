"""``replay --json`` of every real recording in ``../shared/real-recordings`` matches its expectation.

The recordings are third-party data, read in place and never copied here; the expectations are
theirs (hand-made by the collectors from the wire). Both replay paths are run through the command
line, as a user would. ``.ci/run`` runs this module when ``../shared`` is beside the clone; without
it the module is skipped, by name.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.wire import WIRE_APIS, Case, discover_cases, load_body
from conformance.wire.outcome import ExpectedToolCall, Outcome
from conformance.wire.replay import compare_outcomes

RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"
CASES = list(discover_cases([RECORDINGS])) if RECORDINGS.is_dir() else []

pytestmark = pytest.mark.skipif(not CASES, reason=f"no real recordings under {RECORDINGS} (not in the repository)")


def _outcome(document: dict[str, object]) -> Outcome:
    calls = [
        ExpectedToolCall(c["name"], c["call_id"], c["arguments"], c["raw_arguments"], c["error"])
        for c in document["tool_calls"]  # type: ignore[attr-defined]
    ]
    return Outcome(
        str(document["format"]),
        calls,
        str(document["text"]),
        str(document["reasoning"]),
        True,
        document["finish_reason"],  # type: ignore[arg-type]
        document["error"],  # type: ignore[arg-type]
    )


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("via_sdk", [[], ["--via-sdk"]], ids=["payloads", "via-sdk"])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_replay_json_matches_the_recordings_expectation(
    case: Case, via_sdk: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", "--json", str(case.body_path), *via_sdk])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert compare_outcomes(case.expected(), _outcome(json.loads(captured.out))) == []


def test_every_provider_folder_is_read() -> None:
    # Every recording the collectors made is readable here, Bedrock and Cohere included.
    folders = {path.name for path in RECORDINGS.iterdir() if path.is_dir()}
    assert {case.body_path.parent.name for case in CASES} == folders
    apis = Counter(load_body(case.body_path).api for case in CASES)
    assert set(apis) <= set(WIRE_APIS)
    assert {"bedrock-converse", "cohere-v2", "gemini"} <= set(apis), apis
    assert len(CASES) >= 42
