"""Simpler turns than a failing generated one: how a stack finding's counterexample gets readable.

A generated turn that fails a stack is drawn with hypothesis's hardest strings (control
characters, private-use code points, deep JSON): the failure rarely needs them. Each stack run
costs a real client's work, so there is no hypothesis shrinking here; instead a short greedy walk
over simpler turns (``simpler_turns``), each kept when the stack still fails the same way:
an item left out, a text or argument string made plain ASCII with its cut points kept, its pieces
merged, an id given to a call that had none, a wire dialect left out. The ending stays as drawn.
Every step is a whole turn again, whose expected outcome is derived from it afresh
(``conformance.stack.generated.generated_body``): a simpler turn never inherits a stale expectation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace

from conformance.turns.model import Call, Reasoning, Text, Turn, split_evenly

__all__ = ["MAX_TRIES", "simpler_turns", "simplest_failing"]

# At most this many simpler turns are run for one finding (each is a run of the stack).
MAX_TRIES = 40

_PLAIN_ARGUMENTS = '{"city": "Paris"}'


def _plain(pieces: tuple[str, ...]) -> tuple[str, ...]:
    """The same cut points over plain ASCII: every piece as many ``a`` s (at most 3), empty ones kept."""
    return tuple("a" * min(len(piece), 3) for piece in pieces)


def _parses(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _plain_arguments(call: Call) -> tuple[str, ...]:
    """Plain argument text of the same kind (one object, or a cut-short one) in as many pieces."""
    text = _PLAIN_ARGUMENTS if _parses(call.arguments) else _PLAIN_ARGUMENTS[: max(1, len(_PLAIN_ARGUMENTS) - 4)]
    count = max(1, len(call.argument_pieces))
    size = max(1, -(-len(text) // count))
    return split_evenly(text, size)


def _item_variants(item: Text | Reasoning | Call | object) -> Iterator[object]:
    """Simpler versions of one item, simplest first."""
    if isinstance(item, (Text, Reasoning)):
        plain = _plain(item.pieces)
        if plain != item.pieces:
            yield replace(item, pieces=plain)
        if len(item.pieces) > 1:
            yield replace(item, pieces=(item.text,))
    elif isinstance(item, Call):
        if item.call_id is None:  # an id as servers send one: a failure that needs none keeps it
            yield replace(item, call_id="call_1")
        plain = _plain_arguments(item)
        if plain != item.argument_pieces and item.arguments != "".join(plain):
            yield replace(item, argument_pieces=plain)
        if len(item.argument_pieces) > 1:
            yield replace(item, argument_pieces=(item.arguments,))


def simpler_turns(turn: Turn, dialects: tuple[str, ...]) -> Iterator[tuple[Turn, tuple[str, ...]]]:
    """Turns one step simpler than ``turn`` (rendered with ``dialects``), the biggest steps first."""
    items = turn.items
    for position in range(len(items)):
        yield replace(turn, items=items[:position] + items[position + 1 :]), dialects
    for position, item in enumerate(items):
        for variant in _item_variants(item):
            yield replace(turn, items=(*items[:position], variant, *items[position + 1 :])), dialects  # type: ignore[arg-type]
    for dialect in dialects:
        yield turn, tuple(other for other in dialects if other != dialect)


def simplest_failing(
    turn: Turn, dialects: tuple[str, ...], fails_the_same_way: Callable[[Turn, tuple[str, ...]], bool]
) -> tuple[Turn, tuple[str, ...]]:
    """The simplest turn reached by taking every simpler step after which ``fails_the_same_way``
    still holds, within ``MAX_TRIES`` tries."""
    tries = 0
    improved = True
    while improved and tries < MAX_TRIES:
        improved = False
        for candidate, candidate_dialects in simpler_turns(turn, dialects):
            if tries >= MAX_TRIES:
                break
            tries += 1
            if fails_the_same_way(candidate, candidate_dialects):
                turn, dialects, improved = candidate, candidate_dialects, True
                break
    return turn, dialects
