"""Standalone reproduction of the openai-agents defect of the toolcall-conformance matrix.

Needs only openai-agents (measured: openai-agents 0.24.0, openai 3.57.0; httpx2, which that openai
depends on, serves the stream). No network, no API key:

    python repro_openai_agents.py                     # every finding
    python repro_openai_agents.py segment_per_call    # the findings of one matrix cell

The production path of every non-Responses model of the Agents SDK: ``OpenAIChatCompletionsModel``
over an ``AsyncOpenAI`` client whose HTTP response is a Chat Completions SSE body (an
OpenAI-compatible server's), run by ``Runner.run_streamed`` with real function tools. The finding
prints what the stream says runs and what the Runner ran; the script exits 1 while it is still
there, 0 once fixed.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

set_tracing_disabled(True)


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


def runner_runs(*deltas):
    """What ``Runner.run_streamed`` runs when the model streams the deltas (then answers 'done')."""
    ran = []

    @function_tool
    def add(a: int) -> str:
        ran.append(("add", {"a": a}))
        return "ok"

    @function_tool
    def mul(b: int) -> str:
        ran.append(("mul", {"b": b}))
        return "ok"

    queue = [sse(*deltas), sse("done", finish="stop")]

    def respond(request):
        body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = AsyncOpenAI(
        api_key="x", base_url="http://compatible.test/v1", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )  # fmt: skip
    agent = Agent(name="a", model=OpenAIChatCompletionsModel(model="m", openai_client=client), tools=[add, mul])

    calls = []

    async def go():
        result = Runner.run_streamed(agent, "hi", max_turns=3)
        async for event in result.stream_events():
            item = getattr(event, "item", None)
            if getattr(item, "type", "") == "tool_call_item":  # what the model layer handed the Runner
                calls.append((item.raw_item.name, item.raw_item.arguments))
            elif getattr(item, "type", "") == "tool_call_output_item":
                calls.append(("-> output", item.output))

    asyncio.run(go())
    print(f"  (the Runner was handed, and answered: {calls})")
    return ran


# Each finding: (matrix cell, what happens, the deltas, what the stream says runs).
FINDINGS = [
    (
        "segment_per_call",
        "a second id on index 0 (Ollama's OpenAI-compatible API puts every call there: ollama/ollama#15457): the "
        "calls are merged into one 'mul' with both argument texts, so neither tool runs as sent",
        (tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", '{"b": 2}')),
        [("add", {"a": 1}), ("mul", {"b": 2})],
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, deltas, stream_says in FINDINGS:
        if cell not in cells:
            continue
        got = runner_runs(*deltas)
        present = got != stream_says
        defects += present
        print(f"[{cell}] {what}\n  the stream says runs: {stream_says}\n  the Runner ran:       {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
