"""anthropic: ``accumulate_event``, the accumulator ``client.messages.stream()`` runs.

Converter-level: the suite replays each bundled Messages recording through the real ``anthropic``
SDK, offline (whole and split at arbitrary byte offsets), and this adapter folds the SDK's
``RawMessageStreamEvent`` objects exactly as ``MessageStream`` does, with
``accumulate_event(event=, current_snapshot=)`` (and the ``json_bufs`` dict the SDK keeps beside
the snapshot, in the versions whose ``accumulate_event`` takes one). An in-band ``error`` event
raises out of the SDK's stream and reaches the suite as it is (conformant).

What it reads: the final message, as ``get_final_message()`` returns it: ``tool_use`` blocks (id,
name and ``input``, the object the SDK parsed from the streamed JSON), ``text`` and ``thinking``
blocks. What it cannot map: the final message keeps no raw argument text, so calls carry none;
an ``input`` that is not an object cannot be told apart from a refused call by the suite's final-
result reader (it is read as not run).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.stack import Stack, StackCapabilities, sdk_stack

__all__ = ["ADAPTER", "accumulate", "make_stack"]

ADAPTER = AdapterInfo(
    name="anthropic",
    distributions=("anthropic",),
    imports=("anthropic",),
    kind="stack",
    factory="conformance.adapters.anthropic_sdk:make_stack",
    capabilities=StackCapabilities(apis=("anthropic",), text=True, reasoning=True),
    summary="accumulate_event (messages.stream()) over the SDK's own events, replayed from the bundled "
    "Messages recordings",
    # The accumulator runs nothing; the SDK's own tool runner decides, on the stop reason it exposes.
    policies={
        "truncated": "the final message keeps stop_reason `max_tokens` beside the partial tool input; the SDK's "
        "tool runner (client.beta.messages.tool_runner) stops on it and runs none of the turn's tool_use blocks "
        "(anthropic/lib/tools/_beta_runner.py, _STOP_REASON_STEPS), and Anthropic's stop-reason guide has the "
        "caller retry with a higher max_tokens",
        "incomplete": "a body that ends before message_stop leaves stop_reason None (a connection dropped mid-body "
        "raises instead); the SDK's tool runner stops on a missing stop reason and runs none of the turn's "
        "tool_use blocks (anthropic/lib/tools/_beta_runner.py)",
    },
)


def accumulate(api: str, events: Iterator[Any]) -> dict[str, Any]:
    """Fold one stream's events as ``messages.stream()`` does and read its final message."""
    del api
    from anthropic.lib.streaming import _messages

    accumulate_event: Any = _messages.accumulate_event  # its keyword arguments differ between versions
    takes_buffers = "json_bufs" in inspect.signature(accumulate_event).parameters
    buffers: dict[int, bytes] = {}
    snapshot: Any = None
    for event in events:
        if takes_buffers:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        else:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot)
    if snapshot is None:
        return {"tool_calls": [], "text": "", "reasoning": ""}
    calls: list[dict[str, Any]] = []
    text = reasoning = ""
    for block in snapshot.content:
        if block.type == "tool_use":
            calls.append({"id": block.id, "name": block.name, "arguments": block.input})
        elif block.type == "text":
            text += block.text
        elif block.type == "thinking":
            reasoning += block.thinking
    return {"tool_calls": calls, "text": text, "reasoning": reasoning, "finish_reason": snapshot.stop_reason}


def make_stack() -> Stack:
    """The stack the suite runs (``run_stack_conformance(make_stack(), ...)``, ``run --stack``), declaring
    the adapter's capabilities."""
    capabilities = ADAPTER.capabilities
    assert isinstance(capabilities, StackCapabilities)
    return sdk_stack(accumulate, capabilities)
