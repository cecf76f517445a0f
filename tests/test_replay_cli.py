"""``toolcall-conformance replay`` as a new user meets it: the JSON schema, and a clear error (exit 2) per bad file.

Every expected message names the file and says why; none of these may end in a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.turns.model import Call, Text, Turn, split_evenly
from conformance.turns.render import render_body
from conformance.wire import WIRE_APIS, bundled_cassette_dir, load_body

CASSETTES = bundled_cassette_dir()
TOOL_CALL_KEYS = {"index", "name", "call_id", "arguments", "raw_arguments", "error", "may_run", "why_not"}


def _replay_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["replay", "--json", *argv]) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


@pytest.mark.parametrize("via_sdk", [[], ["--via-sdk"]], ids=["payloads", "via-sdk"])
@pytest.mark.parametrize(
    ("cassette", "why_not"),
    [
        ("openai-chat/truncated_max_tokens", "truncated"),
        ("anthropic/stream_cut_mid_call", "incomplete"),
        ("cohere-v2/error_event_mid_call", "provider_error"),
    ],
)
def test_a_rejected_call_carries_its_error(
    cassette: str, why_not: str, via_sdk: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    document = _replay_json(capsys, str(CASSETTES / f"{cassette}.yaml"), *via_sdk)
    [call] = document["tool_calls"]  # type: ignore[misc]
    assert set(call) == TOOL_CALL_KEYS
    assert call["arguments"] is None
    assert call["error"] and "abnormally" in call["error"]
    assert (call["may_run"], call["why_not"]) == (False, why_not)
    assert document["error"]


def test_a_call_that_may_run_has_a_null_error(capsys: pytest.CaptureFixture[str]) -> None:
    document = _replay_json(capsys, str(CASSETTES / "bedrock-converse" / "parallel_two_tools.yaml"))
    assert [set(call) for call in document["tool_calls"]] == [TOOL_CALL_KEYS] * 2  # type: ignore[attr-defined]
    assert [call["error"] for call in document["tool_calls"]] == [None, None]  # type: ignore[attr-defined]
    assert [(c["may_run"], c["why_not"]) for c in document["tool_calls"]] == [(True, None)] * 2  # type: ignore[attr-defined]


def test_the_schema_document_lists_every_field_and_api() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "replay-schema.md").read_text(encoding="utf-8")
    for key in TOOL_CALL_KEYS - {"index"}:
        assert f"`tool_calls[].{key}`" in text
    assert all(api in text for api in WIRE_APIS)


# -- files a user may hand to replay ------------------------------------------------------------------

BODY = render_body(
    Turn((Text(("Caf\u00e9 ",)), Call("f", split_evenly('{"a": "\u00e9"}', 4), "call_1"))), "openai-chat"
)


def _bad_files(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (argv after ``replay``, a regular expression the error line must match)."""
    utf8_cut = BODY[: BODY.index("\u00e9".encode()) + 1]
    garbage = BODY.replace(b"data: [DONE]", b"data: {not json\n\ndata: [DONE]")
    files = {
        "cut.sse": utf8_cut,
        "garbage.sse": garbage,
        "binary.yaml": bytes(range(256)) * 8,
        "empty.sse": b"",
        "blank.sse": b"\n\n  \n",
        "openai.sse": BODY,
        "notes.txt": b"hello, this is not a stream\n",
        "broken.yaml": b"interactions: [unclosed\n",
        "nointeractions.yaml": b"version: 1\n",
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "a_directory").mkdir()
    where = str(tmp_path)
    return {
        "cut mid-UTF-8, via the SDK": (
            [f"{where}/cut.sse", "--format", "openai-chat", "--via-sdk"],
            r"cut\.sse: .*UTF-8",
        ),
        "cut mid-UTF-8, payloads": ([f"{where}/cut.sse", "--format", "openai-chat"], r"cut\.sse: line \d+: not UTF-8"),
        "garbage data line, via the SDK": ([f"{where}/garbage.sse", "--via-sdk"], r"garbage\.sse: .*JSONDecodeError"),
        "garbage data line, 3-byte pieces": (
            [f"{where}/garbage.sse", "--via-sdk", "--chunk-bytes", "3"],
            r"garbage\.sse: .*JSONDecodeError",
        ),
        "garbage data line, payloads": (
            [f"{where}/garbage.sse"],
            r"garbage\.sse: line \d+: a data: line that is not JSON",
        ),
        "binary .yaml": ([f"{where}/binary.yaml"], r"binary\.yaml: not UTF-8 text"),
        "binary .yaml, via the SDK": ([f"{where}/binary.yaml", "--via-sdk"], r"binary\.yaml: not UTF-8 text"),
        "binary .yaml, format given": ([f"{where}/binary.yaml", "--format", "gemini"], r"binary\.yaml: not UTF-8"),
        "another API's body": (
            [f"{where}/openai.sse", "--format", "anthropic"],
            r"nothing in this body belongs to anthropic",
        ),
        "not an event stream": ([f"{where}/openai.sse", "--format", "bedrock-invoke"], r"not one"),
        "empty file": ([f"{where}/empty.sse"], r"empty\.sse: the file is empty"),
        "blank file": ([f"{where}/blank.sse"], r"blank\.sse: the file is empty"),
        "not a stream": ([f"{where}/notes.txt"], r"notes\.txt: cannot tell the wire API: it holds no payload"),
        "broken YAML": ([f"{where}/broken.yaml"], r"broken\.yaml: not valid YAML"),
        "YAML without interactions": ([f"{where}/nointeractions.yaml"], r"needs a non-empty 'interactions' list"),
        "a directory": ([f"{where}/a_directory"], r"a_directory: is a directory"),
        "no such file": ([f"{where}/missing.sse"], r"missing\.sse: no such file"),
    }


def test_every_bad_file_is_a_clear_error_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for label, (argv, pattern) in _bad_files(tmp_path).items():
        for mode in ([], ["--json"]):
            code = main(["replay", *argv, *mode])
            captured = capsys.readouterr()
            assert code == 2, (label, captured)
            [line] = captured.err.strip().splitlines()
            assert line.startswith("toolcall-conformance: error: "), (label, line)
            assert re.search(pattern, line), (label, line)
            assert not captured.out, label


def test_no_traceback_from_the_console_script(tmp_path: Path) -> None:
    (tmp_path / "binary.yaml").write_bytes(bytes(range(256)))
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "replay", str(tmp_path / "binary.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "binary.yaml: not UTF-8 text" in result.stderr


def test_a_raw_binary_cassette_body_and_an_event_stream_file_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = CASSETTES / "bedrock-invoke" / "parallel_two_tools.yaml"
    raw = tmp_path / "parallel.eventstream.bin"
    raw.write_bytes(load_body(cassette).data)
    assert yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"][0]["response"]["body"]["string"][:4]
    from_cassette = _replay_json(capsys, str(cassette))
    assert _replay_json(capsys, str(raw)) == from_cassette
    assert _replay_json(capsys, str(raw), "--via-sdk", "--chunk-bytes", "5") == from_cassette
    assert from_cassette["format"] == "bedrock-invoke"


def _peak_rss_kib(path: Path) -> int:
    script = (
        "import resource, sys\n"
        "from conformance.cli import main\n"
        f"code = main(['replay', '--json', {str(path)!r}])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stderr.strip().splitlines()[-1])


def test_replay_memory_stays_within_a_few_times_the_body(tmp_path: Path) -> None:
    """Replay --json holds the body at most once: linear memory, well under 3x its size on top of the imports."""
    small, big = tmp_path / "small.sse", tmp_path / "big.sse"
    turn = Turn((Call("write_file", split_evenly(json.dumps({"content": "x" * 4_000_000}), 64), "call_1"),))
    big.write_bytes(render_body(turn, "openai-chat"))
    small.write_bytes(BODY)
    size_kib = big.stat().st_size // 1024
    assert size_kib > 10_000
    growth = _peak_rss_kib(big) - _peak_rss_kib(small)
    assert growth < 2 * size_kib, f"peak RSS grew by {growth} KiB for a {size_kib} KiB body"


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    body = tmp_path / "long.sse"
    turn = Turn((Text(tuple(["text "] * 20_000)),))
    body.write_bytes(render_body(turn, "openai-chat"))
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "replay", str(body)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"format: openai-chat")
    process.stdout.close()  # like `replay ... | head -1`
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    assert "Traceback" not in stderr
