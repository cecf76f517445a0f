"""GeminiConverter: google-genai responses (Gemini API and Vertex partialArgs) through the real SDK."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_converters_common import assert_contract, outcome_of, replay

from conformance.wire import aiter_sdk_events, to_sse
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import GeminiConverter, aiter_chunks
from reference_impl.converters.gemini import JsonPathError, PartialArgsTextBuilder, parse_json_path

API = "gemini"
SIG = base64.b64encode(b"signature-bytes").decode("ascii")


def response(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test"}
    if usage is not None:
        payload["usageMetadata"] = usage
    return payload


def fc(
    name: str | None = None, args: Any = None, *, call_id: str | None = None, signature: str | None = None, **extra: Any
):
    call: dict[str, Any] = dict(extra)
    if name is not None:
        call["name"] = name
    if args is not None:
        call["args"] = args
    if call_id is not None:
        call["id"] = call_id
    part: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def partial(*leaves: dict[str, Any], will_continue: bool | None = True, name: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"partialArgs": list(leaves)}
    if will_continue is not None:
        call["willContinue"] = will_continue
    if name is not None:
        call["name"] = name
    return {"functionCall": call}


def leaf(path: str, more: bool | None = None, **value: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"jsonPath": path, **value}
    if more is not None:
        item["willContinue"] = more
    return item


END = {"functionCall": {}}
STOP = response(
    {"text": ""},
    finish="STOP",
    usage={"promptTokenCount": 5, "candidatesTokenCount": 7, "thoughtsTokenCount": 3, "totalTokenCount": 15},
)


def run(*payloads: dict[str, Any], converter: GeminiConverter | None = None) -> Any:
    outcome = replay(API, payloads, converter=converter)
    assert_contract(outcome)
    return outcome


# -- the Gemini API: whole calls -----------------------------------------------------------------------


def test_thought_text_and_parallel_calls_in_one_chunk() -> None:
    outcome = run(
        response({"text": "Let me think… 東京", "thought": True}),
        response(
            {"text": "Checking. "},
            fc("get_weather", {"city": "Zürich 🌦"}, signature=SIG),
            fc("get_time", {"tz": "Asia/東京"}),
        ),
        response(fc("get_weather", {"city": "Lima"}, call_id="96c1su3s")),
        STOP,
    )
    assert outcome.deltas == [
        ToolCallDelta(0, None, "get_weather", '{"city": "Zürich 🌦"}', provider_metadata={"thought_signature": SIG}),
        ToolCallDelta(1, None, "get_time", '{"tz": "Asia/東京"}'),
        ToolCallDelta(2, "96c1su3s", "get_weather", '{"city": "Lima"}'),
    ]
    assert outcome.calls == [
        ("get_weather", None, {"city": "Zürich 🌦"}),
        ("get_time", None, {"tz": "Asia/東京"}),
        ("get_weather", "96c1su3s", {"city": "Lima"}),
    ]
    assert outcome.ends[0].metadata["provider_metadata"] == {"thought_signature": SIG}
    assert "provider_metadata" not in outcome.ends[1].metadata
    assert outcome.reasoning == "Let me think… 東京"
    assert outcome.text == "Checking. "
    assert outcome.terminal.finish_reason == "STOP"
    assert outcome.terminal.usage == TokenUsage(5, 10, 15)


def test_nested_args_are_serialised_once_never_double_encoded() -> None:
    args = {"q": 'say "hi"\n', "n": [1, 2.5, None, True], "o": {"k": "ü"}}
    outcome = run(response(fc("f", args)), STOP)
    assert outcome.arguments_of(0) == json.dumps(args, ensure_ascii=False)
    assert outcome.calls == [("f", None, args)]


def test_absent_args_give_no_argument_text_and_an_empty_object() -> None:
    outcome = run(response(fc("get_conversation_data")), response(fc("g", {})), STOP)
    assert outcome.deltas == [ToolCallDelta(0, None, "get_conversation_data", None), ToolCallDelta(1, None, "g", "{}")]
    # (ENDs come in START order, and a call without argument text starts only at the end.)
    assert sorted(outcome.calls) == [("g", None, {}), ("get_conversation_data", None, {})]


def test_same_name_calls_without_ids_are_separate_calls() -> None:
    outcome = run(
        response(fc("read_file", {"path": "a.md"}, signature=SIG)),
        response(fc("read_file", {"path": "b.md"})),
        response(fc("read_file", {"path": "c.md"}), finish="STOP"),
    )
    assert [call[2] for call in outcome.calls] == [{"path": "a.md"}, {"path": "b.md"}, {"path": "c.md"}]


def test_a_call_restated_with_the_same_id_is_one_call_and_keeps_its_signature() -> None:
    converter = GeminiConverter()
    outcome = run(
        response(fc("search", {"q": "x"}, call_id="fc1")),
        response(fc("search", {"q": "x"}, call_id="fc1", signature=SIG), finish="STOP"),
        converter=converter,
    )
    assert outcome.calls == [("search", "fc1", {"q": "x"})]
    assert outcome.ends[0].metadata["provider_metadata"] == {"thought_signature": SIG}
    assert converter.ignored["restated functionCall (same id)"] == 1


def test_text_after_a_call_in_the_same_chunk_keeps_wire_order() -> None:
    outcome = run(response({"text": "before "}, fc("f", {}), {"text": "after"}), STOP)
    kinds = [(bool(chunk.content), bool(chunk.tool_calls)) for chunk in outcome.chunks]
    assert kinds[:2] == [(True, True), (True, False)]
    assert outcome.text == "before after"


def test_code_execution_parts_are_server_tools() -> None:
    converter = GeminiConverter()
    outcome = run(
        response({"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
        response({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}}),
        STOP,
        converter=converter,
    )
    assert outcome.calls == []
    assert converter.server_tool_calls == [{"type": "executable_code", "language": "PYTHON", "code": "print(1)"}]
    assert converter.server_tool_results == [{"type": "code_execution_result", "outcome": "OUTCOME_OK"}]


# -- ends ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["MAX_TOKENS", "CONTINUATION"])
def test_token_limits_are_truncation(reason: str) -> None:
    outcome = run(response(fc("f", {"a": 1})), response({"text": "x"}, finish=reason))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "truncated"
    assert outcome.terminal.finish_reason == reason
    assert outcome.invocations == []


@pytest.mark.parametrize("reason", ["SAFETY", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"])
def test_other_finish_reasons_are_provider_errors(reason: str) -> None:
    outcome = run(response(fc("f", {"a": 1})), response(finish=reason))
    assert outcome.terminal.error == StreamError("provider_error", f"finishReason={reason}")
    assert outcome.invocations == []


def test_no_finish_reason_is_incomplete() -> None:
    outcome = run(response(fc("f", {"a": 1})))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.invocations == []


def test_error_object_in_the_stream_is_raised_by_the_sdk_and_becomes_a_provider_error() -> None:
    sse = to_sse(API, [response({"text": "partial answer"})]) + (
        b'data: {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}\n\n'
    )
    outcome = replay(API, sse=sse)
    assert_contract(outcome)
    assert outcome.text == "partial answer"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "overloaded" in outcome.terminal.error.message


def test_blocked_prompt_is_a_provider_error() -> None:
    outcome = run({"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "gemini-test"})
    assert outcome.terminal.error == StreamError("provider_error", "the prompt was blocked: SAFETY")
    assert outcome.terminal.finish_reason == "SAFETY"


def test_unknown_parts_are_counted_not_fatal() -> None:
    converter = GeminiConverter()
    outcome = run(response({}, {"inlineData": {"mimeType": "image/png", "data": SIG}}), STOP, converter=converter)
    assert outcome.calls == []
    assert converter.unknown_events == {"part without a known field": 1}
    assert converter.ignored["part inline_data"] == 1


# -- Vertex partialArgs -----------------------------------------------------------------------------------

WEATHER_STREAMED = [
    response(fc("get_weather", willContinue=True, signature=SIG)),
    response(partial(leaf("$.location", True, stringValue="Zü"))),
    response(partial(leaf("$.location", True, stringValue='rich 🌦 "q"'))),
    response(partial(leaf("$.location", stringValue=""))),
    response(partial(leaf("$.days", numberValue=3))),
    response(partial(leaf("$.metric", boolValue=True), leaf("$.note", nullValue="NULL_VALUE"))),
    response(END),
]
WEATHER_ARGS = {"location": 'Zürich 🌦 "q"', "days": 3, "metric": True, "note": None}


def test_partial_args_are_streamed_as_json_text_that_parses_to_the_values() -> None:
    outcome = run(*WEATHER_STREAMED, STOP)
    assert outcome.calls == [("get_weather", None, WEATHER_ARGS)]
    fragments = [d.arguments_delta for d in outcome.deltas if d.arguments_delta]
    assert fragments == ['{"location":"Zü', 'rich 🌦 \\"q\\"', '","days":3', ',"metric":true', ',"note":null', "}"]
    assert outcome.deltas[0] == ToolCallDelta(0, None, "get_weather", provider_metadata={"thought_signature": SIG})
    assert json.loads(outcome.arguments_of(0)) == WEATHER_ARGS


def test_partial_args_arrays_of_objects_and_nested_paths() -> None:
    outcome = run(
        response(fc("writeItems", willContinue=True)),
        response(partial(leaf("$.operations[0].action", True, stringValue="add"))),
        response(partial(leaf("$.operations[0].action", stringValue=""))),
        response(partial(leaf("$.operations[0].price", numberValue=0.5))),
        response(partial(leaf("$.operations[1].action", stringValue="remove"))),
        response(
            partial(leaf("$.operations[1].tags[0]", stringValue="a"), leaf("$.operations[1].tags[1]", stringValue="b"))
        ),
        response(partial(leaf("$.matrix[0][0]", numberValue=1), leaf("$.matrix[0][1]", numberValue=2))),
        response(partial(leaf("$.matrix[1][0]", numberValue=-3.25), leaf("$['x.y']", stringValue="dot"))),
        # The last part lacks willContinue and no ``{}`` terminator follows: the text part ends the call.
        response(partial(leaf("$.owner.name", stringValue="Ann"), will_continue=None)),
        STOP,
    )
    assert outcome.calls == [
        (
            "writeItems",
            None,
            {
                "operations": [{"action": "add", "price": 0.5}, {"action": "remove", "tags": ["a", "b"]}],
                "matrix": [[1, 2], [-3.25]],
                "x.y": "dot",
                "owner": {"name": "Ann"},
            },
        )
    ]
    assert len([d for d in outcome.deltas if d.arguments_delta]) >= 9, "streamed, not buffered"


def test_streamed_calls_in_a_row_and_a_no_argument_call_before_them() -> None:
    streamed = []
    for screen in "ABC":
        streamed += [
            response(fc("read_screen", willContinue=True)),
            response(partial(leaf("$.id", True, stringValue=screen))),
            response(partial(leaf("$.id", stringValue=""))),
            response(END),
        ]
    outcome = run(
        response({"text": "thinking", "thought": True}), response(fc("read_theme", signature=SIG)), *streamed, STOP
    )
    assert outcome.indexes == [0, 1, 2, 3]
    assert sorted(json.dumps(call) for call in outcome.calls) == sorted(
        json.dumps(call)
        for call in [("read_theme", None, {}), *(("read_screen", None, {"id": screen}) for screen in "ABC")]
    )


def test_a_new_opener_ends_a_call_whose_last_part_lacked_will_continue() -> None:
    outcome = run(
        response(fc("f", willContinue=True)),
        response(partial(leaf("$.a", numberValue=1), will_continue=None)),
        response(fc("g", willContinue=True)),
        response(partial(leaf("$.b", numberValue=2), will_continue=None)),
        STOP,
    )
    assert outcome.calls == [("f", None, {"a": 1}), ("g", None, {"b": 2})]


def test_continuations_that_restate_the_name_and_bare_will_continue_parts() -> None:
    outcome = run(
        response(fc("plan", willContinue=True, call_id="p1")),
        response(partial(leaf("$.items[0]", stringValue="a"), name="plan")),
        response({"functionCall": {"willContinue": True}}),
        response(partial(leaf("$.items[1]", stringValue="b"), name="plan")),
        response(partial(leaf('$["x.y"]', numberValue=1), will_continue=False)),
        STOP,
    )
    assert outcome.calls == [("plan", "p1", {"items": ["a", "b"], "x.y": 1})]


def test_a_last_part_that_restates_the_name_with_will_continue_false_closes_the_call() -> None:
    outcome = run(
        response(fc("plan", willContinue=True)),
        response(partial(leaf("$.a", numberValue=1))),
        response(fc("plan", willContinue=False)),
        response(fc("plan", {"a": 2})),
        STOP,
    )
    assert outcome.calls == [("plan", None, {"a": 1}), ("plan", None, {"a": 2})]


def test_opener_that_already_carries_partial_args() -> None:
    outcome = run(response(partial(leaf("$.items[0]", stringValue="a"), name="plan")), response(END), STOP)
    assert outcome.calls == [("plan", None, {"items": ["a"]})]


def test_a_streamed_call_without_any_partial_args_has_empty_arguments() -> None:
    outcome = run(response(fc("now", willContinue=True)), response(END), STOP)
    assert outcome.calls == [("now", None, {})]


def test_partial_args_out_of_document_order_make_that_call_invalid_never_wrong() -> None:
    converter = GeminiConverter()
    outcome = run(
        response(fc("f", willContinue=True)),
        response(partial(leaf("$.a.x", numberValue=1), leaf("$.b", numberValue=2), leaf("$.a.y", numberValue=3))),
        response(END),
        response(fc("g", {"ok": True})),
        STOP,
        converter=converter,
    )
    assert outcome.calls == [("f", None, None), ("g", None, {"ok": True})]
    assert [inv.name for inv in outcome.invocations] == ["g"]
    assert any("already written" in problem for problem in converter.problems)


def test_an_unreadable_json_path_invalidates_the_call_instead_of_dropping_a_member() -> None:
    converter = GeminiConverter()
    outcome = run(
        response(fc("f", willContinue=True)),
        response(partial(leaf("$.a", numberValue=1), leaf("$.b[*]", numberValue=2))),
        response(partial(leaf("$.c", numberValue=3))),
        response(END),
        STOP,
        converter=converter,
    )
    assert outcome.calls == [("f", None, None)]
    assert outcome.arguments_of(0) == '{"a":1'
    assert len(converter.problems) == 1


def test_partial_args_without_an_open_call_start_a_nameless_call() -> None:
    converter = GeminiConverter()
    outcome = run(response(partial(leaf("$.a", numberValue=1))), response(END), STOP, converter=converter)
    assert outcome.calls == [(None, None, None)]
    assert converter.problems


def test_a_call_still_continuing_at_the_end_is_left_unterminated() -> None:
    converter = GeminiConverter()
    outcome = run(
        response(fc("f", willContinue=True)),
        response(partial(leaf("$.a", True, stringValue="x"))),
        STOP,
        converter=converter,
    )
    assert outcome.calls == [("f", None, None)]
    assert outcome.invocations == []
    assert any("willContinue" in problem for problem in converter.problems)


# -- the JSON-path text builder ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("$.a", ("a",)),
        ("$.a.b[0].c", ("a", "b", 0, "c")),
        ("$['x.y']", ("x.y",)),
        ('$["q\\"uote"][12]', ('q"uote', 12)),
        ("$['\\u00fc']", ("ü",)),
        ("$", ()),
    ],
)
def test_parse_json_path(path: str, segments: tuple[Any, ...]) -> None:
    assert parse_json_path(path) == segments


@pytest.mark.parametrize("path", ["a.b", "$.", "$[*]", "$[-1]", "$['open", "$.a..b", "$x", "$['a'x"])
def test_parse_json_path_rejects_what_it_cannot_read(path: str) -> None:
    with pytest.raises(JsonPathError):
        parse_json_path(path)


@pytest.mark.parametrize(
    "steps",
    [
        [("$.a[1]", 1)],  # gap
        [("$.a", 1), ("$.a", 2)],  # repeated scalar
        [("$.a", 1), ("$.a.b", 2)],  # scalar then object
        [("$[0]", 1)],  # root array
        [("$", 1)],  # root value
        [("$.a", float("nan"))],
    ],
)
def test_builder_refuses_leaves_it_cannot_append(steps: list[tuple[str, Any]]) -> None:
    builder = PartialArgsTextBuilder()
    with pytest.raises(JsonPathError):
        for path, value in steps:
            builder.add_scalar(parse_json_path(path), value)
    assert builder.failed
    assert builder.close() == ""


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False), st.text()
)
_KEYS = st.text(min_size=1, max_size=6)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=4), st.dictionaries(_KEYS, children, min_size=1, max_size=4)
    ),
    max_leaves=12,
)


def _leaves(value: Any, path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key, child in value.items() for leaf in _leaves(child, (*path, key))]
    if isinstance(value, list):
        return [leaf for position, child in enumerate(value) for leaf in _leaves(child, (*path, position))]
    return [(path, value)]


@settings(max_examples=200, deadline=None)
@given(args=st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5), data=st.data())
def test_builder_text_parses_to_the_object_whose_leaves_it_was_fed(args: dict[str, Any], data: Any) -> None:
    builder = PartialArgsTextBuilder()
    parts = []
    for path, value in _leaves(args, ()):
        if isinstance(value, str):
            cuts = sorted(data.draw(st.lists(st.integers(0, len(value)), max_size=4)))
            bounds = [0, *cuts, len(value)]
            for start, end in itertools.pairwise(bounds):
                parts.append(builder.add_string_piece(path, value[start:end]))
        else:
            parts.append(builder.add_scalar(path, value))
    parts.append(builder.close())
    assert json.loads("".join(parts)) == args


def test_async_stream() -> None:
    sse = to_sse(API, [*WEATHER_STREAMED, STOP])

    async def run_async() -> list[Any]:
        return [chunk async for chunk in aiter_chunks(GeminiConverter(), aiter_sdk_events(API, [sse]))]

    assert outcome_of(asyncio.run(run_async()), GeminiConverter()).summary == replay(API, sse=sse).summary


# -- byte-level splits ---------------------------------------------------------------------------------

SPLIT_BODY = to_sse(
    API,
    [
        response({"text": "Let me think… 東京", "thought": True}),
        response({"text": "Checking ü. "}, fc("get_weather", {"city": "Zürich 🌦"}, signature=SIG)),
        *WEATHER_STREAMED,
        STOP,
    ],
).replace(b"\n\n", b"\r\n\r\n", 4)


def test_one_byte_pieces_give_the_one_piece_result() -> None:
    whole = replay(API, sse=SPLIT_BODY)
    assert whole.calls == [("get_weather", None, {"city": "Zürich 🌦"}), ("get_weather", None, WEATHER_ARGS)]
    single_bytes = [SPLIT_BODY[i : i + 1] for i in range(len(SPLIT_BODY))]
    assert replay(API, sse=SPLIT_BODY, pieces=single_bytes).summary == whole.summary


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, len(SPLIT_BODY)), max_size=40), empties=st.lists(st.integers(0, 50), max_size=4))
def test_any_byte_split_gives_the_one_piece_result(cuts: list[int], empties: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SPLIT_BODY)]
    pieces = [SPLIT_BODY[a:b] for a, b in itertools.pairwise(bounds)]
    for position in empties:
        pieces.insert(position % (len(pieces) + 1), b"")
    assert replay(API, sse=SPLIT_BODY, pieces=pieces).summary == replay(API, sse=SPLIT_BODY).summary
