"""Proof that the suite works: it catches every planted bug and flags no correct handler.

Mutants run at the dev profile (the CLI's default is ci), without shrinking: every mutant must be
caught with the smallest effort, and detection is the question, not the smallest input. The
catalogue and its score are documented in the README; ``python -m tests.test_mutants`` prints the
table.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from conformance import CHECKS, Capabilities, run_conformance
from conformance.handler.text_scenarios import text_scenarios
from reference_impl import ApiToolCallStreamingResponseHandler, ParsingStreamingResponseHandler
from tests.mutants.alternative_handlers import ALTERNATIVES
from tests.mutants.api_handler_mutants import MUTANTS, Mutant
from tests.mutants.parser_mutants import PARSER_MUTANTS


@pytest.fixture(autouse=True)
def _quiet_handlers() -> Iterator[None]:
    # Mutants log through the reference handler's logger thousands of times.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_suite_catches_mutant(mutant: Mutant) -> None:
    # A hanging mutant is stopped by the deadline; keep it short so the test is quick. Detection
    # is the question here, not the smallest input: shrinking (most of a failing run) is skipped.
    report = run_conformance(mutant.factory, profile="dev", seed=0, deadline=1.0, shrink=False)
    failed = {result.check.id for result in report.by_status("failed")}
    assert not report.conformant, f"{mutant.name} ({', '.join(mutant.taxonomy)}) passed every check"
    assert mutant.primary in failed, (
        f"{mutant.name} was caught by {sorted(failed)}, not by its primary check {mutant.primary!r}"
    )


def test_every_handler_check_is_the_primary_check_of_a_mutant() -> None:
    primaries = {mutant.primary for mutant in MUTANTS}
    assert {check.id for check in CHECKS} <= primaries, sorted({check.id for check in CHECKS} - primaries)


@pytest.mark.parametrize("mutant", PARSER_MUTANTS, ids=[m.name for m in PARSER_MUTANTS])
def test_suite_catches_parser_mutant(mutant: Mutant) -> None:
    fmt = mutant.name.split("[")[1].rstrip("]")
    lag = ParsingStreamingResponseHandler(fmt).max_holdback_chars
    report = run_conformance(
        mutant.factory,
        capabilities=Capabilities(text_format=fmt, text_lag_chars=lag),
        scenarios=text_scenarios(fmt),
        profile="dev",
        seed=0,
        shrink=False,
    )
    failed = {result.check.id for result in report.by_status("failed")}
    assert mutant.primary in failed, f"{mutant.name}: caught by {sorted(failed)}, expected {mutant.primary!r}"


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_correct_alternative_handlers_pass(name: str) -> None:
    report = run_conformance(ALTERNATIVES[name], profile="ci", seed=0)
    failures = {result.check.id: result.message for result in report.by_status("failed")}
    assert report.conformant, f"false alarm on {name}: {failures}"


def test_reference_passes_the_deep_profile_on_another_seed() -> None:
    report = run_conformance(ApiToolCallStreamingResponseHandler, profile="deep", seed=12345)
    assert report.conformant, {r.check.id: r.counterexample for r in report.by_status("failed")}
    assert not report.by_status("skipped")


def test_catalogue_covers_at_least_thirty_taxonomy_classes() -> None:
    classes = {klass for mutant in MUTANTS for klass in mutant.taxonomy}
    assert len(MUTANTS) >= 30
    assert len(classes) >= 25, sorted(classes)
