"""The 'add a provider cassette' workflow, proven offline against a fake provider on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.corpus.fake_provider import FakeProvider
from conformance.corpus.hygiene import check_cassettes
from conformance.corpus.record import RecordingError, record_cassette
from conformance.turns.model import Call, Text, Turn, split_evenly
from conformance.turns.render import render_body
from conformance.wire import WIRE_APIS, load_body
from conformance.wire.apis import READERS

APIS = WIRE_APIS
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
    pytest.importorskip(READERS[api].replace("google-genai", "google.genai"))
    env = {
        "OPENAI_API_KEY": FAKE_OPENAI_KEY,
        "ANTHROPIC_API_KEY": FAKE_OPENAI_KEY,
        "GEMINI_API_KEY": FAKE_GOOGLE_KEY,
        "CO_API_KEY": FAKE_OPENAI_KEY,
    }
    server.requests.clear()
    cassette, expected = record_cassette(api, "single_call", tmp_path, base_url=_base_url(server, api), environ=env)

    text = cassette.read_text(encoding="utf-8")
    # The credential really was sent (so the scrubbing is tested, not vacuous) and is nowhere in the file.
    sent = json.dumps([request["headers"] for request in server.requests])
    signed = "Credential=local/"  # Bedrock: SigV4 with the placeholder credentials of a local endpoint
    credential = {"ollama": None, "bedrock-converse": signed, "bedrock-invoke": signed, "gemini": FAKE_GOOGLE_KEY}
    expected_credential = credential.get(api, FAKE_OPENAI_KEY)
    assert expected_credential is None or expected_credential in sent
    for secret in (
        FAKE_OPENAI_KEY,
        FAKE_GOOGLE_KEY,
        "fake-session-cookie-value",
        "org-fakeorganization",
        "plainvalue42",
    ):
        assert secret not in text
    assert "Credential=local/" not in text
    assert check_cassettes([cassette]) == []
    assert "origin: recorded" in text

    # Replaying the cassette gives back exactly the bytes the provider streamed.
    assert load_body(cassette, api).data == render_body(TURN, api)
    outcome = json.loads(expected.read_text())["expected"]
    call_id = None if api == "ollama" else "call_rec_1"  # ollama-python keeps no call id
    assert [(c["name"], c["call_id"], c["arguments"]) for c in outcome["tool_calls"]] == [
        ("get_weather", call_id, {"city": "Zürich", "unit": "celsius"})
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


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("api", ["openai-chat", "anthropic", "gemini", "ollama", "cohere-v2", "bedrock-converse"])
def test_a_dead_server_is_a_clear_error_with_exit_2(
    api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(READERS[api].replace("google-genai", "google.genai"))
    argv = ["record", "--provider", api, "--scenario", "single_call", "--out", str(tmp_path)]
    code = main([*argv, "--base-url", _closed_port() + ("/v1" if api.startswith("openai") else "")])
    err = capsys.readouterr().err
    assert code == 2, err
    [line] = err.strip().splitlines()
    assert "recording from http://127.0.0.1:" in line and "failed, nothing was kept" in line, line
    assert not list(tmp_path.rglob("*.yaml"))


@pytest.mark.parametrize("api", ["openai-responses", "cohere-v2", "bedrock-invoke"])
def test_a_failing_server_is_a_clear_error_with_exit_2(
    api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(READERS[api])
    with FakeProvider({}) as failing:  # answers 500 to every API
        argv = ["record", "--provider", api, "--scenario", "single_call", "--out", str(tmp_path)]
        code = main([*argv, "--base-url", _base_url(failing, api)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "failed, nothing was kept" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("*.yaml"))


def test_a_local_server_needs_no_key(
    server: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["record", "--provider", "openai-chat", "--scenario", "single_call", "--out", str(tmp_path)]
    assert main([*argv, "--base-url", _base_url(server, "openai-chat")]) == 0, capsys.readouterr().err
    assert (tmp_path / "openai-chat" / "single_call.expected.json").is_file()
