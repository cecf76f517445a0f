"""``ApiToolCallStreamingResponseHandler``: provider tool calls (``ChunkResponse.tool_calls``) -> segments.

The correct version of seed 000 section 6. Differences from the seed, each a bug class in the
taxonomy: calls are keyed by ``index`` but the provider id is adopted whenever it arrives (B04),
and a *different* id on an index that already has one starts a new call there, never a silent
merge (B01: servers that put every parallel call on index 0 rely on it); segment ids are always
generated, so two calls that share a provider id stay two calls (B06); START waits until the
call's name can no longer grow (its arguments began, a later call appeared, or the stream
ended), so a fragmented name is whole (A07, A08); calls are started, ended and invoked in the
order they first appeared on the wire (G06, G07); text segments follow the wire (C04); invalid,
truncated or non-object arguments end in an error END and no invocation, never ``{}`` (D03, D05,
D08); an abnormal stream end errors every open call (F06-F08). Cost is linear: argument
fragments are kept in a list and joined once, at END.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from reference_impl.arguments import ArgumentsError, parse_arguments
from reference_impl.handlers.base import SegmentEmitterHandler
from reference_impl.types import ChunkResponse, SegmentEvent, SegmentType, StreamError, ToolCallDelta

__all__ = ["ApiToolCallStreamingResponseHandler"]

logger = logging.getLogger("reference_impl.handlers")
# Read once: the per-delta path uses it, and an enum member lookup on its class costs about 0.1 us.
_TOOL_CALL = SegmentType.TOOL_CALL


@dataclass(slots=True)
class _ToolCallState:
    """Everything known about one tool call (one ``index``) so far."""

    index: int
    segment_id: str
    call_id: str | None = None
    name_parts: list[str] = field(default_factory=list)
    # Fragments already emitted as CONTENT, and fragments held back until START can be emitted.
    argument_parts: list[str] = field(default_factory=list)
    held_argument_parts: list[str] = field(default_factory=list)
    provider_metadata: dict[str, Any] = field(default_factory=dict)
    started: bool = False

    @property
    def name(self) -> str | None:
        return "".join(self.name_parts) or None


class ApiToolCallStreamingResponseHandler(SegmentEmitterHandler):
    """Handler for provider-native tool calls (OpenAI, Anthropic, Gemini, OpenAI-compatible).

    Event contract (the conformance suite checks each point):

    * within a chunk: ``reasoning``, then ``content``, then ``tool_calls``;
    * TOOL_CALL START metadata ``{"tool_name", "call_id"}``, emitted once the name can no longer
      grow: the name is known and the arguments began, or a later call appeared, or the stream
      ended; arguments that arrive before the name are held and released right after START;
    * one CONTENT per non-empty ``arguments_delta``, raw, in the ``feed`` that received it;
    * STARTs, ENDs and invocations in the order the calls first appeared on the wire; ENDs at
      ``finalize()`` (or the ``is_complete`` chunk), text segment first;
      success: ``{"tool_name", "call_id", "arguments"}``; failure: ``{"tool_name", "call_id",
      "error", "raw_arguments"}`` plus ``truncated``/``incomplete``/``provider_error`` when the
      stream ended abnormally.
    """

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        # The call currently open on each index, and every call in the order it first appeared.
        self._tools: dict[int, _ToolCallState] = {}
        self._calls: list[_ToolCallState] = []
        self._stream_error: StreamError | None = None

    # -- feeding -------------------------------------------------------------------------------

    def _process_chunk(self, chunk: ChunkResponse) -> None:
        if chunk.reasoning:
            self._emit_reasoning(chunk.reasoning)
        if chunk.content:
            self._emit_text(SegmentType.TEXT, chunk.content)
        if chunk.tool_calls:
            for delta in chunk.tool_calls:
                self._apply_delta(delta)
        if chunk.error is not None:
            self._stream_error = chunk.error
            # An error ends the stream: nothing after it can be trusted to belong to this turn.
            self._finish()

    def _apply_delta(self, delta: ToolCallDelta) -> None:
        state = self._tools.get(delta.index)
        if state is None or (delta.call_id and state.call_id and delta.call_id != state.call_id):
            if state is not None:
                logger.info(
                    "tool call index %d: id %r follows %r; starting a new call on the index",
                    delta.index,
                    delta.call_id,
                    state.call_id,
                )
            state = self._open_call(delta.index)
        # Ids: adopt the first non-empty one whenever it arrives.
        if delta.call_id and state.call_id is None:
            state.call_id = delta.call_id

        if delta.provider_metadata:
            # Later values win key by key, but a value is never replaced by an empty one (a Gemini
            # signature arrives once, on the first part of a batch, and must survive).
            state.provider_metadata.update({k: v for k, v in delta.provider_metadata.items() if v not in (None, "")})

        # Names: '' never overwrites; a restatement of the whole name so far is ignored.
        if delta.name and delta.name != state.name:
            state.name_parts.append(delta.name)

        if delta.arguments_delta:
            if state.started:
                state.argument_parts.append(delta.arguments_delta)
                self._emit(SegmentEvent.content(state.segment_id, _TOOL_CALL, delta.arguments_delta))
            else:
                state.held_argument_parts.append(delta.arguments_delta)
        # START as soon as the name is known and the arguments have begun, in whichever order the
        # two arrived (a name-only delta after held arguments starts the call in that feed).
        if not state.started and state.name is not None and state.held_argument_parts:
            self._start_through(state)

    def _open_call(self, index: int) -> _ToolCallState:
        """A call appears: every earlier call's name can no longer grow, so they all start first."""
        if self._calls:
            self._start_through(self._calls[-1])
        state = _ToolCallState(index=index, segment_id=self._new_segment_id())
        self._tools[index] = state
        self._calls.append(state)
        return state

    def _start_through(self, last: _ToolCallState) -> None:
        """Start every call up to ``last`` (in wire order) that has not started yet."""
        for state in self._calls:
            if not state.started:
                self._start_tool(state)
            if state is last:
                return

    def _start_tool(self, state: _ToolCallState) -> None:
        """Emit START (ending any open text segment) and release arguments held until now."""
        self._close_text_segment()
        state.started = True
        self._emit(
            SegmentEvent.start(state.segment_id, SegmentType.TOOL_CALL, tool_name=state.name, call_id=state.call_id)
        )
        held, state.held_argument_parts = state.held_argument_parts, []
        for fragment in held:
            state.argument_parts.append(fragment)
            self._emit(SegmentEvent.content(state.segment_id, SegmentType.TOOL_CALL, fragment))

    # -- finishing -----------------------------------------------------------------------------

    def _finish_stream(self) -> None:
        super()._finish_stream()
        # Calls that never began their arguments (or never got a name) start now; every call
        # then ends, all in the order they first appeared on the wire.
        if self._calls:
            self._start_through(self._calls[-1])
        for state in self._calls:
            self._emit(self._end_event(state))

    def _end_event(self, state: _ToolCallState) -> SegmentEvent:
        raw_arguments = "".join(state.argument_parts)
        common: dict[str, Any] = {"tool_name": state.name, "call_id": state.call_id}
        if state.provider_metadata:
            common["provider_metadata"] = dict(state.provider_metadata)
        if self._stream_error is not None:
            flag = {"truncated": "truncated", "incomplete": "incomplete"}.get(self._stream_error.kind, "provider_error")
            return SegmentEvent.end(
                state.segment_id,
                SegmentType.TOOL_CALL,
                **common,
                error=(
                    f"the stream ended abnormally ({self._stream_error.kind}: {self._stream_error.message}) "
                    "while this tool call was open; it is not executed even if its arguments parse"
                ),
                raw_arguments=raw_arguments,
                **{flag: True},
            )
        problem: str | None = None
        if state.name is None:
            problem = "the tool name never arrived"
        parsed = parse_arguments(raw_arguments) if problem is None else None
        if isinstance(parsed, ArgumentsError):
            problem = parsed.message
        if problem is not None or parsed is None:
            return SegmentEvent.end(
                state.segment_id,
                SegmentType.TOOL_CALL,
                **common,
                error=problem,
                raw_arguments=raw_arguments,
            )
        return SegmentEvent.end(state.segment_id, SegmentType.TOOL_CALL, **common, arguments=parsed)
