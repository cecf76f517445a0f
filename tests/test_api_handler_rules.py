"""``ApiToolCallStreamingResponseHandler``: one or more focused tests per rule 1-8 of issue 2.

Expected values are written from the specification (and the taxonomy's wire repros), not read
back from the implementation.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import pytest
from strategies_logical import (
    concatenated,
    lifecycle_errors,
    normalise_events,
    run_stream,
    segment_text,
    segments,
)

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    HandlerFinalizedError,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    StreamError,
    ToolCallDelta,
    ToolInvocation,
)

START, CONTENT, END = SegmentEventType.START, SegmentEventType.CONTENT, SegmentEventType.END
TEXT, TOOL, REASONING = SegmentType.TEXT, SegmentType.TOOL_CALL, SegmentType.REASONING


def tc(*deltas: ToolCallDelta, **kwargs: Any) -> ChunkResponse:
    return ChunkResponse(tool_calls=list(deltas), **kwargs)


def shape(events: list[SegmentEvent]) -> list[tuple[str, str, Any]]:
    """(event type, segment type, delta or metadata) per event: readable in assertion diffs."""
    out = []
    for e in events:
        detail = e.payload["delta"] if e.event_type is CONTENT else dict(e.payload["metadata"])
        out.append((e.event_type.name, e.segment_type.name, detail))
    return out


def tool_events(events: list[SegmentEvent], event_type: SegmentEventType) -> list[SegmentEvent]:
    return [e for e in events if e.segment_type is TOOL and e.event_type is event_type]


def only_tool_end(events: list[SegmentEvent]) -> SegmentEvent:
    (end,) = tool_events(events, END)
    return end


# =============================================================================================
# Rule 1: wire order; text segments follow the stream; no text lost, duplicated or reordered
# =============================================================================================


def test_rule1_within_a_chunk_reasoning_then_content_then_tool_calls() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(
        ChunkResponse(content="text", reasoning="think", tool_calls=[ToolCallDelta(0, "c1", "f", '{"a":1}')])
    )
    assert shape(events) == [
        ("START", "REASONING", {}),
        ("CONTENT", "REASONING", "think"),
        ("END", "REASONING", {}),
        ("START", "TEXT", {}),
        ("CONTENT", "TEXT", "text"),
        ("END", "TEXT", {}),
        ("START", "TOOL_CALL", {"tool_name": "f", "call_id": "c1"}),
        ("CONTENT", "TOOL_CALL", '{"a":1}'),
    ]


def test_rule1_text_segment_ends_when_a_tool_starts_and_later_text_opens_a_new_one() -> None:
    # C04 wire repro: "A ", tool f, " B" -> TEXT("A "), TOOL(f), TEXT(" B"), never " BA ".
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(ChunkResponse(content="A "))
    events += handler.feed(tc(ToolCallDelta(0, "c1", "f", "{}")))
    events += handler.feed(ChunkResponse(content=" B"))
    events += handler.finalize()
    assert lifecycle_errors(events) == []
    groups = list(segments(events).values())
    assert [(g[0].segment_type, segment_text(g)) for g in groups] == [(TEXT, "A "), (TOOL, "{}"), (TEXT, " B")]
    first_text, tool, second_text = groups
    # The first text segment is over before the tool START; the second opens after it.
    position = {id(e): i for i, e in enumerate(events)}
    assert position[id(first_text[-1])] < position[id(tool[0])] < position[id(second_text[0])]
    assert first_text[0].segment_id != second_text[0].segment_id
    assert concatenated(events, TEXT) == "A  B"


def test_rule1_reasoning_and_text_alternate_as_separate_segments() -> None:
    run = run_stream(
        [
            ChunkResponse(reasoning="r1"),
            ChunkResponse(reasoning="r2"),
            ChunkResponse(content="c1"),
            ChunkResponse(reasoning="r3"),
            ChunkResponse(content="c2"),
            ChunkResponse(content="c3"),
        ]
    )
    groups = list(segments(run.all_events).values())
    assert [(g[0].segment_type, segment_text(g)) for g in groups] == [
        (REASONING, "r1r2"),
        (TEXT, "c1"),
        (REASONING, "r3"),
        (TEXT, "c2c3"),
    ]
    assert lifecycle_errors(run.all_events) == []


def test_rule1_reasoning_between_argument_chunks_does_not_split_the_tool_call() -> None:
    # C05 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "c1", "f", '{"a":')),
            ChunkResponse(reasoning="hmm"),
            tc(ToolCallDelta(0, arguments_delta="1}")),
        ]
    )
    tools = [g for g in segments(run.all_events).values() if g[0].segment_type is TOOL]
    assert len(tools) == 1
    assert segment_text(tools[0]) == '{"a":1}'
    assert [(i.name, i.arguments) for i in run.invocations] == [("f", {"a": 1})]
    assert concatenated(run.all_events, REASONING) == "hmm"
    assert concatenated(run.all_events, TEXT) == ""


def test_rule1_text_is_never_lost_duplicated_or_reordered_around_tool_calls() -> None:
    chunks = [
        ChunkResponse(content="Let me "),
        ChunkResponse(content="check.", reasoning="plan"),
        tc(ToolCallDelta(0, "c1", "read", '{"p": "a"}'), content=" Reading"),
        ChunkResponse(content=" a and", tool_calls=[ToolCallDelta(1, "c2", "read", '{"p": "b"}')]),
        ChunkResponse(content=" b.", reasoning="done", is_complete=True),
    ]
    run = run_stream(chunks, finalize=False)
    assert concatenated(run.all_events, TEXT) == "".join(c.content for c in chunks)
    assert concatenated(run.all_events, REASONING) == "plandone"
    assert lifecycle_errors(run.all_events) == []


def test_rule1_empty_strings_open_no_segment() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    assert handler.feed(ChunkResponse(content="", reasoning="")) == []
    assert handler.feed(ChunkResponse()) == []
    assert handler.finalize() == []


# =============================================================================================
# Rule 2: keyed by index; START when name known and arguments begin; held arguments; raw CONTENT
# =============================================================================================


def test_rule2_start_carries_tool_name_and_call_id() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(tc(ToolCallDelta(0, "call_1", "get_weather", '{"city": ')))
    (start,) = tool_events(events, START)
    assert dict(start.payload["metadata"]) == {"tool_name": "get_weather", "call_id": "call_1"}
    events = handler.feed(tc(ToolCallDelta(1, None, "get_time", "{}")))
    (start,) = tool_events(events, START)
    assert dict(start.payload["metadata"]) == {"tool_name": "get_time", "call_id": None}


def test_rule2_start_waits_for_the_name_and_the_arguments() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    assert tool_events(handler.feed(tc(ToolCallDelta(0, "call_1"))), START) == []  # id only
    assert tool_events(handler.feed(tc(ToolCallDelta(0, name="f", arguments_delta=""))), START) == []
    assert tool_events(handler.feed(tc(ToolCallDelta(0, arguments_delta=None))), START) == []
    events = handler.feed(tc(ToolCallDelta(0, arguments_delta='{"x"')))
    assert shape(events) == [
        ("START", "TOOL_CALL", {"tool_name": "f", "call_id": "call_1"}),
        ("CONTENT", "TOOL_CALL", '{"x"'),
    ]


def test_rule2_name_sent_in_pieces_before_the_arguments_is_complete_in_start() -> None:
    # A07: 'get_wea' + 'ther' must never be published as 'get_wea' or 'ther'.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_ab", "get_", None)),
            tc(ToolCallDelta(0, None, "wea", "")),
            tc(ToolCallDelta(0, None, "ther", '{"city": "Paris"}')),
        ]
    )
    (start,) = tool_events(run.all_events, START)
    assert start.payload["metadata"]["tool_name"] == "get_weather"
    assert only_tool_end(run.all_events).payload["metadata"]["tool_name"] == "get_weather"
    assert [(i.id, i.name, i.arguments) for i in run.invocations] == [("call_ab", "get_weather", {"city": "Paris"})]


def test_rule2_a_name_still_growing_when_a_later_call_appears_starts_as_it_stands() -> None:
    # The START rule: a call STARTs once its name can no longer grow, at the latest when a later
    # call appears. A name piece that arrives after that point still reaches END and the invocation.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_0", "get_", None)),
            tc(ToolCallDelta(1, "call_1", "read_file", '{"path": "a"}')),
            tc(ToolCallDelta(0, None, "weather", '{"city": "Paris"}')),
        ]
    )
    starts = [
        (e.payload["metadata"]["call_id"], e.payload["metadata"]["tool_name"])
        for e in tool_events(run.all_events, START)
    ]
    assert starts == [("call_0", "get_"), ("call_1", "read_file")]
    ends = [
        (e.payload["metadata"]["call_id"], e.payload["metadata"]["tool_name"]) for e in tool_events(run.all_events, END)
    ]
    assert ends == [("call_0", "get_weather"), ("call_1", "read_file")]
    assert [(i.id, i.name) for i in run.invocations] == [("call_0", "get_weather"), ("call_1", "read_file")]


def test_rule2_a_call_without_arguments_yet_starts_when_a_later_call_appears() -> None:
    # START "is emitted once the name can no longer grow: its arguments began, a later call
    # appeared, or the stream ended", so calls START in the order they appeared on the wire.
    handler = ApiToolCallStreamingResponseHandler()
    assert handler.feed(tc(ToolCallDelta(0, "call_0", "weather", None))) == []
    events = handler.feed(tc(ToolCallDelta(1, "call_1", "time", '{"tz":')))
    assert [e.payload["metadata"]["tool_name"] for e in tool_events(events, START)] == ["weather", "time"]
    events = handler.feed(tc(ToolCallDelta(0, arguments_delta='{"city": "NYC"}')))
    assert shape(events) == [("CONTENT", "TOOL_CALL", '{"city": "NYC"}')]


def test_rule2_arguments_before_the_name_are_held_and_released_after_start() -> None:
    # A08 wire repro: the name arrives together with more arguments.
    handler = ApiToolCallStreamingResponseHandler()
    assert handler.feed(tc(ToolCallDelta(0, "call_123", None, '{"command":'))) == []
    events = handler.feed(tc(ToolCallDelta(0, None, "write_file", ' "ls -la"}')))
    assert shape(events) == [
        ("START", "TOOL_CALL", {"tool_name": "write_file", "call_id": "call_123"}),
        ("CONTENT", "TOOL_CALL", '{"command":'),
        ("CONTENT", "TOOL_CALL", ' "ls -la"}'),
    ]
    handler.finalize()
    assert [(i.id, i.name, i.arguments) for i in handler.get_all_invocations()] == [
        ("call_123", "write_file", {"command": "ls -la"})
    ]


@pytest.mark.parametrize("arguments_delta", [None, ""])
def test_rule2_held_arguments_are_released_when_a_name_only_delta_arrives(arguments_delta: str | None) -> None:
    # The name arrives on its own delta after all the arguments: the name is now known and the
    # arguments have begun, so START (and the held CONTENT) must come with THIS feed, before the
    # text that follows: not at finalize() after that text.
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(ChunkResponse(content="A"))
    assert handler.feed(tc(ToolCallDelta(0, "call_1", None, '{"a":'))) == []
    assert handler.feed(tc(ToolCallDelta(0, None, None, "1}"))) == []
    events = handler.feed(tc(ToolCallDelta(0, None, "f", arguments_delta)))
    assert shape(events) == [
        ("END", "TEXT", {}),
        ("START", "TOOL_CALL", {"tool_name": "f", "call_id": "call_1"}),
        ("CONTENT", "TOOL_CALL", '{"a":'),
        ("CONTENT", "TOOL_CALL", "1}"),
    ]
    events = handler.feed(ChunkResponse(content="B"))
    assert shape(events) == [("START", "TEXT", {}), ("CONTENT", "TEXT", "B")]


def test_rule2_content_carries_each_raw_fragment_in_the_feed_that_received_it() -> None:
    # C07: arguments stream incrementally; fragments are raw (no re-serialisation).
    fragments = ['{"pa', 'th": "a\\', 'nb", ', '"n":', " 1.50", "}"]
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "c", "write", None)))
    for fragment in fragments:
        events = handler.feed(tc(ToolCallDelta(0, arguments_delta=fragment)))
        assert [e.payload["delta"] for e in tool_events(events, CONTENT)] == [fragment]
    events = handler.finalize()
    assert only_tool_end(events).payload["metadata"]["arguments"] == {"path": "a\nb", "n": 1.5}
    assert segment_text(tool_events(handler.get_all_events(), CONTENT)) == "".join(fragments)


def test_rule2_call_without_arguments_starts_at_its_end() -> None:
    # A10/D02: Anthropic no-argument tool: name, then only an empty partial_json.
    handler = ApiToolCallStreamingResponseHandler()
    assert tool_events(handler.feed(tc(ToolCallDelta(0, "toolu_1", "get_time", ""))), START) == []
    events = handler.finalize()
    assert shape(events) == [
        ("START", "TOOL_CALL", {"tool_name": "get_time", "call_id": "toolu_1"}),
        ("END", "TOOL_CALL", {"tool_name": "get_time", "call_id": "toolu_1", "arguments": {}}),
    ]
    assert [(i.id, i.name, dict(i.arguments)) for i in handler.get_all_invocations()] == [("toolu_1", "get_time", {})]


def test_rule2_index_is_an_opaque_key_not_a_position() -> None:
    # A03: a first call at index 1 (or 7) fabricates no phantom call at 0.
    run = run_stream(
        [ChunkResponse(content="Let me check."), tc(ToolCallDelta(7, "toolu_1", "read_file", '{"path":"a"}'))]
    )
    assert len(tool_events(run.all_events, START)) == 1
    assert [(i.id, i.name, i.arguments) for i in run.invocations] == [("toolu_1", "read_file", {"path": "a"})]


def test_rule2_interleaved_parallel_calls_are_routed_by_index() -> None:
    # B02 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "c0", "weather", '{"city":')),
            tc(ToolCallDelta(1, "c1", "time", '{"tz":')),
            tc(ToolCallDelta(0, arguments_delta='"NYC"}')),
            tc(ToolCallDelta(1, arguments_delta='"EST"}')),
        ]
    )
    assert [(i.id, i.name, i.arguments) for i in run.invocations] == [
        ("c0", "weather", {"city": "NYC"}),
        ("c1", "time", {"tz": "EST"}),
    ]
    assert lifecycle_errors(run.all_events) == []


def test_rule2_several_entries_for_one_index_in_one_chunk() -> None:
    # A21.
    run = run_stream(
        [
            tc(
                ToolCallDelta(0, "c0", "f", '{"a"'),
                ToolCallDelta(0, None, None, ": 1"),
                ToolCallDelta(1, "c1", "g", "{}"),
                ToolCallDelta(0, None, None, "}"),
            )
        ]
    )
    assert sorted((i.id, i.name, dict(i.arguments)) for i in run.invocations) == [
        ("c0", "f", {"a": 1}),
        ("c1", "g", {}),
    ]


# =============================================================================================
# Rule 3: ENDs at finalize in START order; is_complete; successful END and one invocation
# =============================================================================================


def test_rule3_tool_ends_only_at_finalize_even_when_the_prefix_parses() -> None:
    # C02: '{}' then whitespace must not END (or execute) early.
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(tc(ToolCallDelta(0, "functions.bash:15", "bash", "{}")))
    events += handler.feed(tc(ToolCallDelta(0, arguments_delta=" ")))
    events += handler.feed(tc(ToolCallDelta(0, arguments_delta="\n")))
    assert tool_events(events, END) == []
    assert handler.get_all_invocations() == []
    events = handler.finalize()
    assert len(tool_events(events, END)) == 1
    assert [(i.id, i.name, dict(i.arguments)) for i in handler.get_all_invocations()] == [
        ("functions.bash:15", "bash", {})
    ]


def test_rule3_starts_ends_and_invocations_come_in_wire_order() -> None:
    run = run_stream(
        [
            tc(ToolCallDelta(0, "c0", "first_seen", None)),  # appears first, its arguments come last
            tc(ToolCallDelta(2, "c2", "second", '{"n": 2')),
            tc(ToolCallDelta(1, "c1", "third", '{"n": 1}')),
            tc(ToolCallDelta(0, arguments_delta='{"n": 0}'), ToolCallDelta(2, arguments_delta="}")),
        ]
    )
    starts = [e.payload["metadata"]["tool_name"] for e in tool_events(run.all_events, START)]
    ends = [e.payload["metadata"]["tool_name"] for e in tool_events(run.all_events, END)]
    assert starts == ["first_seen", "second", "third"]
    assert ends == starts
    assert [i.name for i in run.invocations] == starts


def test_rule3_is_complete_ends_everything_and_behaves_as_finalized() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "c0", "f", '{"a": 1}')))
    handler.feed(tc(ToolCallDelta(1, "c1", "g", None)))  # no arguments yet
    events = handler.feed(
        ChunkResponse(content="bye", reasoning="why", is_complete=True, tool_calls=[ToolCallDelta(1, None, None, "{}")])
    )
    # The last chunk's own payload is processed (F02), then everything ends.
    assert concatenated(events, TEXT) == "bye"
    assert concatenated(events, REASONING) == "why"
    all_events = handler.get_all_events()
    assert lifecycle_errors(all_events) == []
    assert [e.payload["metadata"].get("arguments") for e in tool_events(events, END)] == [{"a": 1}, {}]
    assert [(i.id, i.name) for i in handler.get_all_invocations()] == [("c0", "f"), ("c1", "g")]
    assert handler.finalize() == []
    with pytest.raises(RuntimeError):
        handler.feed(ChunkResponse(content="late"))
    assert handler.get_all_events() == all_events


def test_rule3_is_complete_on_an_otherwise_empty_chunk() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(ChunkResponse(content="x"))
    handler.feed(tc(ToolCallDelta(0, "c", "f", "{}")))
    events = handler.feed(ChunkResponse(is_complete=True))
    assert [e.event_type for e in events] == [END]  # the tool (the text already ended at START)
    assert lifecycle_errors(handler.get_all_events()) == []
    assert handler.finalize() == []


def test_rule3_successful_end_metadata_and_exactly_one_invocation() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "call_1", "lookup", '{"q": ["x", {"y": null}]}')))
    events = handler.finalize()
    end = only_tool_end(events)
    assert set(end.payload["metadata"]) == {"tool_name", "call_id", "arguments"}
    assert end.payload["metadata"] == {
        "tool_name": "lookup",
        "call_id": "call_1",
        "arguments": {"q": ["x", {"y": None}]},
    }
    (invocation,) = handler.get_all_invocations()
    assert isinstance(invocation, ToolInvocation)
    assert invocation.to_dict() == {"id": "call_1", "name": "lookup", "arguments": {"q": ["x", {"y": None}]}}


# =============================================================================================
# Rule 4: argument policy through the handler
# =============================================================================================

INVALID_ARGUMENTS = {
    "invalid": '{"a" 1}',
    "truncated": '{"surface_type": "card", "data": ',
    "truncated_string": '{"to": "alice", "amount": 100, "conf',
    "list": "[1, 2]",
    "empty_list": "[]",
    "string": '"x"',
    "double_encoded": '"{\\"city\\": \\"Paris\\"}"',
    "number": "3",
    "null": "null",
    "true": "true",
    "trailing_object": '{"entity":"A"}{"entity":"B"}',
    "trailing_bracket": '{"path":"a"}]',
    "nan": '{"a": NaN}',
    "infinity": '{"a": Infinity}',
    "garbage": "not json at all",
}


@pytest.mark.parametrize("name", sorted(INVALID_ARGUMENTS))
@pytest.mark.parametrize("split", [False, True])
def test_rule4_invalid_arguments_end_with_error_and_raw_text_never_empty(name: str, split: bool) -> None:
    text = INVALID_ARGUMENTS[name]
    pieces = list(text) if split else [text]
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "call_bad", "ui_show", None)))
    for piece in pieces:
        handler.feed(tc(ToolCallDelta(0, arguments_delta=piece)))
    events = handler.finalize()  # never raises (D09)
    end = only_tool_end(events)
    metadata = end.payload["metadata"]
    assert "arguments" not in metadata
    assert set(metadata) >= {"tool_name", "call_id", "error", "raw_arguments"}
    assert metadata["tool_name"] == "ui_show"
    assert metadata["call_id"] == "call_bad"
    assert metadata["raw_arguments"] == text
    assert isinstance(metadata["error"], str) and metadata["error"]
    assert re.search(r"\d", metadata["error"]), f"error does not say at which offset: {metadata['error']!r}"
    assert handler.get_all_invocations() == []


def test_rule4_an_invalid_call_does_not_affect_its_valid_sibling() -> None:
    # D09 wire repro: tool A valid, tool B has an extra ']'.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "toolu_A", "read", '{"path":"a"}')),
            tc(ToolCallDelta(1, "toolu_B", "read", '{"path":"a"}]')),
        ]
    )
    assert [(i.id, dict(i.arguments)) for i in run.invocations] == [("toolu_A", {"path": "a"})]
    ends = tool_events(run.all_events, END)
    assert "arguments" in ends[0].payload["metadata"]
    assert "error" in ends[1].payload["metadata"]


@pytest.mark.parametrize("text", ["", " ", "\n\t ", None])
def test_rule4_empty_or_whitespace_arguments_mean_no_arguments(text: str | None) -> None:
    run = run_stream([tc(ToolCallDelta(0, "c", "get_time", text))])
    end = only_tool_end(run.all_events)
    assert end.payload["metadata"]["arguments"] == {}
    assert "error" not in end.payload["metadata"]
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [("c", "get_time", {})]


def test_rule4_literal_control_characters_inside_strings_are_accepted() -> None:
    # D07 wire repro.
    text = '{"old_string":"\t\t// Check\nif x"}'
    run = run_stream([tc(ToolCallDelta(0, "c", "edit", text[:10])), tc(ToolCallDelta(0, arguments_delta=text[10:]))])
    assert [dict(i.arguments) for i in run.invocations] == [{"old_string": "\t\t// Check\nif x"}]


# =============================================================================================
# Rule 5: ids and names
# =============================================================================================


def test_rule5_late_id_is_adopted_when_the_arguments_begin() -> None:
    # B04 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, None, "bash", "")),
            tc(ToolCallDelta(0, "call_123", None, '{"cmd":"pwd"}')),
        ]
    )
    (start,) = tool_events(run.all_events, START)
    assert start.payload["metadata"]["call_id"] == "call_123"
    assert only_tool_end(run.all_events).payload["metadata"]["call_id"] == "call_123"
    assert [(i.id, i.name) for i in run.invocations] == [("call_123", "bash")]


def test_rule5_id_arriving_after_start_is_adopted_by_end_and_invocation() -> None:
    run = run_stream(
        [
            tc(ToolCallDelta(0, None, "bash", '{"cmd":')),
            tc(ToolCallDelta(0, None, None, '"pwd"}')),
            tc(ToolCallDelta(0, "call_late", None, None)),
        ]
    )
    (start,) = tool_events(run.all_events, START)
    assert start.payload["metadata"]["call_id"] is None
    assert only_tool_end(run.all_events).payload["metadata"]["call_id"] == "call_late"
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [("call_late", "bash", {"cmd": "pwd"})]


def test_rule5_empty_string_id_and_name_never_overwrite() -> None:
    # A05 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_1", "compose_plan", "")),
            tc(ToolCallDelta(0, "", "", '{"a":')),
            tc(ToolCallDelta(0, "", "", "1}")),
        ]
    )
    (start,) = tool_events(run.all_events, START)
    assert dict(start.payload["metadata"]) == {"tool_name": "compose_plan", "call_id": "call_1"}
    end = only_tool_end(run.all_events)
    assert (end.payload["metadata"]["tool_name"], end.payload["metadata"]["call_id"]) == ("compose_plan", "call_1")
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [("call_1", "compose_plan", {"a": 1})]


def test_rule5_empty_string_id_before_the_real_one_is_not_an_id() -> None:
    run = run_stream([tc(ToolCallDelta(0, "", "f", "{")), tc(ToolCallDelta(0, "call_9", "", "}"))])
    assert [(i.id, i.name) for i in run.invocations] == [("call_9", "f")]
    assert "error" not in only_tool_end(run.all_events).payload["metadata"]


def test_rule5_a_second_id_on_an_occupied_index_starts_a_new_call_never_a_silent_merge() -> None:
    # A02/B01 wire repro: a second call reuses index 0 with a new id (servers that put every
    # parallel call on index 0). B01's invariant: two segments, two calls.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_a", "file_write", '{"filePath":"hello.py"}')),
            tc(ToolCallDelta(0, "call_b", "file_write", '{"filePath":"world.py"}')),
        ]
    )
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [
        ("call_a", "file_write", {"filePath": "hello.py"}),
        ("call_b", "file_write", {"filePath": "world.py"}),
    ]
    assert len(tool_events(run.all_events, END)) == 2
    assert lifecycle_errors(run.all_events) == []


def test_rule5_a_second_id_on_a_continuation_fragment_runs_nothing() -> None:
    # B03 wire repro (an id that differs per chunk): read as a new call, the fragments are two
    # broken calls (truncated arguments, a call without a name): both end with an error, nothing runs.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_A", "ls", '{"p')),
            tc(ToolCallDelta(0, "call_B", None, 'ath":"."}')),
        ]
    )
    assert run.invocations == []
    ends = [e.payload["metadata"] for e in tool_events(run.all_events, END)]
    assert [m["call_id"] for m in ends] == ["call_A", "call_B"]
    assert all("error" in m and "arguments" not in m for m in ends)


def test_rule5_restated_same_id_is_not_a_conflict() -> None:
    run = run_stream([tc(ToolCallDelta(0, "call_1", "f", "{")), tc(ToolCallDelta(0, "call_1", None, "}"))])
    assert [(i.id, i.name) for i in run.invocations] == [("call_1", "f")]


@pytest.mark.parametrize("restatements", [1, 2, 5])
def test_rule5_name_restatement_is_ignored(restatements: int) -> None:
    # A06 wire repro, with 1..n restatements.
    chunks = [tc(ToolCallDelta(0, "c1", "read_file", '{"pa'))]
    chunks += [tc(ToolCallDelta(0, None, "read_file", None)) for _ in range(restatements - 1)]
    chunks += [tc(ToolCallDelta(0, None, "read_file", 'th":"x"}'))]
    run = run_stream(chunks)
    end = only_tool_end(run.all_events)
    assert end.payload["metadata"]["tool_name"] == "read_file"
    assert [(i.name, dict(i.arguments)) for i in run.invocations] == [("read_file", {"path": "x"})]


def test_rule5_name_fragment_is_appended() -> None:
    # A07 wire repro: the fragment arrives after the arguments began.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_ab", "get_wea", '{"ci')),
            tc(ToolCallDelta(0, None, "ther", 'ty":"Paris"}')),
        ]
    )
    assert only_tool_end(run.all_events).payload["metadata"]["tool_name"] == "get_weather"
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [
        ("call_ab", "get_weather", {"city": "Paris"})
    ]


def test_rule5_restatement_of_a_fragmented_name_after_it_is_complete() -> None:
    run = run_stream(
        [
            tc(ToolCallDelta(0, "c", "get_", None)),
            tc(ToolCallDelta(0, None, "weather", None)),
            tc(ToolCallDelta(0, None, "get_weather", "{}")),
        ]
    )
    assert [i.name for i in run.invocations] == ["get_weather"]


def test_rule5_two_calls_sharing_a_provider_id_stay_two_calls() -> None:
    # B06 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, "call_x", "read", '{"p":"a"}')),
            tc(ToolCallDelta(1, "call_x", "read", '{"p":"b"}')),
        ]
    )
    starts = tool_events(run.all_events, START)
    assert len(starts) == 2
    assert starts[0].segment_id != starts[1].segment_id
    assert [(i.id, dict(i.arguments)) for i in run.invocations] == [("call_x", {"p": "a"}), ("call_x", {"p": "b"})]


def test_rule5_calls_without_any_id_get_distinct_stable_ids() -> None:
    # B05 wire repro.
    run = run_stream(
        [
            tc(ToolCallDelta(0, None, "get_current_weather", '{"')),
            tc(ToolCallDelta(0, None, None, 'location":"Paris"}')),
            tc(ToolCallDelta(1, None, "get_current_weather", '{"location":"Rome"}')),
        ]
    )
    ids = [i.id for i in run.invocations]
    assert len(ids) == 2 and all(ids) and ids[0] != ids[1]
    assert [dict(i.arguments) for i in run.invocations] == [{"location": "Paris"}, {"location": "Rome"}]


def test_rule5_segment_ids_are_unique_per_handler_also_across_reset() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    seen: list[str] = []
    for _ in range(3):
        handler.feed(ChunkResponse(content="a", reasoning="r"))
        handler.feed(tc(ToolCallDelta(0, "call_1", "f", "{}"), ToolCallDelta(1, "call_1", "f", "{}")))
        handler.feed(ChunkResponse(content="b"))
        handler.finalize()
        seen.extend(dict.fromkeys(e.segment_id for e in handler.get_all_events()))
        handler.reset()
    assert len(seen) == 3 * 5
    assert len(set(seen)) == len(seen)
    other = ApiToolCallStreamingResponseHandler()
    other.feed(ChunkResponse(content="a"))
    assert other.get_all_events()[0].segment_id not in seen


# =============================================================================================
# Rule 6: nameless calls
# =============================================================================================


def test_rule6_call_whose_name_never_arrives_gets_start_and_error_end_with_raw_arguments() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(tc(ToolCallDelta(0, "call_1", None, '{"a":')))
    events += handler.feed(tc(ToolCallDelta(0, "", "", " 1}")))
    assert tool_events(events, START) == []
    events += handler.finalize()
    assert lifecycle_errors(events) == []
    starts = tool_events(events, START)
    assert len(starts) == 1
    metadata = only_tool_end(events).payload["metadata"]
    assert "arguments" not in metadata
    assert metadata["raw_arguments"] == '{"a": 1}'
    assert metadata["call_id"] == "call_1"
    assert isinstance(metadata["error"], str) and metadata["error"]
    assert handler.get_all_invocations() == []


def test_rule6_nameless_call_without_arguments_still_starts_and_ends() -> None:
    run = run_stream([tc(ToolCallDelta(3, "call_1"))])
    assert lifecycle_errors(run.all_events) == []
    assert len(tool_events(run.all_events, START)) == 1
    metadata = only_tool_end(run.all_events).payload["metadata"]
    assert "error" in metadata and metadata["raw_arguments"] == ""
    assert "arguments" not in metadata
    assert run.invocations == []


def test_rule6_nameless_call_does_not_stop_named_siblings() -> None:
    run = run_stream([tc(ToolCallDelta(0, None, None, "{}"), ToolCallDelta(1, "c1", "f", '{"k": 1}'))])
    assert [(i.id, i.name, dict(i.arguments)) for i in run.invocations] == [("c1", "f", {"k": 1})]
    assert len(tool_events(run.all_events, END)) == 2


# =============================================================================================
# Rule 7: lifecycle contract, copies, callbacks
# =============================================================================================


def _sample_stream() -> list[ChunkResponse]:
    return [
        ChunkResponse(reasoning="think "),
        ChunkResponse(content="Let me look."),
        tc(ToolCallDelta(0, None, "read", '{"path"')),
        tc(ToolCallDelta(1, "call_b", None, '{"q":')),
        tc(ToolCallDelta(0, "call_a", None, ': "a"}'), ToolCallDelta(1, None, "search", ' "x"}')),
        tc(ToolCallDelta(2, "call_c", "broken", '{"x": ')),
        ChunkResponse(content=" Done."),
    ]


def _normalised(chunks: list[ChunkResponse], **callbacks: Any) -> Any:
    handler = ApiToolCallStreamingResponseHandler(**callbacks)
    returned = []
    for chunk in chunks:
        returned.extend(handler.feed(chunk))
    returned.extend(handler.finalize())
    assert returned == handler.get_all_events()
    return normalise_events(returned, handler.get_all_invocations())


def test_rule7_feed_after_finalize_raises_a_runtime_error_and_changes_nothing() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "c", "f", "{}")))
    handler.finalize()
    events, invocations = handler.get_all_events(), handler.get_all_invocations()
    with pytest.raises(RuntimeError) as info:
        handler.feed(ChunkResponse(content="more", tool_calls=[ToolCallDelta(1, "d", "g", "{}")]))
    assert isinstance(info.value, HandlerFinalizedError)
    assert "finaliz" in str(info.value).lower()
    assert handler.get_all_events() == events
    assert handler.get_all_invocations() == invocations


def test_rule7_finalize_twice_returns_nothing_the_second_time() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(ChunkResponse(content="x", tool_calls=[ToolCallDelta(0, "c", "f", "{}")]))
    assert handler.finalize() != []
    before = handler.get_all_events()
    assert handler.finalize() == []
    assert handler.get_all_events() == before
    assert len(handler.get_all_invocations()) == 1


def test_rule7_finalize_on_an_empty_stream() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    assert handler.finalize() == []
    assert handler.get_all_events() == [] and handler.get_all_invocations() == []


@pytest.mark.parametrize("finish_first", [True, False])
def test_rule7_reset_gives_a_handler_that_behaves_like_a_new_one(finish_first: bool) -> None:
    # B07: stream 1 aborted mid-call (or finished), then stream 2 on the same handler.
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "c1", "a", "{}"), ToolCallDelta(1, "c2", "b", "{}")))
    handler.feed(tc(ToolCallDelta(2, "c3", "half", '{"x": ')))
    handler.feed(ChunkResponse(content="open text"))
    if finish_first:
        handler.finalize()
    handler.reset()
    assert handler.get_all_events() == [] and handler.get_all_invocations() == []
    returned = []
    for chunk in _sample_stream():
        returned.extend(handler.feed(chunk))
    returned.extend(handler.finalize())
    assert normalise_events(returned, handler.get_all_invocations()) == _normalised(_sample_stream())
    assert "half" not in {i.name for i in handler.get_all_invocations()}


def test_rule7_reset_after_an_abnormal_end_forgets_the_error() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "c1", "f", "{")))
    handler.feed(ChunkResponse(error=StreamError("truncated", "length")))
    handler.finalize()
    assert handler.get_all_invocations() == []
    handler.reset()
    handler.feed(tc(ToolCallDelta(0, "c2", "g", '{"ok": true}')))
    events = handler.finalize()
    metadata = only_tool_end(events).payload["metadata"]
    assert "truncated" not in metadata and "error" not in metadata
    assert [(i.id, dict(i.arguments)) for i in handler.get_all_invocations()] == [("c2", {"ok": True})]


def test_rule7_get_all_returns_copies() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in _sample_stream():
        handler.feed(chunk)
    handler.finalize()
    events, invocations = handler.get_all_events(), handler.get_all_invocations()
    assert events and invocations
    events.clear()
    invocations.append(ToolInvocation("x", "y", {}))
    assert handler.get_all_events() != [] and len(handler.get_all_events()) > 0
    assert all(i.id != "x" for i in handler.get_all_invocations())
    assert handler.get_all_events() is not handler.get_all_events()
    assert handler.get_all_invocations() is not handler.get_all_invocations()


def test_rule7_returned_events_callback_events_and_get_all_events_are_one_sequence() -> None:
    run = run_stream(_sample_stream())
    assert run.returned == run.callback_events == run.all_events
    assert all(a is b for a, b in zip(run.returned, run.all_events, strict=True))
    assert all(a is b for a, b in zip(run.callback_events, run.all_events, strict=True))
    assert run.callback_invocations == run.invocations
    assert [i.id for i in run.invocations] == ["call_a", "call_b"]


def _raise_always(_: object) -> None:
    raise ValueError("callback bug")


def _raise_on_second() -> Any:
    calls = {"n": 0}

    def callback(_: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("second event")

    return callback


@pytest.mark.parametrize(
    "callbacks",
    [
        {"on_segment_event": _raise_always},
        {"on_segment_event": _raise_on_second()},
        {"on_tool_invocation": _raise_always},
        {"on_segment_event": _raise_always, "on_tool_invocation": _raise_always},
    ],
    ids=["segment-always", "segment-second", "invocation", "both"],
)
def test_rule7_a_raising_callback_is_logged_swallowed_and_changes_nothing(
    callbacks: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        result = _normalised(_sample_stream(), **callbacks)
    assert result == _normalised(_sample_stream())
    assert any(record.exc_info or "callback" in record.getMessage() for record in caplog.records), (
        "a swallowed callback exception must be logged"
    )


def test_rule7_raising_callback_with_is_complete_still_finalizes() -> None:
    handler = ApiToolCallStreamingResponseHandler(on_segment_event=_raise_always, on_tool_invocation=_raise_always)
    events = handler.feed(tc(ToolCallDelta(0, "c", "f", "{}"), is_complete=True))
    assert [e.event_type for e in events] == [START, CONTENT, END]
    assert [i.id for i in handler.get_all_invocations()] == ["c"]
    assert handler.finalize() == []


# -- abnormal end: ChunkResponse(error=StreamError(...)) (F06-F08) --------------------------


@pytest.mark.parametrize("kind", ["truncated", "incomplete", "provider_error"])
def test_stream_error_ends_open_tool_calls_with_an_error_flag_and_no_invocation(kind: str) -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(ChunkResponse(content="Writing"))
    events += handler.feed(tc(ToolCallDelta(0, "c1", "write_file", '{"path":"x.py","content":"def f():\\n')))
    events += handler.feed(tc(ToolCallDelta(1, "c2", "ls", "{}")))  # complete and valid, still not executed
    events += handler.feed(tc(ToolCallDelta(2, "c3", "noargs", None)))  # never started
    events += handler.feed(ChunkResponse(error=StreamError(kind, "boom")))
    events += handler.finalize()
    assert lifecycle_errors(events) == []
    ends = tool_events(events, END)
    assert len(ends) == 3
    for end in ends:
        metadata = end.payload["metadata"]
        assert metadata.get(kind) is True, dict(metadata)
        assert metadata.get("error"), dict(metadata)
        assert "arguments" not in metadata
        assert "raw_arguments" in metadata
    assert [e.payload["metadata"]["raw_arguments"] for e in ends] == [
        '{"path":"x.py","content":"def f():\\n',
        "{}",
        "",
    ]
    assert handler.get_all_invocations() == []
    assert concatenated(handler.get_all_events(), TEXT) == "Writing"


def test_stream_error_in_the_same_chunk_as_the_last_delta_and_text() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(
        ChunkResponse(
            content="partial answer",
            tool_calls=[ToolCallDelta(0, "toolu_1", "f", '{"a":')],
            error=StreamError("provider_error", "overloaded_error: Overloaded"),
        )
    )
    events += handler.finalize()
    assert lifecycle_errors(events) == []
    metadata = only_tool_end(events).payload["metadata"]
    assert metadata.get("provider_error") is True
    assert metadata["raw_arguments"] == '{"a":'
    assert handler.get_all_invocations() == []
    assert concatenated(events, TEXT) == "partial answer"


def test_stream_error_without_open_tool_calls_keeps_text_and_invocations_so_far() -> None:
    handler = ApiToolCallStreamingResponseHandler()
    events = handler.feed(ChunkResponse(content="hello"))
    events += handler.feed(ChunkResponse(reasoning="r", error=StreamError("incomplete", "eof")))
    events += handler.finalize()
    assert lifecycle_errors(events) == []
    assert concatenated(events, TEXT) == "hello"
    assert concatenated(events, REASONING) == "r"
    assert tool_events(events, START) == []


# =============================================================================================
# Rule 8: linear cost (smoke tests with generous bounds, not benchmarks)
# =============================================================================================

LINEAR_BOUND_SECONDS = 20.0
N_DELTAS = 200_000


class _Deadline:
    """Fails as soon as the bound is exceeded, so a quadratic handler fails in 20 s, not minutes."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.began = time.perf_counter()

    def check(self) -> None:
        elapsed = time.perf_counter() - self.began
        assert elapsed < LINEAR_BOUND_SECONDS, f"{self.what}: {elapsed:.1f}s (cost must be linear in the stream)"


def test_rule8_many_one_char_argument_deltas_of_one_call_finish_quickly() -> None:
    value = "x" * (N_DELTAS - 10)
    text = '{"data":"' + value + '"}'
    deadline = _Deadline(f"{len(text)} one-char argument deltas")
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "call_big", "write_file", None)))
    content_events = 0
    for position, char in enumerate(text):
        content_events += len(handler.feed(tc(ToolCallDelta(0, arguments_delta=char))))
        if position % 4096 == 0:
            deadline.check()
    events = handler.finalize()
    deadline.check()
    assert content_events == len(text) + 1  # + START
    assert only_tool_end(events).payload["metadata"]["arguments"] == {"data": value}


def test_rule8_many_medium_argument_deltas_finish_quickly() -> None:
    # 200k one-char deltas are only 200 kB: re-copying the buffer on every delta costs ~20 GB of
    # memcpy there, which a fast machine hides. 100k deltas of 64 characters (6.4 MB) take about a
    # second when linear and minutes when the buffer is re-copied (or re-parsed) per delta.
    piece = "abcdefghijklmnopqrstuvwxyz012345" * 2
    n = N_DELTAS // 2
    deadline = _Deadline(f"{n} argument deltas of {len(piece)} chars")
    handler = ApiToolCallStreamingResponseHandler()
    handler.feed(tc(ToolCallDelta(0, "call_big", "write_file", '{"data":"')))
    for position in range(n):
        handler.feed(tc(ToolCallDelta(0, arguments_delta=piece)))
        if position % 2048 == 0:
            deadline.check()
    handler.feed(tc(ToolCallDelta(0, arguments_delta='"}')))
    handler.finalize()
    deadline.check()
    (invocation,) = handler.get_all_invocations()
    assert invocation.arguments["data"] == piece * n


def test_rule8_many_deltas_before_the_name_finish_quickly() -> None:
    piece = "y" * 128
    n = N_DELTAS // 2
    text = '{"data":"' + piece * n + '"}'
    fragments = [text[i : i + len(piece)] for i in range(0, len(text), len(piece))]
    deadline = _Deadline(f"{len(fragments)} held argument deltas of {len(piece)} chars")
    handler = ApiToolCallStreamingResponseHandler()
    batch = 500
    for start in range(0, len(fragments), batch):
        handler.feed(tc(*(ToolCallDelta(0, arguments_delta=f) for f in fragments[start : start + batch])))
        deadline.check()
    handler.feed(tc(ToolCallDelta(0, "call_late", "write_file", " ")))
    handler.finalize()
    deadline.check()
    assert [(i.id, len(i.arguments["data"])) for i in handler.get_all_invocations()] == [("call_late", len(piece) * n)]


def test_rule8_many_text_chunks_finish_quickly() -> None:
    piece = "t" * 64
    n = N_DELTAS // 2
    deadline = _Deadline(f"{n} text chunks of {len(piece)} chars")
    handler = ApiToolCallStreamingResponseHandler()
    for position in range(n):
        handler.feed(ChunkResponse(content=piece))
        if position % 2048 == 0:
            deadline.check()
    handler.finalize()
    deadline.check()
    assert concatenated(handler.get_all_events(), TEXT) == piece * n
