"""Standalone reproductions of the agno defects of the toolcall-conformance matrix.

Needs only agno and the SDKs its models use (measured: agno 3.1.10, openai 3.57.0, anthropic 2.13.0;
httpx2, which both SDKs depend on, serves the stream). No network, no API key:

    python repro_agno.py                          # every finding
    python repro_agno.py stack_outcome_matches    # the findings of one matrix cell

Each finding runs a real ``agno.agent.Agent`` (``stream=True``) on ``OpenAIChat`` or ``Claude`` whose SDK
client is served one hand-built SSE body through ``httpx2.MockTransport``; the agent's tool only records the
arguments it was called with. The agent's second request (after the tools ran) gets a plain text answer,
so the run ends there. It prints what the stream says and what agno did; the script exits 1 while any
finding shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import json
import sys

import httpx2
from agno.agent import Agent
from agno.models.anthropic import Claude
from agno.models.openai import OpenAIChat


def sse(*deltas, finish="tool_calls", done=True):
    """A Chat Completions body: a role chunk, the deltas, a terminal chunk (``finish=None``: none), ``[DONE]``."""
    events = [{"index": 0, "delta": d, "finish_reason": None} for d in [{"role": "assistant", "content": ""}, *deltas]]
    if finish is not None:
        events.append({"index": 0, "delta": {}, "finish_reason": finish})
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    body = "".join(f"data: {json.dumps({**chunk, 'choices': [e]})}\n\n" for e in events)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def tc(index=0, id=None, name=None, args=None):
    """One tool-call delta (``index=None``: no index key)."""
    entry = {"index": index} if index is not None else {}
    if id is not None:
        entry.update(id=id, type="function")
    entry["function"] = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    return {"tool_calls": [entry]}


def event(data):
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def messages(*blocks, stop="tool_use"):
    """A Messages body: message_start, the blocks, then (``stop`` not None) message_delta and message_stop."""
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
        ) + event({"type": "message_stop"})
    return (event(start) + "".join(blocks) + end).encode()


def tool_use(index, id, name, *fragments, closed=True):
    """A tool_use block: start, one input_json_delta per fragment, and (``closed``) content_block_stop."""
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


AFTER_TOOLS = {
    "openai": sse({"content": "done"}, finish="stop"),
    "claude": messages(
        event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        + event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}})
        + event({"type": "content_block_stop", "index": 0}),
        stop="end_turn",
    ),
}


def run(provider, body):
    """What the agent ran (``[(tool, arguments)]``), how the run ended, and the assistant message's calls."""
    served = []

    def respond(request):
        served.append(request)
        content = body if len(served) == 1 else AFTER_TOOLS[provider]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter([content]))

    ran = []

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
    if provider == "claude":
        model = Claude(id="claude-x", api_key="x", client_params={"max_retries": 0}, http_client=client)
    else:
        model = OpenAIChat(id="m", api_key="x", max_retries=0, client_params={"http_client": client})
    agent = Agent(model=model, tools=[write_file, get_weather, get_time], telemetry=False)
    events = list(agent.run("hi", stream=True, yield_run_output=True))
    last = events[-1]
    ended = f"error event: {last.content}" if type(last).__name__ == "RunErrorEvent" else f"run {last.status.value}"
    assistant = next((m for m in getattr(last, "messages", None) or [] if m.role == "assistant"), None)
    calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in (assistant and assistant.tool_calls) or []
    ]
    return ran, ended, calls


WRITE = '{"path": "a.py", "content": "x = 1"}'
RAN_WRITE = [("write_file", {"path": "a.py", "content": "x = 1"})]

# Each finding: (matrix cell, what happens, provider, body, what the stream says, whether agno's answer is
# still the defect).
FINDINGS = [
    (
        "stack_outcome_matches",
        "OpenAIChat: a stream cut before its terminal event (no finish_reason, no [DONE]): the call runs and the "
        "run completes",
        "openai",
        sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False),
        "the stream ended without its terminal event: write_file must not run, the cut must surface",
        lambda got: got[0] == RAN_WRITE,
    ),
    (
        "stack_outcome_matches",
        "OpenAIChat: a stream cut inside a call's arguments: the run completes as a normal turn (the decode error "
        "goes back to the model as a tool result)",
        "openai",
        sse(tc(0, "call_1", "write_file", '{"path": "a.py", "content": "x'), finish=None, done=False),
        "the stream ended without its terminal event: the cut must surface",
        lambda got: got[1] == "run COMPLETED",
    ),
    (
        "stack_outcome_matches",
        "OpenAIChat: finish_reason length (the token limit) after a call whose arguments parse: the call runs",
        "openai",
        sse(tc(0, "call_1", "get_weather", '{"city": "Oslo"}'), finish="length"),
        "the turn was cut at the token limit: get_weather must not run",
        lambda got: got[0] == [("get_weather", {"city": "Oslo"})],
    ),
    (
        "stack_outcome_matches",
        "OpenAIChat: every call on index 0 (Ollama's OpenAI-compatible API): two calls merged into one, none runs "
        "(agno-agi/agno#8879)",
        "openai",
        sse(tc(0, "call_a", "get_weather", '{"city": "Oslo"}'), tc(0, "call_b", "get_time", '{"tz": "UTC"}')),
        "two calls that run: get_weather (call_a) {'city': 'Oslo'} and get_time (call_b) {'tz': 'UTC'}",
        lambda got: [c[0] for c in got[2]] != ["call_a", "call_b"],
    ),
    (
        "stack_outcome_matches",
        "OpenAIChat: tool-call deltas without an index (Mistral, Gemini's OpenAI-compatible endpoint): `index or 0` "
        "merges the calls into one, none runs (agno-agi/agno#8879)",
        "openai",
        sse(tc(None, "call_a", "get_weather", '{"city": "Oslo"}'), tc(None, "call_b", "get_time", '{"tz": "UTC"}')),
        "two calls that run: get_weather (call_a) {'city': 'Oslo'} and get_time (call_b) {'tz': 'UTC'}",
        lambda got: [c[0] for c in got[2]] != ["call_a", "call_b"],
    ),
    (
        "stack_outcome_matches",
        "Claude: a stream cut after a tool_use block's content_block_stop (no message_delta, no message_stop): the "
        "call runs and the run completes",
        "claude",
        messages(tool_use(0, "toolu_1", "write_file", WRITE), stop=None),
        "the stream ended without message_stop: write_file must not run, the cut must surface",
        lambda got: got[0] == RAN_WRITE,
    ),
    (
        "stack_outcome_matches",
        "Claude: a stream cut inside a tool_use block: the call vanishes and the run completes as a normal turn",
        "claude",
        messages(tool_use(0, "toolu_1", "write_file", '{"path": "a.py", "con', closed=False), stop=None),
        "the stream ended without message_stop: the cut must surface",
        lambda got: got[1] == "run COMPLETED",
    ),
    (
        "stack_outcome_matches",
        "Claude: stop_reason max_tokens after a complete tool_use block: the call runs",
        "claude",
        messages(tool_use(0, "toolu_1", "write_file", WRITE), stop="max_tokens"),
        "the turn was cut at the token limit: write_file must not run",
        lambda got: got[0] == RAN_WRITE,
    ),
    (
        "stack_outcome_matches",
        "Claude: stop_reason max_tokens while a tool_use block is open: the call vanishes and the run completes "
        "with no sign of the truncation",
        "claude",
        messages(tool_use(0, "toolu_1", "write_file", '{"path": "x.py", ', closed=False), stop="max_tokens"),
        "the turn was cut at the token limit: write_file must not run, and the truncation must surface",
        lambda got: got[1] == "run COMPLETED" and not got[2],
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, provider, body, stream_says, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = run(provider, body)
        present = still_there(got)
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}")
        print(f"  agno ran: {got[0]}; {got[1]}; assistant calls: {got[2]}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
