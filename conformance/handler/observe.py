"""Read any seed-shaped handler's events and invocations without importing its types.

Third-party handlers have their own event and invocation classes. The suite reads them by duck
typing (README, "The shapes the suite reads"):

* an event has ``event_type`` (an enum whose ``.value`` or ``.name`` is ``SEGMENT_START`` /
  ``SEGMENT_CONTENT`` / ``SEGMENT_END`` or ``START`` / ``CONTENT`` / ``END``, or that string),
  ``segment_id``, ``segment_type`` (required on START, inherited by the segment's later events
  when they leave it out; see "Segment types" below) and ``payload`` (a
  mapping, or an object with ``to_dict()`` holding ``payload``): START and END carry their data in
  ``payload["metadata"]``, CONTENT its text in ``payload["delta"]``;
* an invocation has ``id``, ``name`` and ``arguments``.

Segment types: a segment is a tool call when its START metadata has a ``tool_name`` key (even
``None``, for a call whose name has not arrived) or its type names a tool (contains ``tool`` or
``function``: ``tool_call``, ``tool_use``, ``function_call``); it is reasoning when its type
contains ``reason``, ``think`` or ``thought`` (``reasoning``, ``reasoning_summary``,
``thinking``, ``redacted_thinking``, ``thought``); any other segment is text. Other names
map through a ``HandlerAdapter``.

Anything else plugs in through a ``HandlerAdapter``. Something the suite cannot read this way is a
finding (``events_readable``), reported with the object shown, never a crash of the suite.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from reference_impl.types import ChunkResponse

__all__ = [
    "Accumulator",
    "DuckTypedAdapter",
    "EventReader",
    "Handler",
    "HandlerAdapter",
    "ObservationError",
    "ObservedEvent",
    "ObservedInvocation",
    "is_reasoning_segment_type",
    "is_tool_segment_type",
    "observe_event",
    "observe_invocation",
    "short_segment_id",
]


class ObservationError(TypeError):
    """A handler returned something the suite cannot read as an event or invocation."""


@runtime_checkable
class Handler(Protocol):
    """What the suite calls on a handler (seed 000 section 5.1). Events and invocations are read by duck typing."""

    def feed(self, chunk: Any) -> Sequence[Any]: ...

    def finalize(self) -> Sequence[Any]: ...

    def get_all_events(self) -> Sequence[Any]: ...

    def get_all_invocations(self) -> Sequence[Any]: ...

    def reset(self) -> None: ...


@runtime_checkable
class Accumulator(Protocol):
    """A final-result target (``--accumulator``): chunks in, the finished calls out, no events.

    ``result()`` returns the calls, or an object or mapping with ``tool_calls`` (and optionally
    ``text`` and ``reasoning``); each call is a ``(call_id, name, raw_arguments, arguments_or_error)``
    tuple or an object / mapping with those fields (``arguments`` a dict, or ``error`` set).
    """

    def add(self, chunk: Any) -> None: ...

    def result(self) -> Any: ...


def short_segment_id(segment_id: str) -> str:
    """A segment id short enough for a counterexample line: whole up to 12 characters, else its tail.

    Reference ids are ``seg-<uuid>-<n>``, where only the tail tells segments apart; a provider id
    used as the segment id (``call_dup``) is shown whole, never cut to a misleading ``ll_dup``.
    """
    return segment_id if len(segment_id) <= 12 else "…" + segment_id[-8:]


_TOOL_TYPE_WORDS = ("tool", "function")
_REASONING_TYPE_WORDS = ("reason", "think", "thought")


def is_tool_segment_type(segment_type: str) -> bool:
    """Whether a segment type names a tool call (``tool_call``, ``tool_use``, ``function_call``...)."""
    lowered = segment_type.lower()
    return any(word in lowered for word in _TOOL_TYPE_WORDS)


def is_reasoning_segment_type(segment_type: str) -> bool:
    """Whether a segment type names reasoning (``reasoning``, ``thinking``, ``thought``, ``reasoning_summary``...)."""
    lowered = segment_type.lower()
    return not is_tool_segment_type(segment_type) and any(word in lowered for word in _REASONING_TYPE_WORDS)


@dataclass(frozen=True)
class ObservedEvent:
    """A handler's event, normalised: ``kind`` start/content/end; ``segment_type`` as the START gave it."""

    kind: str
    segment_id: str
    segment_type: str
    metadata: Mapping[str, Any]
    delta: str

    @property
    def tool_name(self) -> str | None:
        """The tool name this event's metadata carries, if any (a tool segment's START names one)."""
        name = self.metadata.get("tool_name")
        return name if isinstance(name, str) else None

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
# Keys of START/END data that belong in payload["metadata"]: found beside it, they would be lost.
_METADATA_KEYS = ("tool_name", "arguments", "error", "call_id")


def _enum_text(value: Any, what: str, event: Any) -> str:
    for candidate in (getattr(value, "value", None), getattr(value, "name", None), value):
        if isinstance(candidate, str):
            return candidate.lower()
    raise ObservationError(f"cannot read {what} {value!r} as a string or string enum in {_shown(event)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _payload(event: Any) -> Mapping[str, Any]:
    payload = getattr(event, "payload", None)
    if payload is None and hasattr(event, "to_dict"):
        payload = event.to_dict().get("payload")
    if not isinstance(payload, Mapping):
        raise ObservationError(f"event payload must be a mapping, got {type(payload).__name__} in {_shown(event)}")
    return payload


def observe_event(event: Any) -> ObservedEvent:
    """Normalise one handler event by duck typing (see the module docstring).

    ``segment_type`` is ``""`` when the event leaves it out; ``EventReader`` fills it in from the
    segment's START. Raises ``ObservationError`` naming what is missing or misplaced.
    """
    try:
        raw_kind = _enum_text(event.event_type, "event_type", event)
        segment_id = event.segment_id
        raw_type = getattr(event, "segment_type", None)
    except AttributeError as error:
        raise ObservationError(
            f"handler event {_shown(event)} lacks {error.name!r}: expected event_type, segment_id, "
            f"segment_type, payload"
        ) from error
    kind = _KIND_ALIASES.get(raw_kind)
    if kind is None:
        raise ObservationError(f"unknown event_type {raw_kind!r} in {_shown(event)}")
    if not isinstance(segment_id, str) or not segment_id:
        raise ObservationError(f"segment_id must be a non-empty string, got {segment_id!r} in {_shown(event)}")
    segment_type = "" if raw_type is None else _enum_text(raw_type, "segment_type", event)
    payload = _payload(event)
    misplaced = [key for key in _METADATA_KEYS if key in payload]
    if misplaced and kind != "content":
        raise ObservationError(
            f"{kind.upper()} payload carries {misplaced} outside 'metadata' in {_shown(event)}: "
            "the contract reads START/END data from payload['metadata']"
        )
    metadata = payload.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise ObservationError(f"payload['metadata'] must be a mapping in {_shown(event)}")
    delta = payload.get("delta", "")
    if kind == "content" and not isinstance(delta, str):
        raise ObservationError(f"CONTENT payload['delta'] must be a str, got {type(delta).__name__} in {_shown(event)}")
    return ObservedEvent(kind, segment_id, segment_type, dict(metadata), delta if isinstance(delta, str) else "")


def observe_invocation(invocation: Any) -> ObservedInvocation:
    """Normalise one handler invocation by duck typing."""
    try:
        return ObservedInvocation(str(invocation.id), str(invocation.name), invocation.arguments)
    except AttributeError as error:
        raise ObservationError(
            f"handler invocation {_shown(invocation)} lacks {error.name!r}: expected id, name, arguments"
        ) from error


class HandlerAdapter(Protocol):
    """Hook for handlers that are not seed-shaped: translate chunks in, events/invocations out.

    Pass one with ``--adapter MODULE:OBJECT`` (CLI), ``adapter = ...`` (pytest base class) or
    ``run_conformance(..., adapter=...)``. ``observe_event`` may leave ``segment_type`` empty on
    CONTENT and END events: the segment's START gives it.
    """

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


class EventReader:
    """Reads one stream of events in order, giving CONTENT and END the segment type of their START.

    A START without a segment type, or a later event of an unknown segment without one, is an
    ``ObservationError``. Use one reader per list of events (returned, logged, seen by callbacks).
    """

    def __init__(self, adapter: HandlerAdapter) -> None:
        self._adapter = adapter
        self._types: dict[str, str] = {}

    def read(self, events: Any, where: str) -> list[ObservedEvent]:
        """Normalise ``events`` (what ``where`` returned); a non-list is an ``ObservationError``."""
        if not isinstance(events, Iterable) or isinstance(events, (str, bytes, Mapping)):
            raise ObservationError(f"{where} must return a list of events, got {_shown(events)}")
        return [self.one(event) for event in events]

    def one(self, event: Any) -> ObservedEvent:
        observed = self._adapter.observe_event(event)
        if observed.segment_type:
            if observed.kind == "start":
                self._types[observed.segment_id] = observed.segment_type
            return observed
        inherited = self._types.get(observed.segment_id)
        if inherited is None:
            what = "a START" if observed.kind == "start" else f"a {observed.kind.upper()} of a segment with no START"
            raise ObservationError(f"{what} without a segment_type: {_shown(event)}")
        return ObservedEvent(observed.kind, observed.segment_id, inherited, observed.metadata, observed.delta)
