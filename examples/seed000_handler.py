"""A faithful implementation of seed 000 section 6, with its own types (no reference_impl import).

It exists to show that the suite drives third-party handlers by duck typing and reports the
seed's known defects: malformed arguments become ``{}``, START may carry no tool name, one text
segment spans tool calls, a late call id is lost. Run:

    toolcall-conformance run --handler examples.seed000_handler:make_handler

Chunks are read by attribute (``content``, ``tool_calls`` with ``index``/``call_id``/``name``/
``arguments_delta``), exactly as the seed does, so the suite's ChunkResponse works unchanged.
"""

from __future__ import annotations

import enum
import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

logger = logging.getLogger(__name__)


class SegmentEventType(str, enum.Enum):
    START = "SEGMENT_START"
    CONTENT = "SEGMENT_CONTENT"
    END = "SEGMENT_END"


class SegmentType(str, enum.Enum):
    TEXT = "text"
    TOOL_CALL = "tool_call"


@dataclass
class SegmentEvent:
    event_type: SegmentEventType
    segment_id: str
    segment_type: Optional[SegmentType] = None
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolInvocation:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ToolCallState:
    segment_id: str
    name: str
    accumulated_args: str = ""


class ToolInvocationAdapter:
    """Seed section 3.2: invocations from END events; the id is the segment id."""

    def __init__(self) -> None:
        self._starts: dict[str, dict[str, Any]] = {}

    def process_event(self, event: SegmentEvent) -> Optional[ToolInvocation]:
        if event.segment_type != SegmentType.TOOL_CALL:
            return None
        metadata = event.payload.get("metadata", {})
        if event.event_type == SegmentEventType.START:
            self._starts[event.segment_id] = metadata
            return None
        if event.event_type != SegmentEventType.END:
            return None
        start = self._starts.get(event.segment_id, {})
        name = metadata.get("tool_name") or start.get("tool_name")
        if "arguments" in metadata:
            return ToolInvocation(id=event.segment_id, name=name, arguments=metadata["arguments"])
        return None


class ApiToolCallStreamingResponseHandler:
    def __init__(
        self,
        on_segment_event: Optional[Callable[[SegmentEvent], None]] = None,
        on_tool_invocation: Optional[Callable[[ToolInvocation], None]] = None,
        segment_id_prefix: str = "",
    ) -> None:
        self._on_segment_event = on_segment_event
        self._on_tool_invocation = on_tool_invocation
        self._segment_id_prefix = segment_id_prefix
        self._text_segment_id: Optional[str] = None
        self._active_tools: dict[int, ToolCallState] = {}
        self._all_events: list[SegmentEvent] = []
        self._all_invocations: list[ToolInvocation] = []
        self._adapter = ToolInvocationAdapter()
        self._is_finalized = False

    def _generate_id(self) -> str:
        return f"{self._segment_id_prefix}{uuid.uuid4().hex}"

    def _emit(self, event: SegmentEvent) -> None:
        self._all_events.append(event)
        if self._on_segment_event:
            try:
                self._on_segment_event(event)
            except Exception as e:
                logger.error(f"Error in on_segment_event callback: {e}")
        invocation = self._adapter.process_event(event)
        if invocation:
            self._all_invocations.append(invocation)
            if self._on_tool_invocation:
                self._on_tool_invocation(invocation)

    def feed(self, chunk: Any) -> list[SegmentEvent]:
        if self._is_finalized:
            raise RuntimeError("Handler has been finalized.")
        events = []
        if chunk.content:
            if self._text_segment_id is None:
                self._text_segment_id = self._generate_id()
                start_event = SegmentEvent(SegmentEventType.START, self._text_segment_id, SegmentType.TEXT, {"metadata": {}})
                self._emit(start_event)
                events.append(start_event)
            content_event = SegmentEvent(SegmentEventType.CONTENT, self._text_segment_id, SegmentType.TEXT, {"delta": chunk.content})
            self._emit(content_event)
            events.append(content_event)
        if chunk.tool_calls:
            for delta in chunk.tool_calls:
                if delta.index not in self._active_tools:
                    seg_id = delta.call_id or self._generate_id()
                    self._active_tools[delta.index] = ToolCallState(segment_id=seg_id, name=delta.name or "")
                    start_event = SegmentEvent(
                        SegmentEventType.START, seg_id, SegmentType.TOOL_CALL, {"metadata": {"tool_name": delta.name}}
                    )
                    self._emit(start_event)
                    events.append(start_event)
                if delta.arguments_delta:
                    state = self._active_tools[delta.index]
                    state.accumulated_args += delta.arguments_delta
                    content_event = SegmentEvent(
                        SegmentEventType.CONTENT, state.segment_id, SegmentType.TOOL_CALL, {"delta": delta.arguments_delta}
                    )
                    self._emit(content_event)
                    events.append(content_event)
                if delta.name and not self._active_tools[delta.index].name:
                    self._active_tools[delta.index].name = delta.name
        return events

    def finalize(self) -> list[SegmentEvent]:
        if self._is_finalized:
            return []
        self._is_finalized = True
        events = []
        if self._text_segment_id:
            end_event = SegmentEvent(SegmentEventType.END, self._text_segment_id, SegmentType.TEXT, {"metadata": {}})
            self._emit(end_event)
            events.append(end_event)
        for state in self._active_tools.values():
            try:
                parsed_args = json.loads(state.accumulated_args) if state.accumulated_args else {}
            except json.JSONDecodeError as e:
                logger.error(f"Failed to parse tool arguments for {state.name}: {e}")
                parsed_args = {}
            end_event = SegmentEvent(
                SegmentEventType.END,
                state.segment_id,
                SegmentType.TOOL_CALL,
                {"metadata": {"tool_name": state.name, "arguments": parsed_args}},
            )
            self._emit(end_event)
            events.append(end_event)
        return events

    def get_all_events(self) -> list[SegmentEvent]:
        return self._all_events.copy()

    def get_all_invocations(self) -> list[ToolInvocation]:
        return self._all_invocations.copy()

    def reset(self) -> None:
        self._text_segment_id = None
        self._active_tools.clear()
        self._all_events.clear()
        self._is_finalized = False


def make_handler(**callbacks: Any) -> ApiToolCallStreamingResponseHandler:
    """Factory for the suite: a fresh seed-000 handler."""
    return ApiToolCallStreamingResponseHandler(**callbacks)
