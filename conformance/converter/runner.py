"""Run the converter checks over recordings: each replayed through the real SDK, whole and byte-split."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance.converter.checks import CONVERTER_CHECKS, ConverterContext, NotApplicable
from conformance.verdict import CheckResult, Profile, Report, describe_factory, resolve_profile, search_settings
from conformance.wire import Body, Case, Outcome, WireFormatError, discover_cases, load_body
from conformance.wire.recorded import Recording, read_recording
from conformance.wire.replay import ReplayResult, replay_body

__all__ = ["run_converter_conformance"]


def _byte_pieces(body: bytes) -> st.SearchStrategy[list[bytes]]:
    cuts = st.lists(st.integers(0, len(body)), max_size=24).map(sorted)

    def split(points: list[int]) -> list[bytes]:
        bounds = [0, *points, len(body)]
        return [body[a:b] for a, b in itertools.pairwise(bounds)]

    one_byte = st.just([body[i : i + 1] for i in range(len(body))]) if len(body) <= 4096 else st.nothing()
    return st.one_of(cuts.map(split), one_byte)


def _summary(outcome: Outcome) -> str:
    return json.dumps(outcome.to_json(), sort_keys=True, ensure_ascii=False)


def run_converter_conformance(
    converter_factory: Callable[..., Any],
    cassette_dirs: Iterable[Path],
    *,
    profile: str | Profile = "ci",
    seed: int = 0,
    target: str = "",
    apis: Sequence[str] | None = None,
) -> Report:
    """Run the converter checks over every recording with an expectation under ``cassette_dirs``."""
    chosen = resolve_profile(profile)
    report = Report(target=target or describe_factory(converter_factory), profile=chosen.name, seed=seed)
    results = {check.id: CheckResult(check) for check in CONVERTER_CHECKS}
    started = time.perf_counter()
    # Byte-split search is the expensive part: a fraction of the handler profile's effort per body.
    examples = max(3, chosen.examples_per_scenario // 6)
    for case in discover_cases(cassette_dirs):
        try:
            body = load_body(case.body_path)
        except WireFormatError:
            continue  # not a body the SDKs here can read (e.g. Bedrock event streams)
        if apis is not None and body.api not in apis:
            continue
        expected = case.expected()
        report.scenarios += 1
        crash: BaseException | None = None
        try:
            result = replay_body(body, converter_factory=converter_factory)
        except Exception as error:  # a converter bug is a finding, not a suite error
            crash, result = error, ReplayResult(body.api)
        report.examples += 1
        try:
            recording: Recording | None = read_recording(body.api, body.sse, expected)
        except Exception:  # the facts are optional; their checks report the case as not applicable
            recording = None
        context = ConverterContext(case, body, expected, result, crash, recording)
        for check in CONVERTER_CHECKS:
            if crash is not None and check.id != "converter_outcome_matches":
                # Nothing came out to check: the crash is converter_outcome_matches's finding.
                results[check.id].not_applicable.append(f"{case.name}: the replay raised {type(crash).__name__}")
                continue
            try:
                problems = check.run(context)
            except NotApplicable as why:
                results[check.id].not_applicable.append(f"{case.name}: {why}")
                continue
            results[check.id].scenarios_run += 1
            results[check.id].examples_run += 1
            if problems:
                text = f"recording: {case.body_path}\nviolation: " + "\n".join(problems)
                results[check.id].fail(problems[0], text, scenario=case.name)
        if crash is None and results["converter_sse_chunking_invariant"].status != "failed":
            _search_byte_split(
                case,
                body=body,
                baseline=_summary(result.outcome),
                converter_factory=converter_factory,
                examples=examples,
                seed=seed,
                results=results,
                report=report,
            )
    for check_result in results.values():
        if check_result.status == "passed" and check_result.scenarios_run == 0 and check_result.not_applicable:
            reasons = {entry.split(": ", 1)[-1] for entry in check_result.not_applicable}
            check_result.status = "skipped"
            check_result.skipped_reason = (
                f"not applicable to any of the {len(check_result.not_applicable)} recordings"
                + (f": {reasons.pop()}" if len(reasons) == 1 else f"; first: {check_result.not_applicable[0]}")
            )
    report.results = [results[check.id] for check in CONVERTER_CHECKS]
    for check_result in report.results:
        check_result.target = report.target
    report.seconds = time.perf_counter() - started
    return report


def _search_byte_split(
    case: Case,
    *,
    body: Body,
    baseline: str,
    converter_factory: Callable[..., Any],
    examples: int,
    seed: int,
    results: dict[str, CheckResult],
    report: Report,
) -> None:
    failure: list[tuple[list[bytes], str]] = []

    @search_settings(examples, seed)
    @given(_byte_pieces(body.sse))
    def same_outcome(pieces: list[bytes]) -> None:
        report.examples += 1
        try:
            got = _summary(replay_body(body, pieces, converter_factory=converter_factory).outcome)
        except Exception as error:
            got = f"raised {type(error).__name__}: {error}"
        if got != baseline:
            failure[:] = [(pieces, got)]
            raise AssertionError(got)

    try:
        same_outcome()
    except AssertionError:
        if failure:
            pieces, got = failure[0]
            shown = " | ".join(repr(p) for p in pieces[:12]) + (" | ..." if len(pieces) > 12 else "")
            results["converter_sse_chunking_invariant"].fail(
                f"{case.name}: a {len(pieces)}-piece split changes the outcome",
                f"recording: {case.body_path}\npieces: {shown}\none piece: {baseline}\nsplit:     {got}",
                scenario=case.name,
            )
