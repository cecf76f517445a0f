"""Generated handler scenarios: a logical turn as the ``ChunkResponse`` stream a correct converter gives.

The expected outcome is computed from the generated turn's own values, never from a handler.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.turns.generate import logical_turns
from conformance.turns.model import Call, Reasoning, Text, Turn
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = ["scenarios", "turn_outcome", "turn_to_chunks"]


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
