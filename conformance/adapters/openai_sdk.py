"""openai: ``ChatCompletionStreamState``, the accumulator ``client.chat.completions.stream()`` runs.

Converter-level: the suite replays each bundled Chat Completions recording through the real
``openai`` SDK, offline (whole and split at arbitrary byte offsets), and this adapter folds the
SDK's ``ChatCompletionChunk`` objects exactly as ``ChatCompletionStream`` does:
``state.handle_chunk(chunk)`` for each, then ``state.get_final_completion()``. An in-band error
raises out of the SDK's stream and ``get_final_completion()`` raises ``LengthFinishReasonError``
on a ``length`` stop: both are the SDK's way of surfacing an abnormal end and reach the suite as
they are (raising on an abnormal end is conformant).

What it reads: ``choices[0].message`` (``tool_calls`` with id, name and raw arguments,
``content``). What it cannot map: without ``strict`` tools in ``input_tools`` (a recording carries
no tool definitions) the SDK never parses arguments, so the adapter decodes the raw text with
``json.loads`` (an object runs, anything else does not); argument-validity verdicts on these
recordings are therefore the adapter's, not the SDK's. ``reasoning_content`` is not part of the
SDK's message model: the stack declares no reasoning.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.adapters.arguments import decode_arguments
from conformance.adapters.base import AdapterInfo
from conformance.stack import Stack, StackCapabilities, sdk_stack

__all__ = ["ADAPTER", "accumulate", "make_stack"]

ADAPTER = AdapterInfo(
    name="openai",
    distributions=("openai",),
    imports=("openai",),
    kind="stack",
    factory="conformance.adapters.openai_sdk:make_stack",
    capabilities=StackCapabilities(apis=("openai-chat",), text=True, reasoning=False),
    summary="ChatCompletionStreamState (chat.completions.stream()) over the SDK's own chunks, replayed from "
    "the bundled Chat Completions recordings",
)


def accumulate(api: str, events: Iterator[Any]) -> dict[str, Any]:
    """Fold one stream's ``ChatCompletionChunk`` objects as ``chat.completions.stream()`` does."""
    del api
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState()
    for chunk in events:
        state.handle_chunk(chunk)
    completion = state.get_final_completion()
    if not completion.choices:
        return {"tool_calls": [], "text": ""}
    choice = completion.choices[0]
    calls = []
    for call in choice.message.tool_calls or []:
        raw = call.function.arguments if call.function.arguments is not None else ""
        calls.append((call.id, call.function.name, str(raw), decode_arguments(raw)))
    return {"tool_calls": calls, "text": choice.message.content or "", "finish_reason": choice.finish_reason}


def make_stack() -> Stack:
    """The stack the suite runs (``run_stack_conformance(make_stack(), ...)``, ``run --stack``), declaring
    the adapter's capabilities."""
    capabilities = ADAPTER.capabilities
    assert isinstance(capabilities, StackCapabilities)
    return sdk_stack(accumulate, capabilities)
