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
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.stack import Stack, StackCapabilities, sdk_stack

__all__ = ["ADAPTER", "accumulate", "make_stack"]

# What the SDK does not claim to read (``AdapterInfo.outside_target``): it reads OpenAI's (and Azure
# OpenAI's) stream through its own types. A crash on a value those types admit (null id or type on a
# continuation: ``Optional``) is not in this list; it stays a defect.
_FIRST_DELTA_ONLY = (
    "OpenAI sends a call's id and name once, on its first delta (four api.openai.com recordings); the SDK "
    "appends each string field a delta carries, which reads OpenAI's stream exactly"
)

ADAPTER = AdapterInfo(
    name="openai",
    distributions=("openai",),
    imports=("openai",),
    kind="stack",
    factory="conformance.adapters.openai_sdk:make_stack",
    capabilities=StackCapabilities(apis=("openai-chat",), text=True, reasoning=False),
    summary="ChatCompletionStreamState (chat.completions.stream()) over the SDK's own chunks, replayed from "
    "the bundled Chat Completions recordings",
    policies={
        "incomplete": "a body that ends before its finish chunk leaves the accumulated choice's finish_reason None "
        "(a connection dropped mid-body raises APIConnectionError instead), and the SDK runs no tools: whether to "
        "run calls of a turn that never said `tool_calls` is its caller's decision",
    },
    outside_target={
        "no_index": INDEX_REQUIRED,
        "null_index": INDEX_REQUIRED,
        "index_always_zero": "OpenAI numbers a turn's calls 0, 1, ... and the SDK merges deltas by that index; a "
        "server that puts every call on index 0 (Ollama) is not OpenAI's stream",
        "id_restated": _FIRST_DELTA_ONLY,
        "name_restated": _FIRST_DELTA_ONLY,
        "object_arguments": "`ChoiceDeltaToolCallFunction.arguments` is typed `str` (JSON text): a JSON object there "
        "is not a value the SDK's types admit",
    },
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
