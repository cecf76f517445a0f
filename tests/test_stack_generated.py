"""The generated search at byte level (issue 19, section 2): drawn turns rendered to each API's body.

The renderer is proved against the SDKs (the SDK's own accumulator reads back the turn a body was
rendered from); the search reaches a stack without any recording and finds a planted bug there;
the reference stack passes it on every API.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from conformance.stack import StackCapabilities, run_stack_conformance
from conformance.stack.generated import OBSERVED_DIALECTS, generated_body, generated_turns
from conformance.turns.model import Turn
from conformance.turns.render import RENDERED_APIS
from conformance.verdict.profiles import the_same_search_in_every_process
from conformance.wire import SdkAccumulatorError, sdk_outcome
from conformance.wire.replay import compare_outcomes


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("api", RENDERED_APIS)
def test_the_sdk_reads_back_the_turn_each_rendered_body_came_from(api: str) -> None:
    # The expectation of a generated body is the turn's own definition: this is what makes that
    # honest. The SDK's own accumulator (never ours) must read the body as that turn.
    read: list[bool] = []

    @seed(0)
    @settings(max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(generated_turns(api))
    def reads_back(drawn: tuple[Turn, tuple[str, ...]]) -> None:
        turn, _ = drawn
        turn = replace(turn, ending="stop")
        generated = generated_body(api, turn)  # no dialect: OpenAI's own stream for openai-chat
        assert generated is not None, "the SDK could not read a body rendered without a dialect"
        try:
            sdk = sdk_outcome(api, generated.body.data)
        except SdkAccumulatorError as error:  # pragma: no cover - reported as a failure
            pytest.fail(f"the SDK could not read the body: {error}")
        assert compare_outcomes(generated.expected, sdk) == []
        read.append(True)

    with the_same_search_in_every_process():
        reads_back()
    assert len(read) == 25


def test_only_dialects_a_server_was_seen_sending_are_drawn() -> None:
    from conformance.wire.shapes import observed

    assert OBSERVED_DIALECTS
    assert "id_late" not in OBSERVED_DIALECTS and "null_index" not in OBSERVED_DIALECTS
    assert "no_index" in OBSERVED_DIALECTS and observed("no_index")


def test_the_generated_search_reaches_a_stack_without_any_recording(tmp_path: Path) -> None:
    # No recording at all: only generated bodies can find that this stack runs the calls of a turn
    # cut at its token limit, cut short or ended by an in-band error.
    from examples.stacks.openai_stack import stack, stack_ignoring_the_end

    capabilities = StackCapabilities(apis=("openai-chat",), reasoning=False)
    broken = run_stack_conformance(stack_ignoring_the_end, [tmp_path], capabilities=capabilities, profile="dev")
    outcome = next(r for r in broken.results if r.check.id == "stack_outcome_matches")
    assert outcome.status == "failed"
    assert all(name.startswith("generated/openai-chat") for name in outcome.failing_scenarios)
    assert "ran_wrong" in outcome.harms
    assert "generated:" in outcome.counterexamples[0].text and "ends:" in outcome.counterexamples[0].text
    fine = run_stack_conformance(stack, [tmp_path], capabilities=capabilities, profile="dev")
    assert [r.status for r in fine.results] == ["passed", "passed"], [r.message for r in fine.results]
    assert fine.scenarios >= 5


def test_no_generated_turns_when_asked_for_none(tmp_path: Path) -> None:
    from examples.stacks.openai_stack import stack_ignoring_the_end

    capabilities = StackCapabilities(apis=("openai-chat",))
    report = run_stack_conformance(
        stack_ignoring_the_end, [tmp_path], capabilities=capabilities, profile="dev", generated=0
    )
    assert [r.status for r in report.results] == ["skipped", "skipped"]


def test_the_reference_stack_passes_the_generated_search_on_every_api(tmp_path: Path) -> None:
    from conformance.matrix.reference import REFERENCE_STACK_CAPABILITIES, reference_stack

    capabilities = replace(REFERENCE_STACK_CAPABILITIES, apis=RENDERED_APIS)
    report = run_stack_conformance(reference_stack, [tmp_path], capabilities=capabilities, profile="dev")
    assert [r.status for r in report.results] == ["passed", "passed"], [r.message for r in report.results]
    assert report.scenarios >= 5 * len(RENDERED_APIS)


def test_every_pair_of_drawn_dialects_renders() -> None:
    # no_index applied before id_on_every_chunk raised KeyError('index') out of the run (--profile
    # deep drew it): each rewrite finds a call by its index, so the index goes last.
    import itertools

    from conformance.stack.generated import _DIALECT_ORDER
    from conformance.turns.model import Call, Text
    from conformance.turns.render import render_body

    turn = Turn((Text(("a",)), Call("f", ('{"a"', ": 1}"), "call_1"), Call("g", ("{}",), "call_2")))
    for pair in itertools.combinations(OBSERVED_DIALECTS, 2):
        dialects = tuple(sorted(pair, key=_DIALECT_ORDER.index))
        try:
            render_body(turn, "openai-chat", dialects)
        except ValueError:
            continue  # a documented refusal (the turn lacks what the dialect needs)


def test_a_generated_counterexample_is_shown_on_a_simpler_turn_that_fails_the_same_way(tmp_path: Path) -> None:
    # Drawn turns carry hypothesis's hardest strings; the finding is shown on the simplest turn the
    # greedy walk reaches (conformance.stack.simplify), which still fails the same way.
    from examples.stacks.openai_stack import stack_ignoring_the_end

    capabilities = StackCapabilities(apis=("openai-chat",), reasoning=False)
    report = run_stack_conformance(stack_ignoring_the_end, [tmp_path], capabilities=capabilities, profile="ci")
    outcome = next(r for r in report.results if r.check.id == "stack_outcome_matches")
    shown = [line for c in outcome.counterexamples for line in c.text.splitlines() if line.startswith("generated:")]
    assert shown
    for line in shown:
        assert line.isascii() and line.isprintable(), line
        assert '{"city": "Paris"}' in line or "args" not in line, line


@settings(max_examples=25, database=None, suppress_health_check=list(HealthCheck), deadline=None, derandomize=True)
@given(generated_turns("openai-chat", with_reasoning=False))
def test_every_simpler_turn_is_one_the_reference_stack_passes(turn_and_dialects: tuple[Turn, tuple[str, ...]]) -> None:
    # A simpler turn is a turn again, with its expectation derived afresh: a correct stack passes it
    # (a step that broke the expectation would make every stack fail it: a false finding).
    from conformance.matrix.reference import reference_stack
    from conformance.stack.simplify import simpler_turns
    from conformance.wire.final import read_final_result

    for turn, dialects in simpler_turns(*turn_and_dialects):
        generated = generated_body("openai-chat", turn, dialects)
        if generated is None:
            continue
        outcome, _, _ = read_final_result(reference_stack("openai-chat", [generated.body.sse], {}), "openai-chat")
        assert compare_outcomes(generated.expected, outcome) == [], (turn, dialects)
