"""Standalone reproductions of the openai SDK defects of the toolcall-conformance matrix.

Needs only the openai package (measured: openai 3.57.0; httpx2, which it depends on, serves the
stream). No network, no API key:

    python repro_openai.py                          # every finding
    python repro_openai.py stack_outcome_matches    # the findings of one matrix cell

Each finding serves a Chat Completions SSE body (as an OpenAI-compatible server streams it) to a
real ``openai.OpenAI`` client and reads ``client.chat.completions.stream(...)``'s final completion,
the SDK's own accumulation. It prints what the stream says and what the SDK returned; the script
exits 1 while any finding shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import json
import sys

import httpx2
import openai


def tc(index=0, id=None, name=None, args=None, **extra):
    """One tool-call delta (``index=None``: the key left out, as some servers do)."""
    entry = {"index": index, **extra} if index is not None else dict(extra)
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


def final(body):
    """``(finish_reason, [(id, name, arguments)])`` of the SDK's final completion, or what it raised."""
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )
    client = openai.OpenAI(api_key="x", base_url="http://test/v1", http_client=httpx2.Client(transport=transport))
    try:
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
            for _ in stream:
                pass
            choice = stream.get_final_completion().choices[0]
    except AssertionError:
        return "raised AssertionError"
    except Exception as error:  # noqa: BLE001 - what the SDK raises is part of the finding
        return f"raised {type(error).__name__}: {error}"
    return choice.finish_reason, [
        (c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []
    ]


WRITE = '{"path": "a.py", "content": "x = 1"}'

# Each finding: (matrix cell, what happens, the body, what the stream says, whether the SDK's answer
# is still the defect).
FINDINGS = [
    (
        "stack_outcome_matches",
        "a stream cut before its terminal event (no finish_reason, no [DONE]; a dropped connection): the final "
        "completion holds a complete-looking write_file call and nothing is raised",
        sse(tc(0, "call_1", "write_file", WRITE), finish=None, done=False),
        "an error (the stream ended without its terminal event): the call must not run",
        lambda got: not isinstance(got, str),
    ),
    (
        "stack_outcome_matches",
        "a server that restates the id on every delta: the ids are concatenated",
        sse(tc(0, "call_a", "get_weather", '{"city":'), tc(0, "call_a", None, ' "Rome"}')),
        "('tool_calls', [('call_a', 'get_weather', '{\"city\": \"Rome\"}')])",
        lambda got: got != ("tool_calls", [("call_a", "get_weather", '{"city": "Rome"}')]),
    ),
    (
        "stack_outcome_matches",
        "a server that restates the name on every delta: the call comes out under a name no tool has",
        sse(tc(0, "call_a", "get_weather", '{"city":'), tc(0, None, "get_weather", ' "Rome"}')),
        "('tool_calls', [('call_a', 'get_weather', '{\"city\": \"Rome\"}')])",
        lambda got: got != ("tool_calls", [("call_a", "get_weather", '{"city": "Rome"}')]),
    ),
    (
        "stack_outcome_matches",
        "every call on index 0 (Ollama's OpenAI-compatible API: ollama/ollama#15457): two calls merged into one",
        sse(tc(0, "call_a", "get_weather", '{"city": "Oslo"}'), tc(0, "call_b", "get_time", '{"tz": "UTC"}')),
        "two calls: get_weather (call_a) and get_time (call_b)",
        lambda got: isinstance(got, str) or [c[0] for c in got[1]] != ["call_a", "call_b"],
    ),
    (
        "stack_outcome_matches",
        "tool-call deltas without an index key (Mistral's API): the stream helper raises TypeError",
        sse(tc(None, "call_a", "get_weather", '{"city": "Oslo"}')),
        "('tool_calls', [('call_a', 'get_weather', '{\"city\": \"Oslo\"}')])",
        lambda got: isinstance(got, str),
    ),
    (
        "stack_outcome_matches",
        'continuation deltas with explicit nulls ({"id": null, "type": null}): an assert trips (under python -O '
        "the same stream reads fine)",
        sse(tc(0, "call_a", "get_weather", '{"city"'), tc(0, args=': "Oslo"}', id=None, type=None)),
        "('tool_calls', [('call_a', 'get_weather', '{\"city\": \"Oslo\"}')])",
        lambda got: isinstance(got, str),
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, body, stream_says, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = final(body)
        present = still_there(got)
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}\n  openai returned: {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
