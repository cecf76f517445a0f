"""langchain-core: ``AIMessageChunk`` with ``tool_call_chunks``, merged with ``+`` one wire delta at a time.

What it maps. Each ``ChunkResponse`` becomes one ``AIMessageChunk``, built the way langchain-openai's
``_convert_delta_to_message_chunk`` builds one from an OpenAI delta: ``content`` is the chunk's text,
``tool_call_chunks`` holds one ``tool_call_chunk(name=, args=, id=, index=)`` per ``ToolCallDelta``
(a field the wire left out is ``None``, ``""`` stays ``""``, the index is copied unchanged), and a
finish reason goes into ``response_metadata``. Chunks are merged left to right with ``+``, starting
from the role-only ``AIMessageChunk(content="")`` that ChatOpenAI always yields first (without it,
a first chunk holding two entries for one index is a shape no integration produces). The result is
read the way an agent reads it: ``.tool_calls`` (parsed: they run) and ``.invalid_tool_calls`` (they
do not), in the order of the merged ``tool_call_chunks``, and ``.content`` as the text.

What it cannot map. Reasoning: ``AIMessageChunk`` has no reasoning field in langchain-core (ChatOpenAI
drops ``reasoning_content``; other integrations put it in ``additional_kwargs`` each their own way).
Stream errors: a message chunk has no error channel (an integration raises, or leaves a finish
reason in ``response_metadata``; the direct reproductions show both). There are no events,
callbacks or lifecycle: langchain-core accumulates a final message, so this is a final-result
accumulator, and the checks about events, callbacks and text segments are skipped by name.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.handler.capabilities import Capabilities
from reference_impl.types import ChunkResponse

__all__ = ["ADAPTER", "LangchainAccumulator", "make_accumulator"]

CAPABILITIES = Capabilities(
    events=False,
    callbacks=False,
    lifecycle=False,
    reasoning=False,
    stream_errors=False,
    incremental_arguments=False,
    segmented_text=False,
    text_lag_chars=None,
)

_CONCATENATED = (
    'ToolCallChunk\'s docstring: when chunks merge, "all string attributes are concatenated" (the id and '
    "name come once, on a call's first chunk); normalising a server that restates them is its integration's "
    "job (reports asking core to dedupe restated names, langchain-ai/langchain#40041 and #40044, were closed)"
)
_INDEXED = (
    'ToolCallChunk\'s docstring: "chunks are only merged if their values of index are equal and not None": '
    "an integration that hands on chunks without an index asks for one call per chunk"
)

ADAPTER = AdapterInfo(
    name="langchain-core",
    distributions=("langchain-core",),
    imports=("langchain_core",),
    kind="accumulator",
    factory="conformance.adapters.langchain:make_accumulator",
    capabilities=CAPABILITIES,
    summary="AIMessageChunk.tool_call_chunks merged with + (what every langchain chat integration does), "
    "read through .tool_calls / .invalid_tool_calls / .content",
    # What ToolCallChunk's docstring documents: "all string attributes are concatenated" and chunks
    # merge only on equal, non-None indices. An integration that hands on a server's restated id or
    # name, or no index, asks for what the merge says it does.
    outside_target={
        "id_restated": _CONCATENATED,
        "name_restated": _CONCATENATED,
        "no_index": _INDEXED,
        "null_index": _INDEXED,
    },
)


class LangchainAccumulator:
    """A final-result target over langchain-core's ``AIMessageChunk`` merging (see the module docstring)."""

    def __init__(self) -> None:
        from langchain_core.messages import AIMessageChunk

        self._message: Any = AIMessageChunk(content="")

    def add(self, chunk: ChunkResponse) -> None:
        """Merge one wire delta, built as langchain-openai builds it, into the message so far."""
        from langchain_core.messages import AIMessageChunk
        from langchain_core.messages.tool import tool_call_chunk

        entries = [
            tool_call_chunk(name=delta.name, args=delta.arguments_delta, id=delta.call_id, index=delta.index)
            for delta in chunk.tool_calls or ()
        ]
        metadata = {"finish_reason": chunk.finish_reason} if chunk.finish_reason else {}
        piece = AIMessageChunk(content=chunk.content, tool_call_chunks=entries, response_metadata=metadata)
        self._message = self._message + piece

    def result(self) -> dict[str, Any]:
        """The calls (valid ones with their parsed ``args``, invalid ones with an error) and the text."""
        message = self._message
        valid = deque(message.tool_calls)
        invalid = deque(message.invalid_tool_calls)
        calls: list[tuple[Any, Any, str, Any]] = []
        # init_tool_calls sorts each merged chunk into one of the two lists, in chunk order: walk the
        # chunks to give the calls back in the order they appeared.
        for entry in message.tool_call_chunks:
            raw = entry.get("args") or ""
            head = invalid[0] if invalid else None
            if head is not None and head.get("id") == entry.get("id") and (head.get("args") or "") == raw:
                invalid.popleft()
                error = head.get("error") or "in invalid_tool_calls (langchain gives no reason)"
                calls.append((head.get("id"), head.get("name"), raw, error))
            elif valid:
                call = valid.popleft()
                calls.append((call.get("id"), call.get("name"), raw, call.get("args")))
        text = message.content if isinstance(message.content, str) else str(message.content)
        return {"tool_calls": calls, "text": text}


def make_accumulator() -> LangchainAccumulator:
    """A fresh accumulator (``run --accumulator conformance.adapters.langchain:make_accumulator``)."""
    return LangchainAccumulator()
