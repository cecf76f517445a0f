"""A small agent framework's provider layer on the ``anthropic`` SDK, checked as a whole stack.

``ask(client)`` is the framework's own code: one streamed Messages turn
(``client.messages.create(..., stream=True)``), its raw events folded into the calls the agent
would run, the text and the thinking. ``stack(api, pieces, options)`` is what the suite calls: it
serves a recording's response body, in exactly the byte pieces given, through the SDK's own HTTP
client (``anthropic.Anthropic(http_client=httpx2.Client(transport=httpx2.MockTransport(...)))``:
nothing leaves the process) and returns what ``ask`` made of it. Check it with::

    toolcall-conformance run --stack examples.stacks.anthropic_stack:stack

The fold: a ``tool_use`` block is one call (its id and name from ``content_block_start``, its
arguments the ``input_json_delta`` fragments; server-side tools such as web search are the
provider's, not the application's, and are left out); a call runs only when the turn ended with
``message_stop`` after a normal ``stop_reason`` (not ``max_tokens``, not ``refusal``), with no
error event, and its arguments are one JSON object.

``stack_ignoring_the_end`` is the same stack with a planted bug: it runs every call whose
arguments parse, however the stream ended. The suite must fail it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2

__all__ = ["ask", "ask_ignoring_the_end", "offline_client", "stack", "stack_ignoring_the_end"]

MODEL = "claude-sonnet-5"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Paris?"}]
# Stop reasons after which nothing of the turn may run (the others are normal ends).
TRUNCATED = {"max_tokens", "model_context_window_exceeded"}
FAILED = {"refusal"}


def offline_client(pieces: Iterable[bytes]) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` whose every request is answered with the body in exactly ``pieces``, offline."""
    served = list(pieces)

    def respond(request: httpx2.Request) -> httpx2.Response:
        del request
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

    transport = httpx2.MockTransport(respond)
    return anthropic.Anthropic(api_key="offline", max_retries=0, http_client=httpx2.Client(transport=transport))


@dataclass
class _Call:
    id: str | None
    name: str
    arguments: str = ""


class _Fold:
    """One stream's events, folded as they arrive."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.blocks: dict[int, _Call | None] = {}  # content block index -> its call (None: not a call)
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.stop_reason: str | None = None
        self.stopped = False  # message_stop arrived

    def take(self, event: Any) -> None:
        if event.type == "content_block_start":
            block = event.content_block
            call = _Call(block.id or None, block.name or "") if block.type == "tool_use" else None
            if call is not None:
                self.calls.append(call)
            self.blocks[event.index] = call
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self.text.append(delta.text)
            elif delta.type == "thinking_delta":
                self.thinking.append(delta.thinking)
            elif delta.type == "input_json_delta":
                call = self.blocks.get(event.index)
                if call is not None:
                    call.arguments += delta.partial_json
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
        elif event.type == "message_stop":
            self.stopped = True


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Strict: ``""`` is ``{}``; anything but one JSON object is None (the call never runs)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _why_not(fold: _Fold, error: str | None) -> str | None:
    """Why nothing of this turn may run, or None when it ended normally."""
    if error is not None:
        return error
    if not fold.stopped:
        return "incomplete: the stream ended without message_stop"
    if fold.stop_reason in TRUNCATED:
        return f"truncated: stop_reason {fold.stop_reason!r}"
    if fold.stop_reason in FAILED:
        return f"provider_error: stop_reason {fold.stop_reason!r}"
    return None


def _ask(client: anthropic.Anthropic, why_not: Callable[[_Fold, str | None], str | None]) -> dict[str, Any]:
    fold = _Fold()
    error = None
    try:
        for event in client.messages.create(model=MODEL, max_tokens=1024, messages=MESSAGES, stream=True):
            fold.take(event)
    except anthropic.APIError as raised:  # an error event inside the stream: the SDK raises it
        error = f"provider_error: {raised.message}"
    turn_not_runnable = why_not(fold, error)
    calls = []
    for call in fold.calls:
        arguments = parse_arguments(call.arguments)
        refused = turn_not_runnable or ("no tool name" if not call.name else None)
        if refused is None and arguments is None:
            refused = f"invalid arguments {call.arguments!r}"
        calls.append(
            {
                "call_id": call.id,
                "name": call.name or None,
                "raw_arguments": call.arguments,
                "arguments": arguments if refused is None else None,
                "error": refused,
            }
        )
    return {
        "calls": calls,
        "text": "".join(fold.text),
        "reasoning": "".join(fold.thinking),
        "finish_reason": fold.stop_reason,
        "error": turn_not_runnable,
    }


def ask(client: anthropic.Anthropic) -> dict[str, Any]:
    """One streamed turn through ``client``: ``{"calls", "text", "reasoning", "finish_reason", "error"}``.

    A call carries ``arguments`` only when the agent would run it, else an ``error`` saying why not.
    """
    return _ask(client, _why_not)


def ask_ignoring_the_end(client: anthropic.Anthropic) -> dict[str, Any]:
    """``ask`` with the planted bug: how the stream ended is never asked."""
    return _ask(client, lambda fold, error: None)


def stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """The suite's entry point: ``ask`` on a client that serves the body in ``pieces``."""
    del api, options  # one wire API (see capabilities), no server profile
    with offline_client(pieces) as client:
        return ask(client)


def stack_ignoring_the_end(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """``stack`` with the planted bug of ``ask_ignoring_the_end``."""
    del api, options
    with offline_client(pieces) as client:
        return ask_ignoring_the_end(client)


# What the stacks run: Anthropic Messages bodies. A plain mapping, so this module needs nothing of
# the suite; conformance.stack.StackCapabilities works too.
stack.capabilities = {"apis": ["anthropic"]}
stack_ignoring_the_end.capabilities = stack.capabilities
