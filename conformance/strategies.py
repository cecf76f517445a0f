"""Public hypothesis strategies for streaming tool calls.

Build your own properties from the same generators the suite uses::

    from hypothesis import given
    from conformance import strategies as tcs

    @given(tcs.scenarios())
    def test_my_handler(scenario):
        ...  # scenario.chunks to feed, scenario.expected to compare with

Layers, each usable on its own:

* ``argument_objects()``: JSON objects for tool arguments (unicode incl. astral characters and
  surrogate pairs, escapes, quotes and backslashes, deep nesting, big integers, empty objects);
* ``logical_turns()``: what the model "said" (text, reasoning, parallel calls) as a ``render.Turn``;
* ``scenarios()``: a turn as a ``ChunkResponse`` stream with its expected outcome, computed from
  the generated values (never from a handler);
* ``wire_scenarios()``: streams from the whole input space the suite searches (sparse and shared
  indices, late ids and names, reserved argument keys, every way a stream ends), with their
  expected outcomes; ``conformance.handler.violations(factory, scenario)`` judges one of them by
  every check, so a property over it can run under HypoFuzz;
* ``fragmentations(chunks)``: the same logical stream cut anywhere, with parallel calls
  interleaved, ids and names moved to later deltas, text and tool deltas sharing chunks;
* ``wire_bodies(api)`` / ``dialect_bodies()``: a turn rendered as a provider SSE body (OpenAI-compatible
  dialects included), and ``byte_splits(body)``: that body cut at arbitrary byte offsets;
* ``text_format_responses(fmt)``: prose and calls rendered in the xml / json / sentinel text formats.

All of them shrink towards short, plain inputs, so a failure is reported with the smallest split.
"""

from __future__ import annotations

from collections.abc import Sequence as _Sequence

from hypothesis import strategies as st

from conformance.handler.fragment import refragmented as _refragmented
from conformance.handler.generate import scenarios, wire_scenarios
from conformance.turns.generate import (
    argument_objects,
    byte_splits,
    dialect_bodies,
    json_values,
    logical_turns,
    text_format_responses,
    wire_bodies,
)
from reference_impl.types import ChunkResponse as _ChunkResponse

__all__ = [
    "argument_objects",
    "byte_splits",
    "dialect_bodies",
    "fragmentations",
    "json_values",
    "logical_turns",
    "scenarios",
    "text_format_responses",
    "wire_bodies",
    "wire_scenarios",
]


def fragmentations(chunks: _Sequence[_ChunkResponse]) -> st.SearchStrategy[list[_ChunkResponse]]:
    """The same logical stream re-cut anywhere: parallel calls interleaved, ids and names moved later."""
    return _refragmented(chunks)
