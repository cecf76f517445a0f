"""Run the checks against a handler: every scenario as given, then re-fragmented by hypothesis.

``run_conformance(factory)`` is the library entry point behind the CLI and the pytest plugin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance.handler.capabilities import Capabilities
from conformance.handler.checks import CHECKS, CheckContext
from conformance.handler.drive import Transcript, drive
from conformance.handler.fragment import describe_chunks, refragmented
from conformance.handler.observe import HandlerAdapter
from conformance.handler.scenarios import BUILTIN_SCENARIOS, Scenario
from conformance.verdict import Check, CheckResult, Profile, Report, describe_factory, resolve_profile, search_settings
from reference_impl.types import ChunkResponse

__all__ = ["Counterexample", "run_conformance"]


@dataclass(frozen=True)
class Counterexample:
    """A handler check's minimal failing input: the scenario and the exact chunks that failed it."""

    scenario: Scenario
    chunks: tuple[ChunkResponse, ...]


def _counterexample(
    scenario: Scenario, chunks: Sequence[ChunkResponse], transcript: Transcript, problems: list[str]
) -> str:
    expected_calls = [
        f"{c.name}({c.arguments if c.valid else 'ERROR: ' + repr(c.raw_arguments)}) id={c.call_id!r}"
        for c in scenario.expected.tool_calls
    ]
    lines = [
        f"scenario: {scenario.name} ({scenario.source})",
        f"chunks:   {describe_chunks(chunks)}",
        "expected: "
        + ("; ".join(expected_calls) or "no tool calls")
        + (f"; text {scenario.expected.text!r}" if scenario.expected.text else ""),
        "actual events:",
        *[f"  {event.describe()}" for event in transcript.events],
        "actual invocations: " + ("; ".join(i.describe() for i in transcript.invocations) or "none"),
        "violation: " + problems[0],
    ]
    return "\n".join(lines)


_WHY_NOT_APPLICABLE = {
    "api_tool_calls": "applies to provider-native tool calls only; this handler parses tool calls from text",
    "text_lag": "the handler declares no bound on how much text it holds back",
    "reasoning": "the handler does not declare reasoning support",
    "callbacks": "the handler does not take callbacks",
    "stream_errors": "the handler does not declare support for ChunkResponse.error",
}


def _applicable(check: Check[CheckContext], capabilities: Capabilities) -> str:
    missing = sorted(name for name in check.requires if not capabilities.has(name))
    return "; ".join(_WHY_NOT_APPLICABLE.get(name, f"handler does not declare {name}") for name in missing)


def _scenario_applicable(scenario: Scenario, capabilities: Capabilities) -> bool:
    return all(capabilities.has(tag) for tag in scenario.tags if tag in Capabilities.__dataclass_fields__)


def run_conformance(
    factory: Callable[..., Any],
    *,
    capabilities: Capabilities | None = None,
    profile: str | Profile = "ci",
    seed: int = 0,
    scenarios: Sequence[Scenario] | None = None,
    checks: Sequence[Check[CheckContext]] | None = None,
    adapter: HandlerAdapter | None = None,
    target: str = "",
    on_progress: Callable[[str], None] | None = None,
) -> Report:
    """Run every check against handlers made by ``factory`` and return a ``Report``.

    ``factory`` is called for each run, with ``on_segment_event``/``on_tool_invocation`` keyword
    arguments when it accepts them. Each scenario is checked as given, then re-fragmented at
    arbitrary boundaries (``profile`` sets how many times); the first failure per check is shrunk
    by hypothesis to a minimal split and kept as its counterexample. A fixed ``seed`` reproduces a run.
    """
    capabilities = capabilities or Capabilities()
    chosen = resolve_profile(profile)
    scenario_list = list(BUILTIN_SCENARIOS if scenarios is None else scenarios)
    check_list = list(CHECKS if checks is None else checks)
    report = Report(target=target or describe_factory(factory), profile=chosen.name, seed=seed)
    started = time.perf_counter()
    results = {check.id: CheckResult(check) for check in check_list}
    active: list[Check[CheckContext]] = []
    for check in check_list:
        reason = _applicable(check, capabilities)
        if reason:
            results[check.id].status = "skipped"
            results[check.id].skipped_reason = reason
        else:
            active.append(check)

    def evaluate(
        scenario: Scenario, chunks: Sequence[ChunkResponse], *, probe: bool = False
    ) -> list[tuple[Check[CheckContext], list[str], Transcript]]:
        transcript = drive(factory, chunks, adapter, probe_contract=probe)
        report.examples += 1
        context = CheckContext(scenario, transcript, capabilities)
        failures = []
        for check in active:
            problems = check.run(context)
            if problems:
                failures.append((check, problems, transcript))
        return failures

    def record(
        failures: list[tuple[Check[CheckContext], list[str], Transcript]],
        scenario: Scenario,
        chunks: Sequence[ChunkResponse],
    ) -> None:
        for check, problems, transcript in failures:
            result = results[check.id]
            if result.status != "failed":
                result.status = "failed"
                result.message = problems[0]
                result.counterexample = _counterexample(scenario, chunks, transcript, problems)
                result.counterexample_input = Counterexample(scenario, tuple(chunks))

    for scenario in scenario_list:
        if not _scenario_applicable(scenario, capabilities):
            continue
        report.scenarios += 1
        if on_progress:
            on_progress(scenario.name)
        for check in active:
            results[check.id].scenarios_run += 1
        record(evaluate(scenario, scenario.chunks, probe=True), scenario, scenario.chunks)
        _search(
            _split_cases(scenario),
            max_examples=chosen.examples_per_scenario,
            seed=seed,
            evaluate=evaluate,
            record=record,
            results=results,
        )

    if capabilities.text_format is None and scenarios is None:
        report.scenarios += 1
        _search(
            _generated_cases(capabilities),
            max_examples=chosen.examples_per_scenario * 3,
            seed=seed,
            evaluate=evaluate,
            record=record,
            results=results,
        )
    report.results = [results[check.id] for check in check_list]
    for result in report.results:
        result.target = report.target
    report.seconds = time.perf_counter() - started
    return report


_Failures = list[tuple[Check[CheckContext], list[str], Transcript]]


def _search(
    cases: st.SearchStrategy[tuple[Scenario, list[ChunkResponse]]],
    *,
    max_examples: int,
    seed: int,
    evaluate: Callable[[Scenario, Sequence[ChunkResponse]], _Failures],
    record: Callable[[_Failures, Scenario, Sequence[ChunkResponse]], None],
    results: dict[str, CheckResult],
) -> None:
    """Let hypothesis look for a (scenario, chunks) case that fails a still-passing check, then shrink it.

    Only the last (smallest) failing case is recorded: hypothesis re-runs the property while
    shrinking, so the case in hand when it gives up is the minimal one.
    """
    watched = {check_id for check_id, result in results.items() if result.status == "passed"}
    if not watched or max_examples <= 0:
        return
    last_failure: list[tuple[_Failures, Scenario, list[ChunkResponse]]] = []

    @search_settings(max_examples, seed)
    @given(cases)
    def property_holds(case: tuple[Scenario, list[ChunkResponse]]) -> None:
        scenario, chunks = case
        failures = [f for f in evaluate(scenario, chunks) if f[0].id in watched]
        if failures:
            last_failure[:] = [(failures, scenario, chunks)]
            raise AssertionError(failures[0][1][0])

    try:
        property_holds()
    except AssertionError:
        if last_failure:
            record(*last_failure[0])


def _split_cases(scenario: Scenario) -> st.SearchStrategy[tuple[Scenario, list[ChunkResponse]]]:
    """One scenario, re-fragmented at arbitrary boundaries."""
    return st.tuples(st.just(scenario), refragmented(scenario.chunks))


def _generated_cases(capabilities: Capabilities) -> st.SearchStrategy[tuple[Scenario, list[ChunkResponse]]]:
    """Random logical turns (not only the built-ins), each re-fragmented."""
    from conformance.handler.generate import scenarios as generated_scenarios

    return generated_scenarios(with_reasoning=capabilities.reasoning).flatmap(_split_cases)
