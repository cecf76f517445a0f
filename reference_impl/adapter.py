"""``ToolInvocationAdapter``: turns a handler's SegmentEvents into ToolInvocations (seed 000 section 3.2).

Every handler feeds its events through one adapter, so "when does a tool call become executable"
is decided in exactly one place: on a TOOL_CALL END that carries parsed ``arguments`` and a tool
name. An END with ``error`` never becomes an invocation. The invocation id is the provider's call
id whenever one was sent (a tool result must echo it), otherwise the segment id.
"""

from __future__ import annotations

from typing import Any

from reference_impl.types import SegmentEvent, SegmentEventType, SegmentType, ToolInvocation

__all__ = ["ToolInvocationAdapter"]

# Read once: an enum member lookup on its class costs about 0.1 us, and this runs for every event.
_TOOL_CALL = SegmentType.TOOL_CALL
_START = SegmentEventType.START
_END = SegmentEventType.END


class ToolInvocationAdapter:
    """Stateful event -> invocation translator; one per handler (and reset with it)."""

    def __init__(self) -> None:
        self._start_metadata: dict[str, Any] = {}

    def process_event(self, event: SegmentEvent) -> ToolInvocation | None:
        """Consume one event; return an invocation when it completes a valid tool call."""
        if event.segment_type is not _TOOL_CALL:
            return None
        if event.event_type is _START:
            self._start_metadata[event.segment_id] = event.metadata
            return None
        if event.event_type is not _END:
            return None
        start_metadata = self._start_metadata.pop(event.segment_id, {})
        metadata = event.metadata
        if "error" in metadata or "arguments" not in metadata:
            return None
        name = metadata.get("tool_name") or start_metadata.get("tool_name")
        if not name:
            return None
        call_id = metadata.get("call_id") or start_metadata.get("call_id") or event.segment_id
        return ToolInvocation(id=call_id, name=name, arguments=metadata["arguments"])

    def reset(self) -> None:
        """Forget open segments (a reset handler must behave like a new one)."""
        self._start_metadata.clear()
