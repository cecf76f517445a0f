"""The 'add a provider cassette' workflow, proven offline against a fake provider on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.corpus.fake_provider import FakeProvider
from conformance.corpus.hygiene import check_cassettes
from conformance.corpus.record import RecordingError, record_cassette
from conformance.turns.model import Call, Text, Turn, split_evenly
from conformance.turns.render import render_sse
from conformance.wire import load_body

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
TURN = Turn(
    (
        Text(("Sure, ", "checking.")),
        Call("get_weather", split_evenly(json.dumps({"city": "Zürich", "unit": "celsius"}), 5), "call_rec_1"),
    )
)
# Assembled at run time so that no key-shaped literal sits in the repository.
FAKE_OPENAI_KEY = "sk-proj-" + "Ab3" * 10
FAKE_GOOGLE_KEY = "AIza" + "Xy7" * 12


@pytest.fixture(scope="module")
def server() -> FakeProvider:
    with FakeProvider(dict.fromkeys(APIS, TURN)) as provider:
        yield provider


def _base_url(server: FakeProvider, api: str) -> str:
    return server.base_url + ("/v1" if api.startswith("openai") else "")


@pytest.mark.parametrize("api", APIS)
def test_recording_is_scrubbed_and_replays_the_original_stream(api: str, server: FakeProvider, tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": FAKE_OPENAI_KEY, "ANTHROPIC_API_KEY": FAKE_OPENAI_KEY, "GEMINI_API_KEY": FAKE_GOOGLE_KEY}
    cassette, expected = record_cassette(api, "single_call", tmp_path, base_url=_base_url(server, api), environ=env)

    text = cassette.read_text(encoding="utf-8")
    # The key really was sent (so the scrubbing is tested, not vacuous) and is nowhere in the file.
    sent = json.dumps([request["headers"] for request in server.requests])
    assert FAKE_OPENAI_KEY in sent or FAKE_GOOGLE_KEY in sent
    for secret in (FAKE_OPENAI_KEY, FAKE_GOOGLE_KEY, "fake-session-cookie-value", "org-fakeorganization"):
        assert secret not in text
    assert check_cassettes([cassette]) == []
    assert "origin: recorded" in text

    # Replaying the cassette gives back exactly the bytes the provider streamed.
    assert load_body(cassette, api).sse == render_sse(TURN, api)
    outcome = json.loads(expected.read_text())["expected"]
    assert [(c["name"], c["call_id"], c["arguments"]) for c in outcome["tool_calls"]] == [
        ("get_weather", "call_rec_1", {"city": "Zürich", "unit": "celsius"})
    ]
    assert outcome["text"] == "Sure, checking."


def test_missing_key_is_a_clear_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code = main(["record", "--provider", "anthropic", "--scenario", "single_call", "--out", str(tmp_path)])
    assert code == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_unknown_scenario_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="unknown scenario"):
        record_cassette("openai-chat", "no_such_scenario", tmp_path, environ={"OPENAI_API_KEY": "x"})
