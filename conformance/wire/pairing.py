"""Which of a target's calls stands for which call of the stream: one rule for every comparison.

The outcome comparison (``conformance.wire.replay.compare_outcomes``: converters, stacks, the
corpus) and the handler checks (``CheckContext.matches``) both judge pairs of calls, so a wrong
pair blames the wrong call, or the wrong check (a concatenated name read as swapped arguments).

1. A call the provider gave an id pairs with the first output call carrying that id; where it is
   known which id each output call announced when it started (a handler's START), one that started
   as another call of the stream comes last (an END that names another call's id does not take
   that call's place; a START without an id, or with an id the target minted, is no other call's).
   When the provider gave several calls the same id, nothing on the wire says which output is
   which: one that says what the call says (``agrees``: its name and arguments) comes first, so two
   such calls run right in another order are not reported as each other's wrong arguments.
2. Every other call pairs by wire position: the k-th of them (in wire order) with the k-th
   unclaimed output call, in the order the output calls first appeared (unclaimed: carrying no
   id the provider gave any call of the stream).

Never by name, nor by whether the arguments parse: those are what the call's own findings are
about. A call whose provider id no output carries either lost its id (its output is still there,
without it) or was lost. When calls are missing (fewer unclaimed outputs than calls to pair), the
calls with ids are taken as the lost ones before any id-less call: their missing id already says
the target mishandled them, so a lost call is one finding and the id-less calls after it are not
shifted onto each other's outputs. Otherwise the order decides: among equal choices, each call
pairs with the earliest output it can (two calls merged into one output: the first keeps it).

When chunk positions are known (a handler), causality settles more: an output that started before
a call first appeared on the wire is not that call's (a left-over part of an earlier call, under
an id of its own). Calls lost without an id in the middle of the stream still shift the id-less
calls after them onto each other: nothing on the wire says which one was lost.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

__all__ = ["pair_calls"]


def pair_calls(
    wanted: Sequence[str | None],
    found: Sequence[Collection[str]],
    *,
    started: Sequence[int | None] | None = None,
    first_seen: Sequence[int | None] | None = None,
    announced: Sequence[str | None] | None = None,
    agrees: Callable[[int, int], bool] | None = None,
) -> list[int | None]:
    """For each call of the stream, the position in ``found`` of the output call that stands for it, or None.

    ``wanted`` holds each call's provider id (None: the provider gave none), in wire order;
    ``found`` each output call's ids (every id under which a consumer finds it), in the order the
    output calls first appeared. ``started`` (per output call) and ``first_seen`` (per call of the
    stream) are chunk positions where known: when the output call started, and when the call first
    appeared on the wire (None: unknown). ``announced`` (per output call) is the id it announced when
    it started, where known. ``agrees(call, output)``: whether the output says what the call says,
    asked only among the outputs carrying an id the provider gave several calls.

    A call whose provider id no output carries may be given the output call holding its slot (which
    then does not carry that id): whether to count it as that call is the caller's choice.
    """
    pairs: list[int | None] = [None] * len(wanted)
    taken: set[int] = set()
    provider_ids = {call_id for call_id in wanted if call_id}
    shared = {call_id for call_id in provider_ids if sum(1 for other in wanted if other == call_id) > 1}
    for position, call_id in enumerate(wanted):
        if not call_id:
            continue
        carriers = [j for j, ids in enumerate(found) if j not in taken and call_id in ids]
        if call_id in shared and agrees is not None:
            carriers.sort(key=lambda j: not agrees(position, j))  # stable: otherwise in output order
        # An output that started as another call of the stream (its START announced another
        # provider id) comes last; an id the target minted itself is no other call's.
        others = provider_ids - {call_id}
        carrier = next((j for j in carriers if announced is None or announced[j] not in others), None)
        if carrier is None:
            carrier = carriers[0] if carriers else None
        if carrier is not None:
            pairs[position] = carrier
            taken.add(carrier)
    slots = [j for j, ids in enumerate(found) if j not in taken and not provider_ids.intersection(ids)]
    to_pair = [position for position in range(len(wanted)) if pairs[position] is None]

    def possible(call: int, slot: int) -> bool:
        # Causality: an output that started before the call first appeared on the wire is not its.
        begun = started[slots[slot]] if started is not None else None
        seen = first_seen[to_pair[call]] if first_seen is not None else None
        return begun is None or seen is None or begun >= seen

    aligned = _align([not wanted[position] for position in to_pair], len(slots), possible)
    for call, slot in enumerate(aligned):
        if slot is not None:
            pairs[to_pair[call]] = slots[slot]
    return pairs


def _align(idless: Sequence[bool], slots: int, possible: Callable[[int, int], bool]) -> list[int | None]:
    """The order-keeping pairing of calls with slots that pairs the most id-less calls, then the most
    others, and among those the one that pairs each call with the earliest slot it can have.

    ``best[i][j]``: how many (id-less, other) calls ``calls[i:]`` pair with ``slots[j:]``.
    """
    calls = len(idless)
    if slots >= calls and all(possible(k, k) for k in range(calls)):
        return list(range(calls))  # nothing lost: the k-th with the k-th (what the search below finds, in linear time)
    best = [[(0, 0)] * (slots + 1) for _ in range(calls + 1)]
    for i in range(calls - 1, -1, -1):
        for j in range(slots - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1], _paired(best, idless, possible, i, j))
    aligned: list[int | None] = [None] * calls
    i = j = 0
    while i < calls and j < slots:
        if _paired(best, idless, possible, i, j) == best[i][j]:
            aligned[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] == best[i][j]:
            i += 1  # the call is lost
        else:
            j += 1  # the slot stands for no call of the stream
    return aligned


def _paired(
    best: list[list[tuple[int, int]]], idless: Sequence[bool], possible: Callable[[int, int], bool], i: int, j: int
) -> tuple[int, int]:
    """The score of pairing call ``i`` with slot ``j`` (below any real score when they cannot pair)."""
    if not possible(i, j):
        return (-1, -1)
    plain, other = best[i + 1][j + 1]
    return (plain + 1, other) if idless[i] else (plain, other + 1)
