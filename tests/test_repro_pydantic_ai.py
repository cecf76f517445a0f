"""Direct reproductions for pydantic-ai's streamed parts (no toolcall-conformance).

The production path: ``OpenAIChatModel`` over an ``AsyncOpenAI`` client whose HTTP response (an
``httpx2.MockTransport``) is a Chat Completions SSE body, streamed with
``pydantic_ai.direct.model_request_stream``: the part start/delta/end events its ``StreamedResponse``
yields, and the final ``ModelResponse``. Where the question is what an agent runs, the same model
runs inside an ``Agent`` with a typed tool. Each test asserts one behaviour of ``docs/matrix.md``.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (pip install '.[adapters]')")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.direct import model_request_stream  # noqa: E402
from pydantic_ai.messages import ModelRequest, PartDeltaEvent, PartEndEvent, PartStartEvent, UserPromptPart  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from tests.repro_chat_sse import serving, sse, tc  # noqa: E402


def model(*bodies):
    client = serving(*bodies)
    return OpenAIChatModel("m", provider=OpenAIProvider(openai_client=client))


def stream(*deltas, finish="tool_calls"):
    """The part events of one streamed response and the final ModelResponse."""

    async def go():
        async with model_request_stream(
            model(sse(*deltas, finish=finish)), [ModelRequest(parts=[UserPromptPart("hi")])]
        ) as s:
            return [e async for e in s], s.get()

    return asyncio.run(go())


def shape(events):
    out = []
    for e in events:
        if isinstance(e, PartStartEvent):
            out.append(("start", e.index, getattr(e.part, "tool_name", None), getattr(e.part, "tool_call_id", None)))
        elif isinstance(e, PartDeltaEvent):
            out.append(("delta", e.index))
        elif isinstance(e, PartEndEvent):
            out.append(("end", e.index, getattr(e.part, "tool_name", None), getattr(e.part, "args", None)))
    return out


def tool_parts(response):
    return [(p.tool_name, p.args, p.tool_call_id) for p in response.parts if p.part_kind == "tool-call"]


# --- defects: the failing cells -------------------------------------------------------------------


def test_nameless_call_before_a_named_one_crashes_the_stream_with_index_error():
    # no_crash: the nameless call on index 0 gets no part, and closing part 1 indexes past the parts list
    with pytest.raises(IndexError):
        stream(
            {
                "tool_calls": [
                    {"index": 0, "id": "c0", "function": {"arguments": "{}"}},
                    {"index": 1, "id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                ]
            }
        )


def test_after_a_nameless_call_part_end_events_carry_the_wrong_part():
    # no_crash (same cause): the hidden nameless call shifts the parts, so the PartEndEvent of
    # get_weather's part (index 1) carries do-it's part
    events = []
    body = sse(
        {"tool_calls": [{"index": 0, "id": "c0", "function": {"arguments": "{}"}}]},
        tc(1, "c1", "get_weather", '{"city": "Oslo"}'),
        tc(2, "c2", "do-it", "{}"),
    )

    async def go():
        async with model_request_stream(model(body), [ModelRequest(parts=[UserPromptPart("hi")])]) as s:
            async for e in s:
                events.append(e)

    with pytest.raises(IndexError):  # and the stream ends as in the test above
        asyncio.run(go())
    starts = {e.index: e.part.tool_name for e in events if isinstance(e, PartStartEvent)}
    ends = {e.index: e.part.tool_name for e in events if isinstance(e, PartEndEvent)}
    assert starts[1] == "get_weather" and ends[1] == "do-it"


def test_second_id_on_an_occupied_index_is_merged_into_the_first_call():
    # segment_per_call, invalid_arguments_flagged: the second call's id overwrites the first's, its
    # arguments are appended, and the merged call runs under the first call's name
    _, response = stream(tc(0, "call_0", "read_file", ""), tc(0, "call_1", None, '{"path": "a.py"}'))
    assert tool_parts(response) == [("read_file", '{"path": "a.py"}', "call_1")]


def test_interleaved_calls_end_the_first_part_before_its_last_delta():
    # segment_lifecycle: PartEndEvent for call 0 (with partial arguments), then a delta for it
    events, response = stream(tc(0, "a", "f", '{"x":'), tc(1, "b", "g", '{"y":'), tc(0, args="1}"), tc(1, args="2}"))
    assert shape(events)[:4] == [("start", 0, "f", "a"), ("end", 0, "f", '{"x":'), ("start", 1, "g", "b"), ("delta", 0)]
    assert tool_parts(response) == [("f", '{"x":1}', "a"), ("g", '{"y":2}', "b")]  # the final response is right


def test_late_id_after_an_early_part_end_the_end_event_carries_a_generated_id():
    # provider_ids_kept, segment_per_call: the part ends (early) before its id arrives, so its
    # PartEndEvent carries pydantic-ai's generated id, while the final response has the provider's id
    events, response = stream(tc(0, None, "f", '{"x":'), tc(1, "b", "g", '{"y": 2}'), tc(0, "a", None, "1}"))
    end = next(e for e in events if isinstance(e, PartEndEvent) and e.index == 0)
    assert end.part.tool_call_id.startswith("pyd_ai_") and end.part.args == '{"x":'
    assert tool_parts(response)[0] == ("f", '{"x":1}', "a")


def test_name_never_arriving_drops_the_call_silently():
    # segment_per_call: no part, no event, no error
    events, response = stream(tc(0, "call_nameless", None, '{"a": 1}'))
    assert events == [] and response.parts == []


def test_restated_name_is_concatenated():
    # tool_names_whole
    _, response = stream(tc(0, "call_r", "get_weather", '{"city":'), tc(0, "call_r", "get_weather", ' "Rome"}'))
    assert tool_parts(response) == [("get_weatherget_weather", '{"city": "Rome"}', "call_r")]


def test_a_name_split_across_deltas_starts_the_part_with_its_first_fragment():
    # tool_names_whole: the part starts as soon as 'd' arrives, before any argument, and the rest of
    # the name follows as a tool_name_delta; consumers that read the start event's name see 'd'
    events, response = stream(tc(0, "call_0", "d"), tc(0, None, "o-it"))
    assert shape(events)[0] == ("start", 0, "d", "call_0")
    assert tool_parts(response) == [("do-it", None, "call_0")]


def test_a_call_cut_by_the_token_limit_still_runs():
    # invalid_arguments_flagged: finish_reason "length" after arguments that happen to parse
    ran = []

    def delete_rows(table: str) -> str:
        ran.append(table)
        return "ok"

    agent = Agent(
        model(sse(tc(0, "c1", "delete_rows", '{"table": "users"}'), finish="length"), sse("done", finish="stop")),
        tools=[delete_rows],
    )

    async def go():
        async with agent.run_stream_events("hi") as events:
            async for _ in events:
                pass

    asyncio.run(go())
    assert ran == ["users"]


# --- correct behaviours the suite passes ---------------------------------------------------------


def test_text_after_a_call_is_a_new_part_and_reasoning_a_thinking_part():
    _, response = stream({"reasoning_content": "hmm"}, "pre", tc(0, "a", "f", '{"x": 1}'), "post")
    assert [p.part_kind for p in response.parts] == ["thinking", "text", "tool-call", "text"]


def test_split_name_late_id_and_empty_continuations_are_joined():
    _, response = stream(tc(0, args='{"path": '), tc(0, name="read_"), tc(0, "call_late", "file", '"a.py"}'))
    assert tool_parts(response) == [("read_file", '{"path": "a.py"}', "call_late")]
    _, response = stream(tc(0, "c1", "f", '{"x":'), tc(0, "", "", "1}"))
    assert tool_parts(response) == [("f", '{"x":1}', "c1")]


def test_invalid_arguments_are_refused_by_pydantic_ais_parser():
    _, response = stream(tc(0, "c1", "ui_show", '{"surface_type": "card", "data": '))
    with pytest.raises(ValueError):
        response.parts[0].args_as_dict(raise_if_invalid=True)


def test_in_band_error_raises_and_nothing_is_returned():
    body = sse(tc(0, "c1", "f", '{"x": 1}')).replace(b"data: [DONE]", b'data: {"error": {"message": "Overloaded"}}')
    body = body.replace(b'"finish_reason": "tool_calls"', b'"finish_reason": null')

    async def go():
        async with model_request_stream(model(body), [ModelRequest(parts=[UserPromptPart("hi")])]) as s:
            return [e async for e in s]

    with pytest.raises(Exception, match="Overloaded"):
        asyncio.run(go())
