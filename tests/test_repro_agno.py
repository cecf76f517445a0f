"""Direct reproductions for agno: an ``Agent`` on ``OpenAIChat``, streamed, with a tool that records its calls.

Each test serves a Chat Completions SSE body (built by hand) to the ``openai.OpenAI`` client ``OpenAIChat``
builds (``client_params={"http_client": httpx2.Client(MockTransport)}``), runs ``Agent.run(..., stream=True)``
and reads what the tool function received and the run's messages; no toolcall-conformance. The agent's
second request (after the tools ran) is answered with a plain text turn, so the run ends there. The bodies
are the shapes behind the matrix's ``stack_outcome_matches`` cell for agno.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agno", reason="agno is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")

from agno.agent import Agent  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402


def sse(*deltas: dict[str, Any], finish: str | None = "tool_calls", done: bool = True) -> bytes:
    """A body: a role chunk, one chunk per delta, a terminal chunk (``finish=None``: none) and ``[DONE]``."""
    chunks = [{"role": "assistant", "content": ""}, *deltas]
    events: list[dict[str, Any]] = [{"index": 0, "delta": d, "finish_reason": None} for d in chunks]
    if finish is not None:
        events.append({"index": 0, "delta": {}, "finish_reason": finish})
    body = "".join(
        "data: "
        + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [e]})
        + "\n\n"
        for e in events
    )
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def tc(
    index: int | None = 0, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict[str, Any]:
    """One tool-call delta: ``index`` (None: no key), ``id`` (with ``type``), name and argument text."""
    entry: dict[str, Any] = {"index": index} if index is not None else {}
    if id is not None:
        entry.update(id=id, type="function")
    entry["function"] = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    return {"tool_calls": [entry]}


AFTER_TOOLS = sse({"content": "done"}, finish="stop")


def run(body: bytes) -> tuple[list[tuple[str, dict[str, str]]], list[Any], Any]:
    """``(ran, events, first assistant message)``: what the tools received, the run's events, and the
    assistant message of the served turn."""
    served: list[Any] = []

    def respond(request: Any) -> Any:
        served.append(request)
        content = body if len(served) == 1 else AFTER_TOOLS
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter([content]))

    ran: list[tuple[str, dict[str, str]]] = []

    def write_file(path: str, content: str = "") -> str:
        """Write a file."""
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return "sunny"

    def get_time(tz: str) -> str:
        """The time in a time zone."""
        ran.append(("get_time", {"tz": tz}))
        return "noon"

    client = httpx2.Client(transport=httpx2.MockTransport(respond))
    model = OpenAIChat(id="m", api_key="x", max_retries=0, client_params={"http_client": client})
    agent = Agent(model=model, tools=[write_file, get_weather, get_time], telemetry=False)
    events = list(agent.run("hi", stream=True, yield_run_output=True))
    output = events[-1]
    assistant = next((m for m in getattr(output, "messages", None) or [] if m.role == "assistant"), None)
    return ran, events, assistant


WRITE = '{"path": "a.py", "content": "x = 1"}'


def test_a_whole_stream_runs_its_call_once() -> None:
    # The harness itself: a stream that ended normally runs its call, with the arguments sent
    ran, events, assistant = run(sse(tc(0, "call_1", "write_file", WRITE)))
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert type(events[-1]).__name__ == "RunOutput"
    assert [c["id"] for c in assistant.tool_calls] == ["call_1"]


# --- defects: the failing cell stack_outcome_matches ----------------------------------------------


def test_stream_cut_before_its_terminal_event_runs_the_call() -> None:
    # openai-chat/stream_cut_after_arguments: no finish_reason, no [DONE]; agno never checks how the
    # stream ended, runs write_file and completes the run without any error
    ran, events, _ = run(sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False))
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert type(events[-1]).__name__ == "RunOutput"
    assert str(events[-1].status) == "RunStatus.completed"


def test_stream_cut_mid_call_completes_the_run_without_an_error() -> None:
    # openai-chat/stream_cut_mid_call: the body stops inside the arguments; nothing runs (they do not
    # parse), but the cut is never surfaced: the decode error goes back to the model as a tool result
    # and the run completes as a normal turn
    ran, events, assistant = run(
        sse(tc(0, "call_1", "write_file", '{"path": "a.py", "content": "x'), finish=None, done=False)
    )
    assert ran == []
    assert not any(type(e).__name__ == "RunErrorEvent" for e in events)
    assert str(events[-1].status) == "RunStatus.completed"
    assert assistant.tool_calls[0]["function"]["arguments"] == '{"path": "a.py", "content": "x'


def test_calls_sharing_index_zero_are_merged_into_one() -> None:
    # openai-compatible/dialect_index_always_zero (Ollama's OpenAI-compatible API): parse_tool_calls keys
    # calls by index only, so the second call's id and name replace the first's and the arguments are
    # concatenated; neither call runs
    ran, _, assistant = run(
        sse(tc(0, "call_a", "get_weather", '{"city": "Oslo"}'), tc(0, "call_b", "get_time", '{"tz": "UTC"}'))
    )
    assert ran == []
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in assistant.tool_calls] == [
        ("call_b", "get_time", '{"city": "Oslo"}{"tz": "UTC"}')
    ]


def test_tool_deltas_without_an_index_are_merged_into_one() -> None:
    # openai-compatible/dialect_no_index (Mistral, Gemini's OpenAI-compatible endpoint): `index or 0`
    # puts every call on entry 0, with the same merge
    ran, _, assistant = run(
        sse(tc(None, "call_a", "get_weather", '{"city": "Oslo"}'), tc(None, "call_b", "get_time", '{"tz": "UTC"}'))
    )
    assert ran == []
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in assistant.tool_calls] == [
        ("call_b", "get_time", '{"city": "Oslo"}{"tz": "UTC"}')
    ]


def test_object_arguments_are_not_decoded_and_the_call_never_runs() -> None:
    # openai-compatible/dialect_object_arguments (outside agno's target: the openai SDK types the
    # arguments as text): `arguments` sent as a JSON object, not a string. agno cannot decode it
    # ("Unable to decode function arguments", answered to the model) and the run completes.
    call = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather"}}
    call["function"]["arguments"] = {"city": "Oslo"}
    ran, events, _ = run(sse({"tool_calls": [call]}))
    assert ran == []
    assert str(events[-1].status) == "RunStatus.completed"


def test_call_cut_by_the_token_limit_still_runs() -> None:
    # generated bodies ending with finish_reason "length" (seen at --seed 1 --generated 150; OpenRouter sends
    # it mid-call): agno reads no finish_reason of a streamed turn, so a call whose cut-short arguments
    # still parse runs
    ran, events, _ = run(sse(tc(0, "call_1", "get_weather", '{"city": "Oslo"}'), finish="length"))
    assert ran == [("get_weather", {"city": "Oslo"})]
    assert str(events[-1].status) == "RunStatus.completed"


# --- the same defects on agno's Claude model (anthropic Messages) ---------------------------------


def event(data: dict[str, Any]) -> str:
    """One Messages SSE event (its ``event:`` line is the payload's type)."""
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def messages(*blocks: str, stop: str | None = "tool_use") -> bytes:
    """A Messages body: message_start, the blocks' events, then (``stop`` not None) message_delta with that
    stop reason and message_stop."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    end = ""
    if stop is not None:
        end = event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 9},
            }
        )
        end += event({"type": "message_stop"})
    return (event(start) + "".join(blocks) + end).encode()


def tool_use(index: int, id: str, name: str, *fragments: str, closed: bool = True) -> str:
    """A tool_use block: its start, one input_json_delta per fragment, and (``closed``) its stop."""
    text = event(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}},
        }
    )
    for fragment in fragments:
        text += event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
        )
    if closed:
        text += event({"type": "content_block_stop", "index": index})
    return text


AFTER_TOOLS_CLAUDE = messages(
    event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    + event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}})
    + event({"type": "content_block_stop", "index": 0}),
    stop="end_turn",
)


def run_claude(body: bytes) -> tuple[list[tuple[str, dict[str, str]]], list[Any], Any]:
    """``run`` for agno's ``Claude`` (its own ``http_client`` field takes the anthropic SDK's httpx2 client)."""
    from agno.models.anthropic import Claude

    served: list[Any] = []

    def respond(request: Any) -> Any:
        served.append(request)
        content = body if len(served) == 1 else AFTER_TOOLS_CLAUDE
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter([content]))

    ran: list[tuple[str, dict[str, str]]] = []

    def write_file(path: str, content: str = "") -> str:
        """Write a file."""
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    client = httpx2.Client(transport=httpx2.MockTransport(respond))
    model = Claude(id="claude-x", api_key="x", client_params={"max_retries": 0}, http_client=client)
    agent = Agent(model=model, tools=[write_file], telemetry=False)
    events = list(agent.run("hi", stream=True, yield_run_output=True))
    output = events[-1]
    assistant = next((m for m in getattr(output, "messages", None) or [] if m.role == "assistant"), None)
    return ran, events, assistant


def test_claude_a_whole_stream_runs_its_call_once() -> None:
    # The harness itself: a Messages stream that ended normally runs its tool_use block
    ran, events, _ = run_claude(
        messages(tool_use(0, "toolu_1", "write_file", '{"path": "a.py", ', '"content": "x = 1"}'))
    )
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert type(events[-1]).__name__ == "RunOutput"


def test_claude_stream_cut_before_message_stop_runs_a_closed_tool_block() -> None:
    # generated/anthropic bodies cut after a block's content_block_stop (no message_delta, no message_stop):
    # agno takes the call from the block's stop event and runs it; the cut is never surfaced
    ran, events, _ = run_claude(messages(tool_use(0, "toolu_1", "write_file", WRITE), stop=None))
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert str(events[-1].status) == "RunStatus.completed"


def test_claude_stream_cut_mid_call_drops_the_call_and_completes_the_run() -> None:
    # anthropic/stream_cut_mid_call: the body stops inside a tool_use block; the call vanishes (agno
    # only reads tool_use blocks at content_block_stop) and the run completes as a normal turn
    ran, events, assistant = run_claude(
        messages(tool_use(0, "toolu_1", "write_file", '{"path": "a.py", "con', closed=False), stop=None)
    )
    assert ran == []
    assert not any(type(e).__name__ == "RunErrorEvent" for e in events)
    assert str(events[-1].status) == "RunStatus.completed"
    assert assistant is None or not assistant.tool_calls


def test_claude_max_tokens_with_an_open_tool_block_drops_the_call_silently() -> None:
    # anthropic/truncated_max_tokens: stop_reason max_tokens while a tool_use block is still open; agno
    # reads no stop_reason: the call vanishes and the run completes with no sign of the truncation
    ran, events, _ = run_claude(
        messages(tool_use(0, "toolu_1", "write_file", '{"path": "x.py", ', closed=False), stop="max_tokens")
    )
    assert ran == []
    assert not any(type(e).__name__ == "RunErrorEvent" for e in events)
    assert str(events[-1].status) == "RunStatus.completed"


def test_claude_max_tokens_after_a_closed_tool_block_still_runs_it() -> None:
    # generated/anthropic bodies ending with stop_reason max_tokens after a complete tool_use block: the
    # turn was cut at the token limit, yet agno runs the call
    ran, events, _ = run_claude(messages(tool_use(0, "toolu_1", "write_file", WRITE), stop="max_tokens"))
    assert ran == [("write_file", {"path": "a.py", "content": "x = 1"})]
    assert str(events[-1].status) == "RunStatus.completed"
