"""A small agent framework's provider layer on the ``openai`` SDK, checked as a whole stack.

``ask(client)`` is the framework's own code: one streamed Chat Completions turn
(``client.chat.completions.create(..., stream=True)``), folded into the calls the agent would
run, the text and the reasoning. ``stack(api, pieces, options)`` is what the suite calls: it
serves a recording's response body, in exactly the byte pieces given, through the SDK's own HTTP
client (an ``httpx2.MockTransport``: nothing leaves the process) and returns what ``ask`` made of
it. Check it with::

    toolcall-conformance run --stack examples.stacks.openai_stack:stack

The fold is what a careful framework writes (the rules are the reference converter's,
``reference_impl/converters/openai_chat.py``): calls keyed by ``index``, a different id on an
occupied index starts a new call, a call without ``index`` is found by its id, ids and names are
adopted once and never concatenated when a server restates them, object-typed arguments are
serialised once; and a call runs only when the stream ended normally (a ``finish_reason`` other
than ``length`` or ``content_filter``, no error) and its arguments are one JSON object.

openai 3.x runs on ``httpx2``; for a library pinned to openai 2.x, which runs on ``httpx``, write
``import httpx`` instead of ``import httpx2``: the transport API is the same (docs/stacks.md).

``stack_ignoring_the_end`` is the same stack with a planted bug: it runs every call whose
arguments parse, however the stream ended (a call cut off by a dropped connection, or truncated
at the token limit with arguments that happen to parse, still runs). The suite must fail it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

__all__ = ["ask", "ask_ignoring_the_end", "offline_client", "stack", "stack_ignoring_the_end"]

MODEL = "gpt-4.1-mini"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Paris?"}]
# Finish reasons after which nothing of the turn may run (the rest, and dialects' own values, are normal).
TRUNCATED = {"length"}
FAILED = {"content_filter"}


def offline_client(pieces: Iterable[bytes]) -> openai.OpenAI:
    """An ``openai.OpenAI`` whose every request is answered with the body in exactly ``pieces``, offline."""
    served = list(pieces)

    def respond(request: httpx2.Request) -> httpx2.Response:
        del request
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

    transport = httpx2.MockTransport(respond)
    return openai.OpenAI(api_key="offline", max_retries=0, http_client=httpx2.Client(transport=transport))


@dataclass
class _Call:
    id: str | None = None
    name: str = ""
    arguments: str = ""


def _given(value: Any) -> str | None:
    """An id or a name as sent, or None when it was not really sent (``""``, ``null``, ``"None"``)."""
    if not isinstance(value, str) or value.strip() in ("", "null", "None"):
        return None
    return value


class _Fold:
    """One stream's chunks, folded as they arrive."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.by_index: dict[int, _Call] = {}
        self.by_id: dict[str, _Call] = {}
        self.current: _Call | None = None
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.finish_reason: str | None = None

    def take(self, chunk: Any) -> None:
        for choice in chunk.choices or ():
            if choice.index not in (0, None):
                continue
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            # DeepSeek-style servers stream reasoning in a field the SDK keeps as an extra.
            reasoning = getattr(delta, "reasoning_content", None)
            self.reasoning.append(reasoning if isinstance(reasoning, str) else "")
            self.text.append(delta.content or "")
            for entry in delta.tool_calls or ():
                function = entry.function
                name = _given(function.name) if function is not None else None
                call = self._call(entry.index, _given(entry.id), name)
                if name is not None and name != call.name:
                    call.name = name if not call.name else call.name + name  # a fragment; a restated name is kept once
                arguments = function.arguments if function is not None else None
                if isinstance(arguments, str):
                    call.arguments += arguments
                elif arguments is not None:  # some servers send the arguments as a JSON object
                    call.arguments += json.dumps(arguments)

    def _call(self, index: Any, call_id: str | None, name: str | None) -> _Call:
        """The call a ``tool_calls`` entry belongs to (a new one when it starts one)."""
        if isinstance(index, int):
            call = self.by_index.get(index)
            if call is None or (call_id is not None and call.id is not None and call_id != call.id):
                call = self.by_index[index] = self._new()
        else:
            call = self.by_id.get(call_id) if call_id is not None else None
            if call is None:
                current = self.current
                starts_another = current is not None and (
                    (call_id is not None and current.id is not None)
                    or (name is not None and current.arguments != "" and name != current.name)
                )
                call = self._new() if current is None or starts_another else current
        if call_id is not None and call.id is None:
            call.id = call_id
            self.by_id.setdefault(call_id, call)
        self.current = call
        return call

    def _new(self) -> _Call:
        self.calls.append(_Call())
        return self.calls[-1]


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Strict: ``""`` is ``{}``; anything but one JSON object is None (the call never runs)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _why_not(finish_reason: str | None, error: str | None) -> str | None:
    """Why nothing of this turn may run, or None when it ended normally."""
    if error is not None:
        return error
    if finish_reason is None:
        return "incomplete: the stream ended without a finish_reason"
    if finish_reason in TRUNCATED:
        return f"truncated: finish_reason {finish_reason!r}"
    if finish_reason in FAILED:
        return f"provider_error: finish_reason {finish_reason!r}"
    return None


def _ask(client: openai.OpenAI, why_not: Callable[[str | None, str | None], str | None]) -> dict[str, Any]:
    fold = _Fold()
    error = None
    try:
        for chunk in client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True):
            fold.take(chunk)
    except openai.APIError as raised:  # an error event inside the stream: the SDK raises it
        error = f"provider_error: {raised.message}"
    turn_not_runnable = why_not(fold.finish_reason, error)
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
        "reasoning": "".join(fold.reasoning),
        "finish_reason": fold.finish_reason,
        "error": turn_not_runnable,
    }


def ask(client: openai.OpenAI) -> dict[str, Any]:
    """One streamed turn through ``client``: ``{"calls", "text", "reasoning", "finish_reason", "error"}``.

    A call carries ``arguments`` only when the agent would run it, else an ``error`` saying why not.
    """
    return _ask(client, _why_not)


def ask_ignoring_the_end(client: openai.OpenAI) -> dict[str, Any]:
    """``ask`` with the planted bug: how the stream ended is never asked."""
    return _ask(client, lambda finish_reason, error: None)


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


# What the stacks run: Chat Completions bodies (OpenAI and OpenAI-compatible servers). A plain
# mapping, so this module needs nothing of the suite; conformance.stack.StackCapabilities works too.
stack.capabilities = {"apis": ["openai-chat"]}
stack_ignoring_the_end.capabilities = stack.capabilities
