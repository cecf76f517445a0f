"""'cassettes check': our corpus is clean, and planted problems are reported with file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.corpus.hygiene import check_cassettes
from conformance.wire import WIRE_APIS
from conformance.wire.cases import bundled_cassette_dir, discover_cases
from conformance.wire.eventstream import encode_message

CORPUS = bundled_cassette_dir()
SAMPLE = CORPUS / "openai-chat" / "single_call.yaml"
# Assembled at run time so that no key-shaped literal sits in the repository.
PLANTED_KEY = "sk-ant-api03-" + "Zq9" * 12


def _copy_sample(tmp_path: Path) -> Path:
    target = tmp_path / "sample.yaml"
    shutil.copy(SAMPLE, target)
    shutil.copy(SAMPLE.with_name("single_call.expected.json"), tmp_path / "sample.expected.json")
    return target


def test_bundled_corpus_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cassettes", "check", str(CORPUS)]) == 0
    assert "clean" in capsys.readouterr().out


def test_corpus_has_every_wire_api_and_the_dialects() -> None:
    folders = {case.body_path.parent.name for case in discover_cases([CORPUS])}
    assert folders == {*WIRE_APIS, "openai-compatible", "multiturn"} - {"multiturn"} | (folders & {"multiturn"})
    assert len(list(discover_cases([CORPUS / "openai-compatible"]))) >= 8
    assert len(list(discover_cases([CORPUS]))) >= 150


def test_every_cassette_says_how_it_was_made() -> None:
    for case in discover_cases([CORPUS]):
        text = case.body_path.read_text(encoding="utf-8")
        assert "origin: written" in text, case.name
        assert "checked_with:" in text, case.name


def test_planted_key_is_reported_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = _copy_sample(tmp_path)
    lines = cassette.read_text(encoding="utf-8").splitlines()
    lines.insert(3, f"  note: {PLANTED_KEY}")
    cassette.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["cassettes", "check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{cassette}:4:" in err
    assert PLANTED_KEY not in err  # the report does not re-print the secret


@pytest.mark.parametrize(
    ("header", "value"),
    [("authorization", "Bearer " + "t0k" * 9), ("x-goog-api-key", "AIza" + "k3y" * 12), ("cookie", "a=b")],
)
def test_unscrubbed_credential_headers_are_rejected(tmp_path: Path, header: str, value: str) -> None:
    cassette = _copy_sample(tmp_path)
    text = cassette.read_text(encoding="utf-8").replace(
        "      content-type:\n      - application/json",
        f"      content-type:\n      - application/json\n      {header}:\n      - {value}",
        1,
    )
    cassette.write_text(text, encoding="utf-8")
    messages = [str(finding) for finding in check_cassettes([tmp_path])]
    assert any(header in message and "sample.yaml:" in message for message in messages), messages


def test_missing_expectation_and_broken_yaml_are_reported(tmp_path: Path) -> None:
    cassette = _copy_sample(tmp_path)
    (tmp_path / "sample.expected.json").unlink()
    (tmp_path / "broken.yaml").write_text("interactions: [\n", encoding="utf-8")
    messages = [str(finding) for finding in check_cassettes([tmp_path])]
    assert any("no expectation" in m and str(cassette) in m for m in messages), messages
    assert any("broken.yaml" in m and "vcrpy" in m for m in messages), messages


@pytest.mark.parametrize("argv", [["missing_dir"], ["empty_dir"]])
def test_nothing_to_check_is_exit_2_never_clean(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty_dir").mkdir()
    assert main(["cassettes", "check", *(str(tmp_path / name) for name in argv)]) == 2
    captured = capsys.readouterr()
    assert "nothing was checked" in captured.err and "clean" not in captured.out


def test_an_anthropic_key_is_called_an_anthropic_key(tmp_path: Path) -> None:
    cassette = _copy_sample(tmp_path)
    cassette.write_text(
        cassette.read_text(encoding="utf-8").replace(
            "  origin: written", f"  origin: written\n  note: {PLANTED_KEY}", 1
        ),
        encoding="utf-8",
    )
    [finding] = [f for f in check_cassettes([tmp_path]) if "key" in f.message]
    assert "Anthropic key" in finding.message and "OpenAI" not in finding.message


@pytest.mark.parametrize("side", ["request", "response"])
@pytest.mark.parametrize("header", ["x-goog-api-key", "api-key", "authorization", "Authorization"])
def test_credential_headers_are_secret_whatever_their_value(tmp_path: Path, side: str, header: str) -> None:
    # Values with no known key prefix: nothing pattern-shaped, still a credential.
    cassette = _copy_sample(tmp_path)
    marker = (
        "      content-type:\n      - application/json"
        if side == "request"
        else "      content-type:\n      - text/event-stream"
    )
    text = cassette.read_text(encoding="utf-8")
    assert marker in text
    cassette.write_text(text.replace(marker, f"{marker}\n      {header}:\n      - plainvalue42", 1), encoding="utf-8")
    messages = [str(finding) for finding in check_cassettes([tmp_path])]
    assert any(f"{side} header {header!r}" in message for message in messages), messages


def test_a_key_folded_by_a_yaml_line_continuation_is_found(tmp_path: Path) -> None:
    cassette = _copy_sample(tmp_path)
    half = len(PLANTED_KEY) // 2
    folded = f'  note: "{PLANTED_KEY[:half]}\\\n    {PLANTED_KEY[half:]}"'
    text = cassette.read_text(encoding="utf-8").replace("  origin: written", "  origin: written\n" + folded, 1)
    cassette.write_text(text, encoding="utf-8")
    assert PLANTED_KEY not in cassette.read_text(encoding="utf-8")  # no line holds it whole
    findings = [f for f in check_cassettes([tmp_path]) if "Anthropic key" in f.message]
    note_line = next(n for n, line in enumerate(text.splitlines(), start=1) if line.startswith("  note:"))
    assert [f.line for f in findings] == [note_line]


def test_a_key_inside_a_binary_event_stream_body_is_found(tmp_path: Path) -> None:
    import base64
    import json

    cassette = tmp_path / "invoke.yaml"
    shutil.copy(CORPUS / "bedrock-invoke" / "text_only.yaml", cassette)
    shutil.copy(CORPUS / "bedrock-invoke" / "text_only.expected.json", tmp_path / "invoke.expected.json")
    event = json.dumps({"type": "ping", "leak": PLANTED_KEY}).encode()
    frame = encode_message(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
        json.dumps({"bytes": base64.b64encode(event).decode()}).encode(),
    )
    import yaml

    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    document["interactions"][0]["response"]["body"]["string"] = (
        frame + document["interactions"][0]["response"]["body"]["string"]
    )
    cassette.write_text(yaml.safe_dump(document), encoding="utf-8")
    assert PLANTED_KEY[:12] not in cassette.read_text(encoding="utf-8")  # only base64 in the file
    assert any("Anthropic key" in f.message for f in check_cassettes([tmp_path]))
