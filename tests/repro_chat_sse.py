"""Chat Completions stream bodies for the direct reproductions (plain JSON, no toolcall-conformance).

``tc(...)`` is one tool-call delta as an OpenAI-compatible server sends it; ``sse(...)`` a whole
``text/event-stream`` body of such deltas (strings are content deltas), ending with a finish
reason and ``[DONE]``; ``serving(*bodies)`` an ``AsyncOpenAI`` client whose every request gets the
next body (the last one repeated), offline. Shared by the reproductions that feed a library
through the openai SDK.
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


def serving(*bodies: bytes, base_url: str = "http://test/v1") -> Any:
    """An ``openai.AsyncOpenAI`` client answering each request with the next of ``bodies`` (offline)."""
    import httpx2
    from openai import AsyncOpenAI

    queue = list(bodies)

    def respond(request: Any) -> Any:
        return httpx2.Response(
            200, content=queue.pop(0) if len(queue) > 1 else queue[0], headers={"content-type": "text/event-stream"}
        )

    return AsyncOpenAI(
        api_key="x",
        base_url=base_url,
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )
