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

Some shapes are drawn on purpose because real libraries fail on them and chance alone rarely
meets them: a second id on an occupied index whose merged arguments still parse (a no-argument
call, then another call on index 0), ``finish_reason="stop"`` on a turn with tool calls, and,
for targets that render chunks to an OpenAI-compatible wire, the byte-level dialects
(``no_index``, ``null_index``, ``entry_without_function``, ``null_content_first_chunk``).

``realistic=True`` draws only shapes a named server has been seen sending (the reviewed list in
``conformance.wire.shapes``); every realistic draw is checked against it.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.turns.generate import TOOL_NAMES, argument_objects, json_values, logical_turns
from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.wire.shapes import observed
from conformance.wire.stream_shapes import RESERVED_KEYS, stream_realism
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta

__all__ = ["WIRE_DIALECTS", "scenarios", "turn_outcome", "turn_to_chunks", "wire_scenarios"]


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
_ARGUMENT_KIND = st.one_of(st.just("valid"), st.sampled_from(ARGUMENT_KINDS))


def _allowed(shape: str, realistic: bool) -> bool:
    """Whether a draw may produce ``shape``: always, or (realistic) when a server was seen sending it."""
    return not realistic or observed(shape)


def _arguments(draw: st.DrawFn, realistic: bool = False) -> tuple[str, dict[str, Any] | None]:
    """The argument text of one call and what it must parse to (None: the call must be rejected)."""
    # Half the calls are valid: they are the ones that run, where a lost or altered argument shows.
    kind = draw(_ARGUMENT_KIND)
    if kind == "empty":
        return "", {}
    if kind == "not_an_object" and not _allowed("arguments_not_an_object", realistic):
        # No server was seen sending non-object argument text; a null or missing `arguments` is a
        # call without arguments (arguments_empty).
        return "", {}
    value = draw(_VALUES)
    if draw(st.booleans()) and _allowed("reserved_argument_keys", realistic):
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


def _draw_call(draw: st.DrawFn, position: int, realistic: bool = False) -> _GenCall:
    kinds = ["whole", "fragmented", "never"] if _allowed("name_fragmented", realistic) else ["whole", "never"]
    name_kind = draw(st.sampled_from(kinds))
    name = None if name_kind == "never" else draw(st.sampled_from(TOOL_NAMES))
    text, arguments = _arguments(draw, realistic)
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
        if call_id and _allowed("id_late", realistic) and draw(st.booleans())
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
    schemes = ["dense", "offset", "sparse"] + (["all_zero"] if len(calls) > 1 else [])
    scheme = draw(st.sampled_from(schemes))
    if scheme == "dense":
        return list(range(len(calls))), False
    if scheme == "offset":
        start = draw(st.integers(1, 3))
        return [start + i for i in range(len(calls))], False
    if scheme == "sparse":
        gaps = draw(st.lists(st.integers(1, 3), min_size=len(calls), max_size=len(calls)))
        return list(itertools.accumulate(gaps, initial=draw(st.integers(0, 2))))[: len(calls)], False
    # Every call on index 0 (Ollama's OpenAI-compatible API): only an id on each call's first delta
    # tells them apart, so every call gets its own.
    for position, call in enumerate(calls):
        call.call_id = call.call_id or f"call_{position}"
    return [0] * len(calls), True


def _merge(
    draw: st.DrawFn, streams: list[list[_Atom]], texts: list[_Atom], interleave: bool, text_in_calls: bool = True
) -> list[_Atom]:
    """One wire order: each call's atoms in order, calls first appearing in call order.

    A call's name fragments all come before the next call's first delta (a name cannot grow once
    a later call appeared); text and reasoning atoms keep their order and may fall anywhere, also
    between two deltas of an open call (unless ``text_in_calls`` is False).
    """
    order: list[_Atom] = []
    queues = [list(s) for s in streams]
    pending_text = list(texts)
    started = 0
    while any(queues) or pending_text:
        choices: list[str] = []
        open_calls = [i for i in range(started) if queues[i]]
        if pending_text and (text_in_calls or not open_calls):
            choices.append("text")
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


_ENDINGS = (
    "finalize",
    "complete",
    "complete_with_last_delta",
    "complete_stop",
    "truncated",
    "provider_error",
    "incomplete",
)
_NORMAL_ENDINGS = _ENDINGS[:4]


def _end(
    draw: st.DrawFn, chunks: list[ChunkResponse], ending: str, has_calls: bool
) -> tuple[list[ChunkResponse], bool]:
    """Append how the stream ends; return the chunks and whether the end is abnormal."""
    if ending == "finalize":
        return chunks, False
    if ending in ("complete", "complete_with_last_delta", "complete_stop"):
        # "complete_stop": finish_reason "stop" although the turn made tool calls (Gemini, vLLM,
        # OpenAI with a named tool_choice): the calls are no less real.
        finish = "tool_calls" if has_calls and ending != "complete_stop" else "stop"
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


# Byte-level dialects of the OpenAI-compatible Chat Completions wire a stream may be rendered in
# (``Scenario.wire_dialects``), for targets that read that wire (``Capabilities.wire_dialects``).
WIRE_DIALECTS = ("no_index", "null_index", "entry_without_function", "null_content_first_chunk")


def _merged_arguments_parse(draw: st.DrawFn, calls: list[_GenCall], realistic: bool) -> None:
    """Two calls on one index whose argument texts, merged, still parse (drawn on purpose: a handler
    that ignores the second id runs one merged call and loses the other, and nothing fails to parse).

    The first call's text is a prefix of one valid object and the second's the rest; the plain case
    is an empty prefix: a no-argument call, then another call on the same index.
    """
    first = draw(st.integers(0, len(calls) - 2))
    whole = json.dumps(draw(_VALUES))
    split = _allowed("arguments_continue_across_ids", realistic) and draw(st.booleans())
    cut = draw(st.integers(0, len(whole))) if split else 0
    for call, text in ((calls[first], whole[:cut]), (calls[first + 1], whole[cut:])):
        if call.name is None:  # both named: each may run, so a merged call is the only way to be wrong
            call.name = draw(st.sampled_from(TOOL_NAMES))
            call.name_pieces = [call.name]
        call.arguments_text = text
        call.arguments = _parse_expected(text) if call.name else None
        call.pieces = _split(draw, text)


def _dialects(draw: st.DrawFn, calls: list[_GenCall], interleaved: bool, realistic: bool) -> frozenset[str]:
    """The wire dialects this stream can be rendered in without changing what it says."""
    allowed = [d for d in WIRE_DIALECTS if _allowed(d, realistic)]
    chosen = {d for d in allowed if d in ("null_content_first_chunk", "entry_without_function") and draw(st.booleans())}
    # Without an index only an id on each call's first delta tells a new call from a continuation.
    identified = calls and all(call.call_id and call.id_position == 0 for call in calls)
    indexless = [d for d in ("no_index", "null_index") if d in allowed]
    if identified and not interleaved and indexless and draw(st.booleans()):
        chosen.add(draw(st.sampled_from(indexless)))
    if not any(call.call_id for call in calls):
        chosen.discard("entry_without_function")
    return frozenset(chosen)


@st.composite
def wire_scenarios(
    draw: st.DrawFn,
    *,
    with_reasoning: bool = True,
    with_errors: bool = True,
    several_deltas_per_chunk: bool = False,
    max_calls: int = 3,
    realistic: bool = False,
    wire_dialects: bool = False,
) -> Scenario:
    """A wire-legal chunk stream from the whole input space, with its expected outcome (module docstring).

    ``realistic`` draws only shapes a named server has been seen sending; ``wire_dialects`` also
    draws how the stream is rendered on an OpenAI-compatible wire (``Scenario.wire_dialects``).
    """
    calls = [_draw_call(draw, position, realistic) for position in range(draw(st.integers(0, max_calls)))]
    indices, all_zero = _indices(draw, calls)
    if all_zero:
        # Every call on index 0: only an id on each call's first delta tells them apart.
        for call in calls:
            call.id_position = 0
        if draw(st.booleans()):
            _merged_arguments_parse(draw, calls, realistic)
    interleave = not all_zero and _allowed("interleaved_calls", realistic) and draw(st.booleans())
    dialects = _dialects(draw, calls, interleave, realistic) if wire_dialects else frozenset()
    streams = []
    for position, (call, index) in enumerate(zip(calls, indices, strict=True)):
        deltas = _call_deltas(call, index)
        if "entry_without_function" in dialects and call.call_id:
            # An id-only continuation: rendered as a tool_calls entry without a "function" object.
            deltas.insert(1, ToolCallDelta(index, call.call_id))
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
    atoms = _merge(draw, streams, texts, interleave, text_in_calls=_allowed("text_inside_open_call", realistic))
    ending = draw(st.sampled_from(_ENDINGS if with_errors else _NORMAL_ENDINGS))
    if ending in ("truncated", "provider_error", "incomplete") and atoms:
        atoms = atoms[: draw(st.integers(1, len(atoms)))]
    chunks, abnormal = _end(draw, _chunks(draw, atoms, several_deltas_per_chunk), ending, bool(calls))
    scenario = Scenario(
        "generated",
        tuple(chunks),
        _outcome(calls, atoms, abnormal, all_zero),
        source="generated",
        wire_dialects=dialects,
    )
    if realistic:
        # The gates above keep every theoretical shape out; this says so for every draw (the
        # reviewed list may gain a theoretical shape the gates do not know yet).
        assume(not stream_realism(scenario.chunks, dialects).theoretical)
    return scenario


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
