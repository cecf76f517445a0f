"""Proof that the converter checks work: each planted converter bug is caught by the check meant for it.

Every mutant in ``tests/mutants/converter_mutants.py`` is run through ``run_converter_conformance``
on the bundled cassettes of its own wire API (ci profile, seed 0, as ``toolcall-conformance run
--converter`` does); it must come out non-conformant, and one of the checks named in its
``caught_by`` must be among the failures. The reference converters must pass the same runs.

Mutants marked with a ``gap`` are realistic bugs the suite cannot see yet; their tests are strict
xfails, so adding the missing check turns them into failures that ask for the mark to go. There are
none at present. The last three gaps were closed by checks that read facts of the recording no
expectation file holds (``conformance.recorded``, from the SDK's own objects and accumulators):

* ``converter_arguments_stream_incrementally`` catches ``anthropic_buffer_input_until_stop``: after
  each SDK event that extended a streamed call's arguments, the converter's argument deltas so far
  must start with the recorded text so far;
* ``converter_usage_is_last_snapshot`` catches ``anthropic_sum_cumulative_usage``: the last usage
  reported must be the provider's last cumulative snapshot (Anthropic ``message_delta`` usage is
  cumulative; summing it with ``message_start`` gives 35 output tokens for 34);
* ``converter_provider_metadata_kept`` catches ``gemini_drop_thought_signature``: each call's
  ``thought_signature`` must be the one on its own functionCall part in the recording.

Correct alternatives (``tests/mutants/alternative_converters.py``) make choices the contract leaves
open; they must pass the same runs, on the real recordings too when ``../shared`` is present.

``python -m tests.test_converter_mutants`` prints the catalogue.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.converter import CONVERTER_CHECKS, run_converter_conformance
from conformance.wire.cases import bundled_cassette_dir
from reference_impl.converters import CONVERTERS, converter_for
from tests.mutants.alternative_converters import ALTERNATIVES
from tests.mutants.converter_mutants import ENDS_AND_STATE_MUTANTS, MUTANTS, Mutant

CHECK_IDS = frozenset(check.id for check in CONVERTER_CHECKS)
REAL_RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"
NEW_CHECKS = (
    "converter_arguments_stream_incrementally",
    "converter_usage_is_last_snapshot",
    "converter_provider_metadata_kept",
)


@pytest.fixture(autouse=True)
def _quiet_converters() -> Iterator[None]:
    # Mutants make the reference converters log their workarounds hundreds of times.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _mutant_params() -> list[object]:
    return [
        pytest.param(
            mutant,
            id=mutant.name,
            marks=[pytest.mark.xfail(strict=True, reason=mutant.gap)] if mutant.gap else [],
        )
        for mutant in (*MUTANTS, *ENDS_AND_STATE_MUTANTS)
    ]


@pytest.mark.parametrize("mutant", _mutant_params())
def test_converter_checks_catch_mutant(mutant: Mutant) -> None:
    report = run_converter_conformance(
        mutant.factory, [bundled_cassette_dir()], profile="ci", seed=0, apis=[mutant.api], target=mutant.name
    )
    failed = {result.check.id: result.message for result in report.by_status("failed")}
    assert not report.conformant, (
        f"{mutant.name} ({mutant.api}; {', '.join(mutant.taxonomy)}: {mutant.description}) passed every converter check"
    )
    assert failed.keys() & mutant.caught_by, (
        f"{mutant.name} was caught by {failed}, not by the check meant for it ({sorted(mutant.caught_by)})"
    )


@pytest.mark.parametrize("api", sorted(CONVERTERS))
def test_reference_converter_passes_the_same_run(api: str) -> None:
    report = run_converter_conformance(converter_for, [bundled_cassette_dir()], profile="ci", seed=0, apis=[api])
    assert report.conformant, {result.check.id: result.counterexample for result in report.by_status("failed")}


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_correct_alternative_converters_pass(name: str) -> None:
    api, factory = ALTERNATIVES[name]
    directories = [bundled_cassette_dir(), *([REAL_RECORDINGS] if REAL_RECORDINGS.is_dir() else [])]
    report = run_converter_conformance(factory, directories, profile="dev", seed=0, apis=[api], target=name)
    assert report.conformant, f"false alarm on {name}: {[(r.check.id, r.message) for r in report.by_status('failed')]}"


def test_recording_fact_checks_apply_to_the_bundled_corpus() -> None:
    # Each of them compares something on the bundled cassettes (no pass by default), and lists the
    # recordings it could not apply to instead of counting them.
    report = run_converter_conformance(converter_for, [bundled_cassette_dir()], profile="dev", seed=0)
    results = {result.check.id: result for result in report.results}
    for check_id in NEW_CHECKS:
        assert results[check_id].status == "passed", (check_id, results[check_id].skipped_reason)
        assert results[check_id].scenarios_run >= 3, check_id
        assert results[check_id].scenarios_run + len(results[check_id].not_applicable) == report.scenarios
    assert any("gemini/error_after_text.yaml" in why for why in results[NEW_CHECKS[1]].not_applicable)


def test_catalogue_is_well_formed() -> None:
    per_api = Counter(mutant.api for mutant in MUTANTS)
    assert len(MUTANTS) >= 15
    assert set(per_api) == set(CONVERTERS), per_api
    assert min(per_api.values()) >= 4, per_api
    for mutant in MUTANTS:
        converter = mutant.factory(mutant.api)
        reference = CONVERTERS[mutant.api]
        assert isinstance(converter, reference) and type(converter) is not reference, mutant.name
        if mutant.gap:
            # A gap names the check that is missing, so the xfail says what to build.
            assert mutant.caught_by - CHECK_IDS, f"{mutant.name}: a gap must name a proposed check id"
        else:
            assert mutant.caught_by <= CHECK_IDS, f"{mutant.name}: unknown check ids {mutant.caught_by - CHECK_IDS}"


def _table() -> str:
    rows = [("mutant", "api", "taxonomy", "caught by", "status")]
    for mutant in MUTANTS:
        status = "GAP (xfail)" if mutant.gap else "caught"
        rows.append((mutant.name, mutant.api, ",".join(mutant.taxonomy), ",".join(sorted(mutant.caught_by)), status))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows)


if __name__ == "__main__":
    print(_table())
