"""The handler interface (seed 000 section 5.1) and the machinery every reference handler shares.

``StreamingResponseHandler`` is the abstract interface. ``SegmentEmitterHandler`` implements the
parts that must behave identically in every handler, so they live in one place:

* emitting: an event goes to ``get_all_events()``, to the ``feed``/``finalize`` return value, to
  ``on_segment_event`` and to the ToolInvocationAdapter, in that order, always the same sequence;
  a raising callback is logged and swallowed and cannot corrupt state;
* text and reasoning segments that follow the wire: a new kind of content (or a tool call) ends
  the open text segment, and text arriving later opens a fresh one (the seed kept one text
  segment for the whole response, which reorders text around tool calls);
* the finalize / reset / feed-after-finalize contract;
* segment ids that are unique per handler instance, also across ``reset()``.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable

from reference_impl.adapter import ToolInvocationAdapter
from reference_impl.types import ChunkResponse, SegmentEvent, SegmentType, ToolInvocation

__all__ = ["HandlerFinalizedError", "SegmentEmitterHandler", "StreamingResponseHandler"]

logger = logging.getLogger("reference_impl.handlers")

SegmentEventCallback = Callable[[SegmentEvent], None]
ToolInvocationCallback = Callable[[ToolInvocation], None]


class HandlerFinalizedError(RuntimeError):
    """``feed()`` was called after the stream was finalized (explicitly or by ``is_complete``)."""


class StreamingResponseHandler(ABC):
    """Turns ``ChunkResponse``s into ``SegmentEvent``s and ``ToolInvocation``s (seed 000 section 5.1)."""

    @abstractmethod
    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        """Process one chunk; return the events it produced, in emission order."""

    @abstractmethod
    def finalize(self) -> list[SegmentEvent]:
        """End every open segment; a second call returns ``[]``."""

    @abstractmethod
    def get_all_invocations(self) -> list[ToolInvocation]:
        """A copy of every valid tool invocation produced so far."""

    @abstractmethod
    def get_all_events(self) -> list[SegmentEvent]:
        """A copy of every event emitted so far."""

    @abstractmethod
    def reset(self) -> None:
        """Return to the state of a freshly constructed handler (segment ids stay unique)."""


class SegmentEmitterHandler(StreamingResponseHandler):
    """Shared emission, text/reasoning segment and lifecycle logic for the reference handlers.

    Subclasses implement ``_process_chunk`` (and optionally ``_finish_stream``), calling
    ``_emit_text`` / ``_emit_reasoning`` / ``_close_text_segment`` / ``_emit`` as content arrives.
    """

    def __init__(
        self,
        on_segment_event: SegmentEventCallback | None = None,
        on_tool_invocation: ToolInvocationCallback | None = None,
        segment_id_prefix: str = "",
    ) -> None:
        self._on_segment_event = on_segment_event
        self._on_tool_invocation = on_tool_invocation
        self._segment_id_prefix = segment_id_prefix
        # A per-instance namespace plus a counter that survives reset(): ids never repeat within
        # an instance and are unlikely to collide across instances, yet stay short and ordered.
        self._id_namespace = uuid.uuid4().hex[:8]
        self._id_counter = itertools.count(1)
        self._adapter = ToolInvocationAdapter()
        self._init_stream_state()

    # -- state ---------------------------------------------------------------------------------

    def _init_stream_state(self) -> None:
        """Everything that reset() clears. Subclasses extend it (calling super())."""
        self._all_events: list[SegmentEvent] = []
        self._all_invocations: list[ToolInvocation] = []
        self._batch: list[SegmentEvent] = []
        self._is_finalized = False
        self._open_text_id: str | None = None
        self._open_text_type: SegmentType | None = None

    def reset(self) -> None:
        self._adapter.reset()
        self._init_stream_state()

    @property
    def is_finalized(self) -> bool:
        """True once ``finalize()`` ran or a chunk with ``is_complete=True`` was fed."""
        return self._is_finalized

    def _new_segment_id(self) -> str:
        return f"{self._segment_id_prefix}seg-{self._id_namespace}-{next(self._id_counter)}"

    # -- emission ------------------------------------------------------------------------------

    def _emit(self, event: SegmentEvent) -> None:
        # State first, callbacks last: a callback that raises must not lose the event.
        self._all_events.append(event)
        self._batch.append(event)
        invocation = self._adapter.process_event(event)
        if invocation is not None:
            self._all_invocations.append(invocation)
        if self._on_segment_event is not None:
            try:
                self._on_segment_event(event)
            except Exception:
                logger.exception("on_segment_event callback raised; the event was kept and streaming goes on")
        if invocation is not None and self._on_tool_invocation is not None:
            try:
                self._on_tool_invocation(invocation)
            except Exception:
                logger.exception("on_tool_invocation callback raised; the invocation was kept")

    def _emit_text(self, segment_type: SegmentType, delta: str) -> None:
        """Append ``delta`` to the open TEXT/REASONING segment, opening one if needed."""
        if not delta:
            return
        if self._open_text_type is not segment_type:
            self._close_text_segment()
            self._open_text_id = self._new_segment_id()
            self._open_text_type = segment_type
            self._emit(SegmentEvent.start(self._open_text_id, segment_type))
        assert self._open_text_id is not None
        self._emit(SegmentEvent.content(self._open_text_id, segment_type, delta))

    def _emit_reasoning(self, delta: str) -> None:
        self._emit_text(SegmentType.REASONING, delta)

    def _close_text_segment(self) -> None:
        if self._open_text_id is not None and self._open_text_type is not None:
            self._emit(SegmentEvent.end(self._open_text_id, self._open_text_type))
        self._open_text_id = None
        self._open_text_type = None

    def _take_batch(self) -> list[SegmentEvent]:
        batch, self._batch = self._batch, []
        return batch

    # -- the interface -------------------------------------------------------------------------

    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        if self._is_finalized:
            raise HandlerFinalizedError(
                f"{type(self).__name__}.feed() called after the stream was finalized "
                "(finalize() was called or a chunk had is_complete=True); call reset() to reuse the handler"
            )
        if not isinstance(chunk, ChunkResponse):
            raise TypeError(f"{type(self).__name__}.feed() expects a ChunkResponse, got {type(chunk).__name__}")
        self._process_chunk(chunk)
        if chunk.is_complete and not self._is_finalized:
            self._finish()
        return self._take_batch()

    def finalize(self) -> list[SegmentEvent]:
        if self._is_finalized:
            return []
        self._finish()
        return self._take_batch()

    def _finish(self) -> None:
        self._is_finalized = True
        self._finish_stream()

    @abstractmethod
    def _process_chunk(self, chunk: ChunkResponse) -> None:
        """Handle one chunk, emitting events through the helpers above."""

    def _finish_stream(self) -> None:
        """End everything still open. Subclasses extend this (text first, then their own segments)."""
        self._close_text_segment()

    def get_all_events(self) -> list[SegmentEvent]:
        return list(self._all_events)

    def get_all_invocations(self) -> list[ToolInvocation]:
        return list(self._all_invocations)
