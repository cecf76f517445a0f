"""Our own event and invocation types, shared by the alternative handlers (no reference types).

Deliberately unlike a typical implementation: events expose their data through ``to_dict()``
only (no ``payload`` attribute), the event kind is a plain ``str`` enum, and only START events
have a ``segment_type`` attribute at all (CONTENT and END leave it to the START).
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ContentEvent",
    "EndEvent",
    "Event",
    "EventSink",
    "HandlerClosedError",
    "Invocation",
    "Kind",
    "StartEvent",
    "new_id",
]

logger = logging.getLogger(__name__)


class Kind(enum.StrEnum):
    START = "START"
    CONTENT = "CONTENT"
    END = "END"


@dataclass(frozen=True)
class StartEvent:
    segment_id: str
    segment_type: str
    metadata: dict[str, Any] = field(default_factory=dict)
    event_type: Kind = Kind.START

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.event_type), "id": self.segment_id, "payload": {"metadata": dict(self.metadata)}}


@dataclass(frozen=True)
class ContentEvent:
    segment_id: str
    text: str
    event_type: Kind = Kind.CONTENT

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.event_type), "id": self.segment_id, "payload": {"delta": self.text}}


@dataclass(frozen=True)
class EndEvent:
    segment_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    event_type: Kind = Kind.END

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.event_type), "id": self.segment_id, "payload": {"metadata": dict(self.metadata)}}


Event = StartEvent | ContentEvent | EndEvent


@dataclass(frozen=True)
class Invocation:
    id: str
    name: str
    arguments: dict[str, Any]


class HandlerClosedError(RuntimeError):
    """feed() was called on a finalized handler."""


def new_id() -> str:
    return "s_" + uuid.uuid4().hex[:16]


EventCallback = Callable[[Event], object]
InvocationCallback = Callable[[Invocation], object]


class EventSink:
    """Records events and invocations, hands them to callbacks (guarded), collects a return batch."""

    def __init__(
        self,
        on_segment_event: EventCallback | None = None,
        on_tool_invocation: InvocationCallback | None = None,
    ) -> None:
        self._on_event = on_segment_event
        self._on_invocation = on_tool_invocation
        self.events: list[Event] = []
        self.invocations: list[Invocation] = []
        self.batch: list[Event] = []

    def clear(self) -> None:
        self.events = []
        self.invocations = []
        self.batch = []

    def take(self) -> list[Event]:
        batch, self.batch = self.batch, []
        return batch

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.batch.append(event)
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                logger.exception("on_segment_event callback raised; ignored")

    def invoke(self, invocation: Invocation) -> None:
        self.invocations.append(invocation)
        if self._on_invocation is not None:
            try:
                self._on_invocation(invocation)
            except Exception:
                logger.exception("on_tool_invocation callback raised; ignored")
