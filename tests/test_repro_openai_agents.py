"""Direct reproductions for openai-agents' Chat Completions stream handling (no toolcall-conformance).

The production path of every non-Responses model of the Agents SDK: ``OpenAIChatCompletionsModel``
over an ``AsyncOpenAI`` client whose HTTP response (an ``httpx2.MockTransport``, base URL not
api.openai.com) is a Chat Completions SSE body, and its ``stream_response``, which
``Runner.run_streamed`` calls each turn; the Responses-shaped events it yields are what
``raw_response_event`` consumers (UIs, the Runner) see. Where the question is what runs, the
Runner runs a real agent. Each test asserts one behaviour of ``docs/matrix.md``.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("agents", reason="openai-agents is not installed (pip install '.[adapters]')")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled  # noqa: E402
from agents.models.interface import ModelTracing  # noqa: E402

from tests.repro_chat_sse import serving, sse, tc  # noqa: E402

set_tracing_disabled(True)


def model(*bodies):
    client = serving(*bodies, base_url="http://compatible.test/v1")
    return OpenAIChatCompletionsModel(model="m", openai_client=client)


def events(*deltas):
    """The (type, output_index, detail) of every item and delta event stream_response yields."""

    async def go():
        out = []
        async for e in model(sse(*deltas)).stream_response(
            system_instructions=None,
            input="hi",
            model_settings=ModelSettings(),
            tools=[],
            output_schema=None,
            handoffs=[],
            tracing=ModelTracing.DISABLED,
        ):
            if e.type in ("response.output_item.added", "response.output_item.done") and e.item.type == "function_call":
                out.append((e.type.rsplit(".", 1)[-1], e.output_index, e.item.name, e.item.call_id))
            elif e.type in ("response.output_item.added", "response.output_item.done"):
                out.append((e.type.rsplit(".", 1)[-1], e.output_index, e.item.type))
            elif e.type in ("response.function_call_arguments.delta", "response.output_text.delta"):
                out.append(("delta", e.output_index, e.delta))
            elif e.type in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                out.append(("reasoning", e.output_index, e.delta))
        return out

    return asyncio.run(go())


# --- defects: the failing cells -------------------------------------------------------------------


def test_text_after_a_call_goes_into_the_message_opened_before_it():
    # text_segments_follow_wire: one message item, and ' Done.' is a delta of it after the call started
    seen = events("Checking.", tc(0, "call_w", "get_weather", '{"city": "Lima"}'), " Done.")
    assert seen[:4] == [
        ("added", 0, "message"),
        ("delta", 0, "Checking."),
        ("added", 1, "get_weather", "call_w"),
        ("delta", 1, '{"city": "Lima"}'),
    ]
    assert seen[4] == ("delta", 0, " Done.")


def test_reasoning_after_a_call_goes_into_the_reasoning_item_opened_before_it():
    # text_segments_follow_wire: one reasoning item for the whole turn, at output_index 0
    seen = events({"reasoning_content": "first"}, tc(0, "call_w", "get_weather", "{}"), {"reasoning_content": "later"})
    assert seen.index(("added", 1, "get_weather", "call_w")) < seen.index(("reasoning", 0, "later"))


def test_arguments_before_a_split_name_keep_only_the_last_name_fragment():
    # tool_names_whole: 'read_' + 'file' ends as 'file', START and END alike
    seen = events(tc(0, args='{"path": '), tc(0, name="read_"), tc(0, "call_late", "file", '"a.py"}'))
    assert [e for e in seen if e[0] in ("added", "done")] == [
        ("added", 0, "file", "call_late"),
        ("done", 0, "file", "call_late"),
    ]
    seen = events(tc(0, "call_0", "do"), tc(0, None, "-it", "{}"))
    assert [e for e in seen if e[0] == "done"] == [("done", 0, "-it", "call_0")]


def test_a_late_id_delays_the_call_and_drops_the_arguments_sent_before_it():
    # argument_integrity, arguments_stream_incrementally: no event until the id arrives, and the
    # fragment sent before it is never emitted as a delta
    seen = events(tc(0, None, "get_weather", '{"c'), tc(0, "call_1", None, 'ity": "Paris"}'))
    assert seen[:2] == [("added", 0, "get_weather", "call_1"), ("delta", 0, 'ity": "Paris"}')]


def test_a_late_id_puts_the_calls_out_of_wire_order():
    # calls_in_wire_order: call b (complete first) is announced before call a, which came first
    seen = events(
        tc(0, None, "get_weather", '{"city"'),
        tc(1, "call_b", "get_time", '{"tz": '),
        tc(0, "call_a", None, ': "Oslo"}'),
        tc(1, args='"UTC"}'),
    )
    assert [e[2] for e in seen if e[0] == "added"] == ["get_time", "get_weather"]


# --- correct behaviours the suite passes (the Runner decides what runs) ---------------------------


def test_restated_name_empty_continuations_and_interleaving_are_handled():
    seen = events(tc(0, "a", "f", '{"x":'), tc(1, "b", "g", '{"y":'), tc(0, "", "", "1}"), tc(1, "b", "g", "2}"))
    assert [e for e in seen if e[0] == "done"] == [("done", 0, "f", "a"), ("done", 1, "g", "b")]


@pytest.mark.parametrize(
    ("arguments", "runs"), [('{"surface_type": "card"}', ["card"]), ('{"surface_type": "card", "data": ', [])]
)
def test_the_runner_runs_valid_arguments_and_refuses_invalid_ones(arguments, runs):
    ran = []

    @function_tool
    def ui_show(surface_type: str) -> str:
        ran.append(surface_type)
        return "ok"

    agent = Agent(
        name="a", model=model(sse(tc(0, "c1", "ui_show", arguments)), sse("done", finish="stop")), tools=[ui_show]
    )

    async def go():
        result = Runner.run_streamed(agent, "hi", max_turns=3)
        async for _ in result.stream_events():
            pass

    asyncio.run(go())
    assert ran == runs


def test_calls_sharing_an_index_are_merged_later_id_and_name_win():
    # segment_per_call: a second id on an occupied index; the first call is lost
    seen = events(tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", '{"b": 2}'))
    assert [e for e in seen if e[0] == "done"] == [("done", 0, "mul", "call_2")]
    assert "".join(e[2] for e in seen if e[0] == "delta") == '{"a": 1}{"b": 2}'


def test_a_call_without_an_id_is_announced_at_the_end_under_another_calls_output_index():
    # Measured as segment_lifecycle with an earlier generator (not drawn at seed 0 since): call 0 has
    # no id, so it is held back to the end of the stream; after text and reasoning it is announced
    # (call_id '') at output_index 1, the index call 1 already has, so consumers keyed by
    # output_index see one item started twice
    seen = events(
        {
            "tool_calls": [
                {"index": 0, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
                {"index": 1, "id": "call_1", "type": "function", "function": {"name": "get_weather"}},
            ]
        },
        "00",
        {"reasoning_content": "0"},
    )
    calls = [e for e in seen if e[0] in ("added", "done") and len(e) == 4]
    assert calls[:2] == [("added", 1, "get_weather", "call_1"), ("added", 1, "get_weather", "")]
