"""Property tests: any wire fragmentation of a logical response gives the same result (issue 2, "Tests").

Expectations come from the generated logical response (``strategies_logical``), never from the
handler; the unfragmented stream is a second, independent reference.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies_logical import (
    Fragmented,
    ReasoningItem,
    TextItem,
    ToolItem,
    canonical,
    concatenated,
    cut,
    expected_invocations,
    expected_skeleton,
    fragmentations,
    json_objects,
    lifecycle_errors,
    logical_responses,
    normalise_events,
    render_json,
    run_stream,
    segment_text,
    segments,
    skeleton,
    sort_invocation_keys,
    unfragmented,
)

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ArgumentsError,
    ChunkResponse,
    SegmentEventType,
    SegmentType,
    ToolCallDelta,
    parse_arguments,
)

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def responses_and_fragmentations(draw: st.DrawFn) -> tuple[list, Fragmented]:
    items = draw(logical_responses())
    return items, draw(fragmentations(items))


def _invocation_keys(invocations, provided_ids: set[str]) -> list[tuple[str, str | None, str]]:
    return sort_invocation_keys(
        (inv.name, inv.id if inv.id in provided_ids else None, canonical(inv.arguments)) for inv in invocations
    )


def _finish(fragmented: Fragmented):
    return run_stream(fragmented.chunks, finalize=True)


# (a) invocations ----------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_invocations_equal_the_logical_response_and_the_unfragmented_stream(case) -> None:
    items, fragmented = case
    run = _finish(fragmented)
    provided = {t.call_id for t in items if isinstance(t, ToolItem) and t.call_id is not None}

    expected = expected_invocations(items)
    assert _invocation_keys(run.invocations, provided) == expected

    reference = run_stream(unfragmented(items))
    assert _invocation_keys(reference.invocations, provided) == expected

    # Calls without a provider id still get non-empty ids that never collide with each other.
    idless = [inv.id for inv in run.invocations if inv.id not in provided]
    assert all(idless)
    assert len(set(idless)) == len(idless)
    # Invocations are the callback's and come in END order (rule 3: ENDs in START order).
    assert run.invocations == run.callback_invocations
    tool_ends = [
        e for e in run.all_events if e.segment_type is SegmentType.TOOL_CALL and e.event_type is SegmentEventType.END
    ]
    assert [e.metadata["arguments"] for e in tool_ends if "arguments" in e.metadata] == [
        inv.arguments for inv in run.invocations
    ]


# (b) text -----------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_text_and_reasoning_are_never_lost_duplicated_or_reordered(case) -> None:
    items, fragmented = case
    run = _finish(fragmented)
    fed_content = "".join(c.content for c in fragmented.chunks)
    fed_reasoning = "".join(c.reasoning or "" for c in fragmented.chunks)
    assert concatenated(run.all_events, SegmentType.TEXT) == fed_content
    assert concatenated(run.all_events, SegmentType.REASONING) == fed_reasoning
    assert fed_content == "".join(i.text for i in items if isinstance(i, TextItem))
    assert fed_reasoning == "".join(i.text for i in items if isinstance(i, ReasoningItem))


# (c) lifecycle ------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_every_segment_has_one_start_content_star_one_end(case) -> None:
    _items, fragmented = case
    run = _finish(fragmented)
    assert lifecycle_errors(run.all_events) == []
    # The three views of the event stream are one sequence.
    assert run.returned == run.all_events == run.callback_events


# (d) tool CONTENT, START metadata, and the segment structure -------------------------------


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_tool_content_is_the_argument_text(case) -> None:
    items, fragmented = case
    run = _finish(fragmented)

    tool_segments = [evs for evs in segments(run.all_events).values() if evs[0].segment_type is SegmentType.TOOL_CALL]
    got = sorted((evs[0].metadata["tool_name"], segment_text(evs)) for evs in tool_segments)
    want = sorted((t.name, t.argument_text) for t in items if isinstance(t, ToolItem))
    assert got == want

    for evs in tool_segments:
        start, end = evs[0], evs[-1]
        assert set(start.metadata) == {"tool_name", "call_id"}
        assert set(end.metadata) == {"tool_name", "call_id", "arguments"}, dict(end.metadata)
        assert json.loads(segment_text(evs).strip() or "{}") == end.metadata["arguments"]


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_fragmentation_does_not_change_the_segments(case) -> None:
    # "must give the same segments ... as the unfragmented stream": segment kinds, order, text
    # and tool content, whatever START-timing policy the handler follows.
    items, fragmented = case
    assert skeleton(_finish(fragmented).all_events) == skeleton(run_stream(unfragmented(items)).all_events)


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_segments_follow_the_specs_start_rule(case) -> None:
    # Rule 1 + rule 2 + the START rule, computed from the logical response: consecutive text of
    # one kind is one segment; a call STARTs (ending the open text segment) once its arguments
    # begin, a later call appears, or the stream ends.
    items, fragmented = case
    assert skeleton(_finish(fragmented).all_events) == expected_skeleton(items)
    assert skeleton(run_stream(unfragmented(items)).all_events) == expected_skeleton(items)


# invalid arguments never execute ------------------------------------------------------------


@st.composite
def truncated_calls(draw: st.DrawFn) -> tuple[str, list[ChunkResponse]]:
    arguments = draw(json_objects.filter(bool))
    text = draw(render_json(arguments))
    prefix = text[: draw(st.integers(1, len(text) - 1))]
    pieces = draw(cut(prefix))
    name_first = draw(st.booleans())
    deltas = [ToolCallDelta(0, "call_t", "write_file" if name_first else None, None)]
    deltas += [ToolCallDelta(0, arguments_delta=p) for p in pieces]
    if not name_first:
        deltas.append(ToolCallDelta(0, name="write_file"))
    return prefix, [ChunkResponse(tool_calls=[d]) for d in deltas]


@PROPERTY_SETTINGS
@given(truncated_calls())
def test_a_strict_prefix_of_an_object_never_yields_an_invocation(case) -> None:
    prefix, chunks = case
    run = _finish(Fragmented(chunks, False))
    assert run.invocations == []
    assert run.callback_invocations == []
    (end,) = [e for e in run.all_events if e.event_type is SegmentEventType.END]
    assert "arguments" not in end.metadata
    assert end.metadata["raw_arguments"] == prefix
    assert isinstance(end.metadata["error"], str) and end.metadata["error"]


@PROPERTY_SETTINGS
@given(json_objects.flatmap(lambda value: st.tuples(st.just(value), render_json(value))))
def test_parse_arguments_agrees_with_json_loads_and_rejects_every_strict_prefix(case) -> None:
    value, text = case
    assert canonical(parse_arguments(text)) == canonical(value)
    for end in {1, len(text) // 2, len(text) - 1}:
        if 0 < end < len(text) and text[:end].strip():
            result = parse_arguments(text[:end])
            assert isinstance(result, ArgumentsError), (text[:end], result)
            assert 0 <= result.offset <= end


@PROPERTY_SETTINGS
@given(responses_and_fragmentations())
def test_reset_then_replay_gives_the_same_result_as_a_new_handler(case) -> None:
    _items, fragmented = case
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in fragmented.chunks[: len(fragmented.chunks) // 2]:
        handler.feed(chunk)
    first_ids = {e.segment_id for e in handler.get_all_events()}
    handler.reset()
    events = []
    for chunk in fragmented.chunks:
        events.extend(handler.feed(chunk))
    events.extend(handler.finalize())
    fresh = _finish(fragmented)
    assert normalise_events(events, handler.get_all_invocations()) == normalise_events(
        fresh.all_events, fresh.invocations
    )
    assert first_ids.isdisjoint({e.segment_id for e in events})
