"""Run a handler over one chunk sequence and record everything observable about it (a ``Transcript``).

The driver also probes the lifecycle contract on the unfragmented run: a second ``finalize()``,
``feed()`` after finalize, copies returned by the getters, ``reset()`` equivalence and callbacks
that raise. The checks in ``conformance.handler.checks`` judge what it recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.handler.observe import (
    DuckTypedAdapter,
    HandlerAdapter,
    ObservationError,
    ObservedEvent,
    ObservedInvocation,
)
from reference_impl.types import ChunkResponse

__all__ = ["HandlerFactory", "Transcript", "drive"]


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
