"""Re-fragmenting a chunk stream at arbitrary boundaries, as a hypothesis strategy.

A stream is flattened into wire-ordered atoms (reasoning text, content text, tool deltas, the
terminal chunk). Every string is cut at arbitrary points (empty and one-character pieces
included) and the pieces are regrouped into chunks, respecting the in-chunk order of the contract
(reasoning, then content, then tool calls). The logical stream is unchanged, so any handler must
produce the same outcome: the split-invariance property (INV-RECHUNK).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.wire.shapes import observed
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = ["describe_chunks", "refragmented"]

_ORDER = {"reasoning": 0, "content": 1, "tool": 2}


@dataclass(frozen=True)
class _Atom:
    kind: str  # reasoning | content | tool
    text: str
    delta: ToolCallDelta | None = None


def _atoms(chunks: Sequence[ChunkResponse]) -> tuple[list[_Atom], ChunkResponse | None]:
    atoms: list[_Atom] = []
    terminal: ChunkResponse | None = None
    for chunk in chunks:
        if chunk.reasoning:
            atoms.append(_Atom("reasoning", chunk.reasoning))
        if chunk.content:
            atoms.append(_Atom("content", chunk.content))
        for delta in chunk.tool_calls or ():
            atoms.append(_Atom("tool", delta.arguments_delta or "", delta))
        if chunk.is_complete or chunk.error is not None or chunk.finish_reason is not None:
            # Terminal metadata travels on a final chunk of its own; a stream with several
            # terminal markers keeps only the first (later ones are ignored by handlers anyway).
            terminal = terminal or ChunkResponse(
                is_complete=chunk.is_complete,
                usage=chunk.usage,
                finish_reason=chunk.finish_reason,
                error=chunk.error,
            )
    return atoms, terminal


def _cut(draw: st.DrawFn, text: str) -> list[str]:
    if not text:
        return [""]
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=min(len(text) + 1, 8))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def refragmented(draw: st.DrawFn, chunks: Sequence[ChunkResponse], realistic: bool = False) -> list[ChunkResponse]:
    """A strategy of chunk lists carrying the same logical stream as ``chunks``.

    ``realistic`` moves nothing a server has not been seen moving: no id later than its call's
    first delta, no interleaved calls, unless ``conformance.wire.shapes`` says servers send them.
    """
    atoms, terminal = _atoms(chunks)
    pieces = _cut_atoms(draw, atoms)
    movable = [name for name in ("call_id", "name") if not realistic or observed(_MOVED[name])]
    pieces = _move_ids_and_names_later(draw, pieces, movable)
    if not realistic or observed("interleaved_calls"):
        pieces = _interleave_calls(draw, pieces)
    result = _regrouped(draw, pieces)
    if draw(st.booleans()):  # empty chunks must be no-ops
        result.insert(draw(st.integers(0, len(result))), ChunkResponse())
    if terminal is not None:
        result.append(terminal)
    return result


def _cut_atoms(draw: st.DrawFn, atoms: Sequence[_Atom]) -> list[_Atom]:
    """Every atom cut into pieces; a call's id and name stay on its first piece."""
    pieces: list[_Atom] = []
    for atom in atoms:
        parts = _cut(draw, atom.text)
        for position, part in enumerate(parts):
            if atom.delta is None:
                if part:
                    pieces.append(_Atom(atom.kind, part))
                continue
            first = position == 0
            pieces.append(
                _Atom(
                    "tool",
                    part,
                    ToolCallDelta(
                        atom.delta.index,
                        atom.delta.call_id if first else None,
                        atom.delta.name if first else None,
                        part if (part or atom.delta.arguments_delta is not None) else None,
                    ),
                )
            )
    return pieces


def _regrouped(draw: st.DrawFn, pieces: Sequence[_Atom]) -> list[ChunkResponse]:
    """The pieces, in order, grouped into chunks at drawn (and at required) boundaries."""
    result: list[ChunkResponse] = []
    current: dict[str, Any] = {}
    last_order = -1
    for piece in pieces:
        order = _ORDER[piece.kind]
        must_split = order < last_order or (order < 2 and piece.kind in current and last_order != order)
        same_index = piece.delta is not None and any(
            d.index == piece.delta.index for d in current.get("tool_calls", [])
        )
        # Pieces that continue what the chunk already holds may join it (text to text, an argument
        # fragment to its own call's delta); shrinking prefers that, so counterexamples end on few chunks.
        mergeable = (order < 2 and piece.kind in current) or (same_index and _continues(current, piece))
        if current and (must_split or (same_index and not mergeable) or draw(st.booleans())):
            result.append(_build(current))
            current, last_order = {}, -1
            mergeable = False
        if piece.kind == "tool" and mergeable:
            _append_to_delta(current, piece)
        elif piece.kind == "tool":
            current.setdefault("tool_calls", []).append(piece.delta)
        else:
            current[piece.kind] = current.get(piece.kind, "") + piece.text
        last_order = order
    if current:
        result.append(_build(current))
    return result


# The shape each move makes (``conformance.wire.shapes``).
_MOVED = {"call_id": "id_late", "name": "name_late"}


def _move_ids_and_names_later(
    draw: st.DrawFn, pieces: list[_Atom], movable: Sequence[str] = ("call_id", "name")
) -> list[_Atom]:
    """Sometimes move a call's id (or name) from its first delta to a later one (B04, A08)."""
    if not movable:
        return pieces
    pieces = list(pieces)
    for positions, first_on_its_index in _calls_of(pieces):
        if len(positions) < 2 or not draw(st.booleans()):
            continue
        first, later = positions[0], draw(st.sampled_from(positions[1:]))
        head, tail = pieces[first].delta, pieces[later].delta
        assert head is not None and tail is not None
        field_name = draw(st.sampled_from(list(movable)))
        # A second call on an occupied index is told apart by the id on its first delta: without
        # it, that delta would continue the call before it (a different stream, not a late id).
        if field_name == "call_id" and not first_on_its_index:
            continue
        value = getattr(head, field_name)
        # Moving is only meaning-preserving when no later delta of this call has its own value
        # for the field (a second, different id is a different stream, not a late id).
        if value is None or any(getattr(pieces[p].delta, field_name) is not None for p in positions[1:]):
            continue
        moved_head = ToolCallDelta(
            head.index,
            None if field_name == "call_id" else head.call_id,
            None if field_name == "name" else head.name,
            head.arguments_delta,
        )
        moved_tail = ToolCallDelta(
            tail.index,
            value if field_name == "call_id" else tail.call_id,
            value if field_name == "name" else tail.name,
            tail.arguments_delta,
        )
        pieces[first] = _Atom("tool", pieces[first].text, moved_head)
        pieces[later] = _Atom("tool", pieces[later].text, moved_tail)
    return pieces


def _calls_of(pieces: Sequence[_Atom]) -> list[tuple[list[int], bool]]:
    """Each call's piece positions, read with the checks' own rule (``stream_shapes.call_positions``:
    an index, until a different non-empty id arrives on it), and whether it is the first call on its
    index. Grouping by index alone moved a call's name onto the next call sharing its index."""
    from conformance.wire.stream_shapes import call_positions

    by_index: dict[int, list[int]] = {}
    ids: dict[int, set[str]] = {}
    for position, piece in enumerate(pieces):
        if piece.delta is not None:
            by_index.setdefault(piece.delta.index, []).append(position)
            if piece.delta.call_id:
                ids.setdefault(piece.delta.index, set()).add(piece.delta.call_id)
    if all(len(found) < 2 for found in ids.values()):  # one call per index: the common case, read fast
        return [(positions, True) for positions in by_index.values()]
    tool_positions = [position for position, piece in enumerate(pieces) if piece.delta is not None]
    one_per_chunk = [ChunkResponse(tool_calls=[pieces[position].delta]) for position in tool_positions]  # type: ignore[list-item]
    calls = [[tool_positions[chunk] for chunk, _ in call] for call in call_positions(one_per_chunk)]
    seen_indices: set[int] = set()
    result = []
    for call in calls:
        delta = pieces[call[0]].delta
        assert delta is not None
        result.append((call, delta.index not in seen_indices))
        seen_indices.add(delta.index)
    return result


def _interleave_calls(draw: st.DrawFn, pieces: list[_Atom]) -> list[_Atom]:
    """Sometimes interleave the deltas of a run of parallel calls (B02).

    Each call keeps its own order, calls first appear in their original order (rule R10), and a
    call whose name is still to come is not overtaken by a later call's first delta (a name cannot
    grow once a later call appeared).
    """
    if not draw(st.booleans()):
        return pieces
    result: list[_Atom] = []
    run: list[_Atom] = []

    def flush() -> None:
        order = list(dict.fromkeys(atom.delta.index for atom in run if atom.delta is not None))
        queues = {index: [a for a in run if a.delta is not None and a.delta.index == index] for index in order}
        started = 0  # how many of the calls have appeared so far
        while any(queues.values()):
            open_calls = [i for i in order[:started] if queues[i]]
            name_pending = any(a.delta is not None and a.delta.name for i in order[:started] for a in queues[i])
            can_start = started < len(order) and (not open_calls or not name_pending)
            index = draw(st.sampled_from(open_calls + ([order[started]] if can_start else [])))
            if started < len(order) and index == order[started]:
                started += 1
            result.append(queues[index].pop(0))
        run.clear()

    for piece in pieces:
        if piece.kind == "tool":
            run.append(piece)
        else:
            flush()
            result.append(piece)
    flush()
    return result


def _continues(current: dict[str, Any], piece: _Atom) -> bool:
    """The piece only adds argument text to the chunk's last delta of the same call."""
    deltas = current.get("tool_calls", [])
    assert piece.delta is not None
    return (
        bool(deltas)
        and deltas[-1].index == piece.delta.index
        and piece.delta.call_id is None
        and piece.delta.name is None
    )


def _append_to_delta(current: dict[str, Any], piece: _Atom) -> None:
    deltas = current["tool_calls"]
    last = deltas[-1]
    assert piece.delta is not None
    text = (last.arguments_delta or "") + (piece.delta.arguments_delta or "")
    deltas[-1] = ToolCallDelta(last.index, last.call_id, last.name, text or last.arguments_delta)


def _build(parts: dict[str, Any]) -> ChunkResponse:
    return ChunkResponse(
        content=parts.get("content", ""),
        reasoning=parts.get("reasoning"),
        tool_calls=parts.get("tool_calls"),
    )


def describe_chunks(chunks: Sequence[ChunkResponse]) -> str:
    """Render a chunk list readably: ``content 'Hi' | tool[0 id=c name=f] '{"a": 1' | ...``."""
    rendered: list[str] = []
    for chunk in chunks:
        parts: list[str] = []
        if chunk.reasoning:
            parts.append(f"reasoning {chunk.reasoning!r}")
        if chunk.content:
            parts.append(f"content {chunk.content!r}")
        for delta in chunk.tool_calls or ():
            tags = [str(delta.index)]
            if delta.call_id is not None:
                tags.append(f"id={delta.call_id!r}")
            if delta.name is not None:
                tags.append(f"name={delta.name!r}")
            parts.append(f"tool[{' '.join(tags)}] {delta.arguments_delta!r}")
        if chunk.finish_reason:
            parts.append(f"finish={chunk.finish_reason!r}")
        if chunk.error is not None:
            parts.append(f"error={chunk.error.kind}")
        if chunk.is_complete:
            parts.append("is_complete")
        rendered.append(" + ".join(parts) if parts else "(empty chunk)")
    return " | ".join(rendered)
