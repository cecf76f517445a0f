"""Which of a target's calls stands for which call of the stream: one rule for every comparison.

The outcome comparison (``conformance.wire.replay.compare_outcomes``: converters, stacks, the
corpus) and the handler checks (``CheckContext.matches``) both judge pairs of calls, so a wrong
pair blames the wrong call, or the wrong check (a concatenated name read as swapped arguments).

1. A call the provider gave an id pairs with the first output call carrying that id.
2. Every other call pairs by wire position: the k-th of them (in wire order) with the k-th
   unclaimed output call, in the order the output calls first appeared (unclaimed: carrying no
   id the provider gave any call of the stream).

Never by name, nor by whether the arguments parse: those are what the call's own findings are
about. A call whose provider id no output carries either lost its id (its output is still there,
without it) or was lost. It keeps its slot, unless calls are missing (fewer unclaimed outputs than
calls left to pair): then it is taken as one of the lost ones, so that a lost call is one finding
and the calls after it are not shifted onto each other's outputs.

When chunk positions are known (a handler), causality settles more: an output that started before
a call first appeared on the wire is not that call's (nor any later call's). It is skipped for
that call (a left-over part of an earlier call, under an id of its own), and it proves that a call
whose id was lost holds it. Calls lost without an id in the middle of the stream still shift
the calls after them onto each other: nothing on the wire says which one was lost.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["pair_calls"]


def pair_calls(
    wanted: Sequence[str | None],
    found: Sequence[Collection[str]],
    *,
    started: Sequence[int | None] | None = None,
    first_seen: Sequence[int | None] | None = None,
) -> list[int | None]:
    """For each call of the stream, the position in ``found`` of the output call that stands for it, or None.

    ``wanted`` holds each call's provider id (None: the provider gave none), in wire order;
    ``found`` each output call's ids (every id under which a consumer finds it), in the order the
    output calls first appeared. ``started`` (per output call) and ``first_seen`` (per call of the
    stream) are chunk positions where known: when the output call started, and when the call first
    appeared on the wire (None: unknown).

    A call whose provider id no output carries may be given the output call holding its slot (which
    then does not carry that id): whether to count it as that call is the caller's choice.
    """
    pairs: list[int | None] = [None] * len(wanted)
    taken: set[int] = set()
    for position, call_id in enumerate(wanted):
        if not call_id:
            continue
        carrier = next((j for j, ids in enumerate(found) if j not in taken and call_id in ids), None)
        if carrier is not None:
            pairs[position] = carrier
            taken.add(carrier)
    provider_ids = {call_id for call_id in wanted if call_id}
    slots = [j for j, ids in enumerate(found) if j not in taken and not provider_ids.intersection(ids)]
    to_pair = [position for position in range(len(wanted)) if pairs[position] is None]
    next_slot = 0
    for number, position in enumerate(to_pair):
        # An output that started before this call appeared on the wire is no call's from here on
        # (an earlier call's, under an id of its own): it stays unpaired.
        while next_slot < len(slots) and _started_before(slots[next_slot], position, started, first_seen):
            next_slot += 1
        if next_slot >= len(slots):
            break
        slot = slots[next_slot]
        later = to_pair[number + 1] if number + 1 < len(to_pair) else None
        missing = (len(to_pair) - number) - (len(slots) - next_slot)
        if wanted[position] and missing > 0 and not _started_before(slot, later, started, first_seen):
            continue  # taken as one of the lost calls: its slot goes to the next call
        pairs[position] = slot
        next_slot += 1
    return pairs


def _started_before(
    slot: int,
    position: int | None,
    started: Sequence[int | None] | None,
    first_seen: Sequence[int | None] | None,
) -> bool:
    """Whether output ``slot`` started before call ``position`` first appeared on the wire (so it is not
    that call's, nor any later call's). No later call: True (nothing after it can claim the slot)."""
    if position is None:
        return True
    begun = started[slot] if started is not None else None
    seen = first_seen[position] if first_seen is not None else None
    return begun is not None and seen is not None and begun < seen
