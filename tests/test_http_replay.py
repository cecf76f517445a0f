"""conformance.http_replay in this process: chunking, routes, cases, the network guard, and the two
engines that need no ``httpx`` alias (vcrpy, and botocore for Bedrock).

The respx engine needs ``import httpx`` to be ``httpx2``, which this test process cannot have
(respx's pytest plugin imported the real httpx at startup): it is exercised in subprocesses by
``tests/test_http_replay_pytest.py``. Every expected outcome comes from a recording's expectation
file (bundled, real, or written here by hand from the payloads), never from the code under test.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.http_replay import (
    ROUTES,
    Chunking,
    MissingExpectationError,
    NetworkBlockedError,
    NotRequestedError,
    ReplayOptionError,
    UnknownCassetteError,
    UnroutedRequestError,
    UnsupportedWireApiError,
    cassette_cases,
    cuts_strategy,
    find_case,
    load_recording,
    replay_cassette,
    route_for,
    split_at,
)
from conformance.http_replay.guard import block_network
from conformance.http_replay.routes import route_matching
from conformance.wire import bundled_cassette_dir, load_body

BUNDLED = bundled_cassette_dir()
REAL_RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"

# -- chunking ----------------------------------------------------------------------------------


@given(body=st.binary(max_size=300), size=st.integers(1, 64))
def test_fixed_size_pieces_rebuild_the_body(body: bytes, size: int) -> None:
    pieces = Chunking.of(chunk_bytes=size).pieces(body)
    assert b"".join(pieces) == body
    assert all(0 < len(piece) <= size for piece in pieces) or body == b""
    assert all(len(piece) == size for piece in pieces[:-1])


@given(body=st.binary(min_size=1, max_size=300), cuts=st.lists(st.integers(-5, 400), max_size=20))
def test_cut_pieces_end_exactly_at_the_cuts_inside_the_body(body: bytes, cuts: list[int]) -> None:
    pieces = split_at(body, [cut for cut in cuts if cut >= 0])
    assert b"".join(pieces) == body
    ends, position = [], 0
    for piece in pieces[:-1]:
        position += len(piece)
        ends.append(position)
    assert ends == sorted({cut for cut in cuts if 0 < cut < len(body)})


@given(data=st.data(), length=st.integers(0, 500))
def test_cuts_strategy_draws_sorted_distinct_offsets_inside_the_body(data: st.DataObject, length: int) -> None:
    cuts = data.draw(cuts_strategy(length))
    assert list(cuts) == sorted(set(cuts))
    assert all(0 < cut < length for cut in cuts)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"chunk_bytes": 0}, "positive"),
        ({"chunk_bytes": -3}, "positive"),
        ({"chunk_bytes": True}, "positive"),
        ({"cuts": [4, -1]}, "offsets"),
        ({"cuts": [1.5]}, "offsets"),
        ({"chunk_bytes": 4, "cuts": [2]}, "not both"),
    ],
)
def test_bad_chunking_options_are_a_typed_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ReplayOptionError, match=message):
        Chunking.of(**options)


def test_chunking_says_how_to_ask_for_it_again() -> None:
    assert Chunking.of(chunk_bytes=7).describe() == "chunk_bytes=7"
    assert Chunking.of(cuts=[40, 12, 40]).describe() == "cuts=[12, 40]"
    assert Chunking.of().describe() == "whole body (one piece)"
    assert Chunking.of().pieces(b"abc") == [b"abc"]


# -- routes ------------------------------------------------------------------------------------

# The URL each client library sends a streaming request to (from the providers' API references).
CANONICAL_URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    "ollama": "http://127.0.0.1:11434/api/chat",
    "cohere-v2": "https://api.cohere.com/v2/chat",
    "bedrock-converse": "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/converse-stream",
    "bedrock-invoke": (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/invoke-with-response-stream"
    ),
}


def test_every_wire_api_has_a_route_and_only_its_own_matches_its_url() -> None:
    from urllib.parse import urlsplit

    assert set(ROUTES) == set(CANONICAL_URLS)
    for api, url in CANONICAL_URLS.items():
        path = urlsplit(url).path
        assert [route.api for route in ROUTES.values() if route.matches("POST", path)] == [api]
        assert not ROUTES[api].matches("GET", path)


def test_routes_match_any_host_so_proxies_and_compatible_servers_work() -> None:
    route = route_for("openai-chat")
    assert route.matches("POST", "/api/v1/chat/completions")  # OpenRouter
    assert route.matches("POST", "/openai/deployments/gpt/chat/completions")  # Azure
    assert "<any host>" in route.describe()


@pytest.mark.parametrize(
    ("api", "path", "body", "reason"),
    [
        ("openai-chat", "/v1/chat/completions", b'{"stream": false}', '"stream": true'),
        ("openai-chat", "/v1/chat/completions", b'{"model": "m"}', '"stream": true'),
        ("anthropic", "/v1/messages", b'{"max_tokens": 5}', '"stream": true'),
        ("gemini", "/v1/models/gemini-x:generateContent", b"{}", "non-streaming"),
        ("bedrock-converse", "/model/m/converse", b"{}", "non-streaming"),
    ],
)
def test_a_request_for_a_complete_response_is_refused_with_the_reason(
    api: str, path: str, body: bytes, reason: str
) -> None:
    assert reason in (route_for(api).refuses("POST", path, body) or "")


def test_a_streaming_request_is_not_refused() -> None:
    assert route_for("openai-chat").refuses("POST", "/v1/chat/completions", b'{"stream": true}') is None
    assert route_for("gemini").refuses("POST", "/v1/models/g:streamGenerateContent", b"{}") is None


def test_unknown_wire_api_is_a_typed_error_naming_the_supported_ones() -> None:
    with pytest.raises(UnsupportedWireApiError, match=r"openai-chat.*bedrock-invoke"):
        route_for("mistral-native")
    assert route_matching("GET", "/v1/models") is None


# -- cases -------------------------------------------------------------------------------------


def test_a_bundled_cassette_is_found_by_id_by_tail_and_by_path() -> None:
    by_id = find_case("openai-chat/parallel_two_tools")
    assert by_id.body_path == BUNDLED / "openai-chat" / "parallel_two_tools.yaml"
    assert find_case("openai-chat/parallel_two_tools.yaml") == by_id
    assert find_case("interleaved_parallel_calls").id == "openai-compatible/interleaved_parallel_calls"
    assert find_case(by_id.body_path).body_path == by_id.body_path
    assert by_id.expected().tool_calls[1].name == "get_time"


def test_an_ambiguous_or_unknown_id_is_a_typed_error_with_candidates() -> None:
    with pytest.raises(UnknownCassetteError, match=r"anthropic/single_call.*gemini/single_call"):
        find_case("single_call")
    with pytest.raises(UnknownCassetteError, match="openai-chat/parallel_two_tools"):
        find_case("openai-chat/parallel_two_tool")
    with pytest.raises(UnknownCassetteError, match="does not exist"):
        find_case("x", dirs=["/nonexistent/recordings"])


def test_your_folders_are_searched_before_the_bundled_cassettes(tmp_path: Path) -> None:
    mine = tmp_path / "openai-chat"
    mine.mkdir()
    for name in ("single_call.yaml", "single_call.expected.json"):
        (mine / name).write_bytes((BUNDLED / "openai-chat" / name).read_bytes())
    assert find_case("openai-chat/single_call", dirs=[tmp_path]).body_path == mine / "single_call.yaml"
    assert find_case("openai-chat/single_call", dirs=[tmp_path], bundled=False).id == "openai-chat/single_call"


def test_cassette_cases_select_by_glob_and_by_wire_api() -> None:
    chat = cassette_cases("openai-chat/*")
    assert sorted(case.id for case in chat) == sorted(
        f"openai-chat/{path.stem}" for path in (BUNDLED / "openai-chat").glob("*.yaml")
    )
    gemini = cassette_cases(apis=["gemini"])
    assert {case.id.split("/")[-2] for case in gemini} == {"gemini"}
    assert len(gemini) == len(list((BUNDLED / "gemini").glob("*.yaml"))) + len(
        list((BUNDLED / "multiturn" / "gemini").glob("*.yaml"))
    )
    compatible = cassette_cases("openai-compatible/*", apis=["openai-chat"])
    assert len(compatible) == len(list((BUNDLED / "openai-compatible").glob("*.yaml")))


def test_cassette_cases_matching_nothing_is_an_error_not_an_empty_list() -> None:
    with pytest.raises(UnknownCassetteError, match="no recording matches"):
        cassette_cases("open-ai-chat/*")
    with pytest.raises(UnknownCassetteError, match="wire APIs"):
        cassette_cases("openai-chat/*", apis=["anthropic"])
    with pytest.raises(UnsupportedWireApiError):
        cassette_cases(apis=["openai"])


def test_a_multi_turn_cassette_serves_one_response_per_request_in_order() -> None:
    path = BUNDLED / "multiturn" / "anthropic" / "weather_and_time.yaml"
    recording = load_recording(path)
    assert recording.api == "anthropic"
    assert len(recording.responses) == 2
    assert recording.responses[-1].body == load_body(path).sse  # the last turn, as the wire layer reads it
    assert b"tool_use" in recording.responses[0].body
    assert all(response.status == 200 for response in recording.responses)


def test_a_recording_without_expectation_replays_but_has_nothing_to_hand_back(tmp_path: Path) -> None:
    body = tmp_path / "mine.sse"
    body.write_bytes(load_body(BUNDLED / "openai-chat" / "single_call.yaml").sse)
    case = find_case(body)
    assert load_recording(body).api == "openai-chat"
    with pytest.raises(MissingExpectationError, match=r"mine\.expected\.json"):
        case.expected()


# Bodies of the wire APIs whose libraries do not speak SSE, written here by hand.
OLLAMA_LINES = [
    {"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}, "done": False},
    {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
]  # fmt: skip
CONVERSE_EVENTS = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tu-1", "name": "get_weather"}}}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"city": '}}}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '"Oslo"}'}}}},
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"messageStop": {"stopReason": "tool_use"}},
]
CONVERSE_EXPECTED = {
    "expected": {
        "tool_calls": [{"name": "get_weather", "call_id": "tu-1", "arguments": {"city": "Oslo"}}],
        "text": "",
        "finish_reason": "tool_use",
    }
}


def _write_lines(path: Path, payloads: list[dict[str, Any]], expected: dict[str, Any] | None = None) -> Path:
    path.write_text("".join(json.dumps(payload) + "\n" for payload in payloads), encoding="utf-8")
    if expected is not None:
        path.with_name(path.stem + ".expected.json").write_text(json.dumps(expected), encoding="utf-8")
    return path


def test_ndjson_and_event_stream_recordings_are_told_apart(tmp_path: Path) -> None:
    from conformance.wire.eventstream import iter_messages

    ollama = load_recording(_write_lines(tmp_path / "o.jsonl", OLLAMA_LINES))
    assert ollama.api == "ollama"
    assert [json.loads(line) for line in ollama.responses[0].body.splitlines()] == OLLAMA_LINES
    converse = load_recording(_write_lines(tmp_path / "c.jsonl", CONVERSE_EVENTS))
    assert converse.api == "bedrock-converse"
    frames = list(iter_messages(converse.responses[0].body))
    assert [frame.headers[":event-type"] for frame in frames] == [next(iter(event)) for event in CONVERSE_EVENTS]
    with pytest.raises(UnsupportedWireApiError, match="cannot tell"):
        load_recording(_write_lines(tmp_path / "x.jsonl", [{"hello": "world"}]))


# -- the network guard -------------------------------------------------------------------------


def test_the_guard_refuses_non_loopback_connections_and_lookups_and_records_them() -> None:
    attempts: list[str] = []
    original = socket.socket.connect
    with block_network(attempts):
        with pytest.raises(NetworkBlockedError, match=r"203\.0\.113\.7"):
            socket.create_connection(("203.0.113.7", 443), timeout=0.5)  # TEST-NET-3: never routed anyway
        with pytest.raises(NetworkBlockedError, match=r"example\.com"):
            socket.getaddrinfo("example.com", 443)
    assert len(attempts) == 2
    assert socket.socket.connect is original


def test_the_guard_lets_loopback_through() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def accept_one() -> None:
        server.accept()[0].close()

    accepted = threading.Thread(target=accept_one)
    accepted.start()
    attempts: list[str] = []
    with block_network(attempts), socket.create_connection(server.getsockname(), timeout=5):
        pass
    accepted.join(5)
    server.close()
    assert attempts == []


# -- the vcrpy engine (no alias needed: vcrpy patches httpx2 itself) ---------------------------


def _openai_calls(client: Any) -> list[tuple[str | None, str, str]]:
    calls: dict[int, list[Any]] = {}
    for chunk in client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True):
        for choice in chunk.choices:
            for fragment in choice.delta.tool_calls or []:
                call = calls.setdefault(fragment.index, [None, "", ""])
                call[0] = call[0] or fragment.id
                call[1] += fragment.function.name or "" if fragment.function else ""
                call[2] += fragment.function.arguments or "" if fragment.function else ""
    return [tuple(call) for _, call in sorted(calls.items())]  # type: ignore[misc]


def test_vcrpy_plays_a_bundled_cassette_to_a_plain_client_even_behind_another_base_url() -> None:
    import openai

    with replay_cassette("openai-chat/parallel_two_tools", engine="vcrpy") as replay:
        direct = _openai_calls(openai.OpenAI(max_retries=0))
    with replay_cassette("openai-chat/parallel_two_tools", engine="vcrpy"):
        proxied = _openai_calls(openai.OpenAI(max_retries=0, base_url="https://llm-proxy.internal/openai/v1"))
    expected = [(call.call_id, call.name, call.raw_arguments) for call in replay.expected.tool_calls]
    assert direct == proxied == expected
    assert replay.played == 1


def test_vcrpy_fails_loudly_on_a_request_the_cassette_does_not_hold() -> None:
    import anthropic
    from vcr.errors import CannotOverwriteExistingCassetteException

    # anthropic wraps whatever its transport raises as APIConnectionError; vcrpy's refusal is the cause.
    with (
        pytest.raises(anthropic.APIConnectionError) as raised,
        replay_cassette("openai-chat/single_call", engine="vcrpy"),
    ):
        anthropic.Anthropic(max_retries=0).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}], stream=True
        )
    assert isinstance(raised.value.__cause__, CannotOverwriteExistingCassetteException)
    assert any("vcrpy holds no response" in note for note in raised.value.__notes__)


def test_vcrpy_does_not_cut_bodies_and_says_so() -> None:
    with (
        pytest.raises(ReplayOptionError, match="one piece"),
        replay_cassette("openai-chat/single_call", engine="vcrpy", chunk_bytes=3),
    ):
        pass
    with (
        pytest.raises(ReplayOptionError, match="unknown engine"),
        replay_cassette(
            "openai-chat/single_call",
            engine="httpretty",  # type: ignore[arg-type]
        ),
    ):
        pass


def test_a_replay_nobody_asked_for_fails() -> None:
    with (
        pytest.raises(NotRequestedError, match="never sent"),
        replay_cassette("openai-chat/single_call", engine="vcrpy"),
    ):
        pass


# -- Bedrock through botocore's HTTP session (no alias needed) ----------------------------------


def _converse_calls(pieces_of: dict[str, Any]) -> list[tuple[str, str, Any]]:
    import boto3

    # Fake credentials given outright: botocore signs before the replay sees the request, and
    # where it would look for credentials depends on what ran earlier in the process.
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    response = client.converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "x"}]}])
    calls: dict[int, list[Any]] = {}
    for event in response["stream"]:
        if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
            use = event["contentBlockStart"]["start"]["toolUse"]
            calls[event["contentBlockStart"]["contentBlockIndex"]] = [use["toolUseId"], use["name"], ""]
        elif "contentBlockDelta" in event and "toolUse" in event["contentBlockDelta"]["delta"]:
            calls[event["contentBlockDelta"]["contentBlockIndex"]][2] += event["contentBlockDelta"]["delta"]["toolUse"][
                "input"
            ]
        elif "messageStop" in event:
            pieces_of["stop"] = event["messageStop"]["stopReason"]
    return [(call_id, name, json.loads(raw)) for _, (call_id, name, raw) in sorted(calls.items())]


@pytest.mark.parametrize("chunk_bytes", [None, 1, 5])
def test_bedrock_converse_is_served_through_botocore_in_pieces(tmp_path: Path, chunk_bytes: int | None) -> None:
    pytest.importorskip("boto3")
    body = _write_lines(tmp_path / "converse.jsonl", CONVERSE_EVENTS, CONVERSE_EXPECTED)
    seen: dict[str, Any] = {}
    with replay_cassette(body, chunk_bytes=chunk_bytes) as replay:
        calls = _converse_calls(seen)
    assert calls == [(call.call_id, call.name, call.arguments) for call in replay.expected.tool_calls]
    assert seen["stop"] == replay.expected.finish_reason
    assert replay.requests[0].url.endswith("/model/m/converse-stream")
    if chunk_bytes == 1:
        assert len(replay.pieces()) == len(replay.recording.responses[0].body)


@pytest.mark.skipif(not (REAL_RECORDINGS / "bedrock").is_dir(), reason="../shared/real-recordings is not here")
@pytest.mark.parametrize(
    "name", ["converse_claude3_haiku_tool_only.eventstream.bin", "converse_jsonl_handwritten_two_tools.jsonl"]
)
def test_real_bedrock_recordings_replay_to_their_expectation(name: str) -> None:
    pytest.importorskip("boto3")
    with replay_cassette(REAL_RECORDINGS / "bedrock" / name, chunk_bytes=7) as replay:
        calls = _converse_calls({})
    assert calls == [(call.call_id, call.name, call.arguments) for call in replay.expected.tool_calls]


def test_a_non_streaming_bedrock_call_is_refused_not_sent(tmp_path: Path) -> None:
    boto3 = pytest.importorskip("boto3")
    body = _write_lines(tmp_path / "converse.jsonl", CONVERSE_EVENTS, CONVERSE_EXPECTED)
    # Fake credentials given outright: botocore signs before the replay sees the request, and
    # where it would look for credentials depends on what ran earlier in the process.
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    with pytest.raises(UnroutedRequestError, match="non-streaming"), replay_cassette(body):
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "x"}]}])


def test_without_botocore_a_bedrock_replay_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("botocore")
    from conformance.http_replay import MissingDependencyError

    body = _write_lines(tmp_path / "converse.jsonl", CONVERSE_EVENTS, CONVERSE_EXPECTED)
    monkeypatch.setitem(sys.modules, "botocore.httpsession", None)
    with pytest.raises(MissingDependencyError, match="pip install boto3"), replay_cassette(body):
        pass


def test_a_named_group_selects_every_single_turn_recording_of_a_wire_api_with_its_dialects() -> None:
    from conformance.http_replay import cassette_cases

    group = {case.id for case in cassette_cases("@openai-chat")}
    plain = {case.id for case in cassette_cases("openai-chat/*")}
    dialects = {case.id for case in cassette_cases("openai-compatible/*")}
    assert group == plain | dialects and len(dialects) >= 18  # the glob alone misses every dialect
    assert not any(case_id.startswith("multiturn/") for case_id in group)
    assert {case.id for case in cassette_cases("@anthropic")} == {case.id for case in cassette_cases("anthropic/*")}
