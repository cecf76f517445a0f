"""Deliberately broken API tool-call handlers: one realistic bug each, from the taxonomy's mutants.

Each mutant subclasses the reference handler and changes as little as possible to plant its bug,
so a catch proves the suite sees *that* bug and not some unrelated breakage. ``MUTANTS`` lists each
with its taxonomy classes and its *primary* check: the one check whose failure names the bug
(others may fail too). Every handler check is the primary check of at least one mutant.

The mutants reach into the reference handler's private state (``_ToolCallState``, ``_calls``,
``_tools``): that is the seam a planted bug needs, and a mutant is test code, never shipped.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse, SegmentEvent, SegmentType
from reference_impl.arguments import parse_arguments

# Private seam: handler mutants build on the reference's per-call state to change one behaviour each.
from reference_impl.handlers.api_tool_call import _ToolCallState


@dataclass(frozen=True)
class Mutant:
    name: str
    taxonomy: tuple[str, ...]
    primary: str  # the check whose failure names this bug
    factory: Callable[..., Any]
    description: str


class _Base(ApiToolCallStreamingResponseHandler):
    pass


# -- identity and keys ---------------------------------------------------------------------------


class KeyById(_Base):
    """KEY_BY_ID: calls tracked by provider id, so two calls sharing an id collapse (B06)."""

    def _apply_delta(self, delta: Any) -> None:
        if delta.call_id:
            for index, state in self._tools.items():
                if state.call_id == delta.call_id and index != delta.index:
                    delta = type(delta)(index, delta.call_id, delta.name, delta.arguments_delta)
                    break
        super()._apply_delta(delta)


class IgnoreIdChange(_Base):
    """IGNORE_ID_CHANGE: a new id on an occupied index is silently merged into the old call (B01)."""

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.call_id and state.call_id and delta.call_id != state.call_id:
            delta = type(delta)(delta.index, None, delta.name, delta.arguments_delta)
        super()._apply_delta(delta)


class IgnoreIdChangeKeepFirstName(_Base):
    """IGNORE_ID_CHANGE, first name kept: a new id on an occupied index is merged into the old call,
    its name and id dropped, so ``f`` and ``g`` on index 0 run as one ``f`` with ``g``'s arguments (B01)."""

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._merged: set[int] = set()  # indices where a second call was merged: its names are dropped too

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.call_id and state.call_id and delta.call_id != state.call_id:
            self._merged.add(delta.index)
        if delta.index in self._merged:
            delta = type(delta)(delta.index, None, None, delta.arguments_delta)
        super()._apply_delta(delta)


class MergeAfterNoArgumentCall(_Base):
    """IGNORE_ID_CHANGE where it looks harmless: a new id on an index whose call has no arguments yet is
    merged into it (first name and id kept), so a no-argument ``f`` then ``g({"a": 1})`` on index 0
    run as one ``f({"a": 1})``: the merged text parses, nothing errors, ``g`` is lost (B01)."""

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._merged: set[int] = set()

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        changed = state is not None and delta.call_id and state.call_id and delta.call_id != state.call_id
        if changed and state is not None and not "".join(state.argument_parts).strip():
            self._merged.add(delta.index)
        if delta.index in self._merged:
            delta = type(delta)(delta.index, None, None, delta.arguments_delta)
        super()._apply_delta(delta)


class DropConflictingId(_Base):
    """DROP_CONFLICTING_ID: the call holding an index runs; a second id's fragments are dropped with no error (B01)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dropped_indices: set[int] = set()

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.call_id and state.call_id and delta.call_id != state.call_id:
            self._dropped_indices.add(delta.index)
        if delta.index in self._dropped_indices:
            return
        super()._apply_delta(delta)


class IdOnlyAtStart(_Base):
    """ID_ONCE_AT_START: the id is read from the first delta only; a late id is lost (B04, G01)."""

    def _apply_delta(self, delta: Any) -> None:
        if delta.index in self._tools:
            delta = type(delta)(delta.index, None, delta.name, delta.arguments_delta)
        super()._apply_delta(delta)


class SegmentIdAsInvocationId(_Base):
    """The invocation id is the synthetic segment id, never the provider's (G01)."""

    def _end_event(self, state: _ToolCallState) -> SegmentEvent:
        event = super()._end_event(state)
        metadata = dict(event.metadata)
        metadata["call_id"] = None
        return SegmentEvent.end(event.segment_id, SegmentType.TOOL_CALL, **metadata)


class ProviderIdAsSegmentId(_Base):
    """The seed's `seg_id = call_id or uuid`: duplicate provider ids share a segment (B06)."""

    def _apply_delta(self, delta: Any) -> None:
        self._provider_id = delta.call_id
        try:
            super()._apply_delta(delta)
        finally:
            self._provider_id = None

    def _new_segment_id(self) -> str:
        return getattr(self, "_provider_id", None) or super()._new_segment_id()


class UuidPerDelta(_Base):
    """UUID_PER_DELTA: a fresh segment id for every argument fragment (B03)."""

    def _apply_delta(self, delta: Any) -> None:
        super()._apply_delta(delta)
        state = self._tools[delta.index]
        if state.started:
            state.segment_id = f"seg-{uuid.uuid4().hex}"


class RouteToLast(_Base):
    """ROUTE_TO_LAST: a continuation goes to the most recently opened call, not its index (B02)."""

    def _apply_delta(self, delta: Any) -> None:
        if delta.index in self._tools and not delta.name and not delta.call_id and self._tools:
            last = max(self._tools)
            delta = type(delta)(last, None, None, delta.arguments_delta)
        super()._apply_delta(delta)


class DropIdless(_Base):
    """DROP_IDLESS: calls without a provider id are ignored (B05)."""

    def _apply_delta(self, delta: Any) -> None:
        if delta.index not in self._tools and not delta.call_id:
            return
        super()._apply_delta(delta)


# -- names ---------------------------------------------------------------------------------------


class NameConcat(_Base):
    """NAME_CONCAT: every name fragment is appended, restatements included (A06)."""

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.name and delta.name == state.name:
            state.name_parts.append(delta.name)
            delta = type(delta)(delta.index, delta.call_id, None, delta.arguments_delta)
        super()._apply_delta(delta)


class NameOverwrite(_Base):
    """NAME_OVERWRITE: a later name fragment replaces the earlier ones (A07)."""

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.name:
            state.name_parts.clear()
        super()._apply_delta(delta)


class EmptyNameOverwrites(_Base):
    """'' on a continuation overwrites the real name (A05)."""

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.name == "":
            state.name_parts[:] = [""]
        super()._apply_delta(delta)


class StartOnFirstDelta(_Base):
    """START_ON_FIRST_DELTA: START is emitted on the first delta, even with no name yet (A08)."""

    def _apply_delta(self, delta: Any) -> None:
        fresh = delta.index not in self._tools
        super()._apply_delta(delta)
        state = self._tools[delta.index]
        if fresh and not state.started:
            self._start_tool(state)


# -- text and reasoning --------------------------------------------------------------------------


class SingleTextSegment(_Base):
    """SINGLE_TEXT_SEGMENT: one text segment for the whole turn, spanning tool calls (C04)."""

    def _start_tool(self, state: _ToolCallState) -> None:
        open_id, open_type = self._open_text_id, self._open_text_type
        self._open_text_id = None
        super()._start_tool(state)
        self._open_text_id, self._open_text_type = open_id, open_type


class ThoughtAsText(_Base):
    """THOUGHT_AS_TEXT: reasoning is emitted as ordinary text (C05)."""

    def _emit_reasoning(self, delta: str) -> None:
        self._emit_text(SegmentType.TEXT, delta)


class ContentBeforeReasoning(_Base):
    """Within a chunk, content is handled before reasoning (wire order, C05)."""

    def _process_chunk(self, chunk: ChunkResponse) -> None:
        if chunk.content and chunk.reasoning:
            first = ChunkResponse(content=chunk.content)
            second = ChunkResponse(reasoning=chunk.reasoning, tool_calls=chunk.tool_calls, error=chunk.error)
            super()._process_chunk(first)
            super()._process_chunk(second)
            return
        super()._process_chunk(chunk)


class DropTextAfterTools(_Base):
    """Text that arrives after a tool call started is dropped (E04-like loss)."""

    def _emit_text(self, segment_type: SegmentType, delta: str) -> None:
        if segment_type is SegmentType.TEXT and any(state.started for state in self._calls):
            return
        super()._emit_text(segment_type, delta)


class BufferText(_Base):
    """BUFFER_TEXT: text is held until the end of the stream (C04, latency)."""

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._held_text: list[str] = []

    def _emit_text(self, segment_type: SegmentType, delta: str) -> None:
        if segment_type is SegmentType.TEXT:
            self._held_text.append(delta)
            return
        super()._emit_text(segment_type, delta)

    def _finish_stream(self) -> None:
        held, self._held_text = "".join(self._held_text), []
        super()._emit_text(SegmentType.TEXT, held)
        super()._finish_stream()


# -- lifecycle -----------------------------------------------------------------------------------


class NoFinalizedFlag(_Base):
    """finalize() does not remember it ran: a second call re-emits ENDs (C06)."""

    def finalize(self) -> list[SegmentEvent]:
        self._is_finalized = False
        return super().finalize()

    def _finish(self) -> None:
        super()._finish()
        self._is_finalized = False


class FeedAfterFinalizeAccepted(_Base):
    """feed() after finalize() is accepted silently (C06)."""

    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        if self._is_finalized:
            return []
        return super().feed(chunk)


class UnguardedCallback(_Base):
    """UNGUARDED_CALLBACK: a raising on_segment_event propagates before the event is recorded (C06)."""

    def _emit(self, event: SegmentEvent) -> None:
        if self._on_segment_event is not None:
            self._on_segment_event(event)
        callback, self._on_segment_event = self._on_segment_event, None
        try:
            super()._emit(event)
        finally:
            self._on_segment_event = callback


class ReturnsInternalList(_Base):
    """get_all_events() returns the handler's own list (C06)."""

    def get_all_events(self) -> list[SegmentEvent]:
        return self._all_events


class NoResetOfInvocations(_Base):
    """NO_RESET: reset() forgets events but keeps invocations from the last turn (B07)."""

    def reset(self) -> None:
        kept = self._all_invocations
        super().reset()
        self._all_invocations = kept


class EndsInReverseOrder(_Base):
    """Tool ENDs come in reverse START order (G06)."""

    def _finish_stream(self) -> None:
        self._calls.reverse()
        super()._finish_stream()


class BufferArgsUntilEnd(_Base):
    """BUFFER_ARGS_UNTIL_END: one CONTENT with all arguments at END (C07)."""

    def _emit(self, event: SegmentEvent) -> None:
        if event.segment_type is SegmentType.TOOL_CALL and event.event_type.name == "CONTENT":
            return
        if event.segment_type is SegmentType.TOOL_CALL and event.event_type.name == "END":
            state = next((s for s in self._calls if s.segment_id == event.segment_id), None)
            if state is not None and state.argument_parts:
                super()._emit(
                    SegmentEvent.content(event.segment_id, SegmentType.TOOL_CALL, "".join(state.argument_parts))
                )
        super()._emit(event)


class EndWhenParsable(_Base):
    """END_WHEN_PARSABLE: a call ends as soon as its arguments parse (C02)."""

    def _apply_delta(self, delta: Any) -> None:
        super()._apply_delta(delta)
        state = self._tools[delta.index]
        if (
            state.started
            and isinstance(parse_arguments("".join(state.argument_parts)), dict)
            and "".join(state.argument_parts).strip()
        ):
            self._emit(self._end_event(state))


# -- arguments -----------------------------------------------------------------------------------


def _with_parser(parse: Callable[[str], Any]) -> type[_Base]:
    class Mutated(_Base):
        def _end_event(self, state: _ToolCallState) -> SegmentEvent:
            event = super()._end_event(state)
            if self._stream_error is not None or state.name is None:
                return event
            raw = "".join(state.argument_parts)
            common = {"tool_name": state.name, "call_id": state.call_id}
            try:
                arguments = parse(raw)
            except Exception as error:  # noqa: BLE001 - a mutated parser may raise anything: an error END
                return SegmentEvent.end(
                    state.segment_id, SegmentType.TOOL_CALL, **common, error=str(error), raw_arguments=raw
                )
            return SegmentEvent.end(state.segment_id, SegmentType.TOOL_CALL, **common, arguments=arguments)

    return Mutated


def _decode_error_to_empty(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        return {}


def _loads_empty(raw: str) -> Any:
    return json.loads(raw)


def _accept_non_object(raw: str) -> Any:
    value = json.loads(raw) if raw.strip() else {}
    return value if isinstance(value, dict) else {"value": value}


def _raw_decode_first(raw: str) -> Any:
    return json.JSONDecoder().raw_decode(raw.strip())[0] if raw.strip() else {}


def _partial_parse(raw: str) -> Any:
    """A lenient 'repair' that closes open strings and objects (PARTIAL_PARSE_AT_END, D04)."""
    text = raw.strip() or "{}"
    for suffix in ("", "}", '"}', "null}", '"}}', "}}"):
        try:
            value = json.loads(text + suffix)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return {}


class ParseEachFragment(_Base):
    """PARSE_EACH_FRAGMENT: each fragment parsed alone; unparsable ones kept as {} (D01)."""

    def _end_event(self, state: _ToolCallState) -> SegmentEvent:
        event = super()._end_event(state)
        if "arguments" not in event.metadata:
            return event
        merged: dict[str, Any] = {}
        for part in state.argument_parts:
            try:
                value = json.loads(part)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                merged.update(value)
        metadata = {**event.metadata, "arguments": merged}
        return SegmentEvent.end(event.segment_id, SegmentType.TOOL_CALL, **metadata)


class RaiseFromFinalize(_Base):
    """RAISE_FROM_FINALIZE: a JSONDecodeError escapes finalize() (D09)."""

    def _end_event(self, state: _ToolCallState) -> SegmentEvent:
        raw = "".join(state.argument_parts)
        if raw.strip():
            json.loads(raw)
        return super()._end_event(state)


class MisplacedMetadata(_Base):
    """START/END data at the top of the payload instead of in payload['metadata'] (a consumer reads nothing)."""

    def _emit(self, event: SegmentEvent) -> None:
        if event.event_type.name in ("START", "END") and event.metadata:
            event = SegmentEvent(event.event_type, event.segment_id, event.segment_type, dict(event.metadata))
        super()._emit(event)


class ReturnNothingFromFeed(_Base):
    """feed() records its events but returns [] (consumers of the return value see nothing)."""

    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        super().feed(chunk)
        return []


class CallbackSkipsEnds(_Base):
    """on_segment_event is not called for END events (a UI never sees calls finish)."""

    def _emit(self, event: SegmentEvent) -> None:
        if event.event_type.name != "END":
            super()._emit(event)
            return
        callback, self._on_segment_event = self._on_segment_event, None
        try:
            super()._emit(event)
        finally:
            self._on_segment_event = callback


class HangOnTrailingBackslash(_Base):
    """An unescaping loop that never advances when a fragment ends in a backslash (hangs the agent)."""

    def _apply_delta(self, delta: Any) -> None:
        text = delta.arguments_delta or ""
        position = 0
        while text.endswith("\\") and position < len(text):
            position += 0  # the bug: the escape is never consumed
        super()._apply_delta(delta)


class StripArgumentFragments(_Base):
    """CONTENT carries each argument fragment stripped of whitespace: the UI shows text the provider never sent."""

    def _emit(self, event: SegmentEvent) -> None:
        if event.segment_type is SegmentType.TOOL_CALL and event.event_type.name == "CONTENT":
            if not event.delta.strip():
                return
            event = SegmentEvent.content(event.segment_id, SegmentType.TOOL_CALL, event.delta.strip())
        super()._emit(event)


class IgnoreStreamErrors(_Base):
    """IGNORE_LENGTH_STOP / IGNORE_ERROR_EVENTS: ChunkResponse.error is ignored (F06-F08)."""

    def _process_chunk(self, chunk: ChunkResponse) -> None:
        if chunk.error is not None:
            chunk = ChunkResponse(
                content=chunk.content,
                reasoning=chunk.reasoning,
                tool_calls=chunk.tool_calls,
                finish_reason=chunk.finish_reason,
            )
        super()._process_chunk(chunk)


def _mutant(name: str, taxonomy: tuple[str, ...], primary: str, factory: Callable[..., Any]) -> Mutant:
    doc = (getattr(factory, "__doc__", None) or name).strip().splitlines()[0]
    return Mutant(name, taxonomy, primary, factory, doc)


MUTANTS: tuple[Mutant, ...] = (
    _mutant("key_by_id", ("B06",), "segment_per_call", KeyById),
    _mutant("ignore_id_change", ("B01", "A02"), "segment_per_call", IgnoreIdChange),
    _mutant("ignore_id_change_keep_first_name", ("B01", "A02"), "segment_per_call", IgnoreIdChangeKeepFirstName),
    _mutant("merge_after_no_argument_call", ("B01",), "segment_per_call", MergeAfterNoArgumentCall),
    _mutant("drop_conflicting_id", ("B01",), "segment_per_call", DropConflictingId),
    _mutant("id_only_at_start", ("B04", "G01"), "provider_ids_kept", IdOnlyAtStart),
    _mutant("segment_id_as_invocation_id", ("G01",), "provider_ids_kept", SegmentIdAsInvocationId),
    _mutant("provider_id_as_segment_id", ("B06",), "segment_lifecycle", ProviderIdAsSegmentId),
    _mutant("uuid_per_delta", ("B03",), "segment_lifecycle", UuidPerDelta),
    _mutant("route_to_last", ("B02",), "invocations_match_stream", RouteToLast),
    _mutant("drop_idless", ("B05",), "segment_per_call", DropIdless),
    _mutant("name_concat", ("A06",), "tool_names_whole", NameConcat),
    _mutant("name_overwrite", ("A07",), "tool_names_whole", NameOverwrite),
    _mutant("empty_name_overwrites", ("A05",), "tool_names_whole", EmptyNameOverwrites),
    _mutant("start_on_first_delta", ("A08",), "tool_names_whole", StartOnFirstDelta),
    _mutant("single_text_segment", ("C04",), "text_segments_follow_wire", SingleTextSegment),
    _mutant("thought_as_text", ("C05",), "reasoning_conserved", ThoughtAsText),
    _mutant("content_before_reasoning", ("C05",), "text_and_reasoning_in_wire_order", ContentBeforeReasoning),
    _mutant("drop_text_after_tools", ("E04",), "text_conserved", DropTextAfterTools),
    _mutant("buffer_text", ("C04",), "text_streams_within_lag", BufferText),
    _mutant("no_finalized_flag", ("C06",), "finalize_idempotent", NoFinalizedFlag),
    _mutant("feed_after_finalize_accepted", ("C06",), "feed_after_finalize_raises", FeedAfterFinalizeAccepted),
    _mutant("unguarded_callback", ("C06",), "callbacks_isolated", UnguardedCallback),
    _mutant("callback_skips_ends", ("C06",), "callbacks_see_returned_events", CallbackSkipsEnds),
    _mutant("returns_internal_list", ("C06",), "get_all_returns_copies", ReturnsInternalList),
    _mutant("return_nothing_from_feed", ("C06",), "returned_events_are_all_events", ReturnNothingFromFeed),
    _mutant("no_reset_of_invocations", ("B07",), "reset_behaves_like_new", NoResetOfInvocations),
    _mutant("ends_in_reverse_order", ("G06",), "calls_in_wire_order", EndsInReverseOrder),
    _mutant("buffer_args_until_end", ("C07",), "arguments_stream_incrementally", BufferArgsUntilEnd),
    _mutant("end_when_parsable", ("C02",), "segment_lifecycle", EndWhenParsable),
    _mutant("decode_error_to_empty", ("D03", "D07"), "invalid_arguments_flagged", _with_parser(_decode_error_to_empty)),
    _mutant("loads_empty", ("D02",), "invocations_match_stream", _with_parser(_loads_empty)),
    _mutant("accept_non_object", ("D05",), "invalid_arguments_flagged", _with_parser(_accept_non_object)),
    _mutant("raw_decode_first", ("D08",), "invalid_arguments_flagged", _with_parser(_raw_decode_first)),
    _mutant("partial_parse_at_end", ("D04",), "invalid_arguments_flagged", _with_parser(_partial_parse)),
    _mutant("parse_each_fragment", ("D01",), "invocations_match_stream", ParseEachFragment),
    _mutant("raise_from_finalize", ("D09",), "no_crash", RaiseFromFinalize),
    _mutant("ignore_stream_errors", ("F06", "F07", "F08"), "invalid_arguments_flagged", IgnoreStreamErrors),
    _mutant("misplaced_metadata", ("C01",), "events_readable", MisplacedMetadata),
    _mutant("strip_argument_fragments", ("A21",), "argument_integrity", StripArgumentFragments),
    _mutant("hang_on_trailing_backslash", ("E05",), "finishes_within_deadline", HangOnTrailingBackslash),
)
