"""OpenAIResponsesConverter: Responses API stream events through the real openai SDK."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_converters_common import assert_contract, outcome_of, replay

from conformance.wire import aiter_sdk_events, to_sse
from reference_impl import StreamError, TokenUsage, ToolCallDelta
from reference_impl.converters import OpenAIResponsesConverter, aiter_chunks

API = "openai-responses"
_sequence = itertools.count()


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": next(_sequence), **fields}


def response(status: str = "completed", output: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": output or [],
        "usage": {"input_tokens": 11, "output_tokens": 22, "total_tokens": 33},
        **extra,
    }


def fc_item(item_id: str, call_id: str | None, name: str | None, arguments: str = "", status: str = "in_progress"):
    item: dict[str, Any] = {"type": "function_call", "id": item_id, "arguments": arguments, "status": status}
    if call_id is not None:
        item["call_id"] = call_id
    if name is not None:
        item["name"] = name
    return item


def added(output_index: int, item: dict[str, Any]) -> dict[str, Any]:
    return event("response.output_item.added", output_index=output_index, item=item)


def item_done(output_index: int, item: dict[str, Any]) -> dict[str, Any]:
    return event("response.output_item.done", output_index=output_index, item=item)


def args_delta(item_id: str, output_index: int, delta: str) -> dict[str, Any]:
    return event("response.function_call_arguments.delta", item_id=item_id, output_index=output_index, delta=delta)


def args_done(item_id: str, output_index: int, arguments: str) -> dict[str, Any]:
    return event(
        "response.function_call_arguments.done", item_id=item_id, output_index=output_index, arguments=arguments
    )


CREATED = event("response.created", response=response("in_progress"))


def completed(*items: dict[str, Any]) -> dict[str, Any]:
    return event("response.completed", response=response("completed", list(items)))


def call_events(output_index: int, item_id: str, call_id: str, name: str, pieces: list[str]) -> list[dict[str, Any]]:
    whole = "".join(pieces)
    return [
        added(output_index, fc_item(item_id, call_id, name)),
        *(args_delta(item_id, output_index, piece) for piece in pieces),
        args_done(item_id, output_index, whole),
        item_done(output_index, fc_item(item_id, call_id, name, whole, "completed")),
    ]


def run(*payloads: dict[str, Any], converter: OpenAIResponsesConverter | None = None) -> Any:
    outcome = replay(API, payloads, converter=converter)
    assert_contract(outcome)
    return outcome


def test_message_reasoning_then_call_maps_output_index_to_a_dense_index_and_call_id_not_item_id() -> None:
    outcome = run(
        CREATED,
        added(0, {"type": "reasoning", "id": "rs_1", "summary": []}),
        event("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, summary_index=0, delta="Plan"),
        added(1, {"type": "message", "id": "msg_1", "role": "assistant", "content": [], "status": "in_progress"}),
        event("response.output_text.delta", item_id="msg_1", output_index=1, content_index=0, delta="Checking."),
        *call_events(2, "fc_68a1", "call_YHz", "lookup", ['{"q":', '"x"}']),
        completed(),
    )
    assert outcome.deltas[0] == ToolCallDelta(0, "call_YHz", "lookup", provider_metadata={"item_id": "fc_68a1"})
    assert outcome.calls == [("lookup", "call_YHz", {"q": "x"})]
    assert outcome.ends[0].metadata["provider_metadata"] == {"item_id": "fc_68a1"}
    assert outcome.reasoning == "Plan"
    assert outcome.text == "Checking."
    assert outcome.terminal.finish_reason == "completed"
    assert outcome.terminal.usage == TokenUsage(11, 22, 33)
    assert outcome.arguments_of(0) == '{"q":"x"}', "the .done snapshots add nothing when the deltas were complete"


def test_parallel_calls_interleaved_are_routed_by_item_id() -> None:
    outcome = run(
        added(1, fc_item("fc_1", "call_1", "weather")),
        added(2, fc_item("fc_2", "call_2", "time")),
        args_delta("fc_1", 1, '{"city":'),
        args_delta("fc_2", 2, '{"tz":'),
        args_delta("fc_1", 1, '"NYC"}'),
        args_delta("fc_2", 2, '"EST"}'),
        completed(),
    )
    assert outcome.calls == [("weather", "call_1", {"city": "NYC"}), ("time", "call_2", {"tz": "EST"})]


def test_deltas_routed_by_output_index_when_item_id_is_absent() -> None:
    outcome = run(
        added(3, fc_item("fc_1", "call_1", "f")),
        event("response.function_call_arguments.delta", output_index=3, delta='{"a": 1}'),
        completed(),
    )
    assert outcome.calls == [("f", "call_1", {"a": 1})]


def test_arguments_only_in_the_done_event_are_emitted_once() -> None:
    outcome = run(
        added(0, fc_item("fc_1", "call_1", "shell")),
        args_done("fc_1", 0, '{"cmd": "ls"}'),
        item_done(0, fc_item("fc_1", "call_1", "shell", '{"cmd": "ls"}', "completed")),
        completed(fc_item("fc_1", "call_1", "shell", '{"cmd": "ls"}', "completed")),
    )
    assert outcome.arguments_of(0) == '{"cmd": "ls"}'
    assert outcome.calls == [("shell", "call_1", {"cmd": "ls"})]


def test_arguments_only_in_output_item_done() -> None:
    outcome = run(
        added(0, fc_item("fc_1", "call_1", "shell")),
        item_done(0, fc_item("fc_1", "call_1", "shell", '{"cmd": "ls"}', "completed")),
        completed(),
    )
    assert outcome.calls == [("shell", "call_1", {"cmd": "ls"})]


def test_call_only_in_response_completed_output() -> None:
    converter = OpenAIResponsesConverter()
    outcome = run(completed(fc_item("fc_9", "call_9", "f", '{"x": 9}', "completed")), converter=converter)
    assert outcome.calls == [("f", "call_9", {"x": 9})]
    assert converter.problems


def test_arguments_on_output_item_added_are_a_snapshot_not_a_delta() -> None:
    restated = run(
        added(0, fc_item("fc_1", "c", "f", '{"a": 1}')),
        args_delta("fc_1", 0, '{"a": 1}'),
        args_done("fc_1", 0, '{"a": 1}'),
        completed(),
    )
    assert restated.arguments_of(0) == '{"a": 1}'
    only_added = run(added(0, fc_item("fc_1", "c", "f", '{"a": 1}')), completed())
    assert only_added.calls == [("f", "c", {"a": 1})]


def test_partial_deltas_completed_by_the_done_snapshot() -> None:
    outcome = run(added(0, fc_item("fc_1", "c", "f")), args_delta("fc_1", 0, '{"a":'), args_done("fc_1", 0, '{"a": 1}'))
    assert [d.arguments_delta for d in outcome.deltas] == [None, '{"a":', " 1}"]


def test_snapshot_contradicting_the_deltas_is_recorded_and_the_stream_kept() -> None:
    converter = OpenAIResponsesConverter()
    outcome = run(
        added(0, fc_item("fc_1", "c", "f")),
        args_delta("fc_1", 0, '{"a": 1}'),
        args_done("fc_1", 0, '{"a": 2}'),
        completed(),
        converter=converter,
    )
    assert outcome.calls == [("f", "c", {"a": 1})]
    assert any("does not extend" in problem for problem in converter.problems)


def test_delta_before_output_item_added_starts_a_nameless_call_that_gets_its_name_later() -> None:
    converter = OpenAIResponsesConverter()
    outcome = run(
        args_delta("fc_1", 0, '{"a": 1}'),
        item_done(0, fc_item("fc_1", "call_1", "f", '{"a": 1}', "completed")),
        completed(),
        converter=converter,
    )
    assert outcome.calls == [("f", "call_1", {"a": 1})]
    assert converter.problems


def test_late_call_id_on_output_item_done() -> None:
    outcome = run(
        added(0, fc_item("fc_1", None, "f")),
        args_delta("fc_1", 0, "{}"),
        item_done(0, fc_item("fc_1", "call_late", "f", "{}", "completed")),
        completed(),
    )
    assert outcome.calls == [("f", "call_late", {})]


def test_reasoning_text_deltas_of_compatible_servers() -> None:
    outcome = run(
        added(0, {"type": "reasoning", "id": "r", "summary": []}),
        event("response.reasoning_text.delta", item_id="r", output_index=0, content_index=0, delta="Let me think"),
        *call_events(1, "a1b2c3d4-uuid", "call_00_x", "get_temperature", ['{"city"', ': "Oslo"}']),
        completed(),
    )
    assert outcome.reasoning == "Let me think"
    assert outcome.calls == [("get_temperature", "call_00_x", {"city": "Oslo"})]


def test_server_tool_items_are_not_client_calls() -> None:
    converter = OpenAIResponsesConverter()
    search = {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}
    outcome = run(
        added(0, search),
        event("response.web_search_call.searching", item_id="ws_1", output_index=0),
        item_done(0, {**search, "status": "completed"}),
        *call_events(1, "fc_1", "call_1", "f", ["{}"]),
        completed(),
        converter=converter,
    )
    assert outcome.calls == [("f", "call_1", {})]
    assert converter.server_tool_calls == [{"type": "web_search_call", "id": "ws_1", "output_index": 0}]
    assert not converter.unknown_events


def test_custom_tool_calls_and_unknown_events_are_counted_not_fatal() -> None:
    converter = OpenAIResponsesConverter()
    outcome = run(
        added(0, {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "shell", "input": ""}),
        event("response.custom_tool_call_input.delta", item_id="ctc_1", output_index=0, delta="echo"),
        event("response.brand_new.delta", delta="?"),
        completed(),
        converter=converter,
    )
    assert outcome.calls == []
    assert converter.unknown_events == {
        "output item 'custom_tool_call'": 1,
        "event 'response.custom_tool_call_input.delta'": 1,
        "event 'response.brand_new.delta'": 1,
    }


def test_incomplete_max_output_tokens_is_truncation() -> None:
    outcome = run(
        added(0, fc_item("fc_1", "c", "write")),
        args_delta("fc_1", 0, '{"text": "abc'),
        event(
            "response.incomplete",
            response=response("incomplete", incomplete_details={"reason": "max_output_tokens"}),
        ),
    )
    assert outcome.terminal.finish_reason == "max_output_tokens"
    assert outcome.terminal.error == StreamError("truncated", "response.incomplete: max_output_tokens")
    assert outcome.invocations == []


def test_incomplete_content_filter_is_a_provider_error() -> None:
    outcome = run(
        added(0, fc_item("fc_1", "c", "f")),
        args_delta("fc_1", 0, "{}"),
        event("response.incomplete", response=response("incomplete", incomplete_details={"reason": "content_filter"})),
    )
    assert outcome.terminal.error == StreamError("provider_error", "response.incomplete: content_filter")
    assert outcome.invocations == []


def test_error_event_then_response_failed() -> None:
    outcome = run(
        CREATED,
        event("error", code="server_error", message="The server had an error", param=None),
        event("response.failed", response=response("failed", error={"code": "server_error", "message": "boom"})),
    )
    assert outcome.terminal.finish_reason == "failed"
    assert outcome.terminal.error == StreamError("provider_error", "server_error: The server had an error")


def test_response_failed_alone() -> None:
    outcome = run(
        *call_events(0, "fc_1", "c", "f", ["{}"]),
        event("response.failed", response=response("failed", error={"code": "rate_limit", "message": "slow down"})),
    )
    assert outcome.terminal.error == StreamError("provider_error", "rate_limit: slow down")
    assert outcome.invocations == []


def test_error_event_then_end_of_stream() -> None:
    outcome = run(CREATED, event("error", code="x", message="gone"))
    assert outcome.terminal.error == StreamError("provider_error", "x: gone")


def test_no_terminal_event_is_incomplete() -> None:
    outcome = run(added(0, fc_item("fc_1", "c", "f")), args_delta("fc_1", 0, "{}"))
    assert outcome.terminal.error is not None and outcome.terminal.error.kind == "incomplete"
    assert outcome.invocations == []


def test_refusal_delta_is_content() -> None:
    outcome = run(
        event("response.refusal.delta", item_id="m", output_index=0, content_index=0, delta="No."), completed()
    )
    assert outcome.text == "No."


def test_async_stream() -> None:
    sse = to_sse(API, [*call_events(1, "fc_1", "call_1", "f", ['{"a":', " 1}"]), completed()])

    async def run_async() -> list[Any]:
        return [chunk async for chunk in aiter_chunks(OpenAIResponsesConverter(), aiter_sdk_events(API, [sse]))]

    outcome = outcome_of(asyncio.run(run_async()), OpenAIResponsesConverter())
    assert outcome.calls == [("f", "call_1", {"a": 1})]
    assert outcome.summary == replay(API, sse=sse).summary


# -- byte-level splits ---------------------------------------------------------------------------------

SPLIT_BODY = (
    b": keep-alive comment\n\n"
    + to_sse(
        API,
        [
            CREATED,
            added(0, {"type": "reasoning", "id": "rs_1", "summary": []}),
            event("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, delta="Think… 東京"),
            added(1, fc_item("fc_a", "call_a", "get_weather")),
            added(2, fc_item("fc_b", "call_b", "get_time")),
            args_delta("fc_a", 1, '{"city": "Zü'),
            args_delta("fc_b", 2, '{"tz": "Asia/東'),
            args_delta("fc_a", 1, 'rich 🌦"}'),
            args_delta("fc_b", 2, '京"}'),
            completed(),
        ],
    )
).replace(b"\n\n", b"\r\n\r\n", 2)


def test_one_byte_pieces_give_the_one_piece_result() -> None:
    whole = replay(API, sse=SPLIT_BODY)
    assert whole.calls == [("get_weather", "call_a", {"city": "Zürich 🌦"}), ("get_time", "call_b", {"tz": "Asia/東京"})]
    single_bytes = [SPLIT_BODY[i : i + 1] for i in range(len(SPLIT_BODY))]
    assert replay(API, sse=SPLIT_BODY, pieces=single_bytes).summary == whole.summary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, len(SPLIT_BODY)), max_size=40), empties=st.lists(st.integers(0, 50), max_size=4))
def test_any_byte_split_gives_the_one_piece_result(cuts: list[int], empties: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SPLIT_BODY)]
    pieces = [SPLIT_BODY[a:b] for a, b in itertools.pairwise(bounds)]
    for position in empties:
        pieces.insert(position % (len(pieces) + 1), b"")
    assert replay(API, sse=SPLIT_BODY, pieces=pieces).summary == replay(API, sse=SPLIT_BODY).summary
