"""Suspected suite bugs found while measuring the matrix, each as a minimal reproduction.

Each test asserts the verdict the suite *should* give and is marked ``xfail(strict=True)`` while
the suite gives another one: when the suite is fixed, the test passes and strict xfail turns that
into a failure that asks for the marker to go. A matrix cell that fails only because of one of
these is published as "suite bug" (``SUITE_BUGS`` in ``conformance/matrix/reproductions.py``), never
as the library's defect.
"""

from __future__ import annotations

from typing import Any

from conformance import Capabilities, Scenario, check_by_id, run_conformance
from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome
from conformance.verdict import Profile
from reference_impl.types import ChunkResponse, SegmentEvent, SegmentType, ToolCallDelta, ToolInvocation

# Three calls of one tool, the first and third without an id: the first's arguments are truncated
# ('{'), the third's are 'null'. The target lists them in wire order, repairs the first to {} (a
# real defect, invalid_arguments_flagged) and rejects the third.
_CHUNKS = (
    ChunkResponse(
        tool_calls=[
            ToolCallDelta(0, None, "get_weather", "{"),
            ToolCallDelta(1, "call_1", "get_weather", "{}"),
            ToolCallDelta(2, None, "get_weather", "null"),
        ]
    ),
)
_SCENARIO = Scenario(
    "repaired_first_of_three",
    _CHUNKS,
    ExpectedOutcome(
        (
            ExpectedCall("get_weather", None, None, "{"),
            ExpectedCall("get_weather", "call_1", {}, "{}"),
            ExpectedCall("get_weather", None, None, "null"),
        )
    ),
    tags=frozenset({"several_deltas_per_chunk"}),
)


class _InWireOrder:
    def add(self, chunk: ChunkResponse) -> None:
        del chunk

    def result(self) -> list[tuple[Any, ...]]:
        return [
            (None, "get_weather", "{", {}),
            ("call_1", "get_weather", "{}", {}),
            (None, "get_weather", "null", "rejected"),
        ]


# Found on langchain-core (a generated counterexample the generator no longer draws) and fixed:
# id-less calls of one tool were matched to the stream's calls by argument validity, so when the
# target repaired the first call the third was paired with it and calls_in_wire_order reported
# [2, 1, 0] for a result in wire order. Id-less calls now pair by wire position.
def test_calls_in_wire_order_pairs_id_less_calls_by_position_not_by_validity() -> None:
    report = run_conformance(
        _InWireOrder,
        capabilities=Capabilities(events=False, callbacks=False, lifecycle=False, several_deltas_per_chunk=True),
        scenarios=[_SCENARIO],
        checks=[check_by_id("calls_in_wire_order")],
        profile="dev",
    )
    result = report.results[0]
    assert result.status == "passed", result.counterexample


# Found on pydantic-ai 2.68 (matrix, profile ci, seed 0) and fixed: a nameless, id-less third call
# is lost by the library, and the part of the second call (started as 'g' with a generated id,
# ended early, its arguments arriving after its END) is left over. The suite paired the lost third
# call with that part and charged argument_integrity with the second call's '{}'. A call the stream
# never named or identified then paired only with a call that came out without a name; id-less
# calls now pair by wire position, and the left-over part started (second chunk) before the third call
# first appeared (third chunk): it cannot be the third call's (``conformance.wire.pairing``). What the
# library got wrong is the lost call and the content after END (segment_lifecycle), both
# reproduced directly; argument_integrity has no content of the third call to judge.
_T = SegmentType.TOOL_CALL
_LOST_THIRD_CHUNKS = (
    ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "get_weather", "{")]),
    ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, "}"), ToolCallDelta(1, None, "g", None)]),
    ChunkResponse(
        content="0",
        tool_calls=[ToolCallDelta(1, "call_1", "et_weather", "{}"), ToolCallDelta(2, None, None, '{"": null}')],
    ),
    ChunkResponse(is_complete=True),
)
_LOST_THIRD = Scenario(
    "nameless_third_call_lost",
    _LOST_THIRD_CHUNKS,
    ExpectedOutcome(
        (
            ExpectedCall("get_weather", "call_0", {}, "{}"),
            ExpectedCall("get_weather", "call_1", {}, "{}"),
            ExpectedCall(None, None, None, '{"": null}'),
        ),
        text="0",
    ),
    tags=frozenset({"several_deltas_per_chunk"}),
)
# What pydantic-ai's events were on these chunks (the matrix counterexample), feed by feed.
_LOST_THIRD_EVENTS: tuple[list[SegmentEvent], ...] = (
    [
        SegmentEvent.start("part-0", _T, tool_name="get_weather", call_id="call_0"),
        SegmentEvent.content("part-0", _T, "{"),
    ],
    [
        SegmentEvent.content("part-0", _T, "}"),
        SegmentEvent.end("part-0", _T, tool_name="get_weather", call_id="call_0", arguments={}),
        SegmentEvent.start("part-1", _T, tool_name="g", call_id="pyd_ai_1"),
        SegmentEvent.end("part-1", _T, tool_name="g", call_id="pyd_ai_1", arguments={}),
    ],
    [
        SegmentEvent.start("part-2", SegmentType.TEXT),
        SegmentEvent.content("part-2", SegmentType.TEXT, "0"),
        SegmentEvent.content("part-1", _T, "{}"),
        SegmentEvent.end("part-2", SegmentType.TEXT),
    ],
    [],
)


class _LosesTheThirdCall:
    def __init__(self, **callbacks: Any) -> None:
        del callbacks
        self.events: list[SegmentEvent] = []
        self.invocations: list[ToolInvocation] = []
        self.feeds = 0

    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        del chunk
        events = list(_LOST_THIRD_EVENTS[min(self.feeds, len(_LOST_THIRD_EVENTS) - 1)])
        self.feeds += 1
        if self.feeds == 3:
            self.invocations = [
                ToolInvocation("call_0", "get_weather", {}),
                ToolInvocation("call_1", "get_weather", {}),
            ]
        self.events += events
        return events

    def finalize(self) -> list[SegmentEvent]:
        return []

    def get_all_events(self) -> list[SegmentEvent]:
        return list(self.events)

    def get_all_invocations(self) -> list[ToolInvocation]:
        return list(self.invocations)


def test_argument_integrity_does_not_charge_a_lost_nameless_call_with_another_calls_content() -> None:
    report = run_conformance(
        _LosesTheThirdCall,
        capabilities=Capabilities(callbacks=False, lifecycle=False, reasoning=False, several_deltas_per_chunk=True),
        scenarios=[_LOST_THIRD],
        checks=[check_by_id("argument_integrity")],
        profile=Profile("as written", 0),
    )
    result = report.results[0]
    assert result.status == "passed", result.message
