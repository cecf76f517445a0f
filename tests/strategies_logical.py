"""Hypothesis strategies for LOGICAL responses and their wire fragmentations, plus shared helpers.

A logical response is what the model "said": an ordered list of text, reasoning and tool-call
items. Everything a handler should produce (text, segments, invocations) is computed here from
the generated values alone, never from the handler under test.

A fragmentation is one of the many ways a provider may put that response on the wire: strings cut
at arbitrary points (empty and one-character pieces included), id and name arriving late,
restated or as ``""``, parallel calls interleaved (per-call order kept), text and tool deltas in
the same ``ChunkResponse``, empty chunks, and ``is_complete`` or ``finalize()`` ending the stream.

Import as ``strategies_logical`` (pytest puts ``tests/`` on ``sys.path``) or ``tests.strategies_logical``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    ToolCallDelta,
    ToolInvocation,
)

# --------------------------------------------------------------------------------------------
# Logical response model
# --------------------------------------------------------------------------------------------

# Valid tool names (OpenAI's ^[a-zA-Z0-9_-]{1,64}$). None of them has a prefix p immediately
# followed by p again, so any split of the name into fragments is unambiguous under the
# "a fragment equal to the whole name so far is a restatement" rule.
TOOL_NAMES = ("get_weather", "read_file", "search", "f", "do-it", "Run_Shell_Command2")
CALL_IDS = ("call_1", "call_2", "toolu_01A", "fc_9", "call_YHz", "x")


@dataclass(frozen=True)
class TextItem:
    text: str


@dataclass(frozen=True)
class ReasoningItem:
    text: str


@dataclass(frozen=True)
class ToolItem:
    index: int
    name: str
    call_id: str | None
    arguments: dict[str, Any]
    argument_text: str


Item = TextItem | ReasoningItem | ToolItem


# Characters that break naive JSON/stream code: quotes, backslashes, braces, markers, control
# characters, line/paragraph separators, astral characters (surrogate pairs under ensure_ascii).
SPECIAL_CHARS = (
    '"',
    "\\",
    "/",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x1f",
    "\x7f",
    "\u00e9",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\U0001f600",
    "\U0001d11e",
    "\U00010348",
    "\u4e2d",
)

json_strings = st.text(st.one_of(st.characters(), st.sampled_from(SPECIAL_CHARS)), max_size=12)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    json_strings,
)

json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(json_strings, children, max_size=4),
    ),
    max_leaves=16,
)


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A value nested 20..150 levels deep (objects and arrays mixed)."""
    depth = draw(st.integers(min_value=20, max_value=150))
    value: Any = draw(json_scalars)
    kinds = draw(st.lists(st.booleans(), min_size=depth, max_size=depth))
    for as_object in kinds:
        value = {"k": value} if as_object else [value]
    return value


json_objects = st.one_of(
    st.just({}),
    st.dictionaries(json_strings, json_values, max_size=5),
    st.builds(lambda v: {"deep": v}, deep_values()),
)


@st.composite
def render_json(draw: st.DrawFn, value: dict[str, Any]) -> str:
    """Render ``value`` the way different providers/models do (ascii or not, compact or not)."""
    ensure_ascii = draw(st.booleans())
    style = draw(st.sampled_from(["compact", "default", "indent"]))
    if style == "compact":
        return json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":"))
    if style == "indent":
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=2)
    return json.dumps(value, ensure_ascii=ensure_ascii)


@st.composite
def tool_items(draw: st.DrawFn, index: int) -> ToolItem:
    name = draw(st.sampled_from(TOOL_NAMES))
    call_id = draw(
        st.one_of(st.none(), st.sampled_from(CALL_IDS), st.from_regex(r"call_[A-Za-z0-9]{1,12}", fullmatch=True))
    )
    kind = draw(st.sampled_from(["json", "json", "json", "json", "empty", "whitespace"]))
    if kind == "empty":
        return ToolItem(index, name, call_id, {}, "")
    if kind == "whitespace":
        return ToolItem(index, name, call_id, {}, draw(st.sampled_from([" ", "\n", " \t\r\n "])))
    arguments = draw(json_objects)
    return ToolItem(index, name, call_id, arguments, draw(render_json(arguments)))


@st.composite
def logical_responses(draw: st.DrawFn, max_items: int = 7) -> list[Item]:
    kinds = draw(st.lists(st.sampled_from(["text", "reasoning", "tool", "tool"]), max_size=max_items))
    n_tools = kinds.count("tool")
    if draw(st.booleans()):
        indices = list(range(n_tools))
    else:
        indices = draw(st.lists(st.integers(0, 40), min_size=n_tools, max_size=n_tools, unique=True))
    items: list[Item] = []
    tool_position = 0
    for kind in kinds:
        if kind == "text":
            items.append(TextItem(draw(st.text(min_size=1, max_size=30))))
        elif kind == "reasoning":
            items.append(ReasoningItem(draw(st.text(min_size=1, max_size=30))))
        else:
            items.append(draw(tool_items(indices[tool_position])))
            tool_position += 1
    return items


# --------------------------------------------------------------------------------------------
# Fragmentation
# --------------------------------------------------------------------------------------------


@st.composite
def cut(draw: st.DrawFn, text: str) -> list[str]:
    """Cut ``text`` into pieces whose concatenation is ``text`` (empty pieces allowed)."""
    mode = draw(st.sampled_from(["whole", "random", "random", "chars"]))
    if mode == "whole" or not text:
        extra_empty = draw(st.integers(0, 2))
        return [text] + [""] * extra_empty
    if mode == "chars" and len(text) <= 400:
        return list(text)
    points = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    pieces = []
    previous = 0
    for point in points:
        pieces.append(text[previous:point])
        previous = point
    pieces.append(text[previous:])
    return pieces


def _no_fields(arguments_delta: str | None = None) -> dict[str, Any]:
    return {"call_id": None, "name": None, "arguments_delta": arguments_delta}


@st.composite
def tool_deltas(draw: st.DrawFn, item: ToolItem) -> list[ToolCallDelta]:
    """Per-call ordered deltas for one tool call (name/id possibly late, restated, or '')."""
    pieces = draw(cut(item.argument_text))
    # None and "" are both "no argument text in this delta".
    fields = [_no_fields(p if p else draw(st.sampled_from([None, ""]))) for p in pieces]
    if draw(st.booleans()):  # an OpenAI-style header delta without arguments
        fields.insert(0, _no_fields(draw(st.sampled_from([None, ""]))))
    name_done_at = _place_name(draw, fields, item.name)
    for position, f in enumerate(fields):
        if f["name"] is None:
            restated = [None, None, "", item.name] if position > name_done_at else [None, None, ""]
            f["name"] = draw(st.sampled_from(restated))  # restatement or ''
    _place_call_id(draw, fields, item.call_id)
    return [ToolCallDelta(item.index, **f) for f in fields]


def _place_name(draw: st.DrawFn, fields: list[dict[str, Any]], name: str) -> int:
    """Put the name in ``fields`` (first, split before the arguments, or late); return where it is complete."""
    first_args = next((i for i, f in enumerate(fields) if f["arguments_delta"]), len(fields))
    name_mode = draw(st.sampled_from(["first", "split", "late"]))
    if name_mode == "split" and len(name) > 1:
        # All pieces before the arguments begin (the last one may share the first-args delta).
        name_pieces = [p for p in draw(cut(name)) if p]
        for _ in name_pieces[:-1]:
            fields.insert(0, _no_fields())
            first_args += 1
        position = min(first_args, len(fields) - 1)
        # Fill positions position-len+1 .. position with the pieces, in order.
        start = position - (len(name_pieces) - 1)
        for offset, piece in enumerate(name_pieces):
            fields[start + offset]["name"] = piece
        return position
    if name_mode == "late":
        name_done_at = draw(st.integers(0, len(fields)))
        if name_done_at == len(fields):  # a name-only delta after everything else
            fields.append(_no_fields())
        fields[name_done_at]["name"] = name
        return name_done_at
    fields[0]["name"] = name
    return 0


def _place_call_id(draw: st.DrawFn, fields: list[dict[str, Any]], call_id: str | None) -> None:
    """Put the id in one delta (restated or '' in later ones, '' or absent before); '' or absent without one."""
    if call_id is None:
        for f in fields:
            f["call_id"] = draw(st.sampled_from([None, None, ""]))
        return
    id_at = draw(st.integers(0, len(fields)))
    if id_at == len(fields):
        fields.append(_no_fields())
    fields[id_at]["call_id"] = call_id
    for position, f in enumerate(fields):
        if position != id_at:
            choices = [None, None, ""] + ([call_id] if position > id_at else [])
            f["call_id"] = draw(st.sampled_from(choices))


Piece = tuple[str, Any]  # ("reasoning", str) | ("content", str) | ("tool", ToolCallDelta)
_RANK = {"reasoning": 0, "content": 1, "tool": 2}


def _name_done_at(deltas: Sequence[ToolCallDelta]) -> int:
    """The position of the delta that completes the call's name (restatements and '' add nothing)."""
    parts: list[str] = []
    for delta in deltas:
        if delta.name and delta.name != "".join(parts):
            parts.append(delta.name)
    full, so_far = "".join(parts), ""
    for position, delta in enumerate(deltas):
        if delta.name and delta.name != so_far:
            so_far += delta.name
        if so_far == full:
            return position
    return len(deltas) - 1


@st.composite
def interleave(draw: st.DrawFn, sequences: list[list[ToolCallDelta]]) -> list[ToolCallDelta]:
    """Merge per-call delta lists, keeping each call's own order.

    Calls first appear in their logical order, and a call's first delta never comes before every
    earlier call's name is complete (a name cannot grow once a later call appeared: the START rule).
    """
    if len(sequences) < 2 or not draw(st.booleans()):
        return [d for seq in sequences for d in seq]
    queues = [list(seq) for seq in sequences]
    done_at = [_name_done_at(seq) for seq in sequences]
    taken = [0] * len(sequences)
    merged: list[ToolCallDelta] = []
    started = 0
    while any(queues):
        live = [i for i in range(started) if queues[i]]
        if started < len(queues) and all(taken[i] > done_at[i] for i in range(started)):
            live.append(started)
        pick = live[draw(st.integers(0, len(live) - 1))]
        if pick == started:
            started += 1
        merged.append(queues[pick].pop(0))
        taken[pick] += 1
    return merged


@dataclass(frozen=True)
class Fragmented:
    chunks: list[ChunkResponse]
    ends_with_is_complete: bool


@st.composite
def fragmentations(draw: st.DrawFn, items: Sequence[Item]) -> Fragmented:
    """One wire rendering of the logical response ``items``."""
    chunks = _chunked(draw, _wire_pieces(draw, items))
    ends_with_is_complete = draw(st.booleans())
    if ends_with_is_complete:
        if chunks and draw(st.booleans()):
            last = chunks[-1]
            chunks[-1] = ChunkResponse(
                content=last.content, reasoning=last.reasoning, tool_calls=last.tool_calls, is_complete=True
            )
        else:
            chunks.append(ChunkResponse(is_complete=True))
    return Fragmented(chunks, ends_with_is_complete)


def _wire_pieces(draw: st.DrawFn, items: Sequence[Item]) -> list[Piece]:
    """Text cut into pieces; each run of consecutive tool calls as their (possibly interleaved) deltas."""
    pieces: list[Piece] = []
    group: list[ToolItem] = []

    def flush_group() -> None:
        if group:
            merged = draw(interleave([draw(tool_deltas(t)) for t in group]))
            pieces.extend(("tool", d) for d in merged)
            group.clear()

    for item in items:
        if isinstance(item, ToolItem):
            group.append(item)
            continue
        flush_group()
        kind = "content" if isinstance(item, TextItem) else "reasoning"
        pieces.extend((kind, p) for p in draw(cut(item.text)))
    flush_group()
    return pieces


def _chunked(draw: st.DrawFn, pieces: list[Piece]) -> list[ChunkResponse]:
    """The pieces grouped into chunks in wire order, with empty chunks here and there."""
    chunks: list[ChunkResponse] = []
    current: list[Piece] = []

    def emit() -> None:
        if current:
            chunks.append(_chunk(draw, current))
            current.clear()

    for kind, value in pieces:
        # Within a chunk the wire order is reasoning, content, tool_calls: never put a piece of a
        # lower rank after a higher one in the same chunk.
        if current and (_RANK[kind] < _RANK[current[-1][0]] or draw(st.booleans())):
            emit()
        current.append((kind, value))
        if draw(st.integers(0, 9)) == 0:
            emit()
            chunks.append(ChunkResponse())  # an empty chunk
    emit()
    return chunks


def _chunk(draw: st.DrawFn, pieces: list[Piece]) -> ChunkResponse:
    reasoning = "".join(p for k, p in pieces if k == "reasoning")
    content = "".join(p for k, p in pieces if k == "content")
    tools = [p for k, p in pieces if k == "tool"]
    has_reasoning = any(k == "reasoning" for k, _ in pieces)
    return ChunkResponse(
        content=content,
        reasoning=reasoning if has_reasoning else None,
        tool_calls=tools if tools else draw(st.sampled_from([None, []])),
    )


def unfragmented(items: Sequence[Item]) -> list[ChunkResponse]:
    """The reference wire rendering: one chunk per logical item, every field in one delta."""
    chunks = []
    for item in items:
        if isinstance(item, TextItem):
            chunks.append(ChunkResponse(content=item.text))
        elif isinstance(item, ReasoningItem):
            chunks.append(ChunkResponse(reasoning=item.text))
        else:
            chunks.append(
                ChunkResponse(tool_calls=[ToolCallDelta(item.index, item.call_id, item.name, item.argument_text)])
            )
    return chunks


# --------------------------------------------------------------------------------------------
# Independent expectations (from the logical response only)
# --------------------------------------------------------------------------------------------


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def expected_invocations(items: Sequence[Item]) -> list[tuple[str, str | None, str]]:
    """(name, provider id or None, canonical arguments) per tool call, sorted."""
    return sort_invocation_keys((t.name, t.call_id, canonical(t.arguments)) for t in items if isinstance(t, ToolItem))


def sort_invocation_keys(keys: Iterable[tuple[str, str | None, str]]) -> list[tuple[str, str | None, str]]:
    return sorted(keys, key=lambda k: (k[0], k[1] is not None, k[1] or "", k[2]))


def expected_skeleton(items: Sequence[Item]) -> list[Any]:
    """Segments in START order per the spec (rules 1, 2 and the START rule), tool runs order-normalised.

    Consecutive text of one kind is one segment. A call STARTs (ending the open text segment) once
    its name can no longer grow: its argument text began, a later call appeared, or the stream
    ended. So a call without argument text starts when the next call appears, or at the end.
    """
    entries: list[Any] = []
    deferred: list[Any] = []
    open_kind: str | None = None
    for item in items:
        if isinstance(item, ToolItem):
            if deferred:  # a later call appeared: the waiting calls start now, in wire order
                entries += deferred
                deferred = []
                open_kind = None
            if item.argument_text:
                entries.append(("tool", item.name, item.argument_text))
                open_kind = None
            else:
                deferred.append(("tool", item.name, item.argument_text))
            continue
        kind = "text" if isinstance(item, TextItem) else "reasoning"
        if open_kind == kind:
            entries[-1] = (kind, entries[-1][1] + item.text)
        else:
            entries.append((kind, item.text))
            open_kind = kind
    return normalise_skeleton(entries + deferred)


def normalise_skeleton(entries: Iterable[Any]) -> list[Any]:
    """Collapse each run of consecutive tool entries into one sorted tuple (parallel calls)."""
    out: list[Any] = []
    run: list[Any] = []
    for entry in entries:
        if entry[0] == "tool":
            run.append(entry)
            continue
        if run:
            out.append(("tools", tuple(sorted(run))))
            run = []
        out.append(entry)
    if run:
        out.append(("tools", tuple(sorted(run))))
    return out


# --------------------------------------------------------------------------------------------
# Running a handler and reading its output
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    returned: list[SegmentEvent]
    callback_events: list[SegmentEvent]
    callback_invocations: list[ToolInvocation]
    all_events: list[SegmentEvent]
    invocations: list[ToolInvocation]


def run_stream(
    chunks: Iterable[ChunkResponse],
    *,
    finalize: bool = True,
    handler_factory: Callable[..., Any] = ApiToolCallStreamingResponseHandler,
) -> Run:
    callback_events: list[SegmentEvent] = []
    callback_invocations: list[ToolInvocation] = []
    handler = handler_factory(on_segment_event=callback_events.append, on_tool_invocation=callback_invocations.append)
    returned: list[SegmentEvent] = []
    for chunk in chunks:
        returned.extend(handler.feed(chunk))
    if finalize:
        returned.extend(handler.finalize())
    return Run(returned, callback_events, callback_invocations, handler.get_all_events(), handler.get_all_invocations())


def segments(events: Iterable[SegmentEvent]) -> dict[str, list[SegmentEvent]]:
    """Events grouped by segment id, segments in order of first appearance."""
    grouped: dict[str, list[SegmentEvent]] = {}
    for event in events:
        grouped.setdefault(event.segment_id, []).append(event)
    return grouped


def segment_text(events: Iterable[SegmentEvent]) -> str:
    return "".join(e.payload["delta"] for e in events if e.event_type is SegmentEventType.CONTENT)


def concatenated(events: Iterable[SegmentEvent], segment_type: SegmentType) -> str:
    return "".join(
        e.payload["delta"]
        for e in events
        if e.event_type is SegmentEventType.CONTENT and e.segment_type is segment_type
    )


def lifecycle_errors(events: Sequence[SegmentEvent], *, finished: bool = True) -> list[str]:
    """Violations of: one START first, CONTENT*, one END last, nothing after END, one type per segment."""
    problems: list[str] = []
    for segment_id, evs in segments(events).items():
        problems += _order_problems(segment_id, [e.event_type for e in evs], finished)
        if len({e.segment_type for e in evs}) != 1:
            problems.append(f"{segment_id}: segment_type changes")
        problems += _payload_problems(segment_id, evs)
    return problems


def _order_problems(segment_id: str, kinds: list[SegmentEventType], finished: bool) -> list[str]:
    problems: list[str] = []
    if kinds[0] is not SegmentEventType.START:
        problems.append(f"{segment_id}: first event is {kinds[0]}")
    if kinds.count(SegmentEventType.START) != 1:
        problems.append(f"{segment_id}: {kinds.count(SegmentEventType.START)} STARTs")
    ends = kinds.count(SegmentEventType.END)
    if ends > 1:
        problems.append(f"{segment_id}: {ends} ENDs")
    if ends == 1 and kinds[-1] is not SegmentEventType.END:
        problems.append(f"{segment_id}: events after END")
    if finished and ends == 0:
        problems.append(f"{segment_id}: never ENDed")
    return problems


def _payload_problems(segment_id: str, evs: list[SegmentEvent]) -> list[str]:
    problems: list[str] = []
    for e in evs:
        if e.event_type is SegmentEventType.CONTENT:
            if set(e.payload) != {"delta"} or not isinstance(e.payload["delta"], str):
                problems.append(f"{segment_id}: CONTENT payload {dict(e.payload)!r}")
        elif set(e.payload) != {"metadata"}:
            problems.append(f"{segment_id}: {e.event_type} payload keys {sorted(e.payload)}")
    return problems


def skeleton(events: Sequence[SegmentEvent]) -> list[Any]:
    """Segments in START order: (kind, text) for text/reasoning, ("tool", name, argument text) for calls."""
    entries: list[Any] = []
    for evs in segments(events).values():
        first = evs[0]
        if first.segment_type is SegmentType.TOOL_CALL:
            entries.append(("tool", first.payload["metadata"].get("tool_name"), segment_text(evs)))
        else:
            entries.append((first.segment_type.value, segment_text(evs)))
    return normalise_skeleton(entries)


def normalise_events(events: Sequence[SegmentEvent], invocations: Sequence[ToolInvocation] = ()) -> Any:
    """Events and invocations with segment ids renamed s1, s2, ... by first appearance.

    Two handler instances never share segment ids, so comparing two runs needs this.
    """
    names: dict[str, str] = {}
    for event in events:
        names.setdefault(event.segment_id, f"s{len(names) + 1}")
    out_events = [(e.event_type, names[e.segment_id], e.segment_type, canonical(e.payload)) for e in events]
    out_invocations = [(names.get(i.id, i.id), i.name, canonical(i.arguments)) for i in invocations]
    return out_events, out_invocations
