"""The README's walk-through: a framework whose turn is the ``openai`` SDK's own stream helper.

``ask(client)`` is what many frameworks write: ``client.chat.completions.stream(...)``, then
``get_final_completion()``, and a call runs unless the turn was cut at the token limit. ``stack``
serves the suite's body through the SDK's own HTTP client, offline. Check it with::

    toolcall-conformance run --stack examples.stacks.sdk_helper_stack:stack
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2  # openai 3.x; a library on openai 2.x writes `import httpx as httpx2`
import openai


def ask(client: openai.OpenAI) -> dict[str, Any]:
    """One streamed turn: the calls the agent would run (``arguments``) or refuse (``error``), and the text."""
    messages: list[Any] = [{"role": "user", "content": "What's the weather in Paris?"}]
    with client.chat.completions.stream(model="gpt-4.1-mini", messages=messages) as stream:
        completion = stream.get_final_completion()
    choice = completion.choices[0]
    calls = []
    for call in choice.message.tool_calls or ():
        raw = call.function.arguments  # type: ignore[union-attr]
        try:
            arguments = json.loads(raw or "{}") if choice.finish_reason != "length" else None
        except json.JSONDecodeError:
            arguments = None
        error = None if isinstance(arguments, dict) else "not run"
        calls.append(
            {
                "call_id": call.id,
                "name": call.function.name,
                "raw_arguments": raw,  # type: ignore[union-attr]
                "arguments": arguments if error is None else None,
                "error": error,
            }
        )
    return {"calls": calls, "text": choice.message.content or "", "finish_reason": choice.finish_reason}


def stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """What the suite calls: ``ask`` on a client that answers with the body in exactly ``pieces``."""
    body = list(pieces)
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=iter(body)))
    with openai.OpenAI(api_key="offline", max_retries=0, http_client=httpx2.Client(transport=transport)) as client:
        return ask(client)


stack.capabilities = {"apis": ["openai-chat"], "reasoning": False}  # type: ignore[attr-defined]
