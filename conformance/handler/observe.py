"""Drive any seed-shaped handler and record what it did, without importing its types.

Third-party handlers have their own event and invocation classes. The suite reads them by duck
typing: an event has ``event_type`` (an enum whose ``.value`` or ``.name`` is a SEGMENT_* string,
or the string itself), ``segment_id``, ``segment_type`` and ``payload`` (a dict, or an object with
``to_dict()``); an invocation has ``id``, ``name`` and ``arguments``. Anything else plugs in
through ``HandlerAdapter``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from reference_impl.types import ChunkResponse

__all__ = [
    "DuckTypedAdapter",
    "HandlerAdapter",
    "ObservationError",
    "ObservedEvent",
    "ObservedInvocation",
    "observe_event",
    "observe_invocation",
    "short_segment_id",
]


class ObservationError(TypeError):
    """A handler returned something the suite cannot read as an event or invocation."""


def short_segment_id(segment_id: str) -> str:
    """A segment id short enough for a counterexample line: whole up to 12 characters, else its tail.

    Reference ids are ``seg-<uuid>-<n>``, where only the tail tells segments apart; a provider id
    used as the segment id (``call_dup``) is shown whole, never cut to a misleading ``ll_dup``.
    """
    return segment_id if len(segment_id) <= 12 else "…" + segment_id[-8:]


@dataclass(frozen=True)
class ObservedEvent:
    """A handler's event, normalised: ``kind`` is start/content/end, ``segment_type`` text/tool_call/reasoning."""

    kind: str
    segment_id: str
    segment_type: str
    metadata: Mapping[str, Any]
    delta: str

    def describe(self) -> str:
        """One readable line, used in counterexamples."""
        if self.kind == "content":
            return f"CONTENT {self.segment_type}#{short_segment_id(self.segment_id)} {self.delta!r}"
        shown = {key: value for key, value in self.metadata.items() if key != "raw_arguments"}
        body = json.dumps(shown, ensure_ascii=False, default=repr) if shown else ""
        return f"{self.kind.upper()} {self.segment_type}#{short_segment_id(self.segment_id)} {body}".rstrip()


@dataclass(frozen=True)
class ObservedInvocation:
    """A handler's tool invocation, normalised."""

    id: str
    name: str
    arguments: Any

    def describe(self) -> str:
        return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False, default=repr)}) id={self.id!r}"


_KIND_ALIASES = {
    "segment_start": "start",
    "start": "start",
    "segment_content": "content",
    "content": "content",
    "segment_end": "end",
    "end": "end",
}


def _enum_text(value: Any) -> str:
    for candidate in (getattr(value, "value", None), getattr(value, "name", None), value):
        if isinstance(candidate, str):
            return candidate.lower()
    raise ObservationError(f"cannot read {value!r} as a string or string enum")


def observe_event(event: Any) -> ObservedEvent:
    """Normalise one handler event by duck typing (see the module docstring)."""
    try:
        raw_kind = _enum_text(event.event_type)
        segment_id = event.segment_id
        segment_type = _enum_text(event.segment_type)
    except AttributeError as error:
        raise ObservationError(
            f"handler event {event!r} lacks {error.name!r}: expected event_type, segment_id, segment_type, payload"
        ) from error
    kind = _KIND_ALIASES.get(raw_kind)
    if kind is None:
        raise ObservationError(f"unknown event_type {raw_kind!r} in {event!r}")
    payload = getattr(event, "payload", None)
    if payload is None and hasattr(event, "to_dict"):
        payload = event.to_dict().get("payload")
    if not isinstance(payload, Mapping):
        raise ObservationError(f"event payload must be a mapping, got {type(payload).__name__} in {event!r}")
    metadata = payload.get("metadata") or {}
    delta = payload.get("delta", "")
    if not isinstance(delta, str):
        raise ObservationError(f"CONTENT delta must be a str, got {type(delta).__name__} in {event!r}")
    return ObservedEvent(kind, str(segment_id), segment_type, dict(metadata), delta)


def observe_invocation(invocation: Any) -> ObservedInvocation:
    """Normalise one handler invocation by duck typing."""
    try:
        return ObservedInvocation(str(invocation.id), str(invocation.name), invocation.arguments)
    except AttributeError as error:
        raise ObservationError(
            f"handler invocation {invocation!r} lacks {error.name!r}: expected id, name, arguments"
        ) from error


class HandlerAdapter(Protocol):
    """Hook for handlers that are not seed-shaped: translate chunks in, events/invocations out."""

    def to_handler_chunk(self, chunk: ChunkResponse) -> Any: ...

    def observe_event(self, event: Any) -> ObservedEvent: ...

    def observe_invocation(self, invocation: Any) -> ObservedInvocation: ...


class DuckTypedAdapter:
    """The default adapter: chunks pass through unchanged, events are read by duck typing."""

    def to_handler_chunk(self, chunk: ChunkResponse) -> Any:
        return chunk

    def observe_event(self, event: Any) -> ObservedEvent:
        return observe_event(event)

    def observe_invocation(self, invocation: Any) -> ObservedInvocation:
        return observe_invocation(invocation)
