"""Proof that the converter checks work: each planted converter bug is caught by the check meant for it.

Every mutant in ``tests/mutants/converter_mutants.py`` is run through ``run_converter_conformance``
on the bundled cassettes of its own wire API (ci profile, seed 0, as ``toolcall-conformance run
--converter`` does); it must come out non-conformant, and one of the checks named in its
``caught_by`` must be among the failures. The reference converters must pass the same runs.

Mutants marked with a ``gap`` are realistic bugs the suite cannot see yet; their tests are strict
xfails, so adding the missing check turns them into failures that ask for the mark to go. The
checks they call for (none can be reached with a corpus scenario alone):

* ``converter_reasoning_conserved``: the reasoning a converter emits (``ChunkResponse.reasoning``)
  concatenates to the recording's expected reasoning. ``compare_outcomes`` compares text only, so
  a converter that drops DeepSeek ``reasoning_content`` (which must be sent back with tool calls)
  passes. Cheapest form: compare ``expected.reasoning`` in ``compare_outcomes``.
* ``converter_usage_is_last_snapshot``: the terminal chunk's ``usage`` equals the provider's last
  cumulative usage snapshot (needs ``usage`` in the expectation files; the corpus writer knows it
  from ``Turn.usage``). Summing Anthropic's cumulative ``message_delta`` usage passes today.
* ``converter_provider_metadata_kept``: each call's provider metadata that the next request must
  echo (Gemini ``thought_signature``, Responses ``item_id``) reaches the call's END metadata
  (needs the values in the expectation files). Dropping Gemini 3 thought signatures passes today.
* ``converter_arguments_stream_incrementally``: a call whose recording streams its arguments in
  n >= 2 fragments gets at least 2 argument deltas from the converter, the first before the
  fragment that closes the call (the handler suite has ``arguments_stream_incrementally``; the
  converter suite has no counterpart, so a converter that buffers arguments until the block stops
  and flushes at the end passes).

``python -m tests.test_converter_mutants`` prints the catalogue.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator

import pytest

from conformance.cassettes import bundled_cassette_dir
from conformance.converter_suite import CONVERTER_CHECKS, run_converter_conformance
from reference_impl.converters import CONVERTERS, converter_for
from tests.mutants.converter_mutants import MUTANTS, Mutant

CHECK_IDS = frozenset(check.id for check in CONVERTER_CHECKS)


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
        for mutant in MUTANTS
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
