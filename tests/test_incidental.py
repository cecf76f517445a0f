"""The moves that leave a shape out of an input (conformance.handler.incidental) keep what it says.

A move is sound only if the stream still says the same thing (its calls, ids, names, arguments,
text, reasoning and ending): otherwise a finding shown on the moved input would be judged against
an expectation that no longer holds. Judged by the reference, which conforms on every input: it
must still conform, and still give the same invocations, on every moved input.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.handler.generate import wire_scenarios
from conformance.handler.incidental import MOVES, without_shape
from conformance.handler.runner import violations
from conformance.handler.scenarios import BUILTIN_SCENARIOS, Scenario
from conformance.wire.stream_shapes import chunk_shapes
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.types import ChunkResponse, ToolCallDelta


def _invocations(chunks: tuple[ChunkResponse, ...]) -> list[tuple[object, ...]]:
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in chunks:
        handler.feed(chunk)
    handler.finalize()
    # Ids are left to the checks: an id-less call's is minted afresh on every run.
    return [(i.name, dict(i.arguments)) for i in handler.get_all_invocations()]


def _check_every_move(scenario: Scenario) -> None:
    for shape, move in MOVES:
        moved = move(scenario.chunks)
        if moved is None:
            continue
        assert shape not in chunk_shapes(moved), (shape, scenario.name)
        assert violations(ApiToolCallStreamingResponseHandler, replace(scenario, chunks=moved)) == [], (
            shape,
            scenario.name,
        )
        if not scenario.abnormal:
            assert _invocations(moved) == _invocations(scenario.chunks), (shape, scenario.name)


@pytest.mark.parametrize("scenario", BUILTIN_SCENARIOS, ids=lambda s: s.name)
def test_every_move_keeps_what_a_built_in_scenario_says(scenario: Scenario) -> None:
    logging.disable(logging.CRITICAL)
    try:
        _check_every_move(scenario)
    finally:
        logging.disable(logging.NOTSET)


@settings(max_examples=150, database=None, suppress_health_check=list(HealthCheck), deadline=None, derandomize=True)
@given(wire_scenarios())
def test_every_move_keeps_what_a_generated_stream_says(scenario: Scenario) -> None:
    _check_every_move(scenario)


def test_a_move_says_none_when_the_input_does_not_show_its_shape() -> None:
    whole = (ChunkResponse(tool_calls=[ToolCallDelta(0, "c", "f", "{}")]), ChunkResponse(is_complete=True))
    assert all(move(whole) is None for _, move in MOVES)
    fragmented = (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "c", "f", '{"a"')]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, ": 1}")]),
    )
    assert without_shape("arguments_fragmented", fragmented) == (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "c", "f", '{"a": 1}')]),
    )


def test_calls_sharing_a_chunk_are_never_reordered() -> None:
    # One chunk, an index coming back: [0, 1, 0]. Grouped by index it would read 0, 0, 1 and change
    # which argument text is whose.
    chunk = ChunkResponse(
        tool_calls=[
            ToolCallDelta(0, "a", "f", '{"x"'),
            ToolCallDelta(1, "b", "g", "{}"),
            ToolCallDelta(0, None, None, ": 1}"),
        ]
    )
    moved = without_shape("several_calls_in_one_chunk", (chunk, ChunkResponse(is_complete=True)))
    assert moved is not None
    assert [[d.index for d in c.tool_calls or ()] for c in moved] == [[0], [1], [0], []]


def test_argument_text_after_the_end_is_never_moved_before_it() -> None:
    # A fragment fed after the finish chunk is an error of the stream (feed after the end): moved
    # before it, the call would read as whole.
    chunks = (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "a", "f", '{"x"')]),
        ChunkResponse(is_complete=True, finish_reason="tool_calls"),
        ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, ": 1}")]),
    )
    assert without_shape("arguments_fragmented", chunks) is None


def test_media_and_usage_are_kept_where_they_were() -> None:
    from reference_impl.types import TokenUsage

    usage = TokenUsage(1, 2, 3)
    chunks = (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "a", "f", '{"x"')]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, ": 1}")], usage=usage, image_urls=["i.png"]),
        ChunkResponse(image_urls=["j.png"]),
        ChunkResponse(is_complete=True),
    )
    merged = without_shape("arguments_fragmented", chunks)
    assert merged is not None and [c.usage for c in merged if c.usage] == [usage]
    assert [c.image_urls for c in merged if c.image_urls] == [["i.png"], ["j.png"]]
    assert without_shape("empty_chunk", chunks) is None  # a chunk with media is not empty
