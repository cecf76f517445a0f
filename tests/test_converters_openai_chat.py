"""OpenAIChatConverter: Chat Completions and the OpenAI-compatible dialects, through the real openai SDK."""

from __future__ import annotations

import itertools
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_converters_common import assert_contract, outcome_of, replay

from conformance.wire import to_sse
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import ArgumentSnapshotError, OpenAIChatConverter, iter_chunks

API = "openai-chat"
_OMIT = object()


def tc(
    index: Any = _OMIT,
    call_id: Any = _OMIT,
    name: Any = _OMIT,
    arguments: Any = _OMIT,
    *,
    kind: Any = _OMIT,
) -> dict[str, Any]:
    """One ``tool_calls[]`` entry; omitted keys are left out of the JSON."""
    entry: dict[str, Any] = {}
    if index is not _OMIT:
        entry["index"] = index
    if call_id is not _OMIT:
        entry["id"] = call_id
    if kind is not _OMIT:
        entry["type"] = kind
    function: dict[str, Any] = {}
    if name is not _OMIT:
        function["name"] = name
    if arguments is not _OMIT:
        function["arguments"] = arguments
    entry["function"] = function
    return entry


def chunk(
    *tool_calls: dict[str, Any],
    content: str | None = None,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
    **delta_extra: Any,
) -> dict[str, Any]:
    delta: dict[str, Any] = dict(delta_extra)
    if content is not None:
        delta["content"] = content
    if tool_calls:
        delta["tool_calls"] = list(tool_calls)
    payload: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        payload["usage"] = usage
    return payload


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


STOP = chunk(finish="tool_calls")


def run(*payloads: dict[str, Any], converter: OpenAIChatConverter | None = None) -> Any:
    outcome = replay(API, payloads, converter=converter)
    assert_contract(outcome)
    return outcome


# -- the OpenAI shape ---------------------------------------------------------------------------------


def test_openai_single_call_with_usage_chunk() -> None:
    outcome = run(
        chunk(role="assistant", content=None),
        chunk(tc(0, "call_1", "get_weather", "", kind="function")),
        chunk(tc(0, arguments='{"city": "Z')),
        chunk(tc(0, arguments='ürich 🌦"}')),
        STOP,
        usage_chunk(10, 5),
    )
    assert outcome.deltas == [
        ToolCallDelta(0, "call_1", "get_weather", None),
        ToolCallDelta(0, None, None, '{"city": "Z'),
        ToolCallDelta(0, None, None, 'ürich 🌦"}'),
    ]
    assert outcome.calls == [("get_weather", "call_1", {"city": "Zürich 🌦"})]
    assert outcome.terminal.finish_reason == "tool_calls"
    assert outcome.terminal.usage == TokenUsage(10, 5, 15)
    assert outcome.terminal.error is None


def test_parallel_calls_interleaved_by_index() -> None:
    outcome = run(
        chunk(tc(0, "c0", "weather", '{"city":')),
        chunk(tc(1, "c1", "time", '{"tz":')),
        chunk(tc(0, arguments='"NYC"}')),
        chunk(tc(1, arguments='"EST"}')),
        STOP,
    )
    assert outcome.calls == [("weather", "c0", {"city": "NYC"}), ("time", "c1", {"tz": "EST"})]


def test_sparse_wire_index_becomes_dense() -> None:
    outcome = run(chunk(content="Let me check."), chunk(tc(1, "toolu_1", "read_file", '{"path": "a"}')), STOP)
    assert outcome.indexes == [0]
    assert outcome.calls == [("read_file", "toolu_1", {"path": "a"})]


def test_same_provider_id_on_two_indexes_stays_two_calls() -> None:
    outcome = run(chunk(tc(0, "call_x", "read", '{"p": "a"}')), chunk(tc(1, "call_x", "read", '{"p": "b"}')), STOP)
    assert outcome.calls == [("read", "call_x", {"p": "a"}), ("read", "call_x", {"p": "b"})]


def test_several_entries_with_the_same_index_in_one_chunk() -> None:
    outcome = run(
        chunk(tc(0, "functions.list_files:0", "list_files", kind="function"), tc(0, arguments=' {"')),
        chunk(tc(0, arguments='path": "."}')),
        STOP,
    )
    assert outcome.calls == [("list_files", "functions.list_files:0", {"path": "."})]


# -- dialects -----------------------------------------------------------------------------------------


def test_missing_index_binds_continuations_to_the_open_call() -> None:
    outcome = run(
        chunk(tc(call_id="call_1", name="get_weather", arguments="", kind="function")),
        chunk(tc(arguments='{"city":')),
        chunk(tc(arguments='"Paris"}')),
        STOP,
    )
    assert outcome.calls == [("get_weather", "call_1", {"city": "Paris"})]


def test_missing_index_whole_calls_with_their_own_ids_are_separate_calls() -> None:
    outcome = run(
        chunk(tc(call_id="a1", name="add", arguments='{"a": 1}')),
        chunk(tc(call_id="m2", name="mul", arguments='{"b": 2}'), finish="tool_calls"),
    )
    assert outcome.calls == [("add", "a1", {"a": 1}), ("mul", "m2", {"b": 2})]


def test_missing_index_new_tool_name_after_arguments_is_a_new_call() -> None:
    outcome = run(
        chunk(tc(name="add", arguments='{"a": 1}')),
        chunk(tc(name="mul", arguments='{"b": 2}')),
        STOP,
    )
    assert outcome.calls == [("add", None, {"a": 1}), ("mul", None, {"b": 2})]


def test_missing_index_two_calls_in_one_chunk() -> None:
    outcome = run(chunk(tc(call_id="a", name="f", arguments="{}"), tc(call_id="b", name="g", arguments="{}")), STOP)
    assert outcome.calls == [("f", "a", {}), ("g", "b", {})]


def test_every_call_on_index_zero_with_changing_ids_is_a_new_call_each_time() -> None:
    outcome = run(
        chunk(tc(0, "call_a", "file_write", '{"filePath":')),
        chunk(tc(0, arguments='"hello.py"}')),
        chunk(tc(0, "call_b", "file_write", '{"filePath":"world.py"}')),
        STOP,
    )
    assert outcome.indexes == [0, 1]
    assert outcome.calls == [
        ("file_write", "call_a", {"filePath": "hello.py"}),
        ("file_write", "call_b", {"filePath": "world.py"}),
    ]


def test_id_repeated_on_every_chunk_is_one_call_and_sent_once() -> None:
    outcome = run(
        chunk(tc(0, "call_1", "f", '{"a"')),
        chunk(tc(0, "call_1", arguments=": 1")),
        chunk(tc(0, "call_1", arguments="}")),
        STOP,
    )
    assert outcome.calls == [("f", "call_1", {"a": 1})]
    assert [d.call_id for d in outcome.deltas] == ["call_1", None, None]


def test_id_only_on_a_later_chunk_is_adopted() -> None:
    outcome = run(
        chunk(tc(0, name="bash", arguments="")),
        chunk(tc(0, "call_123", arguments='{"cmd": "pwd"}')),
        STOP,
    )
    assert outcome.calls == [("bash", "call_123", {"cmd": "pwd"})]
    assert outcome.invocations[0].id == "call_123"


def test_id_only_on_a_later_chunk_without_index() -> None:
    outcome = run(chunk(tc(name="bash", arguments='{"cmd":')), chunk(tc(call_id="call_9", arguments='"ls"}')), STOP)
    assert outcome.calls == [("bash", "call_9", {"cmd": "ls"})]


@pytest.mark.parametrize("empty", ["", None, "null", "  "])
def test_empty_and_null_ids_and_names_on_continuations_change_nothing(empty: Any) -> None:
    outcome = run(
        chunk(tc(0, "call_1", "compose_plan", "", kind="function")),
        chunk(tc(0, empty, empty, '{"a":1}', kind="function")),
        chunk(tc(0, empty, empty, "")),
        STOP,
    )
    assert outcome.calls == [("compose_plan", "call_1", {"a": 1})]
    assert [d.name for d in outcome.deltas] == ["compose_plan", None]


def test_name_restated_on_each_chunk_is_sent_once() -> None:
    outcome = run(
        chunk(tc(0, "c1", "read_file", '{"pa')),
        chunk(tc(0, name="read_file", arguments='th":"x"}')),
        chunk(tc(0, name="read_file", arguments="")),
        STOP,
    )
    assert [d.name for d in outcome.deltas] == ["read_file", None]
    assert outcome.calls == [("read_file", "c1", {"path": "x"})]


def test_fragmented_name_is_forwarded_fragment_by_fragment() -> None:
    outcome = run(
        chunk(tc(0, "call_ab", "get_wea", '{"ci')),
        chunk(tc(0, name="ther", arguments='ty":"Paris"}')),
        STOP,
    )
    assert outcome.calls == [("get_weather", "call_ab", {"city": "Paris"})]


def test_arguments_before_the_name() -> None:
    outcome = run(
        chunk(tc(0, "call_123", arguments='{"command":')),
        chunk(tc(0, name="write_file", arguments=' "ls -la"}')),
        STOP,
    )
    assert outcome.calls == [("write_file", "call_123", {"command": "ls -la"})]


def test_whole_call_in_one_chunk_with_finish_reason_and_usage() -> None:
    outcome = run(
        chunk(
            tc(call_id="gSIMJiOkT", name="weather", arguments='{"location": "SF"}'),
            finish="tool_calls",
            usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        )
    )
    assert outcome.calls == [("weather", "gSIMJiOkT", {"location": "SF"})]
    assert outcome.terminal.usage == TokenUsage(3, 4, 7)


def test_azure_first_chunk_with_empty_choices_and_blank_ids() -> None:
    azure_first = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    }
    outcome = run(azure_first, chunk(tc(0, "call_1", "weather", "{}")), STOP)
    assert outcome.calls == [("weather", "call_1", {})]


def test_sse_comment_lines_are_ignored() -> None:
    sse = b": OPENROUTER PROCESSING\n\n" + to_sse(API, [chunk(tc(0, "c", "f", "{}")), STOP])
    outcome = replay(API, sse=sse)
    assert outcome.calls == [("f", "c", {})]


def test_message_and_delta_in_one_chunk_uses_the_delta() -> None:
    def both(delta: dict[str, Any], message: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "finish_reason": finish, "message": message, "delta": delta}]}

    header = {"tool_calls": [tc(0, "chatcmpl-tool-1", "get_weather", None)]}
    outcome = run(
        both(header, header),
        both({"tool_calls": [tc(0, None, None, '{"city": "Lima"}')]}, {"content": "snapshot, not a delta"}),
        both({"content": None}, {"tool_calls": [tc(0, "chatcmpl-tool-1", "get_weather", '{"city": "Lima"}')]}),
        both({}, {}, finish="tool_calls"),
    )
    assert outcome.calls == [("get_weather", "chatcmpl-tool-1", {"city": "Lima"})]
    assert outcome.text == ""


def test_finish_reason_stop_with_tool_calls_still_yields_the_calls() -> None:
    outcome = run(chunk(tc(0, "c1", "f", '{"a": 1}')), chunk(finish="stop"))
    assert outcome.calls == [("f", "c1", {"a": 1})]
    assert outcome.terminal.finish_reason == "stop"
    assert outcome.terminal.error is None


def test_tool_delta_and_finish_reason_in_the_same_chunk() -> None:
    outcome = run(chunk(content="ok"), chunk(tc(0, "c1", "f", "{}"), finish="tool_calls"))
    assert outcome.calls == [("f", "c1", {})]
    assert outcome.text == "ok"


def test_finish_reason_chunk_twice_and_usage_after_it() -> None:
    outcome = run(
        chunk(tc(0, "c", "f", "{}")),
        chunk(finish="tool_calls"),
        chunk(finish="tool_calls", usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
    )
    assert outcome.calls == [("f", "c", {})]
    assert outcome.terminal.usage == TokenUsage(1, 2, 3)


def test_empty_finish_reason_is_not_a_finish_reason() -> None:
    outcome = run(chunk(tc(0, "c1", "f", '{"a"'), finish=""), chunk(tc(0, arguments=":1}")))
    assert outcome.terminal.error == StreamError("incomplete", "the stream ended without a finish_reason")
    assert outcome.invocations == []


def test_string_index_is_read_as_an_int() -> None:
    outcome = run(chunk(tc("0", "c", "f", '{"a":')), chunk(tc(0, arguments="1}")), STOP)
    assert outcome.calls == [("f", "c", {"a": 1})]


def test_object_typed_arguments_are_serialised_once() -> None:
    outcome = run(chunk(tc(0, "call_i", "get_weather", {"city": "Zürich"})), STOP)
    assert outcome.arguments_of(0) == '{"city": "Zürich"}'
    assert outcome.calls == [("get_weather", "call_i", {"city": "Zürich"})]


def test_reasoning_content_and_reasoning_fields() -> None:
    outcome = run(
        chunk(reasoning_content="Deep"),
        chunk(reasoning="Seek", content="\n\n"),
        chunk(tc(0, "c", "f", "{}")),
        STOP,
    )
    assert outcome.reasoning == "DeepSeek"
    assert outcome.text == "\n\n"


def test_refusal_is_forwarded_as_content() -> None:
    outcome = run(chunk(refusal="I can't help with that."), chunk(finish="stop"))
    assert outcome.text == "I can't help with that."


def test_only_choice_zero_is_converted() -> None:
    two_choices = {
        "choices": [
            {"index": 0, "delta": {"content": "zero"}, "finish_reason": None},
            {"index": 1, "delta": {"content": "one"}, "finish_reason": None},
        ]
    }
    converter = OpenAIChatConverter()
    outcome = run(two_choices, chunk(finish="stop"), converter=converter)
    assert outcome.text == "zero"
    assert converter.ignored["choice other than 0"] == 1


def test_legacy_function_call_delta() -> None:
    outcome = run(
        chunk(function_call={"name": "f", "arguments": '{"a"'}),
        chunk(function_call={"arguments": ": 1}"}),
        chunk(finish="function_call"),
    )
    assert outcome.calls == [("f", None, {"a": 1})]


def test_unknown_tool_call_entry_type_is_counted_not_fatal() -> None:
    converter = OpenAIChatConverter()
    custom = {"index": 0, "id": "c", "type": "custom", "custom": {"name": "shell", "input": "ls"}}
    outcome = run(chunk(custom), chunk(finish="tool_calls"), converter=converter)
    assert outcome.calls == []
    assert converter.unknown_events == {"tool_calls entry type 'custom'": 1}


# -- cumulative arguments --------------------------------------------------------------------------------

_SNAPSHOTS = (
    chunk(tc(0, "c1", "search", '{"q":')),
    chunk(tc(0, arguments='{"q":"cats"')),
    chunk(tc(0, arguments='{"q":"cats"')),
    chunk(tc(0, arguments='{"q":"cats"}')),
    STOP,
)


def test_cumulative_arguments_option_turns_snapshots_into_deltas() -> None:
    outcome = run(*_SNAPSHOTS, converter=OpenAIChatConverter(cumulative_arguments=True))
    assert [d.arguments_delta for d in outcome.deltas] == ['{"q":', '"cats"', "}"]
    assert outcome.calls == [("search", "c1", {"q": "cats"})]


def test_cumulative_snapshots_without_the_option_are_an_invalid_call_not_a_guess() -> None:
    outcome = run(*_SNAPSHOTS)
    assert outcome.invocations == []
    assert outcome.calls == [("search", "c1", None)]


def test_cumulative_option_rejects_a_snapshot_that_does_not_extend_the_previous_one() -> None:
    with pytest.raises(ArgumentSnapshotError, match=r"does not extend the previous snapshot"):
        run(
            chunk(tc(0, "c1", "search", '{"q":')),
            chunk(tc(0, arguments='"cats"}')),
            converter=OpenAIChatConverter(cumulative_arguments=True),
        )


# -- abnormal ends ---------------------------------------------------------------------------------------


def test_length_is_truncation_and_the_open_call_is_not_executed() -> None:
    outcome = run(
        chunk(tc(0, "call_x", "write_file", '{"path": "x.py", "content": "def f():\\n')), chunk(finish="length")
    )
    assert outcome.terminal.finish_reason == "length"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "truncated"
    assert outcome.invocations == []
    assert outcome.ends[0].metadata["truncated"] is True


@pytest.mark.parametrize("reason", ["content_filter", "error"])
def test_filtered_or_errored_finish_is_a_provider_error(reason: str) -> None:
    outcome = run(chunk(tc(0, "c", "f", "{}")), chunk(finish=reason))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert outcome.invocations == []


def test_stream_without_finish_reason_is_incomplete() -> None:
    outcome = run(chunk(tc(0, "c1", "write_file", "")))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.ends[0].metadata["incomplete"] is True
    assert outcome.invocations == []


def test_in_band_error_object_raised_by_the_sdk_keeps_what_came_before() -> None:
    sse = to_sse(API, [chunk(content="maybe"), chunk(finish="length")]) + (
        b'data: {"error": {"message": "Token limit reached", "code": 400}}\n\ndata: [DONE]\n\n'
    )
    outcome = replay(API, sse=sse)
    assert_contract(outcome)
    assert outcome.text == "maybe"
    assert outcome.terminal.finish_reason == "length"
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "provider_error"
    assert "Token limit reached" in outcome.terminal.error.message


def test_groq_error_event_after_content() -> None:
    sse = to_sse(API, [chunk(content="maybe")]) + (
        b'event: error\ndata: {"error": {"message": "Tool choice is required", "code": "tool_use_failed"}}\n\n'
    )
    outcome = replay(API, sse=sse)
    assert outcome.text == "maybe"
    assert outcome.terminal.error is not None and "Tool choice is required" in outcome.terminal.error.message


def test_error_object_in_a_chunk_that_the_sdk_did_not_raise() -> None:
    # Chunks from elsewhere than the SDK's Stream (a proxy, a raw JSON-lines replay) can carry it.
    converter = OpenAIChatConverter()
    chunks = converter.convert(chunk(tc(0, "c", "f", '{"a":'))) + converter.convert(
        {"choices": [], "error": {"message": "queue full", "code": 503}}
    )
    outcome = outcome_of(chunks, converter)
    assert outcome.terminal.error == StreamError("provider_error", "503: queue full")
    assert outcome.invocations == []
    assert converter.finish() == []


# -- the chat.completions.stream() helper ----------------------------------------------------------------


def test_chat_completions_stream_helper_events() -> None:
    sse = to_sse(API, [chunk(content="Hi "), chunk(tc(0, "c1", "f", '{"a": 1}')), STOP]) + b"data: [DONE]\n\n"
    transport = httpx2.MockTransport(
        lambda _request: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse)
    )
    client = openai.OpenAI(api_key="test-key-not-a-real-secret", http_client=httpx2.Client(transport=transport))
    converter = OpenAIChatConverter()
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "x"}]) as stream:
        chunks = list(iter_chunks(converter, stream))
    outcome = outcome_of(chunks, converter)
    assert outcome.calls == [("f", "c1", {"a": 1})]
    assert outcome.text == "Hi "
    assert converter.ignored["helper event content.delta"] == 1


# -- byte-level splits ---------------------------------------------------------------------------------

SPLIT_BODY = to_sse(
    API,
    [
        chunk(reasoning_content="Thinking… 東京"),
        chunk(content="Checking ü and 🌦. "),
        chunk(tc(0, "call_a", "get_weather", '{"city": "Zü')),
        chunk(tc(1, "call_b", "get_time", '{"tz": "Asia/東')),
        chunk(tc(0, arguments='rich 🌦"}')),
        chunk(tc(1, arguments='京"}')),
        STOP,
        usage_chunk(7, 9),
    ],
).replace(b"\n\n", b"\r\n\r\n", 3)


def _pieces(body: bytes, cuts: list[int], empties: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(body)]
    pieces = [body[a:b] for a, b in itertools.pairwise(bounds)]
    for position in sorted(empties, reverse=True):
        pieces.insert(position % (len(pieces) + 1), b"")
    return pieces


def test_one_byte_pieces_give_the_one_piece_result() -> None:
    whole = replay(API, sse=SPLIT_BODY)
    assert whole.calls == [("get_weather", "call_a", {"city": "Zürich 🌦"}), ("get_time", "call_b", {"tz": "Asia/東京"})]
    single_bytes = [SPLIT_BODY[i : i + 1] for i in range(len(SPLIT_BODY))]
    assert replay(API, sse=SPLIT_BODY, pieces=single_bytes).summary == whole.summary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(0, len(SPLIT_BODY)), max_size=40),
    empties=st.lists(st.integers(0, 50), max_size=4),
)
def test_any_byte_split_gives_the_one_piece_result(cuts: list[int], empties: list[int]) -> None:
    whole = replay(API, sse=SPLIT_BODY)
    split = replay(API, sse=SPLIT_BODY, pieces=_pieces(SPLIT_BODY, cuts, empties))
    assert split.summary == whole.summary
