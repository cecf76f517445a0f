"""Drive any seed-shaped handler and record what it did, without importing its types.

Third-party handlers have their own event and invocation classes. The suite reads them by duck
typing: an event has ``event_type`` (an enum whose ``.value`` or ``.name`` is a SEGMENT_* string,
or the string itself), ``segment_id``, ``segment_type`` and ``payload`` (a dict, or an object with
``to_dict()``); an invocation has ``id``, ``name`` and ``arguments``. Anything else plugs in
through ``HandlerAdapter``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from reference_impl.types import ChunkResponse

__all__ = [
    "HandlerAdapter",
    "ObservedEvent",
    "ObservedInvocation",
    "Transcript",
    "drive",
    "observe_event",
    "observe_invocation",
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


@dataclass
class Transcript:
    """Everything observable about one run of a handler over one chunk sequence."""

    chunks: list[ChunkResponse]
    returned: list[list[ObservedEvent]] = field(default_factory=list)  # per feed(), then finalize()
    events: list[ObservedEvent] = field(default_factory=list)  # get_all_events() at the end
    callback_events: list[ObservedEvent] = field(default_factory=list)
    invocations: list[ObservedInvocation] = field(default_factory=list)
    callback_invocations: list[ObservedInvocation] = field(default_factory=list)
    second_finalize: list[ObservedEvent] = field(default_factory=list)
    feed_after_finalize_error: BaseException | None = None
    crash: BaseException | None = None
    callbacks_supported: bool = True
    # Filled only when the run was probed (the unfragmented scenario run, not every re-fragmentation).
    probed: bool = False
    copy_leaks: list[str] = field(default_factory=list)
    reset_problems: list[str] = field(default_factory=list)
    callback_isolation_problems: list[str] = field(default_factory=list)

    @property
    def returned_flat(self) -> list[ObservedEvent]:
        return [event for batch in self.returned for event in batch]


HandlerFactory = Callable[..., Any]


def _construct(
    factory: HandlerFactory, on_event: Callable[[Any], None], on_invocation: Callable[[Any], None]
) -> tuple[Any, bool]:
    try:
        return factory(on_segment_event=on_event, on_tool_invocation=on_invocation), True
    except TypeError:
        # A factory that takes no callbacks is allowed; the callback checks are then skipped.
        return factory(), False


def drive(
    factory: HandlerFactory,
    chunks: Iterable[ChunkResponse],
    adapter: HandlerAdapter | None = None,
    *,
    probe_contract: bool = True,
) -> Transcript:
    """Run a fresh handler over ``chunks`` and record a ``Transcript``.

    With ``probe_contract`` the driver also calls ``finalize()`` a second time and ``feed()`` after
    finalize, recording what happened (the lifecycle checks judge it). Exceptions raised by the
    handler while streaming are recorded in ``crash`` rather than propagated.
    """
    adapter = adapter or DuckTypedAdapter()
    transcript = Transcript(chunks=list(chunks))
    raw_callback_events: list[Any] = []
    raw_callback_invocations: list[Any] = []
    handler, transcript.callbacks_supported = _construct(
        factory, raw_callback_events.append, raw_callback_invocations.append
    )
    try:
        for chunk in transcript.chunks:
            transcript.returned.append(
                [adapter.observe_event(e) for e in handler.feed(adapter.to_handler_chunk(chunk))]
            )
            if chunk.is_complete:
                break
        transcript.returned.append([adapter.observe_event(e) for e in handler.finalize()])
    except ObservationError:
        raise
    except Exception as error:  # the handler crashed: that is a finding, not a suite error
        transcript.crash = error
    transcript.events = [adapter.observe_event(e) for e in handler.get_all_events()]
    transcript.invocations = [adapter.observe_invocation(i) for i in handler.get_all_invocations()]
    transcript.callback_events = [adapter.observe_event(e) for e in raw_callback_events]
    transcript.callback_invocations = [adapter.observe_invocation(i) for i in raw_callback_invocations]
    if probe_contract and transcript.crash is None:
        transcript.probed = True
        try:
            transcript.second_finalize = [adapter.observe_event(e) for e in handler.finalize()]
        except Exception as error:
            transcript.crash = error
        try:
            handler.feed(adapter.to_handler_chunk(ChunkResponse(content="late")))
        except Exception as error:
            transcript.feed_after_finalize_error = error
        transcript.copy_leaks = _probe_copies(handler)
        transcript.reset_problems = _probe_reset(handler, transcript, adapter)
        if transcript.callbacks_supported:
            transcript.callback_isolation_problems = _probe_raising_callbacks(factory, transcript, adapter)
    return transcript


def _shape(events: list[ObservedEvent]) -> list[tuple[Any, ...]]:
    """Events with segment ids replaced by their order of appearance (ids differ between runs)."""
    order: dict[str, int] = {}
    shaped = []
    for event in events:
        number = order.setdefault(event.segment_id, len(order))
        metadata = json.dumps(event.metadata, sort_keys=True, default=repr)
        shaped.append((event.kind, number, event.segment_type, metadata, event.delta))
    return shaped


def _probe_copies(handler: Any) -> list[str]:
    leaks = []
    for getter in ("get_all_events", "get_all_invocations"):
        first = getattr(handler, getter)()
        before = len(first)
        if isinstance(first, list):
            first.append(object())
        if len(getattr(handler, getter)()) != before:
            leaks.append(f"{getter}() returns the handler's own list: appending to it changed the handler")
    return leaks


def _rerun(
    handler: Any, chunks: list[ChunkResponse], adapter: HandlerAdapter
) -> tuple[list[ObservedEvent], list[ObservedInvocation]]:
    for chunk in chunks:
        handler.feed(adapter.to_handler_chunk(chunk))
        if chunk.is_complete:
            break
    handler.finalize()
    events = [adapter.observe_event(e) for e in handler.get_all_events()]
    invocations = [adapter.observe_invocation(i) for i in handler.get_all_invocations()]
    return events, invocations


def _probe_reset(handler: Any, transcript: Transcript, adapter: HandlerAdapter) -> list[str]:
    """After reset() the handler must behave exactly like a new one, with fresh segment ids."""
    try:
        handler.reset()
        events, invocations = _rerun(handler, transcript.chunks, adapter)
    except Exception as error:
        return [f"after reset(), replaying the same stream raised {type(error).__name__}: {error}"]
    problems = []
    if _shape(events) != _shape(transcript.events):
        problems.append(
            f"after reset() the same stream gave {len(events)} events, a fresh handler gave {len(transcript.events)}"
            + (f"; first: {events[0].describe()}" if events else "")
        )
    if [(i.name, json.dumps(i.arguments, sort_keys=True, default=repr)) for i in invocations] != [
        (i.name, json.dumps(i.arguments, sort_keys=True, default=repr)) for i in transcript.invocations
    ]:
        problems.append(f"after reset() the invocations differ: {[i.describe() for i in invocations]}")
    reused = {e.segment_id for e in events} & {e.segment_id for e in transcript.events}
    if reused:
        problems.append(f"segment ids were reused after reset(): {sorted(reused)[:3]}")
    return problems


def _probe_raising_callbacks(factory: HandlerFactory, transcript: Transcript, adapter: HandlerAdapter) -> list[str]:
    """Callbacks that raise must not change what the handler records or returns."""

    def explode(_item: Any) -> None:
        raise RuntimeError("callback failure injected by toolcall-conformance")

    try:
        handler = factory(on_segment_event=explode, on_tool_invocation=explode)
        events, invocations = _rerun(handler, transcript.chunks, adapter)
    except Exception as error:
        return [
            "a raising on_segment_event/on_tool_invocation callback escaped the handler: "
            f"{type(error).__name__}: {error}"
        ]
    problems = []
    if _shape(events) != _shape(transcript.events):
        problems.append(
            f"with raising callbacks the handler recorded {len(events)} events instead of {len(transcript.events)}"
        )
    if len(invocations) != len(transcript.invocations):
        problems.append(
            f"with raising callbacks the handler produced {len(invocations)} invocations "
            f"instead of {len(transcript.invocations)}"
        )
    return problems
