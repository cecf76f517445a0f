"""Which calls may run (``may_run``, ``why_not``): derived from the recording, in one place.

The expected values here are hand-checked: each bundled recording's marker below was read in its
body (the stop reason, the error event, or the terminal event that is missing), and the test holds
the body to it before it compares the derived reason with the value written here. The stop-reason
table is held to the installed SDKs' own type definitions.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.wire import WIRE_APIS, WireFormatError, bundled_cassette_dir, load_body, load_expectation
from conformance.wire.final import read_final_result
from conformance.wire.may_run import PRECEDENCE, STOP_REASONS, WHY_NOT, derive_may_run, stream_why_not
from conformance.wire.outcome import ExpectedToolCall, Outcome, sdk_outcome
from conformance.wire.replay import compare_outcomes, replay_body

CASSETTES = bundled_cassette_dir()
REAL = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"


# -- the vocabulary and the stop-reason table ------------------------------------------------------


def test_the_vocabulary_is_small_documented_and_ordered() -> None:
    vocabulary = ["provider_error", "incomplete", "truncated", "no_name", "invalid_arguments"]
    assert list(WHY_NOT) == list(PRECEDENCE) == vocabulary
    for word, meaning in WHY_NOT.items():
        assert meaning, word


def _literal(annotation: Any) -> set[str]:
    """The strings of a ``Literal`` (inside ``Optional`` / ``Union`` too)."""
    values: set[str] = set()
    for arg in typing.get_args(annotation):
        if isinstance(arg, str):
            values.add(arg)
        else:
            values |= _literal(arg)
    return values


def _sdk_stop_reasons() -> dict[str, set[str]]:
    """Every stop reason each installed SDK declares, as ``Outcome.finish_reason`` holds it."""
    import botocore.session
    from anthropic.types import StopReason
    from cohere.types import ChatFinishReason
    from google.genai.types import FinishReason
    from openai.types.chat.chat_completion_chunk import Choice
    from openai.types.responses.response import IncompleteDetails
    from openai.types.responses.response_status import ResponseStatus

    bedrock = botocore.session.get_session().get_service_model("bedrock-runtime").shape_for("StopReason")
    anthropic = _literal(StopReason)
    return {
        "openai-chat": _literal(Choice.model_fields["finish_reason"].annotation),
        # A terminal response's incomplete_details.reason, else its status; in_progress and
        # queued are never a terminal event's status.
        "openai-responses": (_literal(ResponseStatus) - {"in_progress", "queued"})
        | _literal(IncompleteDetails.model_fields["reason"].annotation),
        "anthropic": anthropic,
        "bedrock-invoke": anthropic,
        "gemini": {member.value for member in FinishReason},
        # ollama-python types done_reason as str: the server's values (llm.DoneReason and the
        # load / unload requests of server/routes.go).
        "ollama": {"stop", "length", "load", "unload"},
        "bedrock-converse": set(bedrock.enum),
        "cohere-v2": _literal(ChatFinishReason),
    }


@pytest.mark.parametrize("api", WIRE_APIS)
def test_every_stop_reason_the_sdk_declares_is_classified_once(api: str) -> None:
    reasons = STOP_REASONS[api]
    classes = [reasons.normal, reasons.truncated, reasons.failed]
    assert sum(len(c) for c in classes) == len(set().union(*classes)), "a stop reason in two classes"
    assert set().union(*classes) == _sdk_stop_reasons()[api]


def test_no_stop_reason_means_two_things_in_two_apis() -> None:
    # What makes the every-API reading of a third-party expectation (its format is not a wire API
    # name) exact.
    meaning: dict[str, str] = {}
    for reasons in STOP_REASONS.values():
        for kind in ("normal", "truncated", "failed"):
            for value in getattr(reasons, kind):
                assert meaning.setdefault(value, kind) == kind, value


# The stop reasons of the brief, each read off its SDK's type definition (see the table test).
TRUNCATION = [
    ("openai-chat", "length"),
    ("openai-responses", "max_output_tokens"),
    ("anthropic", "max_tokens"),
    ("bedrock-invoke", "max_tokens"),
    ("gemini", "MAX_TOKENS"),
    ("bedrock-converse", "max_tokens"),
    ("cohere-v2", "MAX_TOKENS"),
    ("ollama", "length"),
]


@pytest.mark.parametrize(("api", "reason"), TRUNCATION)
def test_each_apis_token_limit_is_truncated(api: str, reason: str) -> None:
    assert stream_why_not(api, reason, None) == "truncated"
    assert stream_why_not("some_third_party_format", reason, None) == "truncated"


def test_stream_precedence() -> None:
    # An error object beside a token-limit stop (OpenRouter's "Token limit reached"): provider_error.
    assert stream_why_not("openai-chat", "length", {"code": 400, "message": "Token limit reached"}) == "provider_error"
    assert stream_why_not("openai-chat", None, "incomplete: the stream ended without a finish_reason") == "incomplete"
    assert stream_why_not("openai-chat", "length", "truncated: finish_reason='length'") == "truncated"
    assert stream_why_not("openai-responses", "failed", "incomplete: cut") == "provider_error"
    assert stream_why_not("anthropic", "end_turn", None) is None
    assert stream_why_not("anthropic", "pause_turn", None) is None
    assert stream_why_not("openai-chat", "eos", None) is None  # a dialect's own value: no reason


# -- calls ------------------------------------------------------------------------------------------


def test_why_not_is_one_word_of_the_vocabulary() -> None:
    with pytest.raises(ValueError, match="not one of"):
        ExpectedToolCall("f", None, {}, "{}", why_not="filtered")


def test_the_stream_comes_before_the_call_and_no_name_before_invalid_arguments() -> None:
    outcome = Outcome(
        "openai-chat",
        [
            ExpectedToolCall(None, "c1", None, "{"),
            ExpectedToolCall("f", "c2", None, "{"),
            ExpectedToolCall("g", "c3", {}, ""),
        ],
    )
    assert [c.why_not for c in outcome.tool_calls] == ["no_name", "invalid_arguments", None]
    outcome.finish_reason = "length"
    assert [c.why_not for c in derive_may_run(outcome).tool_calls] == ["truncated"] * 3
    outcome.finish_reason = "stop"
    assert [c.may_run for c in derive_may_run(outcome).tool_calls] == [False, False, True]


# -- bundled recordings, hand-checked per wire API --------------------------------------------------


def _wire_text(path: Path) -> str:
    """The response body of a cassette as text, base64 ``bytes`` fields (Bedrock InvokeModel) decoded."""
    body = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["response"]["body"]["string"]
    text = body if isinstance(body, str) else body.decode("latin-1")
    inner = [base64.b64decode(b).decode("utf-8") for b in re.findall(r'"bytes":"([A-Za-z0-9+/=]+)"', text)]
    return "\n".join([text, *inner])


# (cassette, what its body says (present) or lacks (absent), each call's why_not), read by hand.
HAND_CHECKED: list[tuple[str, str, bool, list[str | None]]] = [
    ("openai-chat/truncated_max_tokens", '"finish_reason":"length"', True, ["truncated"]),
    ("openai-chat/error_event_mid_call", 'data: {"error":{"message":"Overloaded"', True, ["provider_error"]),
    ("openai-chat/single_call", '"finish_reason":"tool_calls"', True, [None]),
    (
        "openai-responses/truncated_max_tokens",
        '"incomplete_details":{"reason":"max_output_tokens"}',
        True,
        ["truncated"],
    ),
    ("openai-responses/error_event_mid_call", '"type":"response.failed"', True, ["provider_error"]),
    ("anthropic/truncated_max_tokens", '"stop_reason":"max_tokens"', True, ["truncated"]),
    ("anthropic/stream_cut_after_arguments", "message_stop", False, ["incomplete"]),
    ("gemini/single_call", '"finishReason":"STOP"', True, [None]),
    # The one chunk holds the whole call, and no finishReason ever comes.
    ("gemini/stream_cut_after_arguments", "finishReason", False, ["incomplete"]),
    ("ollama/single_call", '"done_reason":"stop"', True, [None]),
    ("ollama/stream_cut_after_arguments", '"done":true', False, ["incomplete"]),
    ("bedrock-converse/truncated_max_tokens", '{"stopReason":"max_tokens"', True, ["truncated"]),
    ("bedrock-converse/error_event_mid_call", "modelStreamErrorException", True, ["provider_error"]),
    ("bedrock-invoke/truncated_max_tokens", '"stop_reason":"max_tokens"', True, ["truncated"]),
    ("bedrock-invoke/stream_cut_mid_call", "message_stop", False, ["incomplete"]),
    ("cohere-v2/truncated_max_tokens", '"finish_reason":"MAX_TOKENS"', True, ["truncated"]),
    ("cohere-v2/error_event_mid_call", '"finish_reason":"ERROR","error":"Overloaded"', True, ["provider_error"]),
]


def test_every_wire_api_has_a_hand_checked_recording() -> None:
    apis = {name.split("/")[0] for name, _, _, why in HAND_CHECKED if any(why)}
    assert apis == set(WIRE_APIS)


@pytest.mark.parametrize(("name", "marker", "present", "why_not"), HAND_CHECKED, ids=[h[0] for h in HAND_CHECKED])
def test_derived_why_not_is_the_hand_checked_one(name: str, marker: str, present: bool, why_not: list[str]) -> None:
    cassette = CASSETTES / f"{name}.yaml"
    assert (marker in _wire_text(cassette)) is present
    expected = load_expectation(CASSETTES / f"{name}.expected.json")
    assert [c.why_not for c in expected.tool_calls] == why_not
    assert [c.may_run for c in expected.tool_calls] == [w is None for w in why_not]
    # The reference pipeline's own reading of the body (replay --json) says the same.
    replayed = replay_body(load_body(cassette)).outcome
    assert [c.why_not for c in replayed.tool_calls] == why_not


# Whole-call APIs cannot truncate or break a call mid-way (Gemini and Ollama send each call whole):
# their truncated and failed recordings carry text only, so the stream-level reason is checked.
HAND_CHECKED_STREAMS = [
    ("gemini/truncated_max_tokens", '"finishReason":"MAX_TOKENS"', "truncated"),
    ("gemini/error_after_text", 'data: {"error":{"code":503', "provider_error"),
    ("ollama/truncated_max_tokens", '"done":true,"done_reason":"length"', "truncated"),
    ("ollama/error_after_text", '{"error":"Overloaded"}', "provider_error"),
]


@pytest.mark.parametrize(("name", "marker", "why_not"), HAND_CHECKED_STREAMS, ids=[h[0] for h in HAND_CHECKED_STREAMS])
def test_whole_call_apis_stream_level_reason_is_the_hand_checked_one(name: str, marker: str, why_not: str) -> None:
    assert marker in _wire_text(CASSETTES / f"{name}.yaml")
    expected = load_expectation(CASSETTES / f"{name}.expected.json")
    assert expected.tool_calls == []
    assert stream_why_not(expected.api, expected.finish_reason, expected.error) == why_not


def test_stored_fields_are_the_derived_ones() -> None:
    """The bundled expectations store may_run / why_not (written by the corpus writer); each equals
    what the derivation gives from the same file without them."""
    checked = 0
    for path in sorted(CASSETTES.rglob("*.expected.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        stored = document["expected"]["tool_calls"]
        for call in document["expected"]["tool_calls"]:
            assert {"may_run", "why_not"} <= set(call), path
        stripped = dict(document["expected"])
        stripped["tool_calls"] = [{k: v for k, v in call.items() if k not in ("may_run", "why_not")} for call in stored]
        derived = _load(path.parent, {"expected": stripped}, path.name)
        assert [(c["may_run"], c["why_not"]) for c in stored] == [(c.may_run, c.why_not) for c in derived.tool_calls]
        checked += len(stored)
    assert checked > 150


def _load(folder: Path, document: dict[str, Any], name: str = "x.expected.json") -> Outcome:
    path = folder / f"_copy_{name}"
    try:
        path.write_text(json.dumps(document), encoding="utf-8")
        return load_expectation(path)
    finally:
        path.unlink()


# -- truncated calls whose arguments parse ----------------------------------------------------------

# Written by hand: a call whose arguments are complete JSON, then the token limit.
TRUNCATED_BUT_PARSING = {
    "openai-chat": (
        "x.sse",
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":'
        '{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\"}"}}]},"finish_reason":null}]}\n\n'
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        '"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n',
    ),
    # Gemini sends a call whole: a token limit after it leaves arguments that parse.
    "gemini": (
        "x.sse",
        'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather",'
        '"args":{"city":"Paris"},"id":"g1"}}]},"index":0,"finishReason":"MAX_TOKENS"}],"modelVersion":"m"}\n\n',
    ),
}


@pytest.mark.parametrize("api", sorted(TRUNCATED_BUT_PARSING))
def test_a_truncated_call_whose_arguments_parse_may_not_run(api: str, tmp_path: Path) -> None:
    filename, text = TRUNCATED_BUT_PARSING[api]
    path = tmp_path / filename
    path.write_text(text, encoding="utf-8")
    body = load_body(path, api)
    expected = sdk_outcome(api, body.data)
    [call] = expected.tool_calls
    assert call.arguments == {"city": "Paris"}
    assert (call.may_run, call.why_not) == (False, "truncated")
    # The reference pipeline does not run it, and the comparison accepts that...
    replayed = replay_body(body).outcome
    assert [(c.arguments, c.why_not) for c in replayed.tool_calls] == [(None, "truncated")]
    assert compare_outcomes(expected, replayed) == []
    # ...while a target that runs it is caught, even when it reports no error (nothing else says
    # the turn was truncated but the finish reason).
    runs_it = Outcome(api, [ExpectedToolCall("get_weather", call.call_id, {"city": "Paris"}, call.raw_arguments)])
    assert compare_outcomes(expected, runs_it) == [
        f"call 0 (get_weather, id {call.call_id!r}): must not be executable (the provider cut the turn at its "
        "token limit), got arguments {'city': 'Paris'}"
    ]
    # replay --json says so too.
    assert main(["replay", "--json", str(path), "--format", api]) == 0


def test_replay_json_carries_the_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--json", str(CASSETTES / "anthropic" / "truncated_max_tokens.yaml")]) == 0
    [call] = json.loads(capsys.readouterr().out)["tool_calls"]
    assert list(call) == ["index", "name", "call_id", "arguments", "raw_arguments", "error", "may_run", "why_not"]
    assert (call["may_run"], call["why_not"]) == (False, "truncated")
    assert main(["replay", "--json", str(CASSETTES / "anthropic" / "single_call.yaml")]) == 0
    [call] = json.loads(capsys.readouterr().out)["tool_calls"]
    assert (call["may_run"], call["why_not"]) == (True, None)


# -- a stack's answer -------------------------------------------------------------------------------


def test_a_stack_answer_carries_the_fields() -> None:
    answer = {
        "tool_calls": [
            {"id": "c1", "name": "get_weather", "raw_arguments": '{"city": "Paris"}', "arguments": {"city": "Paris"}},
            ("c2", "write_file", '{"path": ', "invalid JSON at offset 9"),
            {"id": "c3", "name": None, "raw_arguments": "{}", "arguments": {}},
        ],
        "text": "",
    }
    outcome, _, _ = read_final_result(answer, "anthropic")
    assert [(c.may_run, c.why_not) for c in outcome.tool_calls] == [
        (True, None),
        (False, "invalid_arguments"),
        (False, "no_name"),
    ]
    # The answer's own account of the stream counts: it says the token limit cut the turn.
    outcome, _, _ = read_final_result({**answer, "finish_reason": "max_tokens"}, "anthropic")
    assert [c.why_not for c in outcome.tool_calls] == ["truncated"] * 3
    assert outcome.to_json()["tool_calls"][0]["may_run"] is False


def test_an_error_the_target_reports_does_not_excuse_withholding_a_call_that_may_run() -> None:
    # Before may_run, any error in the target's answer exempted every call from the comparison.
    expected = load_expectation(CASSETTES / "openai-chat" / "single_call.expected.json")
    [want] = expected.tool_calls
    withheld = Outcome(
        "openai-chat",
        [ExpectedToolCall(want.name, want.call_id, None, want.raw_arguments, "refused")],
        finish_reason="tool_calls",
        error="provider_error: spurious",
    )
    assert compare_outcomes(expected, withheld) == [
        f"call 0 (get_weather, id {want.call_id!r}): expected arguments {want.arguments}, got an error END"
    ]


# -- third-party expectations -----------------------------------------------------------------------


def test_third_party_expectations_without_the_fields_load_derived(tmp_path: Path) -> None:
    document = {
        "expected": {
            "format": "anthropic_messages_sse",
            "tool_calls": [
                {"id": "toolu_1", "name": "make_file", "arguments": None, "arguments_raw": '{"filename": "t'},
                {"id": "toolu_2", "name": "ls", "arguments": {}, "arguments_raw": "{}"},
            ],
            "text": "",
            "finish_reason": "max_tokens",
            "error": None,
        }
    }
    path = tmp_path / "x.expected.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert [(c.may_run, c.why_not) for c in load_expectation(path).tool_calls] == [(False, "truncated")] * 2
    document["expected"]["finish_reason"] = "tool_use"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert [c.why_not for c in load_expectation(path).tool_calls] == ["invalid_arguments", None]


def test_stated_fields_must_be_the_derived_ones(tmp_path: Path) -> None:
    for name in ("truncated_max_tokens.yaml", "truncated_max_tokens.expected.json"):
        shutil.copy(CASSETTES / "openai-chat" / name, tmp_path)
    path = tmp_path / "truncated_max_tokens.expected.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["expected"]["tool_calls"][0]["why_not"] = "invalid_arguments"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(WireFormatError, match=r"tool_calls\[0\]\.why_not is 'invalid_arguments'.*'truncated'"):
        load_expectation(path)
    assert main(["cassettes", "check", str(tmp_path)]) == 1


@pytest.mark.skipif(not REAL.is_dir(), reason=f"no real recordings under {REAL} (not in the repository)")
def test_a_real_truncated_recording() -> None:
    # anthropics/anthropic-sdk-python's fixture: input_json stops mid-string, stop_reason max_tokens.
    path = REAL / "anthropic" / "truncated_max_tokens_partial_json.expected.json"
    assert '"stop_reason":"max_tokens"' in (path.with_name("truncated_max_tokens_partial_json.sse")).read_text()
    assert [(c.name, c.why_not) for c in load_expectation(path).tool_calls] == [("make_file", "truncated")]
