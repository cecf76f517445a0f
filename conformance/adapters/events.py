"""The segment events adapters translate a library's own stream events into, and the log they keep.

Plain objects in the shape the suite reads by duck typing (``conformance.handler.observe``): an
event has ``event_type`` (``SEGMENT_START`` / ``SEGMENT_CONTENT`` / ``SEGMENT_END``), ``segment_id``,
``segment_type`` and ``payload`` (``{"metadata": ...}`` or ``{"delta": ...}``); an invocation has
``id``, ``name`` and ``arguments``. They validate nothing, so whatever a library produces (an empty
name, a missing id) reaches the suite as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "EventLog", "Invocation", "argument_text"]


@dataclass(frozen=True)
class Event:
    """One segment event."""

    event_type: str
    segment_id: str
    segment_type: str
    payload: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, segment_id: str, segment_type: str, **metadata: Any) -> Event:
        return cls("SEGMENT_START", segment_id, segment_type, {"metadata": metadata})

    @classmethod
    def content(cls, segment_id: str, segment_type: str, delta: str) -> Event:
        return cls("SEGMENT_CONTENT", segment_id, segment_type, {"delta": delta})

    @classmethod
    def end(cls, segment_id: str, segment_type: str, **metadata: Any) -> Event:
        return cls("SEGMENT_END", segment_id, segment_type, {"metadata": metadata})


@dataclass(frozen=True)
class Invocation:
    """A call the library would run: its id, name and parsed arguments."""

    id: str
    name: str
    arguments: Any


def argument_text(value: Any) -> str:
    """Argument text as streamed: a string as it is, an object as the JSON text a provider would send."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class EventLog:
    """What an adapter has emitted: ``get_all_events()`` and ``get_all_invocations()`` return copies."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.invocations: list[Invocation] = []

    def add(self, events: list[Event]) -> list[Event]:
        """Record ``events`` and return them (what ``feed`` / ``finalize`` return)."""
        self.events += events
        return events

    def get_all_events(self) -> list[Event]:
        return list(self.events)

    def get_all_invocations(self) -> list[Invocation]:
        return list(self.invocations)
