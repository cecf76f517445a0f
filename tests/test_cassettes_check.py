"""'cassettes check': our corpus is clean, and planted problems are reported with file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.corpus.hygiene import check_cassettes
from conformance.wire.cases import bundled_cassette_dir, discover_cases

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
    assert folders == {"openai-chat", "openai-responses", "anthropic", "gemini", "openai-compatible"}
    assert len(list(discover_cases([CORPUS / "openai-compatible"]))) >= 8
    assert len(list(discover_cases([CORPUS]))) >= 48


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
