"""Standalone reproductions of the langchain-core findings of the toolcall-conformance matrix.

Needs only langchain-core (measured: langchain-core 1.8.3). Nothing else, no network:

    python repro_langchain_core.py                    # every finding
    python repro_langchain_core.py tool_names_whole   # the findings of one matrix cell

Every langchain chat integration turns each streamed tool-call delta into an ``AIMessageChunk``
whose ``tool_call_chunks`` hold one ``tool_call_chunk(name=, args=, id=, index=)`` (a field the delta
left out is ``None``), after a role-only first chunk, and merges them with ``+``; agents run
``.tool_calls`` and skip ``.invalid_tool_calls``. Each finding below feeds the deltas a server sent,
prints what the stream says should run and what ``.tool_calls`` says will run. Each finding has the
kind the matrix gives it: a ``defect`` (a tool runs that must not, or a call is lost), or not one
(``outside target``: a job the library leaves to another layer; ``deviation``: what runs is still
right). The script exits 1 while any defect shown is still there, 0 once all are fixed.
"""

from __future__ import annotations

import sys

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk


def tc(index, id=None, name=None, args=None):
    """One streamed tool-call delta as an integration yields it."""
    return AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name=name, args=args, id=id, index=index)])


def runs(*deltas):
    """What an agent runs after merging the deltas: ``(id, name, args)`` of ``.tool_calls``."""
    message = AIMessageChunk(content="")  # the role-only chunk every integration yields first
    for delta in deltas:
        message = message + delta
    return [(call["id"], call["name"], call["args"]) for call in message.tool_calls]


# Each finding: (matrix cell, kind, what happens, what the stream says runs, what langchain-core runs).
FINDINGS = [
    (
        "tool_names_whole",
        "outside target",  # ToolCallChunk's docstring: merged string attributes are concatenated
        "a server that restates the name on every delta: the names are concatenated, 'get_weather' never runs",
        [("c1", "get_weather", {"city": "Rome"})],
        lambda: runs(tc(0, "c1", "get_weather", '{"city":'), tc(0, "c1", "get_weather", ' "Rome"}')),
    ),
    (
        "invalid_arguments_flagged",
        "defect",
        "arguments that are not complete JSON (vLLM has ended streams so): parse_partial_json repairs them "
        "into a call that runs",
        [],  # '{"surface_type": "card", "data": ' is not a JSON object: nothing may run
        lambda: runs(tc(0, "c1", "ui_show", '{"surface_type": "card", "data": ')),
    ),
    (
        "invalid_arguments_flagged",
        "defect",
        "two JSON objects in one argument buffer: the second is dropped silently and the call runs",
        [],  # '{"entity":"A"}{"entity":"B"}' is not one JSON object
        lambda: runs(tc(0, "c1", "lookup", '{"entity":"A"}{"entity":"B"}')),
    ),
    (
        "invalid_arguments_flagged",
        "deviation",  # a runner answers a call named '' with an error: nothing runs wrong
        "a call whose name never arrives comes out under the name ''",
        [],  # no tool is named '': nothing may run
        lambda: runs(tc(0, "c1", None, '{"a": 1}')),
    ),
    (
        "segment_per_call",
        "defect",
        "a second id on index 0 (servers that put every call on index 0): the id-less continuation lands on "
        "the first call, which is lost, and the second runs with repaired arguments",
        [("call_1", "add", {"a": 1}), ("call_2", "mul", {"b": 2})],
        lambda: runs(tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", "{"), tc(0, args='"b": 2}')),
    ),
    (
        "invocations_match_stream",
        "defect",
        "the same stream: mul runs with {} instead of {'b': 2}",
        [("call_1", "add", {"a": 1}), ("call_2", "mul", {"b": 2})],
        lambda: runs(tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", "{"), tc(0, args='"b": 2}')),
    ),
]


def main(argv: list[str]) -> int:
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, kind, what, stream_says, library_runs in FINDINGS:
        if cell not in cells:
            continue
        expected, actual = stream_says, library_runs()
        differs = actual != expected
        defects += differs and kind == "defect"
        print(f"[{cell}] {kind}: {what}\n  the stream says runs: {expected}\n  langchain-core runs:  {actual}")
        print(f"  -> {kind.upper()} still there\n" if differs else "  -> as the stream says\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
