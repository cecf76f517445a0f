"""Run the converter checks over recordings: each replayed through the real SDK or client library."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance.converter.checks import CONVERTER_CHECKS, ConverterContext, NotApplicable
from conformance.converter.factory import Converter, as_converter_factory
from conformance.verdict import CheckResult, Profile, ProgressStep, Report, describe_factory, resolve_profile
from conformance.verdict.deadline import DEFAULT_DEADLINE_SECONDS, within
from conformance.wire import (
    Body,
    Case,
    WireFormatError,
    discover_cases,
    iter_payload_events,
    load_body,
)
from conformance.wire.harm import outcome_harm
from conformance.wire.recorded import Recording, read_recording
from conformance.wire.replay import ReplayResult, as_chunk_response, replay_body
from conformance.wire.stream_shapes import recording_realism
from reference_impl.types import ChunkResponse

__all__ = ["run_converter_conformance"]


def _events(body: Body) -> tuple[list[Any], BaseException | None]:
    events: list[Any] = []
    try:
        for event in iter_payload_events(body.api, body.payloads()):
            events.append(event)
    except Exception as raised:  # noqa: BLE001 - the SDK's in-band error ends the events, as in production
        return events, raised
    return events, None


def _end(converter: Any, error: BaseException | None) -> list[Any]:
    if error is not None and isinstance(error, tuple(getattr(converter, "api_errors", ()) or ())):
        return list(converter.fail(error))
    return list(converter.finish())


def _interleaved(
    factory: Callable[..., Any], body: Body, partner: Body, deadline: float | None
) -> tuple[list[ChunkResponse], list[ChunkResponse]] | None:
    """This recording's chunks from a converter alone, and from one fed alternately with another
    converter of the same factory working on ``partner`` (``converter_instances_independent``).

    None when the recordings cannot be converted this way (the converter raised: that is
    ``converter_outcome_matches``'s finding).
    """
    events, error = _events(body)
    other_events, other_error = _events(partner)
    try:
        with within(deadline, lambda: f"{body.source} (two converters fed alternately)"):
            return _side_by_side(factory, body, partner, (events, error), (other_events, other_error))
    except Exception:  # noqa: BLE001 - a converter that raises here is converter_outcome_matches's finding
        return None


def _side_by_side(
    factory: Callable[..., Any],
    body: Body,
    partner: Body,
    read: tuple[list[Any], BaseException | None],
    partner_read: tuple[list[Any], BaseException | None],
) -> tuple[list[ChunkResponse], list[ChunkResponse]]:
    """Feed one converter alone, and one alternately with a converter of ``partner`` (see ``_interleaved``)."""
    (events, error), (other_events, other_error) = read, partner_read
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
    return [as_chunk_response(c) for c in by_itself], [as_chunk_response(c) for c in side_by_side]


def _judge(case: Case, context: ConverterContext, results: dict[str, CheckResult]) -> None:
    """Run every converter check on one replayed recording."""
    for check in CONVERTER_CHECKS:
        result = results[check.id]
        if context.crash is not None and check.id != "converter_outcome_matches":
            # Nothing came out to check: the crash is converter_outcome_matches's finding. Counted
            # as not judged (shown beside a PASS), never as "not applicable", which it is not.
            result.not_judged += 1
            continue
        try:
            problems = check.run(context)
        except NotApplicable as why:
            result.not_applicable.append(f"{case.name}: {why}")
            continue
        result.scenarios_run += 1
        result.examples_run += 1
        if problems:
            text = f"recording: {case.body_path}\nviolation: " + "\n".join(problems)
            # The outcome check is judged on what the replay finished with; the converter's own
            # contract checks carry their declared harm.
            harm = (
                outcome_harm(context.expected, context.result.outcome if context.crash is None else None, context.crash)
                if check.id == "converter_outcome_matches"
                else None
            )
            result.fail(problems[0], text, scenario=case.name, harm=harm, realism=recording_realism(context.body))


def _replay_case(
    case: Case, body: Body, converter_factory: Callable[..., Any], deadline: float | None
) -> tuple[ReplayResult, BaseException | None, Recording | None]:
    crash: BaseException | None = None
    try:
        with within(deadline, lambda: f"the recording {case.body_path}"):
            result = replay_body(body, converter_factory=converter_factory)
    except WireFormatError:
        raise  # the body itself, not the converter
    except Exception as error:  # noqa: BLE001 - a converter bug is a finding, not a suite error
        crash, result = error, ReplayResult(body.api)
    try:
        recording: Recording | None = read_recording(body.api, body.data, case.expected())
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
        elif check_result.status == "passed" and check_result.scenarios_run == 0 and check_result.not_judged:
            check_result.status = "skipped"
            check_result.skipped_reason = (
                f"not checked: the replay raised on all {check_result.not_judged} recordings"
                " (the crash is converter_outcome_matches's finding)"
            )
        elif check_result.status == "passed" and check_result.scenarios_run == 0 and check_result.not_applicable:
            reasons = {entry.split(": ", 1)[-1] for entry in check_result.not_applicable}
            check_result.status = "skipped"
            check_result.skipped_reason = (
                f"not applicable to any of the {len(check_result.not_applicable)} recordings"
                + (f": {reasons.pop()}" if len(reasons) == 1 else f"; first: {check_result.not_applicable[0]}")
            )


def run_converter_conformance(
    converter_factory: Callable[..., Converter],
    cassette_dirs: Iterable[Path],
    *,
    profile: str | Profile = "ci",
    seed: int = 0,
    target: str = "",
    apis: Sequence[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
) -> Report:
    """Run the converter checks over every recording with an expectation under ``cassette_dirs``.

    ``converter_factory`` is called as ``factory(api, **converter_options)``, or as ``factory()``
    when it takes no arguments (a converter class for one wire API); anything else raises
    ``ConverterFactoryError`` before a recording is read. A recording that cannot be read is listed
    in every check's ``not_applicable`` (never counted as a pass); a recording whose replay raised is
    counted as not judged by every other check (the crash is ``converter_outcome_matches``'s
    finding); when no recording at all was checked, every check is skipped, saying so.
    ``on_progress`` is called with each recording's name as it starts (a ``ProgressStep``). A
    replay that takes longer than ``deadline`` seconds is stopped and judged as a converter that
    raised (None or 0: no deadline).
    """
    chosen = resolve_profile(profile)
    report = Report(target=target or describe_factory(converter_factory), profile=chosen.name, seed=seed)
    converter_factory = as_converter_factory(converter_factory, target)
    results = {check.id: CheckResult(check) for check in CONVERTER_CHECKS}
    started = time.perf_counter()
    partners: dict[str, Body] = {}  # the previous recording of each wire API (see _interleaved)
    directories = list(cassette_dirs)
    unreadable: list[str] = []
    cases = list(discover_cases(directories))
    for done, case in enumerate(cases):
        if on_progress:
            on_progress(ProgressStep(case.name, done, len(cases)))
        try:
            body = load_body(case.body_path)
            if apis is not None and body.api not in apis:
                continue
            result, crash, recording = _replay_case(case, body, converter_factory, deadline)
        except WireFormatError as error:
            unreadable.append(f"{case.name}: the recording cannot be read: {error}")
            continue
        report.scenarios += 1
        report.examples += 1
        interleaved = (
            _interleaved(converter_factory, body, partners.get(body.api, body), deadline) if crash is None else None
        )
        partners[body.api] = body
        _judge(case, ConverterContext(case, body, case.expected(), result, crash, recording, interleaved), results)
    where = (f"for {', '.join(apis)} " if apis else "") + f"under {', '.join(str(d) for d in directories)}"
    _finish_statuses(results, report, unreadable, where)
    report.results = [results[check.id] for check in CONVERTER_CHECKS]
    for check_result in report.results:
        check_result.target = report.target
    report.seconds = time.perf_counter() - started
    return report
