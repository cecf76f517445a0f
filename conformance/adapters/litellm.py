"""litellm: ``litellm.stream_chunk_builder`` over OpenAI-shaped stream chunks.

What it maps. Each ``ChunkResponse`` becomes one OpenAI ``chat.completion.chunk`` dict
(``conformance.adapters.openai_wire``: text, ``reasoning_content``, one ``delta.tool_calls`` entry per
``ToolCallDelta`` with the fields the wire left out omitted), after the role-only first chunk and
followed by the terminal chunk of a normally ended stream: the chunks ``litellm.completion(stream=True)``
yields for an OpenAI-compatible server, which users (and litellm's own proxy) hand to
``stream_chunk_builder``. The built response is read as it is returned: ``message.tool_calls``
(id, function name, the raw argument string), ``message.content`` and ``message.reasoning_content``.

What it cannot map. litellm never parses arguments: it hands the raw string to the caller. So that
the suite can compare calls, the adapter decodes each string with ``json.loads`` (an object runs,
anything else does not): whether invalid arguments are flagged is then the adapter's verdict, not
litellm's, and ``invalid_arguments_flagged`` is excluded. Stream errors are excluded too: the
builder has no error channel (``completion(stream=True)`` raises on in-band errors and on a stream
without a finish reason, and reports ``finish_reason="length"``; the direct reproductions cover
those). No events, callbacks or lifecycle: a final-result accumulator.

litellm fetches a model cost map from the network when imported unless
``LITELLM_LOCAL_MODEL_COST_MAP=True``; the adapter sets it before importing litellm.
"""

from __future__ import annotations

import os
from typing import Any

from conformance.adapters.arguments import decode_arguments
from conformance.adapters.base import AdapterInfo
from conformance.adapters.openai_wire import chunk_dict, role_chunk, stream_end, terminal_chunk
from conformance.handler.capabilities import Capabilities
from reference_impl.types import ChunkResponse

__all__ = ["ADAPTER", "LitellmAccumulator", "make_accumulator"]

CAPABILITIES = Capabilities(
    events=False,
    callbacks=False,
    lifecycle=False,
    stream_errors=False,
    incremental_arguments=False,
    segmented_text=False,
    text_lag_chars=None,
    wire_dialects=True,
)

ADAPTER = AdapterInfo(
    name="litellm",
    distributions=("litellm",),
    imports=("litellm",),
    kind="accumulator",
    factory="conformance.adapters.litellm:make_accumulator",
    capabilities=CAPABILITIES,
    summary="litellm.stream_chunk_builder over the OpenAI chunks completion(stream=True) yields",
    excluded={
        "invalid_arguments_flagged": "litellm returns argument text unparsed: running it or not is the caller's choice",
    },
    environment={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
)


def _import_litellm() -> Any:
    for key, value in ADAPTER.environment.items():
        os.environ.setdefault(key, value)
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LitellmAccumulator:
    """A final-result target over ``litellm.stream_chunk_builder`` (see the module docstring)."""

    def __init__(self) -> None:
        self._litellm = _import_litellm()
        self._chunks: list[ChunkResponse] = []

    def add(self, chunk: ChunkResponse) -> None:
        """Keep one chunk (the builder folds the whole list at the end, as its callers do)."""
        self._chunks.append(chunk)

    def result(self) -> dict[str, Any]:
        """Build the response from the stream's OpenAI chunks and read its calls, text and reasoning."""
        wire = [role_chunk()]
        wire += [d for d in (chunk_dict(c) for c in self._chunks) if d is not None]
        end = stream_end(self._chunks)
        if not end.finished:
            wire.append(terminal_chunk(end.saw_tool_calls))
        response = self._litellm.stream_chunk_builder(wire)
        message = response.choices[0].message
        calls = []
        for call in message.tool_calls or []:
            raw = call.function.arguments or ""
            calls.append((call.id, call.function.name, raw, decode_arguments(raw)))
        result: dict[str, Any] = {"tool_calls": calls, "text": message.content or ""}
        reasoning = getattr(message, "reasoning_content", None)
        result["reasoning"] = reasoning or ""
        return result


def make_accumulator() -> LitellmAccumulator:
    """A fresh accumulator (``run --accumulator conformance.adapters.litellm:make_accumulator``)."""
    return LitellmAccumulator()
