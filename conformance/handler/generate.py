"""Generated handler scenarios: wire-legal ``ChunkResponse`` streams drawn directly, with their outcome.

Two generators:

* ``scenarios()`` renders a logical turn (``conformance.turns``) the way a correct converter would
  (dense indices, one delta per chunk): the public strategy, kept simple;
* ``wire_scenarios()`` draws the whole input space a handler can meet: calls on sparse or
  non-zero indices, every parallel call on index 0 with its own id, ids and name fragments on
  later deltas, ids restated or ``""`` on continuations, text and reasoning between two deltas of
  an open call, several kinds of content in one chunk, empty chunks, a terminal chunk carrying
  the last delta, streams cut by the token limit or an error (mid-call, or after arguments that
  happen to parse), arguments that are valid JSON but not an object, several objects, truncated
  text, argument fragments that are complete JSON on their own, and keys frameworks reserve.

The expected outcome is computed from the drawn values alone (never from a handler). Every draw
shrinks towards the plain case (dense indices, ids and names on the first delta, as few chunks
as the wire allows), so a failure is reported on a small, readable stream.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.turns.generate import TOOL_NAMES, argument_objects, json_values, logical_turns
from conformance.turns.model import Call, Reasoning, Text, Turn
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta

__all__ = ["scenarios", "turn_outcome", "turn_to_chunks", "wire_scenarios"]


# -- the simple, public generator ------------------------------------------------------------------


def turn_to_chunks(turn: Turn) -> list[ChunkResponse]:
    """A turn as the ``ChunkResponse`` stream a correct converter would produce."""
    chunks: list[ChunkResponse] = []
    index = 0
    for item in turn.items:
        if isinstance(item, Call):
            deltas = [ToolCallDelta(index, item.call_id, item.name, item.argument_pieces[0] or None)]
            deltas += [ToolCallDelta(index, arguments_delta=piece) for piece in item.argument_pieces[1:] if piece]
            chunks += [ChunkResponse(tool_calls=[delta]) for delta in deltas]
            index += 1
        elif isinstance(item, Text):
            chunks += [ChunkResponse(content=piece) for piece in item.pieces if piece]
        elif isinstance(item, Reasoning):
            chunks += [ChunkResponse(reasoning=piece) for piece in item.pieces if piece]
    return chunks


def turn_outcome(turn: Turn) -> ExpectedOutcome:
    """The expected outcome, from the turn's own values (independent of any handler)."""
    calls = []
    for item in turn.items:
        if isinstance(item, Call):
            arguments = json.loads(item.arguments) if item.arguments.strip() else {}
            calls.append(ExpectedCall(item.name, item.call_id, arguments, item.arguments))
    text = "".join(item.text for item in turn.items if isinstance(item, Text))
    reasoning = "".join(item.text for item in turn.items if isinstance(item, Reasoning))
    return ExpectedOutcome(tuple(calls), text, reasoning)


def scenarios(*, max_items: int = 6, with_reasoning: bool = True) -> st.SearchStrategy[Scenario]:
    """Generated scenarios: a logical turn as chunks, with its expected outcome."""
    return logical_turns(max_items=max_items, with_reasoning=with_reasoning).map(
        lambda turn: Scenario("generated", tuple(turn_to_chunks(turn)), turn_outcome(turn), source="generated")
    )


# -- the whole input space -------------------------------------------------------------------------

# Argument keys that collide with names frameworks reserve for themselves (pydantic settings,
# **kwargs, bound methods, discriminators, ids).
RESERVED_KEYS = ("settings", "kwargs", "self", "type", "id", "name")
# Valid JSON that is not an arguments object (D05, A12): a handler must reject every one.
NOT_OBJECTS = ("null", "[]", "false", "0", '""', '"a string"', "[1, 2]", "true")
# How a call's arguments may be broken; "valid" first so shrinking ends on a valid call.
ARGUMENT_KINDS = ("valid", "empty", "truncated", "not_an_object", "two_objects", "garbage")


@dataclass
class _GenCall:
    """One call of a generated turn: what the model said, and how the wire delivers it."""

    name: str | None
    call_id: str | None
    arguments_text: str
    arguments: dict[str, Any] | None
    pieces: list[str]
    name_pieces: list[str]
    id_position: int = 0  # which of the call's deltas (name fragments included) carries the id first
    id_every_delta: bool = False
    name_every_delta: bool = False
    empty_continuations: bool = False


@dataclass
class _Atom:
    kind: str  # "reasoning" | "content" | "tool"
    text: str = ""
    call: int = -1  # position of the call in wire order (tool atoms)
    delta: ToolCallDelta | None = None
    grows_name: bool = False  # carries a fragment of a name still being built


@dataclass
class _Plan:
    calls: list[_GenCall] = field(default_factory=list)
    atoms: list[_Atom] = field(default_factory=list)


# Strategies built once: building a recursive strategy on every draw costs more than the draw.
_RESERVED_OBJECTS = st.dictionaries(
    st.sampled_from(RESERVED_KEYS), st.one_of(st.integers(0, 9), st.text(max_size=4)), min_size=1, max_size=3
)
_VALUES = st.one_of(
    st.dictionaries(st.text(max_size=8), json_values(max_leaves=6), max_size=4),
    argument_objects(),
    st.just({"a": {}, "b": []}),
    st.just({}),
)
_GARBAGE = st.sampled_from(["{oops", "not json", "{'a': 1}", '{"a": }'])


def _arguments(draw: st.DrawFn) -> tuple[str, dict[str, Any] | None]:
    """The argument text of one call and what it must parse to (None: the call must be rejected)."""
    kind = draw(st.sampled_from(ARGUMENT_KINDS))
    if kind == "empty":
        return "", {}
    value = draw(_VALUES)
    if draw(st.booleans()):
        value = {**value, **draw(_RESERVED_OBJECTS)}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if kind == "valid":
        return text, value
    if kind == "truncated":
        return text[: draw(st.integers(1, max(1, len(text) - 1)))], None
    if kind == "not_an_object":
        return draw(st.sampled_from(NOT_OBJECTS)), None
    if kind == "two_objects":
        return text + json.dumps({"again": 1}), None
    return draw(_GARBAGE), None


def _split(draw: st.DrawFn, text: str, max_pieces: int = 6) -> list[str]:
    """``text`` cut at arbitrary points (no empty pieces; one piece for an empty text)."""
    if len(text) <= 1:
        return [text]
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=max_pieces - 1))))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]


def _draw_call(draw: st.DrawFn, position: int) -> _GenCall:
    name_kind = draw(st.sampled_from(["whole", "fragmented", "never"]))
    name = None if name_kind == "never" else draw(st.sampled_from(TOOL_NAMES))
    text, arguments = _arguments(draw)
    if name is None:
        arguments = None
    call_id = draw(st.one_of(st.just(f"call_{position}"), st.none(), st.just(f"toolu_{position}x")))
    pieces = _split(draw, text)
    name_pieces = [name] if name and name_kind == "whole" else (_split(draw, name, 3) if name else [])
    return _GenCall(
        name=name,
        call_id=call_id,
        arguments_text=text,
        arguments=arguments,
        pieces=pieces,
        name_pieces=name_pieces,
        id_position=draw(st.integers(0, len(pieces) + max(len(name_pieces) - 1, 0) - 1))
        if call_id and draw(st.booleans())
        else 0,
        id_every_delta=draw(st.booleans()) if call_id else False,
        name_every_delta=draw(st.booleans()) if name_kind == "whole" else False,
        empty_continuations=draw(st.booleans()),
    )


def _call_deltas(call: _GenCall, index: int) -> list[ToolCallDelta]:
    """The deltas of one call, in order: name fragments first (before its arguments), then argument pieces."""
    deltas: list[ToolCallDelta] = []
    name_lead = call.name_pieces[:-1] if len(call.name_pieces) > 1 else []
    for fragment in name_lead:
        deltas.append(ToolCallDelta(index, name=fragment))
    last_name = call.name_pieces[-1] if call.name_pieces else None
    for position, piece in enumerate(call.pieces):
        first = position == 0
        deltas.append(ToolCallDelta(index, None, last_name if first else None, piece or None))
    out = []
    id_at = min(call.id_position, len(deltas) - 1)
    for position, delta in enumerate(deltas):
        call_id: str | None = None
        if call.call_id and (position == id_at or (call.id_every_delta and position > id_at)):
            call_id = call.call_id
        elif position > 0 and call.empty_continuations:
            call_id = ""
        name = delta.name
        if call.name_every_delta and call.name and position > 0:
            name = call.name
        elif name is None and position > 0 and call.empty_continuations:
            name = ""
        out.append(ToolCallDelta(delta.index, call_id, name, delta.arguments_delta))
    return out


def _indices(draw: st.DrawFn, calls: list[_GenCall]) -> tuple[list[int], bool]:
    """The wire index of each call, and whether they all share index 0 (each with its own id)."""
    distinct_ids = all(c.call_id for c in calls) and len({c.call_id for c in calls}) == len(calls)
    schemes = ["dense", "offset", "sparse"] + (["all_zero"] if len(calls) > 1 and distinct_ids else [])
    scheme = draw(st.sampled_from(schemes))
    if scheme == "dense":
        return list(range(len(calls))), False
    if scheme == "offset":
        start = draw(st.integers(1, 3))
        return [start + i for i in range(len(calls))], False
    if scheme == "sparse":
        gaps = draw(st.lists(st.integers(1, 3), min_size=len(calls), max_size=len(calls)))
        return list(itertools.accumulate(gaps, initial=draw(st.integers(0, 2))))[: len(calls)], False
    return [0] * len(calls), True


def _merge(draw: st.DrawFn, streams: list[list[_Atom]], texts: list[_Atom], interleave: bool) -> list[_Atom]:
    """One wire order: each call's atoms in order, calls first appearing in call order.

    A call's name fragments all come before the next call's first delta (a name cannot grow once
    a later call appeared); text and reasoning atoms keep their order and may fall anywhere,
    also between two deltas of an open call.
    """
    order: list[_Atom] = []
    queues = [list(s) for s in streams]
    pending_text = list(texts)
    started = 0
    while any(queues) or pending_text:
        choices: list[str] = []
        if pending_text:
            choices.append("text")
        open_calls = [i for i in range(started) if queues[i]]
        if open_calls:
            choices.append("continue")
        if started < len(queues):
            earlier_named = all(not any(a.grows_name for a in queues[i]) for i in range(started))
            if not open_calls or (interleave and earlier_named):
                choices.append("start")
        choice = draw(st.sampled_from(choices))
        if choice == "text":
            order.append(pending_text.pop(0))
        elif choice == "start":
            order.append(queues[started].pop(0))
            started += 1
        else:
            pick = open_calls[0] if not interleave else draw(st.sampled_from(open_calls))
            order.append(queues[pick].pop(0))
    return order


def _parse_expected(text: str) -> dict[str, Any] | None:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _chunks(draw: st.DrawFn, atoms: list[_Atom], several_per_chunk: bool) -> list[ChunkResponse]:
    """Group atoms into chunks in wire order: reasoning, then content, then tool deltas within a chunk."""
    rank = {"reasoning": 0, "content": 1, "tool": 2}
    chunks: list[ChunkResponse] = []
    current: dict[str, Any] = {}
    last_rank = -1
    for atom in atoms:
        index_taken = atom.delta is not None and any(d.index == atom.delta.index for d in current.get("tool", []))
        if atom.kind == "tool":
            must_split = rank["tool"] < last_rank or (index_taken and not several_per_chunk)
        else:  # text of one kind merges with the same kind right before it, never after other kinds
            must_split = rank[atom.kind] < last_rank or (atom.kind in current and last_rank != rank[atom.kind])
        if current and (must_split or draw(st.booleans())):
            chunks.append(_chunk(current))
            current, last_rank = {}, -1
        if atom.kind == "tool":
            current.setdefault("tool", []).append(atom.delta)
        else:
            current[atom.kind] = current.get(atom.kind, "") + atom.text
        last_rank = rank[atom.kind]
    if current:
        chunks.append(_chunk(current))
    add_empty: bool = draw(st.booleans())
    if chunks and add_empty:  # empty chunks must be no-ops
        chunks.insert(draw(st.integers(0, len(chunks))), ChunkResponse())
    return chunks


def _chunk(parts: dict[str, Any]) -> ChunkResponse:
    return ChunkResponse(
        content=parts.get("content", ""), reasoning=parts.get("reasoning"), tool_calls=parts.get("tool")
    )


_ENDINGS = ("finalize", "complete", "complete_with_last_delta", "truncated", "provider_error", "incomplete")


def _end(
    draw: st.DrawFn, chunks: list[ChunkResponse], ending: str, has_calls: bool
) -> tuple[list[ChunkResponse], bool]:
    """Append how the stream ends; return the chunks and whether the end is abnormal."""
    if ending == "finalize":
        return chunks, False
    if ending in ("complete", "complete_with_last_delta"):
        finish = "tool_calls" if has_calls else "stop"
        last = chunks[-1] if chunks and ending == "complete_with_last_delta" else None
        if last is not None and not last.reasoning:
            merged = ChunkResponse(
                content=last.content, tool_calls=last.tool_calls, is_complete=True, finish_reason=finish
            )
            return [*chunks[:-1], merged], False
        return [*chunks, ChunkResponse(is_complete=True, finish_reason=finish)], False
    error = {
        "truncated": ChunkResponse(finish_reason="length", error=StreamError("truncated", "finish_reason=length")),
        "provider_error": ChunkResponse(error=StreamError("provider_error", "overloaded_error: Overloaded")),
        "incomplete": ChunkResponse(error=StreamError("incomplete", "the stream ended without its terminal event")),
    }[ending]
    return [*chunks, error], True


@st.composite
def wire_scenarios(
    draw: st.DrawFn,
    *,
    with_reasoning: bool = True,
    with_errors: bool = True,
    several_deltas_per_chunk: bool = False,
    max_calls: int = 3,
) -> Scenario:
    """A wire-legal chunk stream from the whole input space, with its expected outcome (module docstring)."""
    calls = [_draw_call(draw, position) for position in range(draw(st.integers(0, max_calls)))]
    indices, all_zero = _indices(draw, calls)
    streams = []
    if all_zero:
        # Every call on index 0: only an id on each call's first delta tells them apart.
        for call in calls:
            call.id_position = 0
    for position, (call, index) in enumerate(zip(calls, indices, strict=True)):
        deltas = _call_deltas(call, index)
        growing = len(call.name_pieces)  # the lead fragments and the first argument delta
        streams.append([_Atom("tool", call=position, delta=d, grows_name=n < growing) for n, d in enumerate(deltas)])
    kinds = ["content", "reasoning"] if with_reasoning else ["content"]
    texts = [
        _Atom(kind, piece)
        for kind, text in draw(
            st.lists(st.tuples(st.sampled_from(kinds), st.text(min_size=1, max_size=12)), max_size=3)
        )
        for piece in _split(draw, text, 3)
    ]
    atoms = _merge(draw, streams, texts, interleave=not all_zero and draw(st.booleans()))
    ending = draw(st.sampled_from(_ENDINGS if with_errors else _ENDINGS[:3]))
    if ending in ("truncated", "provider_error", "incomplete") and atoms:
        atoms = atoms[: draw(st.integers(1, len(atoms)))]
    chunks, abnormal = _end(draw, _chunks(draw, atoms, several_deltas_per_chunk), ending, bool(calls))
    return Scenario("generated", tuple(chunks), _outcome(calls, atoms, abnormal, all_zero), source="generated")


def _outcome(calls: list[_GenCall], atoms: list[_Atom], abnormal: bool, all_zero: bool) -> ExpectedOutcome:
    """What the delivered stream says: only what reached the wire before it ended counts."""
    delivered: dict[int, list[str]] = {}
    named: dict[int, list[str]] = {}
    ids: dict[int, str] = {}
    for atom in atoms:
        if atom.delta is None:
            continue
        delivered.setdefault(atom.call, []).append(atom.delta.arguments_delta or "")
        if atom.delta.name and atom.delta.name != "".join(named.get(atom.call, [])):
            named.setdefault(atom.call, []).append(atom.delta.name)
        if atom.delta.call_id and atom.call not in ids:
            ids[atom.call] = atom.delta.call_id
    expected = []
    for position in sorted(delivered):
        raw = "".join(delivered[position])
        name = "".join(named.get(position, [])) or None
        arguments = None if abnormal or name is None else _parse_expected(raw)
        group = 0 if all_zero else None
        expected.append(ExpectedCall(name, ids.get(position), arguments, raw, conflict_group=group))
    text = "".join(a.text for a in atoms if a.kind == "content")
    reasoning = "".join(a.text for a in atoms if a.kind == "reasoning")
    return ExpectedOutcome(tuple(expected), text, reasoning)
