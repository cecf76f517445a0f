"""Standalone reproductions of the pydantic-ai defects of the toolcall-conformance matrix.

Needs only pydantic-ai (measured: pydantic-ai-slim[openai] 2.68.0, openai 3.57.0; httpx2, which that
openai depends on, serves the stream). No network, no API key:

    python repro_pydantic_ai.py               # every finding
    python repro_pydantic_ai.py no_crash      # the findings of one matrix cell

The production path: ``OpenAIChatModel`` over an ``AsyncOpenAI`` client whose HTTP response is a Chat
Completions SSE body (as an OpenAI-compatible server streams it); where the question is what runs, an
``Agent`` with a typed tool runs the same model. Each finding prints what the stream says and what
pydantic-ai did; the script exits 1 while any finding shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider


def tc(index, id=None, name=None, args=None):
    """One tool-call delta as an OpenAI-compatible server sends it."""
    entry = {"index": index, "function": {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}}
    if id is not None:
        entry.update(id=id, type="function")
    return {"tool_calls": [entry]}


def sse(*deltas, finish="tool_calls"):
    """A Chat Completions SSE body: a role chunk, the deltas (a str is text), the finish reason, [DONE]."""
    chunks = [{"role": "assistant", "content": ""}, *({"content": d} if isinstance(d, str) else d for d in deltas)]
    events = [{"index": 0, "delta": d, "finish_reason": None} for d in chunks]
    events.append({"index": 0, "delta": {}, "finish_reason": finish})
    lines = (
        json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [e]})
        for e in events
    )
    return ("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode()


def model(*bodies):
    """The model, its client answering each request with the next body (the last one repeated)."""
    queue = list(bodies)

    def respond(request):
        body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = AsyncOpenAI(
        api_key="x", base_url="http://test/v1", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )  # fmt: skip
    return OpenAIChatModel("m", provider=OpenAIProvider(openai_client=client))


def response_calls(*deltas, finish="tool_calls"):
    """The tool calls of the final response, ``(name, args, id)``; a raise is returned as its text."""

    async def go():
        async with model_request_stream(
            model(sse(*deltas, finish=finish)), [ModelRequest([UserPromptPart("hi")])]
        ) as s:
            async for _ in s:
                pass
            return [(p.tool_name, p.args, p.tool_call_id) for p in s.get().parts if p.part_kind == "tool-call"]

    try:
        return asyncio.run(go())
    except Exception as error:  # noqa: BLE001 - the crash is the finding
        return f"raised {type(error).__name__}: {error}"


def agent_runs(*deltas, finish="tool_calls"):
    """What an Agent with a ``delete_rows`` tool runs on that response (then answers 'done')."""
    ran = []

    def delete_rows(table: str) -> str:
        ran.append(table)
        return "ok"

    agent = Agent(model(sse(*deltas, finish=finish), sse("done", finish="stop")), tools=[delete_rows])

    async def go():
        async with agent.run_stream_events("hi") as events:
            async for _ in events:
                pass

    asyncio.run(go())
    return ran


NAMELESS_FIRST = {
    "tool_calls": [
        {"index": 0, "id": "c0", "function": {"arguments": "{}"}},
        {"index": 1, "id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    ]
}


def ids(calls):
    return set() if isinstance(calls, str) else {call_id for _, _, call_id in calls}


# Each finding: (matrix cell, what happens, what the stream says, what pydantic-ai does, whether that
# is still the defect).
FINDINGS = [
    (
        "no_crash",
        "a call whose name never arrives, before a named one in the same chunk: the stream raises IndexError",
        "f runs (id c1); the nameless call c0 cannot",
        lambda: response_calls(NAMELESS_FIRST),
        lambda got: isinstance(got, str) and "raised" in got,
    ),
    (
        "segment_per_call",
        "a call whose name never arrives: no part, no event, no error (the call vanishes silently)",
        "one call, call_nameless, that came without a name: a part, or an error saying so",
        lambda: response_calls(tc(0, "call_nameless", None, '{"a": 1}')),
        lambda got: got == [],
    ),
    (
        "segment_per_call",
        "a second id on index 0 (servers that put every call on index 0): the two calls are merged into one",
        'two calls: read_file (call_0, no arguments yet) and a second one (call_1, {"path": "a.py"})',
        lambda: response_calls(tc(0, "call_0", "read_file", ""), tc(0, "call_1", None, '{"path": "a.py"}')),
        lambda got: not {"call_0", "call_1"} <= ids(got),
    ),
    (
        "tool_names_whole",
        "a server that restates the name on every delta: the names are concatenated",
        "[('get_weather', '{\"city\": \"Rome\"}', 'call_r')]",
        lambda: response_calls(tc(0, "call_r", "get_weather", '{"city":'), tc(0, "call_r", "get_weather", ' "Rome"}')),
        lambda got: got != [("get_weather", '{"city": "Rome"}', "call_r")],
    ),
    (
        "invalid_arguments_flagged",
        "a response cut at the token limit (finish_reason 'length'): the agent still runs its call",
        "nothing runs: output cut at its limit may be incomplete even when it parses",
        lambda: agent_runs(tc(0, "c1", "delete_rows", '{"table": "users"}'), finish="length"),
        lambda got: got != [],
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, stream_says, library_does, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = library_does()
        present = still_there(got)
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}\n  pydantic-ai:     {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
