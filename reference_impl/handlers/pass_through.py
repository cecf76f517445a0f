"""``PassThroughStreamingResponseHandler``: text and reasoning only, for turns without tools."""

from __future__ import annotations

from reference_impl.handlers.base import SegmentEmitterHandler
from reference_impl.types import ChunkResponse, SegmentType

__all__ = ["PassThroughStreamingResponseHandler"]


class PassThroughStreamingResponseHandler(SegmentEmitterHandler):
    """Emits TEXT and REASONING segments that follow the wire; never produces tool calls.

    ``chunk.tool_calls`` are ignored: this handler is chosen when no tools were offered to the
    model, so there is nothing to execute (seed 000 section 9.1).
    """

    def _process_chunk(self, chunk: ChunkResponse) -> None:
        if chunk.reasoning:
            self._emit_reasoning(chunk.reasoning)
        if chunk.content:
            self._emit_text(SegmentType.TEXT, chunk.content)
