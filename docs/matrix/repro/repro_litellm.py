"""Standalone reproductions of the litellm defects of the toolcall-conformance matrix.

Needs only litellm (measured: litellm 1.110.2). No network, no API key:

    python repro_litellm.py                     # every finding
    python repro_litellm.py segment_per_call    # the findings of one matrix cell

``litellm.stream_chunk_builder`` folds the OpenAI-shaped chunks ``litellm.completion(stream=True)``
yields (one per provider delta, after a role-only chunk) into the response an application reads.
Each finding prints what the stream says and what the built response holds; the script exits 1
while any finding shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import os
import sys
import warnings

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before import: no network fetch of the cost map
warnings.simplefilter("ignore")  # litellm's own deprecation warnings

import litellm  # noqa: E402

litellm.suppress_debug_info = True  # its "Provider List" banner on every chunk of an unknown model


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }  # fmt: skip


def tc(index, id=None, name=None, args=None):
    """One tool-call delta as an OpenAI-compatible server sends it."""
    entry = {"index": index, "function": {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}}
    if id is not None:
        entry["id"] = id
    if id is not None or name is not None:
        entry["type"] = "function"
    return {"tool_calls": [entry]}


def built_calls(*deltas, finish="tool_calls"):
    """``(id, name, arguments)`` of the response ``stream_chunk_builder`` builds from the deltas."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": d} if isinstance(d, str) else d) for d in deltas]
    chunks.append(chunk({}, finish))
    try:
        message = litellm.stream_chunk_builder(chunks).choices[0].message
    except Exception as error:  # noqa: BLE001 - a fix may report the problem by raising: shown as such
        return f"raised {type(error).__name__}: {error}"
    return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]


# Each finding: (matrix cell, what happens, the deltas, what the stream says the response holds).
FINDINGS = [
    (
        "segment_per_call",
        "a call that comes without an id (vLLM has streamed calls so: vllm-project/vllm#18412): dropped silently",
        ("Let me look.", tc(0, None, "search", '{"q": '), tc(0, args='"tides"}')),
        [(None, "search", '{"q": "tides"}')],
    ),
    (
        "segment_per_call",
        "a call whose name never arrives (xLLM streamed such calls before xLLM-AI/xllm#722): dropped silently "
        "instead of reported",
        (tc(0, "call_nameless", None, '{"a": 1}'),),
        [("call_nameless", None, '{"a": 1}')],
    ),
    (
        "segment_per_call",
        "a second id on index 0 (Ollama's OpenAI-compatible API puts every call there: ollama/ollama#15457): "
        "the calls are merged, 'add' is lost",
        (tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", '{"b": 2}')),
        [("call_1", "add", '{"a": 1}'), ("call_2", "mul", '{"b": 2}')],
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
        got = built_calls(*deltas)
        # A call without an id may get a generated one: names and arguments are compared, in order. A
        # raise reports the problem (the call is not silently lost): that counts as fixed.
        present = not isinstance(got, str) and [(n, a) for _, n, a in got] != [(n, a) for _, n, a in stream_says]
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}\n  litellm builds:  {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
