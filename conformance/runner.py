"""Run the checks against a handler: every scenario as given, then re-fragmented by hypothesis.

``run_conformance(factory)`` is the library entry point behind the CLI and the pytest plugin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from conformance.checks import CHECKS, Capabilities, Check, CheckContext
from conformance.fragment import describe_chunks, refragmented
from conformance.observe import HandlerAdapter, Transcript, drive
from conformance.scenarios import BUILTIN_SCENARIOS, Scenario
from reference_impl.types import ChunkResponse

__all__ = ["PROFILES", "CheckResult", "Profile", "Report", "run_conformance"]


@dataclass(frozen=True)
class Profile:
    """How hard to try: re-fragmentations per scenario."""

    name: str
    examples_per_scenario: int


PROFILES: dict[str, Profile] = {
    "dev": Profile("dev", 10),
    "ci": Profile("ci", 60),
    "deep": Profile("deep", 1000),
}


@dataclass
class CheckResult:
    """The verdict of one check over every scenario. ``status``: passed, failed or skipped."""

    check: Check
    status: str = "passed"
    message: str = ""
    counterexample: str | None = None
    scenarios_run: int = 0
    skipped_reason: str = ""
    target: str = ""  # which handler or converter this verdict is about, when a report covers several
    # The minimal failing input, kept so it can be saved and re-run (``run --save-failures``).
    counterexample_scenario: Scenario | None = None
    counterexample_chunks: list[ChunkResponse] | None = None
    # Inputs the check could not apply to, each "<input>: <why>" (converter checks whose recording
    # lacks what they compare). Never counted in ``scenarios_run``.
    not_applicable: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        document = {
            "id": self.check.id,
            "target": self.target,
            "title": self.check.title,
            "status": self.status,
            "message": self.message or self.skipped_reason,
            "counterexample": self.counterexample,
            "scenarios_run": self.scenarios_run,
            "taxonomy": list(self.check.taxonomy),
        }
        if self.not_applicable:
            document["not_applicable"] = list(self.not_applicable)
        return document


@dataclass
class Report:
    target: str
    profile: str
    seed: int
    results: list[CheckResult] = field(default_factory=list)
    scenarios: int = 0
    examples: int = 0
    seconds: float = 0.0

    @property
    def conformant(self) -> bool:
        return all(result.status != "failed" for result in self.results)

    def by_status(self, status: str) -> list[CheckResult]:
        return [result for result in self.results if result.status == status]

    def to_json(self) -> dict[str, Any]:
        return {
            "conformant": self.conformant,
            "target": self.target,
            "profile": self.profile,
            "seed": self.seed,
            "scenarios": self.scenarios,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "checks": [result.to_json() for result in self.results],
        }


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


def _applicable(check: Check, capabilities: Capabilities) -> str:
    missing = sorted(name for name in check.requires if not capabilities.has(name))
    return "; ".join(_WHY_NOT_APPLICABLE.get(name, f"handler does not declare {name}") for name in missing)


def _scenario_applicable(scenario: Scenario, capabilities: Capabilities) -> bool:
    return all(capabilities.has(tag) for tag in scenario.tags if tag in Capabilities.__dataclass_fields__)


def describe_factory(factory: Callable[..., Any]) -> str:
    """``module:qualname`` for a function or class (what ``--handler`` takes), else its repr.

    Reports and JUnit class names show it, so it must be stable and readable, never
    ``<function make_handler at 0x7f...>``.
    """
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}:{qualname}"
    return repr(factory)


def run_conformance(
    factory: Callable[..., Any],
    *,
    capabilities: Capabilities | None = None,
    profile: str | Profile = "ci",
    seed: int = 0,
    scenarios: Sequence[Scenario] | None = None,
    checks: Sequence[Check] | None = None,
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
    chosen = PROFILES[profile] if isinstance(profile, str) else profile
    scenario_list = list(BUILTIN_SCENARIOS if scenarios is None else scenarios)
    check_list = list(CHECKS if checks is None else checks)
    report = Report(target=target or describe_factory(factory), profile=chosen.name, seed=seed)
    started = time.perf_counter()
    results = {check.id: CheckResult(check) for check in check_list}
    active: list[Check] = []
    for check in check_list:
        reason = _applicable(check, capabilities)
        if reason:
            results[check.id].status = "skipped"
            results[check.id].skipped_reason = reason
        else:
            active.append(check)

    def evaluate(
        scenario: Scenario, chunks: Sequence[ChunkResponse], *, probe: bool = False
    ) -> list[tuple[Check, list[str], Transcript]]:
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
        failures: list[tuple[Check, list[str], Transcript]], scenario: Scenario, chunks: Sequence[ChunkResponse]
    ) -> None:
        for check, problems, transcript in failures:
            result = results[check.id]
            if result.status != "failed":
                result.status = "failed"
                result.message = problems[0]
                result.counterexample = _counterexample(scenario, chunks, transcript, problems)
                result.counterexample_scenario = scenario
                result.counterexample_chunks = list(chunks)

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


def search_settings(max_examples: int, seed: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The hypothesis settings every search in the suite uses: seeded, no deadline, no database
    (a run must be reproducible from --seed alone), generate then shrink to a minimal example."""

    def apply(test: Callable[..., None]) -> Callable[..., None]:
        configured = settings(
            max_examples=max_examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.shrink),
            report_multiple_bugs=False,
        )(test)
        seeded: Callable[..., None] = hypothesis_seed(seed)(configured)
        return seeded

    return apply


_Failures = list[tuple[Check, list[str], Transcript]]


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
    from conformance.strategies import scenarios as generated_scenarios

    return generated_scenarios(with_reasoning=capabilities.reasoning).flatmap(_split_cases)
