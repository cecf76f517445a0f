"""Standalone reproductions of the smolagents findings of the toolcall-conformance matrix.

Needs only smolagents with its openai extra (measured: smolagents 1.26.0, openai 3.57.0; httpx2, which
openai 3.x depends on, serves the stream). No network, no API key:

    python repro_smolagents.py                          # every finding
    python repro_smolagents.py stack_outcome_matches    # the findings of one matrix cell

Each finding runs a real ``ToolCallingAgent(stream_outputs=True)`` on an ``OpenAIServerModel`` whose own
``openai.OpenAI`` client is served offline (``client_kwargs={"http_client": ...}`` with an
``httpx2.MockTransport``): the first model turn is the Chat Completions SSE body of the finding, as an
OpenAI-compatible server streams it, the next one calls ``final_answer``. The tools record what they
are called with. It prints what the stream says and what the agent did. Each finding has the kind the
matrix gives it: a ``defect``, or not one (``outside target``: a body the library does not claim to
read). The script exits 1 while any defect shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import io
import json
import sys

import httpx2
from rich.console import Console
from smolagents import OpenAIServerModel, Tool, ToolCallingAgent
from smolagents.monitoring import AgentLogger, LogLevel


def tc(index=0, id=None, name=None, args=None):
    """One tool-call delta (``index=None``: the key left out, as some servers do)."""
    entry = {"index": index} if index is not None else {}
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


FINAL = sse(tc(0, "call_final", "final_answer", '{"answer": "done"}'))


def tools(ran):
    """``write_file(path, content)``, ``get_weather(city)``, ``get_time(tz)``: each records its call in ``ran``."""

    class WriteFile(Tool):
        name = "write_file"
        description = "Write a file."
        inputs = {"path": {"type": "string", "description": "path"}, "content": {"type": "string", "description": "c"}}
        output_type = "string"

        def forward(self, path, content):
            ran.append(("write_file", {"path": path, "content": content}))
            return "written"

    class GetWeather(Tool):
        name = "get_weather"
        description = "The weather in a city."
        inputs = {"city": {"type": "string", "description": "city"}}
        output_type = "string"

        def forward(self, city):
            ran.append(("get_weather", {"city": city}))
            return "sunny"

    class GetTime(Tool):
        name = "get_time"
        description = "The time in a time zone."
        inputs = {"tz": {"type": "string", "description": "time zone"}}
        output_type = "string"

        def forward(self, tz):
            ran.append(("get_time", {"tz": tz}))
            return "noon"

    return [WriteFile(), GetWeather(), GetTime()]


def agent_run(body):
    """``(tools run, how the run ended)`` of a streaming ToolCallingAgent whose first model turn is ``body``."""
    served = [body, FINAL]
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=served.pop(0), headers={"content-type": "text/event-stream"})
    )
    model = OpenAIServerModel(
        model_id="m",
        api_base="http://test/v1",
        api_key="x",
        client_kwargs={"max_retries": 0, "http_client": httpx2.Client(transport=transport)},
    )
    ran = []
    # The agent renders its stream with rich's Live on its logger's console: a console writing nowhere.
    quiet = AgentLogger(level=LogLevel.OFF, console=Console(file=io.StringIO()))
    agent = ToolCallingAgent(tools=tools(ran), model=model, stream_outputs=True, logger=quiet, max_steps=2)
    try:
        answer = agent.run("do it")
    except Exception as error:  # noqa: BLE001 - what the agent raises is part of the finding
        return ran, f"raised {type(error).__name__}: {str(error).splitlines()[-1]}"
    return ran, f"finished: {answer!r}"


WRITE = '{"path": "a.py", "content": "x = 1"}'

# Each finding: (matrix cell, kind, what happens, the body, what the stream says, whether the agent's answer
# is still the finding).
FINDINGS = [
    (
        "stack_outcome_matches",
        "defect",
        "a stream cut before its terminal event (no finish_reason, no [DONE]: a connection closed cleanly "
        "mid-turn): generate_stream never reads finish_reason, so write_file runs and nothing is raised",
        sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False),
        "an error (the stream ended without its terminal event): write_file must not run",
        lambda got: got[0] != [] or not got[1].startswith("raised"),
    ),
    (
        "stack_outcome_matches",
        "defect",
        "the same cut inside the arguments: nothing says the stream was cut, the run goes on",
        sse(tc(0, "call_1", "write_file", '{"path": "a.py", "content": "x'), finish=None, done=False),
        "an error (the stream ended without its terminal event): nothing runs",
        lambda got: not got[1].startswith("raised"),
    ),
    (
        "stack_outcome_matches",
        "defect",
        "the same missing check at the token limit: a call whose arguments parse runs from a truncated turn",
        sse(tc(0, "call_1", "write_file", WRITE), finish="length"),
        "the turn was cut at the token limit: write_file must not run",
        lambda got: got[0] != [],
    ),
    (
        "stack_outcome_matches",
        "defect",
        "every call on index 0, each with its own id (Ollama's OpenAI-compatible API; huggingface/smolagents#1569): "
        "the calls are merged, get_weather never runs and get_time runs with the joined argument text",
        sse(tc(0, "call_a", "get_weather", '{"city": "Oslo"}'), tc(0, "call_b", "get_time", '{"tz": "UTC"}')),
        "two calls: get_weather {'city': 'Oslo'} (call_a) and get_time {'tz': 'UTC'} (call_b)",
        lambda got: sorted(got[0]) != [("get_time", {"tz": "UTC"}), ("get_weather", {"city": "Oslo"})],
    ),
    (
        "stack_outcome_matches",
        "defect",
        "tool-call deltas without an index key (Mistral's API; Gemini's OpenAI-compatible endpoint, which the "
        "smolagents docs pair with OpenAIServerModel): the step raises ValueError",
        sse(tc(None, "call_a", "get_weather", '{"city": "Oslo"}')),
        "one call: get_weather {'city': 'Oslo'} (call_a)",
        lambda got: got[0] != [("get_weather", {"city": "Oslo"})],
    ),
    (
        "stack_outcome_matches",
        "defect",
        "two calls without ids (vLLM's 2025 streams; huggingface/smolagents#2683): process_tool_calls keys calls "
        "by id, so only the last one runs",
        sse(tc(0, None, "get_weather", '{"city": "Oslo"}'), tc(1, None, "get_time", '{"tz": "UTC"}')),
        "two calls: get_weather {'city': 'Oslo'} and get_time {'tz': 'UTC'}",
        lambda got: sorted(got[0]) != [("get_time", {"tz": "UTC"}), ("get_weather", {"city": "Oslo"})],
    ),
    (
        "stack_outcome_matches",
        "outside target",  # the SDK's ChoiceDeltaToolCallFunction.arguments is typed str (JSON text)
        "arguments sent as a JSON object instead of JSON text: the step raises TypeError",
        sse(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                    }
                ]
            }
        ),
        "one call: get_weather {'city': 'Oslo'} (c1)",
        lambda got: got[0] != [("get_weather", {"city": "Oslo"})],
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, kind, what, body, stream_says, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = agent_run(body)
        present = still_there(got)
        defects += present and kind == "defect"
        print(f"[{cell}] {kind}: {what}\n  the stream says: {stream_says}\n  the tools ran: {got[0]}; the run {got[1]}")
        print(f"  -> {kind.upper()} still there\n" if present else "  -> as the stream says\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
