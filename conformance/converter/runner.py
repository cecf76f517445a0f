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


def _judge(case: Case, context: ConverterContext, results: dict[str, CheckResult]) -> None:
    """Run every converter check on one replayed recording."""
    for check in CONVERTER_CHECKS:
        result = results[check.id]
        if context.crash is not None and check.id != "converter_outcome_matches":
            # Nothing came out to check: the crash is converter_outcome_matches's finding.
            result.not_applicable.append(f"{case.name}: the replay raised {type(context.crash).__name__}")
            continue
        try:
            problems = check.run(context)
        except NotApplicable as why:
            result.not_applicable.append(f"{case.name}: {why}")
            continue
        result.scenarios_run += 1
        if problems and result.status != "failed":
            result.status = "failed"
            result.message = problems[0]
            result.counterexample = f"recording: {case.body_path}\nviolation: " + "\n".join(problems)


def _replay_case(
    case: Case, body: Body, converter_factory: Callable[..., Any]
) -> tuple[ReplayResult, BaseException | None, Recording | None]:
    expected = case.expected()
    crash: BaseException | None = None
    try:
        result = replay_body(body, converter_factory=converter_factory)
    except WireFormatError:
        raise  # the body itself, not the converter
    except Exception as error:  # noqa: BLE001 - a converter bug is a finding, not a suite error
        crash, result = error, ReplayResult(body.api)
    try:
        recording: Recording | None = read_recording(body.api, body.data, expected)
    except Exception:  # noqa: BLE001 - the facts are optional; their checks report the case as not applicable
        recording = None
    return result, crash, recording


def _finish_statuses(results: dict[str, CheckResult], report: Report, unreadable: list[str], where: str) -> None:
    for check_result in results.values():
        check_result.not_applicable += unreadable
        if report.scenarios == 0:
            check_result.status = "skipped"
            check_result.skipped_reason = f"no recording with an expectation {where}" + (
                f" could be read (first: {unreadable[0]})" if unreadable else ""
            )
        elif check_result.status == "passed" and check_result.scenarios_run == 0 and check_result.not_applicable:
            reasons = {entry.split(": ", 1)[-1] for entry in check_result.not_applicable}
            check_result.status = "skipped"
            check_result.skipped_reason = (
                f"not applicable to any of the {len(check_result.not_applicable)} recordings"
                + (f": {reasons.pop()}" if len(reasons) == 1 else f"; first: {check_result.not_applicable[0]}")
            )


def run_converter_conformance(
    converter_factory: Callable[..., Any],
    cassette_dirs: Iterable[Path],
    *,
    profile: str | Profile = "ci",
    seed: int = 0,
    target: str = "",
    apis: Sequence[str] | None = None,
) -> Report:
    """Run the converter checks over every recording with an expectation under ``cassette_dirs``.

    A recording that cannot be read is listed in every check's ``not_applicable`` (never counted as
    a pass); when no recording at all was checked, every check is skipped, saying so.
    """
    chosen = resolve_profile(profile)
    report = Report(target=target or describe_factory(converter_factory), profile=chosen.name, seed=seed)
    results = {check.id: CheckResult(check) for check in CONVERTER_CHECKS}
    started = time.perf_counter()
    # Byte-split search is the expensive part: a fraction of the handler profile's effort per body.
    examples = max(3, chosen.examples_per_scenario // 6)
    directories = list(cassette_dirs)
    unreadable: list[str] = []
    for case in discover_cases(directories):
        try:
            body = load_body(case.body_path)
            if apis is not None and body.api not in apis:
                continue
            result, crash, recording = _replay_case(case, body, converter_factory)
        except WireFormatError as error:
            unreadable.append(f"{case.name}: the recording cannot be read: {error}")
            continue
        report.scenarios += 1
        report.examples += 1
        _judge(case, ConverterContext(case, body, case.expected(), result, crash, recording), results)
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
    where = (f"for {', '.join(apis)} " if apis else "") + f"under {', '.join(str(d) for d in directories)}"
    _finish_statuses(results, report, unreadable, where)
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
    @given(_byte_pieces(body.data))
    def same_outcome(pieces: list[bytes]) -> None:
        report.examples += 1
        try:
            got = _summary(replay_body(body, pieces, converter_factory=converter_factory).outcome)
        except Exception as error:  # noqa: BLE001 - a converter that crashes on some split is the finding
            got = f"raised {type(error).__name__}: {error}"
        if got != baseline:
            failure[:] = [(pieces, got)]
            raise AssertionError(got)

    try:
        same_outcome()
    except AssertionError:
        if failure:
            pieces, got = failure[0]
            result = results["converter_sse_chunking_invariant"]
            result.status = "failed"
            result.message = f"{case.name}: a {len(pieces)}-piece split changes the outcome"
            shown = " | ".join(repr(p) for p in pieces[:12]) + (" | ..." if len(pieces) > 12 else "")
            result.counterexample = (
                f"recording: {case.body_path}\npieces: {shown}\none piece: {baseline}\nsplit:     {got}"
            )
