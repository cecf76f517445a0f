"""Run a target over one chunk sequence and record everything observable about it (a ``Transcript``).

A target is a seed-shaped handler (``HandlerTarget``: events, invocations, lifecycle, callbacks)
or a final-result accumulator (``AccumulatorTarget``: ``add(chunk)`` then ``result()``). Both give
the same ``Transcript`` shape, so the checks judge what applies to each. ``make_target`` checks a
factory once, up front: a factory that raises, or returns something that is not a handler, is a
``TargetError`` (the suite could not run, exit code 2), never a failing check.

The user's code may raise anything, hang, or return what cannot be read; each is recorded as a
finding in the transcript (``crash``, ``hung``, ``unreadable``), never propagated, except
``KeyboardInterrupt`` (the user asked to stop).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from conformance.handler.capabilities import Capabilities
from conformance.handler.observe import (
    DuckTypedAdapter,
    EventReader,
    HandlerAdapter,
    ObservationError,
    ObservedEvent,
    ObservedInvocation,
    is_tool_segment_type,
)
from conformance.verdict.deadline import DEFAULT_DEADLINE_SECONDS, DeadlineExceeded, TargetHung, deadline, within
from conformance.wire.final import FinalResultError, read_final_result
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = [
    "DEFAULT_DEADLINE_SECONDS",
    "AccumulatorTarget",
    "HandlerHung",
    "HandlerTarget",
    "ObservedCall",
    "Target",
    "TargetError",
    "Transcript",
    "drive",
    "make_target",
]

# How long one run of a target over one scenario (probes included) may take before it is stopped
# and reported as hung. The reference takes well under a millisecond per scenario.

_LATE_CHUNK = ChunkResponse(content="late")


def _described(chunks: Sequence[ChunkResponse], limit: int = 800) -> str:
    """The input a run hung on, in the suite's chunk notation (cut to ``limit`` characters)."""
    from conformance.handler.fragment import describe_chunks

    text = describe_chunks(list(chunks))
    return "the chunks " + (text if len(text) <= limit else text[:limit] + " ...")


def fresh_chunk(chunk: ChunkResponse) -> ChunkResponse:
    """A copy of ``chunk`` the target may change at will.

    The suite's chunks are reused across runs and are what each run is judged against: a target that
    cleared ``chunk.tool_calls`` after dropping every call, or consumed the list with ``.pop()``,
    would otherwise rewrite the expectation (a false pass) or the next run's input (a false alarm).
    Built field by field, not with ``deepcopy``: this runs for every chunk of every run.
    """
    if type(chunk) is not ChunkResponse:  # a subclass may carry fields this copy does not know
        return copy.deepcopy(chunk)
    return ChunkResponse(
        content=chunk.content,
        reasoning=chunk.reasoning,
        is_complete=chunk.is_complete,
        usage=chunk.usage,  # frozen
        image_urls=list(chunk.image_urls),
        audio_urls=list(chunk.audio_urls),
        video_urls=list(chunk.video_urls),
        tool_calls=None
        if chunk.tool_calls is None
        else [
            ToolCallDelta(
                delta.index,
                delta.call_id,
                delta.name,
                delta.arguments_delta,
                provider_metadata=None if delta.provider_metadata is None else copy.deepcopy(delta.provider_metadata),
            )
            for delta in chunk.tool_calls
        ],
        finish_reason=chunk.finish_reason,
        error=chunk.error,  # frozen
    )


class TargetError(Exception):
    """The suite cannot run this target at all (its factory raises, or it is not a handler): exit code 2."""


# The deadline's exception under the name this module has always exported.
HandlerHung = TargetHung


@dataclass(frozen=True)
class ObservedCall:
    """One tool call as the target finished it: from its tool segment's END, or from an accumulator's result."""

    name: str | None
    call_id: str | None
    arguments: Any  # the parsed arguments; None when the call ended with an error
    error: str | None
    raw_arguments: str
    segment_id: str | None = None
    start_name: str | None = None
    invocation: ObservedInvocation | None = None
    ended: bool = True
    start_id: str | None = None  # the call id its START announced (an END may name another call's)

    @property
    def ids(self) -> set[str]:
        """Every id under which a consumer could find this call (END call_id, segment id, invocation id).

        Not the id its START announced: a follow-up is built from what the call ended as (an id on
        the START alone does not reach it), so pairing uses that id only to choose (``_matching``)."""
        found = {self.call_id, self.segment_id, self.invocation.id if self.invocation else None}
        return {value for value in found if value}

    @property
    def executed(self) -> bool:
        """The call became an invocation (a handler) or came back with arguments (an accumulator)."""
        return self.invocation is not None

    def describe(self) -> str:
        """``name(arguments) id=...`` as the target gave it: an END without arguments is not "no END",
        and the id shown is the END's, else the invocation's (the one a follow-up would carry)."""
        if self.arguments is not None:
            body = json.dumps(self.arguments, ensure_ascii=False, default=repr)
        elif self.error:
            body = f"ERROR {self.error!r}"
        else:
            body = "END without arguments" if self.ended else "no END"
        shown = self.call_id if self.call_id is not None else (self.invocation.id if self.invocation else None)
        return f"{self.name}({body}) id={shown!r}"


@dataclass
class Transcript:
    """Everything observable about one run of a target over one chunk sequence."""

    chunks: list[ChunkResponse]
    kind: str = "handler"  # or "accumulator"
    fed: int = 0  # chunks fed before the run stopped (a chunk marked is_complete ends the stream)
    returned: list[list[ObservedEvent]] = field(default_factory=list)  # per feed(), then finalize()
    events: list[ObservedEvent] = field(default_factory=list)  # get_all_events() at the end
    callback_events: list[ObservedEvent] = field(default_factory=list)
    invocations: list[ObservedInvocation] = field(default_factory=list)
    callback_invocations: list[ObservedInvocation] = field(default_factory=list)
    calls: list[ObservedCall] = field(default_factory=list)
    text: str | None = None  # an accumulator's final text (handlers: from the events)
    reasoning: str | None = None
    crash: BaseException | None = None
    crashed_at: int | None = None  # index of the chunk whose feed() raised; len(chunks) for finalize()
    hung: bool = False
    unreadable: str | None = None  # why an event or return value could not be read
    callbacks_supported: bool = True
    # Filled only when the run was probed (the unfragmented scenario run, not every re-fragmentation).
    probed: bool = False
    second_finalize: list[ObservedEvent] = field(default_factory=list)
    feed_after_finalize_error: BaseException | None = None
    copy_leaks: list[str] = field(default_factory=list)
    reset_problems: list[str] = field(default_factory=list)
    callback_isolation_problems: list[str] = field(default_factory=list)
    # What ran in the probes' re-runs of the same stream (None: not probed, or the re-run raised),
    # so that the harm of a lifecycle failure is read from what ran, not from the check.
    reset_invocations: list[ObservedInvocation] | None = None
    isolated_invocations: list[ObservedInvocation] | None = None
    reset_crash: str = ""  # how the re-run after reset() raised
    callback_crash: str = ""  # how a raising callback escaped and aborted the re-run

    @property
    def returned_flat(self) -> list[ObservedEvent]:
        return [event for batch in self.returned for event in batch]

    @property
    def completed(self) -> bool:
        """The run reached the end: no crash, no hang, everything readable."""
        return self.crash is None and not self.hung and self.unreadable is None

    @property
    def raised_at_stream_error(self) -> bool:
        """The target raised on the chunk that reported an abnormal end, or in finalize() after it.

        Surfacing an in-band error as an exception is conformant (rule R13) when nothing ran.
        """
        if self.crash is None or self.crashed_at is None:
            return False
        error_at = next((i for i, chunk in enumerate(self.chunks) if chunk.error is not None), None)
        return error_at is not None and self.crashed_at >= error_at


class Target(Protocol):
    """Something the suite can run over a chunk sequence."""

    kind: str
    label: str
    capabilities: Capabilities

    def run(self, chunks: Sequence[ChunkResponse], *, probe: bool) -> Transcript: ...


def _describe(obj: object) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    return repr(obj)


def _rejects_keywords(error: TypeError) -> bool:
    text = str(error)
    return "unexpected keyword argument" in text or "takes no arguments" in text or "positional argument" in text


# -- handlers ----------------------------------------------------------------------------------


_HANDLER_METHODS = ("feed", "finalize", "get_all_events", "get_all_invocations")


class HandlerTarget:
    """A seed-shaped handler made fresh for every run by ``factory``."""

    kind = "handler"

    def __init__(
        self,
        factory: Callable[..., Any],
        capabilities: Capabilities,
        adapter: HandlerAdapter | None = None,
        *,
        label: str = "",
        deadline: float | None = DEFAULT_DEADLINE_SECONDS,
    ) -> None:
        self.factory = factory
        self.capabilities = capabilities
        self.adapter = adapter or DuckTypedAdapter()
        self.label = label or _describe(factory)
        self.deadline = deadline
        self.callbacks_supported = capabilities.callbacks
        self.callbacks_refused = ""

    def check_factory(self) -> None:
        """Build one handler up front; say exactly why the suite cannot run this target, if it cannot."""
        handler: Any = None
        if self.capabilities.callbacks:
            try:
                handler = self.factory(on_segment_event=lambda _e: None, on_tool_invocation=lambda _i: None)
            except TypeError as error:
                if not _rejects_keywords(error):
                    raise TargetError(f"{self.label} raised TypeError when called: {error}") from error
                self.callbacks_supported = False
                self.callbacks_refused = f"the factory does not accept on_segment_event / on_tool_invocation ({error})"
            except Exception as error:
                raise TargetError(f"{self.label} raised {type(error).__name__} when called: {error}") from error
        if handler is None:
            try:
                handler = self.factory()
            except Exception as error:
                raise TargetError(f"{self.label} raised {type(error).__name__} when called: {error}") from error
        missing = [name for name in _HANDLER_METHODS if not callable(getattr(handler, name, None))]
        if self.capabilities.lifecycle and not callable(getattr(handler, "reset", None)):
            missing.append("reset (or declare --no-lifecycle)")
        if missing:
            raise TargetError(
                f"{self.label} returned a {type(handler).__name__}, which is not a handler: it has no "
                + ", ".join(missing)
                + " (a final-result object with add()/result() is checked with --accumulator)"
            )

    def _build(self, on_event: Callable[[Any], None], on_invocation: Callable[[Any], None]) -> Any:
        if self.callbacks_supported:
            return self.factory(on_segment_event=on_event, on_tool_invocation=on_invocation)
        return self.factory()

    def run(self, chunks: Sequence[ChunkResponse], *, probe: bool) -> Transcript:
        """Run a fresh handler over ``chunks``; with ``probe``, also the lifecycle and callback probes."""
        transcript = Transcript(chunks=list(chunks), callbacks_supported=self.callbacks_supported)
        with deadline(self.deadline, partial(_described, transcript.chunks)):
            try:
                handler = self._stream(transcript)
                if handler is not None and probe and transcript.completed:
                    self._probe(handler, transcript)
            except HandlerHung:
                transcript.hung = True
        return transcript

    def _stream(self, transcript: Transcript) -> Any:
        raw_events: list[Any] = []
        raw_invocations: list[Any] = []
        handler = self._build(raw_events.append, raw_invocations.append)
        returned_reader = EventReader(self.adapter)
        try:
            for position, chunk in enumerate(transcript.chunks):
                transcript.crashed_at = position
                transcript.returned.append(
                    returned_reader.read(handler.feed(self.adapter.to_handler_chunk(fresh_chunk(chunk))), "feed()")
                )
                transcript.fed = position + 1
                if chunk.is_complete:
                    break
            transcript.crashed_at = len(transcript.chunks)
            transcript.returned.append(returned_reader.read(handler.finalize(), "finalize()"))
            transcript.crashed_at = None
        except ObservationError as error:
            transcript.unreadable = str(error)
            return None
        except Exception as error:  # noqa: BLE001 - the handler under test may raise anything: a crash is a finding
            transcript.crash = error
        try:
            transcript.events = EventReader(self.adapter).read(handler.get_all_events(), "get_all_events()")
            transcript.callback_events = EventReader(self.adapter).read(raw_events, "the on_segment_event callback")
            transcript.invocations = [self.adapter.observe_invocation(i) for i in handler.get_all_invocations()]
            transcript.callback_invocations = [self.adapter.observe_invocation(i) for i in raw_invocations]
        except ObservationError as error:
            transcript.unreadable = str(error)
            return None
        except Exception as error:  # noqa: BLE001 - the handler's getters are user code: a crash is a finding
            transcript.crash = transcript.crash or error
            return None
        transcript.calls = calls_from_events(transcript.events, transcript.invocations)
        return handler

    def _probe(self, handler: Any, transcript: Transcript) -> None:
        if self.capabilities.lifecycle:
            transcript.probed = True
            try:
                transcript.second_finalize = EventReader(self.adapter).read(handler.finalize(), "a second finalize()")
            except ObservationError as error:
                transcript.unreadable = str(error)
                return
            except Exception as error:  # noqa: BLE001 - a second finalize() is user code: a crash is a finding
                transcript.crash = error
                return
            try:
                handler.feed(self.adapter.to_handler_chunk(fresh_chunk(_LATE_CHUNK)))
            except Exception as error:  # noqa: BLE001 - any exception refusing a late feed() is recorded and judged
                transcript.feed_after_finalize_error = error
            transcript.copy_leaks = _probe_copies(handler)
            transcript.reset_problems = self._probe_reset(handler, transcript)
        if self.callbacks_supported:
            transcript.probed = True
            transcript.callback_isolation_problems = self._probe_raising_callbacks(transcript)

    def _rerun(
        self, handler: Any, chunks: Sequence[ChunkResponse]
    ) -> tuple[list[ObservedEvent], list[ObservedInvocation]]:
        for chunk in chunks:
            handler.feed(self.adapter.to_handler_chunk(fresh_chunk(chunk)))
            if chunk.is_complete:
                break
        handler.finalize()
        events = EventReader(self.adapter).read(handler.get_all_events(), "get_all_events()")
        invocations = [self.adapter.observe_invocation(i) for i in handler.get_all_invocations()]
        return events, invocations

    def _probe_reset(self, handler: Any, transcript: Transcript) -> list[str]:
        """After reset() the handler must behave like a new one; ids it generates may differ."""
        try:
            handler.reset()
            events, invocations = self._rerun(handler, transcript.chunks)
        except Exception as error:  # noqa: BLE001 - reset() and the replay are user code: a raise is a finding
            transcript.reset_crash = f"after reset(), the same stream raised {type(error).__name__}: {error}"
            return [f"after reset(), replaying the same stream raised {type(error).__name__}: {error}"]
        transcript.reset_invocations = invocations
        provider_ids = _provider_ids(transcript.chunks)
        problems = []
        if _canonical(events, invocations, provider_ids) != _canonical(
            transcript.events, transcript.invocations, provider_ids
        ):
            problems.append(
                f"after reset() the same stream gave {len(events)} events and {len(invocations)} invocations, "
                f"a fresh handler gave {len(transcript.events)} and {len(transcript.invocations)}"
            )
        return problems

    def _probe_raising_callbacks(self, transcript: Transcript) -> list[str]:
        """Callbacks that raise must not change what the handler records or returns."""

        def explode(_item: Any) -> None:
            raise RuntimeError("callback failure injected by toolcall-conformance")

        try:
            handler = self.factory(on_segment_event=explode, on_tool_invocation=explode)
            events, invocations = self._rerun(handler, transcript.chunks)
        except Exception as error:  # noqa: BLE001 - the injected error escaping, or any other, is the finding
            transcript.callback_crash = f"a raising UI callback aborted the turn: {type(error).__name__}: {error}"
            return [
                "a raising on_segment_event/on_tool_invocation callback escaped the handler: "
                f"{type(error).__name__}: {error}"
            ]
        transcript.isolated_invocations = invocations
        provider_ids = _provider_ids(transcript.chunks)
        if _canonical(events, invocations, provider_ids) != _canonical(
            transcript.events, transcript.invocations, provider_ids
        ):
            return [
                f"with raising callbacks the handler recorded {len(events)} events and {len(invocations)} "
                f"invocations instead of {len(transcript.events)} and {len(transcript.invocations)}"
            ]
        return []


def _probe_copies(handler: Any) -> list[str]:
    leaks = []
    for getter in ("get_all_events", "get_all_invocations"):
        try:
            first = getattr(handler, getter)()
            before = len(first)
            if isinstance(first, list):
                first.append(object())
            if len(getattr(handler, getter)()) != before:
                leaks.append(f"{getter}() returns the handler's own list: appending to it changed the handler")
        except Exception as error:  # noqa: BLE001 - the getters are user code: a raise is a finding
            leaks.append(f"{getter}() raised {type(error).__name__} when called twice: {error}")
    return leaks


def _provider_ids(chunks: Sequence[ChunkResponse]) -> set[str]:
    return {delta.call_id for chunk in chunks for delta in chunk.tool_calls or () if delta.call_id}


def _canonical(
    events: Sequence[ObservedEvent], invocations: Sequence[ObservedInvocation], provider_ids: set[str]
) -> list[tuple[Any, ...]]:
    """Events and invocations with every id the handler generated replaced by its order of appearance.

    Provider ids stay as they are: reset equivalence (B07) is about behaviour, not about the
    random or counted ids a handler mints (segment ids, ids for calls that had none).
    """
    generated: dict[str, str] = {}

    def name(value: str) -> str:
        return generated.setdefault(value, f"#{len(generated)}")

    for event in events:
        name(event.segment_id)
    for invocation in invocations:
        if invocation.id not in provider_ids:
            name(invocation.id)

    def metadata(event: ObservedEvent) -> str:
        values = dict(event.metadata)
        if isinstance(values.get("call_id"), str) and values["call_id"] not in provider_ids:
            values["call_id"] = name(values["call_id"])
        return json.dumps(_renamed(values, generated, provider_ids), sort_keys=True, default=repr)

    shaped: list[tuple[Any, ...]] = [
        (event.kind, name(event.segment_id), event.segment_type, metadata(event), event.delta) for event in events
    ]
    shaped += [
        (
            "invocation",
            invocation.name,
            json.dumps(invocation.arguments, sort_keys=True, default=repr),
            _renamed(invocation.id, generated, provider_ids),
        )
        for invocation in invocations
    ]
    return shaped


def _renamed(value: Any, generated: Mapping[str, str], provider_ids: set[str]) -> Any:
    """``value`` with every generated id in it (at any depth) replaced by its ``_canonical`` name."""
    if isinstance(value, str):
        return generated.get(value, value) if value not in provider_ids else value
    if isinstance(value, Mapping):
        return {key: _renamed(item, generated, provider_ids) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_renamed(item, generated, provider_ids) for item in value]
    return value


def _is_tool_segment(start: ObservedEvent) -> bool:
    """A tool segment is one whose START names a tool, whatever segment type the handler gives it."""
    return "tool_name" in start.metadata or is_tool_segment_type(start.segment_type)


def calls_from_events(events: Sequence[ObservedEvent], invocations: Sequence[ObservedInvocation]) -> list[ObservedCall]:
    """Every tool segment as an ``ObservedCall``, in END order (segments never ended come last).

    An invocation belongs to the call whose segment id or END call_id it carries; invocations
    with an id of their own are paired with the remaining executed calls by name, in order.
    """
    starts: dict[str, ObservedEvent] = {}
    contents: dict[str, list[str]] = {}
    ends: dict[str, ObservedEvent] = {}
    order: list[str] = []
    for event in events:
        if event.kind == "start" and event.segment_id not in starts:
            starts[event.segment_id] = event
        elif event.kind == "content":
            contents.setdefault(event.segment_id, []).append(event.delta)
        elif event.kind == "end" and event.segment_id not in ends:
            ends[event.segment_id] = event
            order.append(event.segment_id)
    tool_ids = [segment for segment, start in starts.items() if _is_tool_segment(start)]
    ordered = [s for s in order if s in tool_ids] + [s for s in tool_ids if s not in ends]
    remaining = list(invocations)
    calls = []
    for segment_id in ordered:
        start = starts[segment_id]
        end = ends.get(segment_id)
        metadata = end.metadata if end is not None else start.metadata
        # The END's name is definitive when it gives one (even a wrong or empty one).
        name = metadata.get("tool_name", start.tool_name)
        call_id = metadata.get("call_id") if isinstance(metadata.get("call_id"), str) else None
        invocation = next((i for i in remaining if i.id in (segment_id, call_id)), None)
        if invocation is None and end is not None and "arguments" in end.metadata and not end.metadata.get("error"):
            invocation = next((i for i in remaining if i.name == name and i.id not in (segment_id, call_id)), None)
        if invocation is not None:
            remaining.remove(invocation)
        raw = "".join(contents.get(segment_id, [])) or str(metadata.get("raw_arguments") or "")
        calls.append(
            ObservedCall(
                name=name if isinstance(name, str) else None,
                call_id=call_id,
                arguments=metadata.get("arguments") if end is not None and not metadata.get("error") else None,
                error=str(metadata["error"]) if end is not None and metadata.get("error") else None,
                raw_arguments=raw,
                segment_id=segment_id,
                start_name=start.tool_name,
                invocation=invocation,
                ended=end is not None,
                start_id=start.metadata.get("call_id") if isinstance(start.metadata.get("call_id"), str) else None,
            )
        )
    # Invocations no segment accounts for are calls too (a handler that invokes without ending).
    calls += [ObservedCall(i.name, i.id, i.arguments, None, "", invocation=i, ended=False) for i in remaining]
    return calls


# -- final-result accumulators -----------------------------------------------------------------


class AccumulatorTarget:
    """A final-result accumulator made fresh for every run: ``add(chunk)`` per chunk, then ``result()``."""

    kind = "accumulator"

    def __init__(
        self,
        factory: Callable[[], Any],
        capabilities: Capabilities,
        *,
        label: str = "",
        deadline: float | None = DEFAULT_DEADLINE_SECONDS,
    ) -> None:
        self.factory = factory
        self.capabilities = capabilities
        self.label = label or _describe(factory)
        self.deadline = deadline
        self.callbacks_supported = False
        self.callbacks_refused = "a final-result accumulator takes no callbacks"

    def check_factory(self) -> None:
        """Build one accumulator up front and check its shape."""
        try:
            accumulator = self.factory()
        except Exception as error:
            raise TargetError(f"{self.label} raised {type(error).__name__} when called: {error}") from error
        missing = [name for name in ("add", "result") if not callable(getattr(accumulator, name, None))]
        if missing:
            raise TargetError(
                f"{self.label} returned a {type(accumulator).__name__}, which is not an accumulator: it has no "
                + ", ".join(missing)
            )

    def run(self, chunks: Sequence[ChunkResponse], *, probe: bool) -> Transcript:
        """Add every chunk (up to the one marked complete) to a fresh accumulator and read its result."""
        del probe  # an accumulator has no lifecycle or callbacks to probe
        transcript = Transcript(chunks=list(chunks), kind="accumulator", callbacks_supported=False)
        with deadline(self.deadline, partial(_described, transcript.chunks)):
            try:
                accumulator = self.factory()
                for position, chunk in enumerate(transcript.chunks):
                    transcript.crashed_at = position
                    accumulator.add(fresh_chunk(chunk))
                    transcript.fed = position + 1
                    if chunk.is_complete:
                        break
                transcript.crashed_at = len(transcript.chunks)
                result = accumulator.result()
                transcript.crashed_at = None
                _read_result(result, transcript)
            except HandlerHung:
                transcript.hung = True
            except ObservationError as error:
                transcript.unreadable = str(error)
            except Exception as error:  # noqa: BLE001 - the accumulator under test may raise anything
                transcript.crash = error
        return transcript


def _read_result(result: Any, transcript: Transcript) -> None:
    """Normalise an accumulator's ``result()`` (``conformance.wire.final`` says what shapes it accepts)."""
    try:
        outcome, has_text, has_reasoning = read_final_result(result)
    except FinalResultError as error:
        raise ObservationError(str(error)) from error
    transcript.text = outcome.text if has_text else None
    transcript.reasoning = outcome.reasoning if has_reasoning else None
    for call in outcome.tool_calls:
        invocation = (
            ObservedInvocation(call.call_id or "", str(call.name), call.arguments)
            if call.arguments is not None
            else None
        )
        transcript.calls.append(
            ObservedCall(call.name, call.call_id, call.arguments, call.error, call.raw_arguments, invocation=invocation)
        )
    transcript.invocations = [call.invocation for call in transcript.calls if call.invocation is not None]


# -- building targets ----------------------------------------------------------------------------


def make_target(
    factory: Callable[..., Any],
    capabilities: Capabilities,
    *,
    adapter: HandlerAdapter | None = None,
    label: str = "",
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
) -> HandlerTarget | AccumulatorTarget:
    """A checked target for ``factory``: an accumulator when ``capabilities.events`` is False.

    Raises ``TargetError`` when the factory cannot be used at all.
    """
    target: HandlerTarget | AccumulatorTarget
    if capabilities.events:
        target = HandlerTarget(factory, capabilities, adapter, label=label, deadline=deadline)
    else:
        if adapter is not None:
            raise TargetError("an adapter reads events; a final-result accumulator has none")
        target = AccumulatorTarget(factory, capabilities, label=label, deadline=deadline)
    # The factory is the user's code too: one that never returns is stopped here, not waited on.
    try:
        with within(deadline, lambda: f"its first call of the factory {label or ''} (no input fed yet)"):
            target.check_factory()
    except DeadlineExceeded as error:
        raise TargetError(
            f"{label or 'the factory'} {error} when called once to check it; a factory that blocks (a network "
            "call, a lock) cannot be checked"
        ) from None
    return target


def drive(
    factory: Callable[..., Any],
    chunks: Sequence[ChunkResponse],
    adapter: HandlerAdapter | None = None,
    *,
    probe_contract: bool = True,
    capabilities: Capabilities | None = None,
) -> Transcript:
    """Run a fresh handler made by ``factory`` over ``chunks`` once and return the ``Transcript``."""
    target = HandlerTarget(factory, capabilities or Capabilities(), adapter)
    target.check_factory()
    return target.run(chunks, probe=probe_contract)
