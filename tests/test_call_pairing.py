"""Which of the target's calls stands for which call of the stream (``CheckContext.matches``).

Every call check judges the pairs, so a wrong pair blames the wrong call or the wrong check. Calls
with a provider id pair by that id; the others by wire position: the k-th of them with the k-th
of the target's calls that carries no expected id, in the order the target started them. Never by
name or by whether the arguments parse: that is what the call's own findings are about.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conformance import Capabilities, Scenario, check_by_id, run_conformance, violations
from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome
from conformance.verdict import Profile
from conformance.wire.pairing import pair_calls
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.types import ChunkResponse, SegmentEventType, ToolCallDelta, ToolInvocation
from tests.mutants.api_handler_mutants import IdOnlyAtStart, NameConcat, SegmentIdAsInvocationId

_PARIS, _OSLO = '{"city": "Paris"}', '{"city": "Oslo"}'


@pytest.fixture(autouse=True)
def _quiet_handlers() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _chunk(index: int, call_id: str | None, name: str | None, arguments: str | None) -> ChunkResponse:
    return ChunkResponse(tool_calls=[ToolCallDelta(index, call_id, name, arguments)])


def _scenario(name: str, chunks: tuple[ChunkResponse, ...], *calls: ExpectedCall) -> Scenario:
    return Scenario(name, chunks, ExpectedOutcome(tuple(calls)))


def _violations(factory: Any, scenario: Scenario) -> list[str]:
    return violations(factory, scenario, capabilities=Capabilities(several_deltas_per_chunk=True))


# Two id-less calls of one tool; the first restates its whole name (MiniMax via NIM does, A06).
_RESTATED_FIRST = _scenario(
    "idless_restated_name",
    (_chunk(0, None, "get_weather", _PARIS), _chunk(0, None, "get_weather", ""), _chunk(1, None, "get_weather", _OSLO)),
    ExpectedCall("get_weather", None, {"city": "Paris"}, _PARIS),
    ExpectedCall("get_weather", None, {"city": "Oslo"}, _OSLO),
)


def test_the_reference_conforms_on_the_pairing_scenarios() -> None:
    assert _violations(ApiToolCallStreamingResponseHandler, _RESTATED_FIRST) == []
    assert _violations(ApiToolCallStreamingResponseHandler, _LATE_ID_THEN_IDLESS) == []


def test_a_concatenated_name_on_an_idless_call_is_a_wrong_name_of_that_call_not_swapped_arguments() -> None:
    # Pairing by name took the second call (whose name is right) for the first: argument_integrity
    # then read two calls' arguments as swapped, and tool_names_whole blamed call 1.
    assert _violations(NameConcat, _RESTATED_FIRST) == [
        "tool_names_whole: call 0 (get_weather) ended with tool name 'get_weatherget_weather'; "
        "the stream sent 'get_weather'"
    ]


def test_the_counterexample_names_the_call_whose_name_was_concatenated() -> None:
    report = run_conformance(
        NameConcat,
        capabilities=Capabilities(several_deltas_per_chunk=True),
        scenarios=[_RESTATED_FIRST],
        checks=[check_by_id("tool_names_whole"), check_by_id("argument_integrity")],
        profile=Profile("as written", 0),
    )
    results = {result.check.id: result for result in report.results}
    assert results["argument_integrity"].status == "passed", results["argument_integrity"].message
    assert results["tool_names_whole"].status == "failed"
    assert results["tool_names_whole"].message.startswith(
        "call 0 (get_weather) ended with tool name 'get_weatherget_weather'"
    ), results["tool_names_whole"].message


# A call whose id arrives late, then an id-less call of another tool.
_LATE_ID_THEN_IDLESS = _scenario(
    "late_id_then_idless",
    (_chunk(0, None, "f", '{"a": '), _chunk(0, "call_0", None, "1}"), _chunk(1, None, "g", '{"b": 2}')),
    ExpectedCall("f", "call_0", {"a": 1}, '{"a": 1}'),
    ExpectedCall("g", None, {"b": 2}, '{"b": 2}'),
)


def test_a_call_that_lost_its_provider_id_keeps_its_wire_slot() -> None:
    # The first call came out without its id: the id-less second call must not take its output
    # (first in wire order among the unclaimed calls) for its own.
    found = _violations(IdOnlyAtStart, _LATE_ID_THEN_IDLESS)
    assert [line.split(":")[0] for line in found] == ["provider_ids_kept"], found


# -- the rule itself (``conformance.wire.pairing.pair_calls``) ---------------------------------------


def test_calls_without_ids_pair_by_position() -> None:
    assert pair_calls([None, None, None], [set(), set(), set()]) == [0, 1, 2]


def test_ids_the_target_minted_pair_by_position_too() -> None:
    assert pair_calls(["call_a", "call_b"], [{"minted_1"}, {"minted_2"}]) == [0, 1]


def test_a_provider_id_pairs_wherever_its_call_came_out() -> None:
    assert pair_calls(["a", None, "b"], [{"b"}, set(), {"a"}]) == [2, 1, 0]


def test_an_output_carrying_another_calls_id_is_never_taken_by_position() -> None:
    # The duplicate of call a is no id-less call's: that one came out nowhere.
    assert pair_calls(["a", None], [{"a"}, {"a"}]) == [0, None]


def test_a_call_that_lost_its_id_holds_its_slot_when_no_call_is_missing() -> None:
    assert pair_calls(["a", None], [{"segment-0"}, {"segment-1"}]) == [0, 1]


def test_a_lost_call_with_an_id_gives_its_slot_to_the_next_call() -> None:
    # Dropped (DROP_CONFLICTING_ID): call b is gone, the id-less call after it came out.
    assert pair_calls(["a", "b", None], [{"a"}, {"segment-2"}]) == [0, None, 1]
    assert pair_calls(["a", "b", None], [{"a"}, {"segment-2"}], started=[0, 2], first_seen=[0, 1, 2]) == [0, None, 1]


def test_an_output_that_started_before_a_call_appeared_is_not_that_calls() -> None:
    # pydantic-ai's lost third call: the second call's part, under an id of its own, started on the
    # second chunk; the third call first appeared on the third. Its invocation carries call_1.
    found = [{"call_0"}, {"pyd_ai_1", "part-1"}, {"call_1"}]
    assert pair_calls(["call_0", "call_1", None], found, started=[0, 1, None], first_seen=[0, 1, 2]) == [0, 2, None]
    # Without chunk positions nothing tells the part from the third call's output.
    assert pair_calls(["call_0", "call_1", None], found) == [0, 2, 1]


def test_an_output_that_started_first_proves_a_lost_id_holds_its_slot() -> None:
    # One output for two calls: it started before the id-less call appeared, so it is the first's.
    assert pair_calls(["a", None], [{"segment-0"}], started=[0], first_seen=[0, 1]) == [0, None]
    assert pair_calls(["a", None], [{"segment-0"}]) == [None, 0]


def test_two_calls_merged_into_one_output_leave_it_to_the_first() -> None:
    # The OpenAI SDK folds every call on index 0 into one (dialect_index_always_zero): the output
    # first appeared as the first call; the second is the lost one.
    assert pair_calls(["call_a", "call_b"], [{"call_acall_b"}]) == [0, None]


def test_the_output_that_announced_an_id_at_its_start_takes_that_call() -> None:
    # pydantic-ai after a nameless call: the END of part-1 (started as call_1) names call_2, whose
    # own part-2 started as call_2 and streamed its arguments. Call 2 is part-2's, not part-1's:
    # pairing by the END alone blamed part-1's silence on call 2 (a false hold-back finding).
    found = [{"part-1", "call_2"}, {"part-2", "call_2"}]
    assert pair_calls(["call_1", "call_2"], found) == [None, 0]
    assert pair_calls(["call_1", "call_2"], found, announced=["call_1", "call_2"]) == [None, 1]


def test_an_output_that_started_without_an_id_keeps_the_id_that_arrived_late() -> None:
    # same_tool_twice_same_provider_id: call 0 starts id-less and is given call_dup later; call 1
    # starts as call_dup. Both END as call_dup: each keeps its own output, in order.
    found = [{"part-1", "call_dup"}, {"part-2", "call_dup"}]
    assert pair_calls(["call_dup", "call_dup"], found, announced=[None, "call_dup"]) == [0, 1]
    # pydantic-ai starts it under an id it minted (pyd_ai_...): no other call's either.
    assert pair_calls(["call_dup", "call_dup"], found, announced=["pyd_ai_1", "call_dup"]) == [0, 1]


class _IdOnOnlyTheStart(SegmentIdAsInvocationId):
    """The provider id is on the START alone: the END has none and the invocation runs under the
    segment id, so the follow-up cannot answer the provider's call."""

    def get_all_invocations(self) -> list[ToolInvocation]:
        segments = [e.segment_id for e in self.get_all_events() if e.event_type is SegmentEventType.END]
        return [replace(i, id=s) for i, s in zip(super().get_all_invocations(), segments, strict=False)]


def test_an_id_on_the_start_alone_is_a_lost_provider_id() -> None:
    # The START's id helps choose which output stands for a call; it never counts as kept.
    scenario = _scenario("one_call", (_chunk(0, "call_1", "f", '{"a": 1}'),), ExpectedCall("f", "call_1", {"a": 1}))
    found = violations(_IdOnOnlyTheStart, scenario, capabilities=Capabilities(callbacks=False))
    assert [line.split(":")[0] for line in found] == ["provider_ids_kept"], found


def test_calls_given_one_id_pair_with_the_outputs_that_say_what_they_say() -> None:
    # same_tool_twice_same_provider_id: openai-agents started the second call first and ran both
    # right; pairing the first call with the first output reported its arguments as the other's
    # (a ran_wrong finding on calls_in_wire_order, published, that no maintainer would accept).
    swapped = {(0, 1), (1, 0)}
    assert pair_calls(["d", "d"], [{"d"}, {"d"}], agrees=lambda i, j: (i, j) in swapped) == [1, 0]
    assert pair_calls(["d", "d"], [{"d"}, {"d"}], agrees=lambda i, j: False) == [0, 1]  # else output order


def test_agreement_is_never_asked_between_calls_with_ids_of_their_own() -> None:
    def never(call: int, output: int) -> bool:
        raise AssertionError("asked")

    assert pair_calls(["a", "b"], [{"b"}, {"a"}], agrees=never) == [1, 0]
    assert pair_calls([None, None], [set(), set()], agrees=never) == [0, 1]
