"""Chat Completions stream bodies for the direct reproductions (plain JSON, no toolcall-conformance).

``tc(...)`` is one tool-call delta as an OpenAI-compatible server sends it; ``sse(...)`` a whole
``text/event-stream`` body of such deltas (strings are content deltas), ending with a finish
reason and ``[DONE]``. Shared by the reproductions that feed a library through the openai SDK.
"""

from __future__ import annotations

import json
from typing import Any


def tc(index: int, id: str | None = None, name: str | None = None, args: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "index": index,
        "function": {k: v for k, v in (("name", name), ("arguments", args)) if v is not None},
    }
    if id is not None:
        entry.update(id=id, type="function")
    return {"tool_calls": [entry]}


def sse(*deltas: Any, finish: str = "tool_calls") -> bytes:
    chunks = [{"role": "assistant", "content": ""}, *({"content": d} if isinstance(d, str) else d for d in deltas)]
    events = [{"index": 0, "delta": d, "finish_reason": None} for d in chunks] + [
        {"index": 0, "delta": {}, "finish_reason": finish}
    ]
    lines = (
        json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [e]})
        for e in events
    )
    return ("".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n").encode()
