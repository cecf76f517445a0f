"""Standalone reproductions of the haystack-ai defects of the toolcall-conformance matrix.

Needs only haystack-ai and the openai package it drives (measured: haystack-ai 3.4.1, openai 3.57.0;
httpx2, which openai 3.x runs on, serves the stream). No network, no API key:

    python repro_haystack.py                          # every finding
    python repro_haystack.py stack_outcome_matches    # the findings of one matrix cell

Each finding serves a Chat Completions SSE body (as a server streams it) to a real ``openai.OpenAI``
client set on an ``OpenAIChatGenerator``, and runs haystack's ``Agent`` for one step with a
streaming callback (so haystack's own chunk conversion and accumulation build the reply) and a tool
that records the arguments it is run with. It prints what the stream says and what haystack did;
the script exits 1 while any finding shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no usage telemetry from a reproduction

import httpx2
import openai
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool
from haystack.utils import Secret


def tc(index=0, id=None, name=None, args=None, **extra):
    """One tool-call delta."""
    entry = {"index": index, **extra}
    if id is not None:
        entry.update(id=id, type="function")
    entry["function"] = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    return {"tool_calls": [entry]}


def sse(*deltas, finish="tool_calls", done=True):
    """A body: a role chunk, the deltas, a terminal chunk (``finish=None``: none) and ``[DONE]``."""
    events = [{"index": 0, "delta": d, "finish_reason": None} for d in [{"role": "assistant", "content": ""}, *deltas]]
    if finish is not None:
        events.append({"index": 0, "delta": {}, "finish_reason": finish})
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    body = "".join(f"data: {json.dumps({**chunk, 'choices': [e]})}\n\n" for e in events)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def agent_step(body, tool_name):
    """One Agent step over ``body``: ``(reply's finish_reason, [(id, name, args)] of the reply, [args run])``."""
    ran = []

    def record(**kwargs):
        ran.append(kwargs)
        return "done"

    tool = Tool(name=tool_name, description="d", parameters={"type": "object", "properties": {}}, function=record)
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )
    generator = OpenAIChatGenerator(api_key=Secret.from_token("x"), model="m", max_retries=0)
    generator.client = openai.OpenAI(
        api_key="x", base_url="http://test/v1", max_retries=0, http_client=httpx2.Client(transport=transport)
    )
    agent = Agent(chat_generator=generator, tools=[tool], max_agent_steps=1)
    try:
        result = agent.run([ChatMessage.from_user("hi")], streaming_callback=lambda chunk: None)
    except Exception as error:  # noqa: BLE001 - raising on an abnormal stream would be the fix
        return f"raised {type(error).__name__}: {error}"
    reply = next(m for m in result["messages"] if m.is_from("assistant"))
    calls = [(c.id, c.tool_name, c.arguments) for c in reply.tool_calls]
    return reply.meta["finish_reason"], calls, ran


WRITE = '{"path": "a.py", "content": "x = 1"}'

# Each finding: (matrix cell, what happens, the body, its tool, what the stream says, whether haystack's
# answer is still the defect).
FINDINGS = [
    (
        "stack_outcome_matches",
        "a stream cut after a call's arguments (no finish_reason chunk, no [DONE]: the connection closed): the "
        "Agent runs write_file and nothing says the turn never finished",
        sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False),
        "write_file",
        "an error (the stream ended without its terminal event): the call must not run",
        lambda got: not isinstance(got, str) and bool(got[2]),
    ),
    (
        "stack_outcome_matches",
        "a stream cut inside a call's arguments: the call is dropped as malformed JSON (it must not run, right) "
        "but nothing surfaces the cut: no exception, finish_reason None, an empty finished-looking reply",
        sse(tc(0, "call_1", "write_file", '{"path": "a.py", "con'), finish=None, done=False),
        "write_file",
        "an error (the stream ended without its terminal event)",
        lambda got: not isinstance(got, str),
    ),
    (
        "stack_outcome_matches",
        "a turn cut at the token limit (finish_reason length) after a call whose arguments parse: the Agent "
        "checks length only for replies without tool calls, so it runs the call of the truncated turn",
        sse(tc(0, "call_1", "write_file", WRITE), finish="length"),
        "write_file",
        "finish_reason length: the turn was truncated, none of its calls may run",
        lambda got: not isinstance(got, str) and bool(got[2]),
    ),
    (
        "stack_outcome_matches",
        'continuation deltas with "id": "" (Alibaba DashScope): the empty id replaces the call\'s id, so the call '
        "and its tool result carry id ''",
        sse(tc(0, "call_a", "get_weather", '{"city":'), tc(0, "", None, ' "Oslo"}', type="function")),
        "get_weather",
        "(finish 'tool_calls', [('call_a', 'get_weather', {'city': 'Oslo'})]): it runs under id call_a",
        lambda got: isinstance(got, str) or [c[0] for c in got[1]] != ["call_a"],
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, body, tool_name, stream_says, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = agent_step(body, tool_name)
        present = still_there(got)
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}")
        print(f"  haystack returned (finish_reason, reply's calls, arguments run): {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
