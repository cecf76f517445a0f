"""Helpers shared by the text-parser tests (``tests/test_parsers_*.py``); this module has no tests.

``run`` feeds content pieces to a ``ParsingStreamingResponseHandler`` and returns an ``Outcome``
with the views the assertions need (TEXT, tool segments, invocations, everything concatenated).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reference_impl import ChunkResponse, SegmentEvent, SegmentEventType, SegmentType, ToolInvocation
from reference_impl.handlers.parsing import ParsingStreamingResponseHandler

FORMATS = ("xml", "json", "sentinel")

# One simple call per format, all meaning lookup(q="paris").
SIMPLE_CALL = {
    "xml": '<tool name="lookup"><arguments><arg name="q">paris</arg></arguments></tool>',
    "json": '{"tool": {"function": "lookup", "parameters": {"q": "paris"}}}',
    "sentinel": '[[SEG_START {"type": "tool_call", "tool_name": "lookup"}]] {"q": "paris"} [[SEG_END]]',
}


@dataclass
class ToolSegment:
    """One TOOL_CALL segment as the events describe it."""

    segment_id: str
    name: str | None
    content: str
    end: dict[str, Any]

    @property
    def ok(self) -> bool:
        return "arguments" in self.end and "error" not in self.end


@dataclass
class Outcome:
    handler: ParsingStreamingResponseHandler
    events: list[SegmentEvent]
    returned: list[SegmentEvent]

    @property
    def invocations(self) -> list[ToolInvocation]:
        return self.handler.get_all_invocations()

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        # Read-only containers compare equal to plain ones, at any depth.
        return [(invocation.name, dict(invocation.arguments)) for invocation in self.invocations]

    @property
    def text(self) -> str:
        return concatenated(self.events, SegmentType.TEXT)

    @property
    def reasoning(self) -> str:
        return concatenated(self.events, SegmentType.REASONING)

    @property
    def everything(self) -> str:
        """TEXT and TOOL_CALL deltas in emission order (must equal the fed content)."""
        return "".join(
            event.delta
            for event in self.events
            if event.event_type is SegmentEventType.CONTENT and event.segment_type is not SegmentType.REASONING
        )

    @property
    def tools(self) -> list[ToolSegment]:
        return tool_segments(self.events)

    @property
    def text_segments(self) -> list[str]:
        texts: dict[str, list[str]] = {}
        for event in self.events:
            if event.segment_type is SegmentType.TEXT:
                texts.setdefault(event.segment_id, []).append(event.delta)
        return ["".join(parts) for parts in texts.values()]


def concatenated(events: Iterable[SegmentEvent], segment_type: SegmentType) -> str:
    return "".join(
        event.delta
        for event in events
        if event.segment_type is segment_type and event.event_type is SegmentEventType.CONTENT
    )


def tool_segments(events: Iterable[SegmentEvent]) -> list[ToolSegment]:
    found: dict[str, ToolSegment] = {}
    for event in events:
        if event.segment_type is not SegmentType.TOOL_CALL:
            continue
        if event.event_type is SegmentEventType.START:
            found[event.segment_id] = ToolSegment(event.segment_id, event.metadata["tool_name"], "", {})
        elif event.event_type is SegmentEventType.CONTENT:
            found[event.segment_id].content += event.delta
        else:
            found[event.segment_id].end = dict(event.metadata)
    return list(found.values())


def make_chunks(pieces: Iterable[str | ChunkResponse]) -> list[ChunkResponse]:
    return [piece if isinstance(piece, ChunkResponse) else ChunkResponse(content=piece) for piece in pieces]


def run(
    parser_name: str,
    pieces: Iterable[str | ChunkResponse],
    *,
    finalize: bool = True,
    **kwargs: Any,
) -> Outcome:
    """Feed ``pieces`` (strings are content chunks) and, unless told not to, finalize."""
    handler = ParsingStreamingResponseHandler(parser_name, **kwargs)
    returned: list[SegmentEvent] = []
    for chunk in make_chunks(pieces):
        returned.extend(handler.feed(chunk))
    if finalize:
        returned.extend(handler.finalize())
    outcome = Outcome(handler, handler.get_all_events(), returned)
    assert outcome.returned == outcome.events
    errors = lifecycle_errors(outcome.events, finished=finalize)
    assert not errors, errors
    return outcome


def pieces_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def splits(text: str) -> list[list[str]]:
    """Every way of cutting ``text`` into two chunks (each marker split at each character)."""
    return [[text[:i], text[i:]] for i in range(len(text) + 1)]


def chunkings(text: str) -> list[list[str]]:
    """One chunk, 1-character chunks, 2/3/7-character chunks, and every 2-way split."""
    return [[text], pieces_of(text, 1), pieces_of(text, 2), pieces_of(text, 3), pieces_of(text, 7), *splits(text)]


def lifecycle_errors(events: Sequence[SegmentEvent], *, finished: bool = True) -> list[str]:
    """START, CONTENT*, END for every segment; one text-like and one tool segment open at most."""
    errors: list[str] = []
    state: dict[str, str] = {}
    open_segment: dict[str, str | None] = {"text": None, "tool": None}  # by kind: the open segment's id
    for position, event in enumerate(events):
        sid = event.segment_id
        kind = "tool" if event.segment_type is SegmentType.TOOL_CALL else "text"
        if event.event_type is SegmentEventType.START:
            errors += _start_errors(position, sid, kind, state, open_segment)
            state[sid] = "open"
            open_segment[kind] = sid
        elif state.get(sid) != "open":
            errors.append(f"event {position}: {event.event_type.name} for {sid} which is {state.get(sid, 'unknown')}")
        elif event.event_type is SegmentEventType.END:
            state[sid] = "closed"
            if kind == "tool" or open_segment[kind] == sid:
                open_segment[kind] = None
    if finished:
        errors.extend(f"{sid} never ended" for sid, status in state.items() if status == "open")
    return errors


def _start_errors(
    position: int, sid: str, kind: str, state: dict[str, str], open_segment: dict[str, str | None]
) -> list[str]:
    errors = []
    if sid in state:
        errors.append(f"event {position}: second START for {sid}")
    if open_segment[kind] is not None:
        errors.append(f"event {position}: {kind} {sid} starts while {open_segment[kind]} is open")
    return errors
