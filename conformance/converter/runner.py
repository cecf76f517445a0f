"""Run the converter checks over recordings: each replayed through the real SDK, whole and byte-split."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance.converter.checks import CONVERTER_CHECKS, ConverterContext, NotApplicable
from conformance.verdict import CheckResult, Profile, Report, describe_factory, resolve_profile
from conformance.wire import (
    Body,
    WireFormatError,
    discover_cases,
    iter_payload_events,
    load_body,
    sse_payloads,
)
from conformance.wire.recorded import Recording, read_recording
from conformance.wire.replay import ReplayResult, as_chunk_response, replay_body
from reference_impl.types import ChunkResponse

__all__ = ["run_converter_conformance"]


def _events(body: Body) -> tuple[list[Any], BaseException | None]:
    events: list[Any] = []
    try:
        for event in iter_payload_events(body.api, sse_payloads(body.sse)):
            events.append(event)
    except Exception as raised:
        return events, raised
    return events, None


def _end(converter: Any, error: BaseException | None) -> list[Any]:
    if error is not None and isinstance(error, tuple(getattr(converter, "api_errors", ()) or ())):
        return list(converter.fail(error))
    return list(converter.finish())


def _interleaved(
    factory: Callable[..., Any], body: Body, partner: Body
) -> tuple[list[ChunkResponse], list[ChunkResponse]] | None:
    """This recording's chunks from a converter alone, and from one fed alternately with another
    converter of the same factory working on ``partner`` (``converter_instances_independent``).

    None when the recordings cannot be converted this way (the converter raised: that is
    ``converter_outcome_matches``'s finding).
    """
    events, error = _events(body)
    other_events, other_error = _events(partner)
    try:
        alone = factory(body.api, **body.converter_options)
        mine = factory(body.api, **body.converter_options)
        other = factory(partner.api, **partner.converter_options)
        by_itself = [c for event in events for c in alone.convert(event)] + _end(alone, error)
        side_by_side: list[Any] = []
        for position in range(max(len(events), len(other_events))):
            if position < len(other_events):
                other.convert(other_events[position])
            if position < len(events):
                side_by_side += mine.convert(events[position])
        _end(other, other_error)
        side_by_side += _end(mine, error)
    except Exception:
        return None
    return [as_chunk_response(c) for c in by_itself], [as_chunk_response(c) for c in side_by_side]


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
    partners: dict[str, Body] = {}  # the previous recording of each wire API (see _interleaved)
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
        interleaved = _interleaved(converter_factory, body, partners.get(body.api, body)) if crash is None else None
        partners[body.api] = body
        context = ConverterContext(case, body, expected, result, crash, recording, interleaved)
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
