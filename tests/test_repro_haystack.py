"""Direct reproductions for haystack-ai: ``Agent`` over a streaming ``OpenAIChatGenerator``.

Each test serves a Chat Completions SSE body, written here by hand, to the real ``openai.OpenAI``
client through an ``httpx2.MockTransport``, sets it as the generator's client (``warm_up()`` keeps a
client it already has), and runs haystack's ``Agent`` for one step with a ``streaming_callback`` (so
the generator streams, and haystack's own chunk conversion and accumulation build the reply) and
tools that record their arguments. No toolcall-conformance code. The bodies are the shapes of the
bundled recordings behind the matrix's ``stack_outcome_matches`` cell for the ``haystack-ai`` column.
"""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no usage telemetry from a test

pytest.importorskip("haystack", reason="haystack-ai is not installed")
openai = pytest.importorskip("openai", reason="openai is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")

from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import Tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402

WRITE = '{"path": "a.py", "content": "x = 1"}'


def sse(*deltas, finish="tool_calls", done=True):
    """A body: a role chunk, one chunk per delta, a terminal chunk (``finish=None``: none) and ``[DONE]``."""
    chunks = [{"role": "assistant", "content": ""}, *deltas]
    events = [{"index": 0, "delta": d, "finish_reason": None} for d in chunks]
    if finish is not None:
        events.append({"index": 0, "delta": {}, "finish_reason": finish})
    body = "".join(
        "data: "
        + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [e]})
        + "\n\n"
        for e in events
    )
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def tc(index=0, id=None, name=None, args=None, **extra):
    """One tool-call delta."""
    entry = {"index": index, **extra}
    if id is not None:
        entry.update(id=id, type="function")
    entry["function"] = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    return {"tool_calls": [entry]}


def run_agent(body, names):
    """One Agent step over the body; returns (the Agent's result, the assistant reply, [(tool, kwargs) run])."""
    ran = []

    def tool(name):
        def record(**kwargs):
            ran.append((name, kwargs))
            return "done"

        return Tool(name=name, description="d", parameters={"type": "object", "properties": {}}, function=record)

    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )
    generator = OpenAIChatGenerator(api_key=Secret.from_token("x"), model="m", max_retries=0)
    generator.client = openai.OpenAI(
        api_key="x", base_url="http://test/v1", max_retries=0, http_client=httpx2.Client(transport=transport)
    )
    agent = Agent(chat_generator=generator, tools=[tool(n) for n in names], max_agent_steps=1)
    result = agent.run([ChatMessage.from_user("hi")], streaming_callback=lambda chunk: None)
    reply = next(m for m in result["messages"] if m.is_from("assistant"))
    return result, reply, ran


# --- defects: the failing cell stack_outcome_matches ----------------------------------------------


def test_stream_cut_after_complete_arguments_runs_the_call_and_reports_nothing():
    # openai-chat/stream_cut_after_arguments: the body stops after the call's arguments, without a
    # finish_reason chunk or [DONE] (the connection closed). The reply's finish_reason is None, yet the
    # Agent runs write_file, and nothing (no exception, no exit reason) says the turn never finished.
    result, reply, ran = run_agent(sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False), ["write_file"])
    assert reply.meta["finish_reason"] is None
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert result["exit_reason"] == "max_agent_steps"  # the step budget, not the cut


def test_stream_cut_mid_arguments_drops_the_call_and_reports_no_error():
    # openai-chat/stream_cut_mid_call (and a body cut before anything, generated/openai-chat/000): the
    # body stops inside the call's arguments. The call is dropped from the reply as malformed JSON
    # (right: it must not run), but nothing surfaces the cut: no exception, finish_reason None, and
    # the reply reads as an empty finished turn.
    _, reply, ran = run_agent(
        sse(tc(0, "call_1", "write_file", '{"path": "a.py", "con'), finish=None, done=False), ["write_file"]
    )
    assert reply.tool_calls == []
    assert reply.meta["finish_reason"] is None
    assert ran == []
    # The same with nothing at all before the cut: an empty reply, no error.
    _, reply, ran = run_agent(sse(finish=None, done=False), ["write_file"])
    assert (reply.text, reply.tool_calls, reply.meta["finish_reason"], ran) == (None, [], None, [])


def test_empty_string_id_on_a_continuation_erases_the_call_id():
    # openai-compatible/dialect_empty_string_continuations (Alibaba DashScope sends "id": "" on every
    # continuation delta): the accumulator takes any id that is not None, so "" replaces call_a. The
    # call runs, but its ToolCall, and the tool result sent back to the provider, carry id "".
    result, reply, ran = run_agent(
        sse(tc(0, "call_a", "get_weather", '{"city":'), tc(0, "", None, ' "Oslo"}', type="function")),
        ["get_weather"],
    )
    assert ran == [("get_weather", {"city": "Oslo"})]
    assert [c.id for c in reply.tool_calls] == [""]
    results = [m.tool_call_result for m in result["messages"] if m.tool_call_result is not None]
    assert [r.origin.id for r in results] == [""]


def test_a_complete_call_of_a_turn_cut_at_the_token_limit_still_runs():
    # generated bodies at other seeds (ci, seed 1: "call f args {...}; ends: length"): the turn stops
    # with finish_reason "length" after a call whose arguments happen to parse. The Agent checks
    # "length" only for replies without tool calls, so it runs the call of the truncated turn.
    body = sse(tc(0, "call_1", "write_file", WRITE), finish="length")
    result, reply, ran = run_agent(body, ["write_file"])
    assert reply.meta["finish_reason"] == "length"
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert result["exit_reason"] == "max_agent_steps"


# --- legitimate: excluded from the column with this evidence ----------------------------------------


def test_truncated_call_is_skipped_and_the_turn_says_length():
    # openai-chat/truncated_max_tokens: text, then a call cut at the token limit inside its arguments.
    # haystack skips the malformed call (a documented warning), runs nothing, and surfaces the
    # truncation: the reply's finish_reason and the Agent's exit_reason are both "length".
    body = sse(
        {"content": "Writing the file."}, tc(0, "call_1", "write_file", '{"path": "a.py", "con'), finish="length"
    )
    result, reply, ran = run_agent(body, ["write_file"])
    assert (reply.text, reply.tool_calls, ran) == ("Writing the file.", [], [])
    assert reply.meta["finish_reason"] == "length"
    assert result["exit_reason"] == "length"


# --- what it gets right (the suite passes these) ----------------------------------------------------


def test_fragmented_arguments_of_two_calls_run_once_each_with_their_ids():
    body = sse(
        tc(0, "call_a", "get_weather", '{"ci'),
        tc(0, args='ty": "Oslo"}'),
        tc(1, "call_b", "get_time", '{"tz": '),
        tc(1, args='"UTC"}'),
    )
    _, reply, ran = run_agent(body, ["get_weather", "get_time"])
    assert sorted(ran, key=lambda r: r[0]) == [("get_time", {"tz": "UTC"}), ("get_weather", {"city": "Oslo"})]
    assert [(c.id, c.tool_name, c.arguments) for c in reply.tool_calls] == [
        ("call_a", "get_weather", {"city": "Oslo"}),
        ("call_b", "get_time", {"tz": "UTC"}),
    ]


# --- outside target: shown in the column, not charged as defects (ADAPTER.outside_target) -----------


def test_every_call_on_index_zero_is_merged_and_dropped_as_malformed():
    # openai-compatible/dialect_index_always_zero (Ollama before its fix, ollama/ollama#15457): the
    # accumulator keys calls by index, so both calls become one whose arguments are two JSON objects
    # back to back; that does not parse, and the merged call is skipped. Nothing runs.
    body = sse(tc(0, "call_a", "get_weather", '{"city": "Oslo"}'), tc(0, "call_b", "get_time", '{"tz": "UTC"}'))
    _, reply, ran = run_agent(body, ["get_weather", "get_time"])
    assert (reply.tool_calls, ran) == ([], [])


def test_a_restated_name_is_concatenated_and_no_tool_has_it():
    # openai-compatible/dialect_name_restated: the name on every delta is appended each time, so the
    # call is named get_weatherget_weather; the Agent answers it with "tool not found".
    body = sse(tc(0, "call_a", "get_weather", '{"city":'), tc(0, None, "get_weather", ' "Oslo"}'))
    result, reply, ran = run_agent(body, ["get_weather"])
    assert [(c.id, c.tool_name) for c in reply.tool_calls] == [("call_a", "get_weatherget_weather")]
    assert ran == []
    errors = [m.tool_call_result for m in result["messages"] if m.tool_call_result is not None]
    assert [e.error for e in errors] == [True]


def test_tool_deltas_without_an_index_raise_value_error():
    # openai-compatible/dialect_no_index: a StreamingChunk with tool calls must have an index.
    entry = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    with pytest.raises(ValueError, match="index"):
        run_agent(sse({"tool_calls": [entry]}), ["get_weather"])


def test_object_arguments_raise_type_error():
    # openai-compatible/dialect_object_arguments: "arguments" sent as a JSON object, not text.
    with pytest.raises(TypeError, match="concatenate"):
        run_agent(sse(tc(0, "call_a", "get_weather", {"city": "Oslo"})), ["get_weather"])
