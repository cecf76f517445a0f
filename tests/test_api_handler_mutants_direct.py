"""Handler mutants judged directly on the hand-written stream that shows their bug.

``tests/test_mutants.py`` proves the generated search finds each catalogued mutant; a test here
proves the checks flag a mutant on its own minimal stream, whatever the generator draws.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from conformance import Scenario, violations
from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.types import ChunkResponse, ToolCallDelta
from tests.mutants.api_handler_mutants import IgnoreIdChangeKeepFirstName


@pytest.fixture(autouse=True)
def _quiet_handlers() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


# A second id on an occupied index: two calls, each with its own expected outcome (B01).
SECOND_ID_ON_INDEX_ZERO = Scenario(
    "second_id_on_index_zero",
    (
        ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "f", "")]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, "call_1", "g", '{"a": 1}')]),
    ),
    ExpectedOutcome(
        (
            ExpectedCall("f", "call_0", {}, "", conflict_group=0),
            ExpectedCall("g", "call_1", {"a": 1}, '{"a": 1}', conflict_group=0),
        )
    ),
)


def test_the_reference_conforms_on_a_second_id_on_an_index() -> None:
    assert violations(ApiToolCallStreamingResponseHandler, SECOND_ID_ON_INDEX_ZERO) == []


def test_a_second_call_merged_into_the_first_under_its_name_is_flagged() -> None:
    # The mutant runs ONE call f({"a": 1}) id=call_0: g vanished without an error, and f ran with
    # g's arguments (invocations_match_stream, left out of ``violations`` as a consequence).
    assert violations(IgnoreIdChangeKeepFirstName, SECOND_ID_ON_INDEX_ZERO) == [
        "segment_per_call: call 1 (g id='call_1') shares its index with ['call_0']; it neither ran nor did an "
        "error say why: run it as its own call, or end it (or the index) with an error"
    ]
