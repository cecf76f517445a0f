"""Run the handler checks: every scenario as written, re-cut by hypothesis, then generated streams.

``run_conformance`` is the one search behind the CLI, the pytest plugin and the Python API: the
same scenarios, the same number of runs for the same target, profile and seed, whoever calls it.

How a run goes:

1. **Count.** Each applicable scenario runs once as written (with the lifecycle probes), then
   re-fragmented by hypothesis (``profile.examples_per_scenario`` times); then streams generated
   from the whole input space (``conformance.handler.generate.wire_scenarios``, three times as
   many). Every run is judged by every applicable check; a check's failure that another check's
   failure on the same run explains (``Check.consequence_of``) is counted under that check, and
   when the run itself could not be judged (unreadable events, a crash, a hang) nothing else is.
2. **Shrink.** Each distinct failure (``verdict.signature`` of its message) first found by a
   search is searched again with the same seed and shrunk by hypothesis to a small input, at
   most ``keep`` per check (``None``: all).

A hang stops the run (every further scenario could hang too); Ctrl-C stops it with the partial
report. Either is said in ``Report.stopped``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance.handler.capabilities import CAPABILITY_OPTIONS, Capabilities, why_excluded
from conformance.handler.checks import CHECKS, ROBUSTNESS, CheckContext, for_target
from conformance.handler.drive import (
    DEFAULT_DEADLINE_SECONDS,
    AccumulatorTarget,
    HandlerTarget,
    Transcript,
    make_target,
)
from conformance.handler.fragment import describe_chunks, refragmented
from conformance.handler.generate import wire_scenarios
from conformance.handler.harm import PROBED_CHECKS, attribute_harms, check_harm, run_harm
from conformance.handler.incidental import MOVES
from conformance.handler.observe import HandlerAdapter
from conformance.handler.scenarios import BUILTIN_SCENARIOS, Scenario
from conformance.handler.text_scenarios import text_scenarios
from conformance.handler.wire_dialects import rendering_dialects
from conformance.verdict import (
    DEFAULT_COUNTEREXAMPLES,
    Check,
    CheckResult,
    HarmVerdict,
    NotApplicable,
    Profile,
    ProgressStep,
    Report,
    describe_factory,
    example_database,
    resolve_profile,
    search_settings,
    signature,
    the_same_search_in_every_process,
)
from conformance.verdict.realism import Realism
from conformance.wire.numbers import numbers_note
from conformance.wire.shapes import realism_of
from conformance.wire.stream_shapes import stream_realism
from reference_impl.types import ChunkResponse

__all__ = [
    "Counterexample",
    "Plan",
    "closing_notes",
    "default_scenarios",
    "idle_capabilities",
    "plan",
    "run_conformance",
    "shard_units",
    "violations",
]

Case = tuple[Scenario, list[ChunkResponse]]


@dataclass(frozen=True)
class Counterexample:
    """A handler check's minimal failing input: the scenario and the exact chunks that failed it."""

    scenario: Scenario
    chunks: tuple[ChunkResponse, ...]


def default_scenarios(capabilities: Capabilities) -> tuple[Scenario, ...]:
    """The built-in scenarios for a target with these capabilities (text formats have their own)."""
    return text_scenarios(capabilities.text_format) if capabilities.text_format else BUILTIN_SCENARIOS


@dataclass(frozen=True)
class Plan:
    """What a run will do for a target: the checks that apply, why the others do not, the scenarios."""

    active: tuple[Check[CheckContext], ...]
    skipped: dict[str, str]
    scenarios: tuple[Scenario, ...]
    generated: bool
    generation: tuple[bool, ...] = ()  # the capabilities the generated streams depend on
    # The valued capabilities that change how an active check judges (``CapabilityOption.judged_by``).
    settings: tuple[tuple[str, Any], ...] = ()

    def summary(self) -> tuple[Any, ...]:
        """What a capability flag can change (used to reject a flag that would change nothing)."""
        return (
            tuple(c.id for c in self.active),
            tuple(s.name for s in self.scenarios),
            self.generated,
            self.generation if self.generated else (),
            self.settings,
        )


def plan(
    capabilities: Capabilities,
    *,
    scenarios: Sequence[Scenario] | None = None,
    extra_scenarios: Sequence[Scenario] = (),
    checks: Sequence[Check[CheckContext]] | None = None,
    callbacks_refused: str = "",
) -> Plan:
    """Decide which checks and scenarios apply to a target with ``capabilities``."""
    active: list[Check[CheckContext]] = []
    skipped: dict[str, str] = {}
    for check in CHECKS if checks is None else checks:
        missing = sorted(name for name in check.requires if not capabilities.has(name))
        if "callbacks" in check.requires and capabilities.callbacks and callbacks_refused:
            skipped[check.id] = callbacks_refused
        elif missing:
            skipped[check.id] = "; ".join(why_excluded(name) for name in missing)
        else:
            active.append(for_target(check, capabilities))
    pool = list(default_scenarios(capabilities) if scenarios is None else scenarios) + list(extra_scenarios)
    applicable = tuple(s for s in pool if all(capabilities.has(need) for need in s.needs))
    generated = scenarios is None and capabilities.text_format is None
    generation = (capabilities.reasoning, capabilities.stream_errors, capabilities.several_deltas_per_chunk)
    judging = {check.id for check in active}
    settings = tuple(
        (option.field, getattr(capabilities, option.field))
        for option in CAPABILITY_OPTIONS
        if option.valued and judging & set(option.judged_by)
    )
    return Plan(tuple(active), skipped, applicable, generated, generation, settings)


def idle_capabilities(capabilities: Capabilities) -> list[str]:
    """The declared capabilities (fields not at their default) that change neither the checks nor
    the scenarios for a target with ``capabilities``: declaring them says nothing about this run."""
    base = plan(capabilities).summary()
    idle = []
    for option in CAPABILITY_OPTIONS:
        default = getattr(Capabilities(), option.field)
        if getattr(capabilities, option.field) == default:
            continue
        ignored = not capabilities.events and option.field in ("callbacks", "lifecycle")
        if ignored or plan(replace(capabilities, **{option.field: default})).summary() == base:
            idle.append(option.field)
    return idle


@dataclass
class _Run:
    """One judged run: which checks applied, which failed on their own, which only as a consequence."""

    transcript: Transcript
    applied: set[str] = field(default_factory=set)
    failed: dict[str, list[str]] = field(default_factory=dict)  # primary failures only
    consequences: dict[str, str] = field(default_factory=dict)  # consequence check -> primary check
    not_judged: set[str] = field(default_factory=set)  # checks the run could not be judged by (it crashed)
    harms: dict[str, HarmVerdict] = field(default_factory=dict)  # per failing check: what it did to the user


def _judge(active: Sequence[Check[CheckContext]], context: CheckContext) -> _Run:
    """Judge one run by every active check. When the run could not be judged (a crash, a hang,
    unreadable output) only the robustness checks speak; a failure another failure on the same
    run explains (``Check.consequence_of``) is counted as its consequence."""
    transcript = context.transcript
    run = _Run(transcript)
    failing: dict[str, list[str]] = {}
    gated = not transcript.completed and not transcript.raised_at_stream_error
    for check in active:
        # A run stopped at its deadline says nothing about crashes or readable output either: it
        # is judged by the deadline check alone (a PASS of no_crash must mean a run that finished).
        if gated and (check.id not in ROBUSTNESS or (transcript.hung and check.id != "finishes_within_deadline")):
            run.not_judged.add(check.id)
            continue
        try:
            problems = check.run(context)
        except NotApplicable:
            continue
        run.applied.add(check.id)
        if problems:
            failing[check.id] = problems
    by_id = {check.id: check for check in active}
    robust_failure = next((c for c in failing if c in ROBUSTNESS), None)
    for check_id, problems in failing.items():
        cause = robust_failure if check_id not in ROBUSTNESS and robust_failure else None
        cause = cause or next((c for c in sorted(by_id[check_id].consequence_of) if c in failing), None)
        if cause is not None:
            run.consequences[check_id] = cause
        else:
            run.failed[check_id] = problems
    main: list[HarmVerdict] = []  # the main run's harm, classed once for every check judged on it
    for check_id in run.failed:
        if check_id in PROBED_CHECKS:
            run.harms[check_id] = check_harm(check_id, context)
        else:
            main = main or [run_harm(context)]
            run.harms[check_id] = main[0]
    run.harms = attribute_harms(run.harms)
    return run


def _realism(chunks: Sequence[ChunkResponse], scenario: Scenario, capabilities: Capabilities) -> Realism:
    """How real the input a target saw is. A target that renders chunks to bytes reads them as
    OpenAI-compatible Chat Completions (``conformance.adapters.openai_wire``), from a stream that
    ended normally with its terminal chunk: it never saw a stream without one."""
    if not capabilities.wire_dialects:
        return stream_realism(chunks, scenario.wire_dialects)
    realism = stream_realism(chunks, scenario.wire_dialects, "openai-chat")
    return realism_of((shape for shape in realism.shapes if shape != "no_terminal_marker"), "openai-chat")


def violations(
    factory: Callable[..., Any],
    scenario: Scenario,
    *,
    capabilities: Capabilities | None = None,
    adapter: HandlerAdapter | None = None,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
) -> list[str]:
    """Run ``factory`` once over ``scenario`` exactly as given and judge it by every applicable check.

    For your own hypothesis properties (which HypoFuzz can fuzz)::

        @given(strategies.wire_scenarios())
        def test_my_handler(scenario):
            assert not violations(make_handler, scenario)

    Returns ``"<check id>: <violation>"`` lines, empty when the run conforms. A failure that
    another failure explains is left out; a run that crashed or hung is judged by the robustness
    checks only. Raises ``TargetError`` when the factory cannot be used at all.
    """
    capabilities = capabilities or Capabilities()
    target = make_target(factory, capabilities, adapter=adapter, deadline=deadline)
    with rendering_dialects(scenario.wire_dialects):
        transcript = target.run(scenario.chunks, probe=False)
    run = _judge(plan(capabilities).active, CheckContext(scenario, transcript, capabilities))
    return [f"{check_id}: {problems[0]}" for check_id, problems in run.failed.items()]


class _Stop(BaseException):
    pass


@dataclass
class _Found:
    """Where a kept counterexample came from, so it can be searched for again and shrunk."""

    result: CheckResult
    message: str
    cases: st.SearchStrategy[Case] | None
    max_examples: int
    label: str = ""  # which search (a scenario's name, or a part of the generated ones): its database key
    seed: int = 0  # the seed that search ran with, so the shrinking search finds the failure again
    origin: tuple[int, int] = (0, 0)  # (search unit, failure number): where the whole run met it first
    # Searched first, before shrinking, when the failure was found on a theoretical input: the same
    # failure on an input of observed shapes only is what a maintainer should see.
    realistic: tuple[st.SearchStrategy[Case], ...] = ()


class _Session:
    """The state of one ``run_conformance`` call."""

    def __init__(
        self,
        target: HandlerTarget | AccumulatorTarget,
        the_plan: Plan,
        report: Report,
        *,
        seed: int,
        keep: int | None,
        on_progress: Callable[[str], None] | None,
        realistic: bool = False,
    ) -> None:
        self.target = target
        self.plan = the_plan
        self.report = report
        self.realistic = realistic
        self.seed = seed
        self.keep = keep
        self.on_progress = on_progress
        self.results = {check.id: CheckResult(check) for check in the_plan.active}
        self.scenarios_seen: dict[str, set[str]] = {check.id: set() for check in the_plan.active}
        self.found: list[_Found] = []
        # Where each failure was met, as (position of its search unit in the whole run, failure
        # number): what a sharded run needs to merge its parts in the order one run would have met them.
        self.unit = 0
        self.failures = 0
        self.origins: dict[str, list[tuple[int, int]]] = {check.id: [] for check in the_plan.active}
        self.first_failure: dict[str, tuple[int, int]] = {}

    # -- judging one run ---------------------------------------------------------------------

    def judge(self, scenario: Scenario, chunks: Sequence[ChunkResponse], *, probe: bool) -> _Run:
        with rendering_dialects(scenario.wire_dialects):
            transcript = self.target.run(chunks, probe=probe)
        self.report.examples += 1
        return _judge(self.plan.active, CheckContext(scenario, transcript, self.target.capabilities))

    def record(self, run: _Run, scenario: Scenario, chunks: Sequence[ChunkResponse], found: _Found | None) -> None:
        """Count a judged run; keep its failures that are new kinds (``found`` says how to find them again)."""
        for check_id in run.applied:
            result = self.results[check_id]
            result.examples_run += 1
            self.scenarios_seen[check_id].add(scenario.name)
        for check_id in run.not_judged:
            self.results[check_id].not_judged += 1
        for check_id, cause in run.consequences.items():
            if cause in self.results:
                consequences = self.results[cause].consequences
                consequences[check_id] = consequences.get(check_id, 0) + 1
        for check_id, problems in run.failed.items():
            result = self.results[check_id]
            origin = (self.unit, self.failures)
            self.failures += 1
            self.first_failure.setdefault(check_id, origin)
            new = not result.shows(problems[0]) and (self.keep is None or len(result.counterexamples) < self.keep)
            text = _render(scenario, chunks, run.transcript, problems) if new else ""
            result.fail(
                problems[0],
                text,
                Counterexample(scenario, tuple(chunks)),
                scenario=scenario.name,
                keep=self.keep,
                harm=run.harms.get(check_id),
                realism=_realism(chunks, scenario, self.target.capabilities) if new else None,
            )
            if new:
                self.origins[check_id].append(origin)
            if new and found is not None:
                self.found.append(replace(found, result=result, message=problems[0], origin=origin))
            elif new:
                # A scenario as written: never searched again (no cases), but its layout is still
                # checked for shapes the failure does not need, once, in the shrinking round.
                self.found.append(_Found(result, problems[0], None, 0, scenario.name, self.seed, origin))
        if run.transcript.hung:
            raise _Stop(f"the target hung on scenario {scenario.name!r}; the run stopped there")

    # -- the searches --------------------------------------------------------------------------

    def count(
        self,
        cases: st.SearchStrategy[Case],
        max_examples: int,
        label: str,
        *,
        seed: int | None = None,
        realistic: tuple[st.SearchStrategy[Case], ...] = (),
    ) -> None:
        """Run ``max_examples`` generated cases, judging and counting each (no shrinking)."""
        if max_examples <= 0:
            return
        seed = self.seed if seed is None else seed
        active = self.plan.active
        found = (
            _Found(CheckResult(active[0]), "", cases, max_examples, label, seed, realistic=realistic)
            if active
            else None
        )

        @search_settings(max_examples, seed, shrink=False)
        @given(cases)
        def every_case(case: Case) -> None:
            scenario, chunks = case
            self.record(self.judge(scenario, chunks, probe=False), scenario, chunks, found)

        _share_database_key(every_case, label)
        with the_same_search_in_every_process():
            every_case()

    @staticmethod
    def _kept(found: _Found) -> Any:
        """The counterexample kept for ``found``'s kind of failure (None: not kept)."""
        wanted = signature(found.message)
        return next((c for c in found.result.counterexamples if signature(c.message) == wanted), None)

    def _small(self, found: _Found) -> bool:
        """A counterexample of a few chunks and at most one call is already as readable as shrinking makes it."""
        kept = self._kept(found)
        if kept is None or not isinstance(kept.input, Counterexample):
            return False
        chunks = kept.input.chunks
        return len(chunks) <= 3 and len(kept.input.scenario.expected.tool_calls) <= 1

    def shrink(self, found: _Found) -> None:
        """Search again for one kept failure and let hypothesis shrink it; keep the smaller input,
        then leave out of it the shapes the failure does not need (``conformance.handler.incidental``).

        A failure first met on a theoretical input is first searched for among inputs of observed
        shapes only (``_Found.realistic``): when one fails the same way, that one is shrunk and shown.
        """
        self._shrink(found)
        self._drop_incidental_shapes(found.result, signature(found.message))

    def _drop_incidental_shapes(self, result: CheckResult, wanted: str) -> None:
        """Try the counterexample kept for the ``wanted`` failure without each shape it shows; keep
        every move after which the target still fails the same way. Its realism is then that of the
        shapes the failure needs."""
        kept = next((c for c in result.counterexamples if signature(c.message) == wanted), None)
        if kept is None or not isinstance(kept.input, Counterexample) or kept.realism is None:
            return
        check_id = result.check.id
        scenario, chunks = kept.input.scenario, tuple(kept.input.chunks)
        moved_to: tuple[Scenario, tuple[ChunkResponse, ...], _Run] | None = None
        for shape, move in MOVES:
            if shape not in kept.realism.shapes:
                continue
            moved = move(chunks)
            if moved is None:
                continue
            candidate = replace(scenario, chunks=moved)
            run = self.judge(candidate, moved, probe=False)
            problems = run.failed.get(check_id)
            if problems and signature(problems[0]) == wanted:
                scenario, chunks, moved_to = candidate, moved, (candidate, moved, run)
        if moved_to is not None:
            self._keep(result, wanted, *moved_to)

    def _keep(
        self, result: CheckResult, wanted: str, scenario: Scenario, chunks: Sequence[ChunkResponse], run: _Run
    ) -> None:
        """Show ``chunks`` (which fail ``result``'s check the ``wanted`` way) as its counterexample."""
        problems = run.failed[result.check.id]
        for position, kept in enumerate(result.counterexamples):
            if signature(kept.message) == wanted:
                kept.text = _render(scenario, chunks, run.transcript, problems)
                kept.message = problems[0]
                kept.input = Counterexample(scenario, tuple(chunks))
                kept.harm = run.harms.get(result.check.id)
                kept.realism = _realism(chunks, scenario, self.target.capabilities)
                if position == 0:
                    result.message = problems[0]

    def _shrink(self, found: _Found) -> None:
        kept = self._kept(found)
        theoretical = kept is not None and kept.realism is not None and bool(kept.realism.theoretical)
        # With an example database, every failure is searched again so that it is saved there.
        if found.cases is None or (self._small(found) and not theoretical and example_database() is None):
            return
        searches = [(cases, f"{found.label}/realistic") for cases in found.realistic] if theoretical else []
        for cases, label in [*searches, (found.cases, found.label)]:
            if self._shrink_in(found, cases, label):
                return

    def _shrink_in(self, found: _Found, cases: st.SearchStrategy[Case], label: str) -> bool:
        """Search ``cases`` for ``found``'s failure and shrink it; True when the search is over (found or flaky)."""
        wanted, check_id = signature(found.message), found.result.check.id
        smallest: list[tuple[Scenario, list[ChunkResponse], _Run]] = []

        @search_settings(found.max_examples, found.seed)
        @given(cases)
        def fails_the_same_way(case: Case) -> None:
            scenario, chunks = case
            run = self.judge(scenario, chunks, probe=False)
            problems = run.failed.get(check_id)
            if problems and signature(problems[0]) == wanted:
                smallest[:] = [(scenario, chunks, run)]
                raise AssertionError(problems[0])

        _share_database_key(fails_the_same_way, label)
        try:
            with the_same_search_in_every_process():
                fails_the_same_way()
        except AssertionError:
            pass
        except Exception as error:  # noqa: BLE001 - the target re-run by shrinking may raise anything (Flaky too)
            self.report.notes.append(
                f"{check_id}: the target gave different results for the same input while shrinking "
                f"({type(error).__name__}); the counterexample shown is the one first found, not shrunk"
            )
            return True
        if not smallest:
            return False
        self._keep(found.result, wanted, *smallest[0])
        return True


def _share_database_key(search: Callable[..., None], label: str) -> None:
    """Give the counting and the shrinking search of one scenario the same example-database key.

    Inputs the shrinking search saves (its failures) are then replayed by the counting search of
    the next run, where they are judged and counted like any other. Hypothesis would otherwise key
    each inner function by its own source, and the count would never see them.
    """
    # Hypothesis has no public setting for the key; its own `find()` sets this attribute the same way.
    key = f"toolcall-conformance:{label}".encode()
    search._hypothesis_internal_database_key = key  # type: ignore[attr-defined]  # noqa: SLF001 - Hypothesis's key seam


def _render(scenario: Scenario, chunks: Sequence[ChunkResponse], transcript: Transcript, problems: list[str]) -> str:
    lines = [
        f"scenario: {scenario.name} ({scenario.source})",
        f"chunks:   {describe_chunks(chunks)}",
        # Rendered to bytes with these shapes (no `index`, a null first content, ...): the chunks
        # above alone would not reproduce a failure that only the rendered bytes trigger.
        *([f"wire:     rendered with {', '.join(sorted(scenario.wire_dialects))}"] if scenario.wire_dialects else []),
        f"expected: {scenario.expected.describe()}",
    ]
    if transcript.kind == "accumulator":
        lines.append("actual calls: " + ("; ".join(c.describe() for c in transcript.calls) or "none"))
    else:
        lines += ["actual events:", *[f"  {event.describe()}" for event in transcript.events]]
        lines.append("actual invocations: " + ("; ".join(i.describe() for i in transcript.invocations) or "none"))
    lines += ["violation: " + problem for problem in problems[:3]]
    return "\n".join(lines)


def _split_cases(scenario: Scenario, realistic: bool = False) -> st.SearchStrategy[Case]:
    """One scenario, re-fragmented at arbitrary boundaries (re-fragmentation keeps one delta per
    call per chunk; packing several is generated)."""
    return st.tuples(st.just(scenario), refragmented(scenario.chunks, realistic=realistic))


def _generated_cases(capabilities: Capabilities, realistic: bool = False) -> st.SearchStrategy[Case]:
    """Streams drawn from the whole input space (``wire_scenarios``), each as its own chunks."""
    return wire_scenarios(
        with_reasoning=capabilities.reasoning,
        with_errors=capabilities.stream_errors,
        several_deltas_per_chunk=capabilities.several_deltas_per_chunk,
        realistic=realistic,
        wire_dialects=capabilities.wire_dialects,
    ).map(lambda scenario: (scenario, list(scenario.chunks)))


def _hints(results: Sequence[CheckResult], capabilities: Capabilities) -> Iterator[str]:
    """A capability flag to consider when a check failed on every scenario it ran on."""
    for result in results:
        if (
            result.status != "failed"
            or result.scenarios_run < 2
            or len(result.failing_scenarios) < result.scenarios_run
        ):
            continue
        flags = [
            option.flag
            for option in CAPABILITY_OPTIONS
            if option.field in result.check.requires and getattr(capabilities, option.field) is True
        ]
        if flags:
            # Declaring a capability away is advice for a target that never does the thing at all; when
            # the failures run a tool wrong, lose a call or crash, following it blindly hides a defect.
            severe = result.harm is not None and result.harm.value != "stream_shape"
            yield (
                f"{result.check.id} failed on every scenario it ran on: if the target never does this at all, "
                f"declare {' or '.join(flags)}"
                + (
                    f"; if it does, these are defects ({result.harm.value}), not a missing capability"
                    if severe and result.harm is not None
                    else ""
                )
            )
        if result.check.id in ("no_crash", "events_readable"):
            yield (
                f"{result.check.id} failed on every scenario it ran on: if the target takes chunks or gives events "
                "in shapes of its own, translate them with a HandlerAdapter (--adapter, --toolcall-adapter; "
                "README, 'The shapes the suite reads')"
            )


def run_conformance(
    factory: Callable[..., Any],
    *,
    capabilities: Capabilities | None = None,
    profile: str | Profile = "ci",
    seed: int = 0,
    scenarios: Sequence[Scenario] | None = None,
    extra_scenarios: Sequence[Scenario] = (),
    checks: Sequence[Check[CheckContext]] | None = None,
    adapter: HandlerAdapter | None = None,
    target: str = "",
    on_progress: Callable[[str], None] | None = None,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
    keep_counterexamples: int | None = DEFAULT_COUNTEREXAMPLES,
    shrink: bool = True,
    realistic: bool = False,
) -> Report:
    """Run every applicable check against targets made by ``factory`` and return a ``Report``.

    ``factory`` is called for each run (with ``on_segment_event``/``on_tool_invocation`` when it
    takes them). ``capabilities`` says what the target supports (``events=False``: a final-result
    accumulator with ``add``/``result``). The built-in scenarios (``scenarios`` replaces them,
    ``extra_scenarios`` adds to them) run as written and re-fragmented, then generated streams;
    ``profile`` sets how many runs, ``seed`` makes the run reproducible (``conformance.handler.sharded``
    splits the same search over parallel workers); ``shrink=False``
    keeps each failure as first found (the same verdicts and counts, most of a failing target's
    time saved, counterexamples larger, realism as first met). ``realistic=True`` draws only input
    shapes a named server has been seen sending (``conformance.wire.shapes``). Each finding carries
    its harm and the realism of its counterexample: a failure first met on a theoretical input is
    searched for among observed inputs before it is shrunk. Raises
    ``conformance.handler.drive.TargetError`` when the factory cannot be used at all.
    """
    session, chosen, capabilities = _start(
        factory,
        capabilities,
        profile=profile,
        seed=seed,
        scenarios=scenarios,
        extra_scenarios=extra_scenarios,
        checks=checks,
        adapter=adapter,
        target=target,
        on_progress=on_progress,
        deadline=deadline,
        keep=keep_counterexamples,
        realistic=realistic,
    )
    report = session.report
    started = time.perf_counter()
    try:
        _search_everything(session, chosen, capabilities, None, shrink=shrink)
    except _Stop as stop:
        report.stopped = str(stop)
    except KeyboardInterrupt:
        report.stopped = "interrupted (Ctrl-C); the report covers what ran before"
    _finish(session, checks)
    report.notes += closing_notes(report.results, capabilities)
    report.seconds = time.perf_counter() - started
    return report


def _start(
    factory: Callable[..., Any],
    capabilities: Capabilities | None,
    *,
    profile: str | Profile,
    seed: int,
    scenarios: Sequence[Scenario] | None,
    extra_scenarios: Sequence[Scenario],
    checks: Sequence[Check[CheckContext]] | None,
    adapter: HandlerAdapter | None,
    target: str,
    on_progress: Callable[[str], None] | None,
    deadline: float | None,
    keep: int | None,
    realistic: bool = False,
) -> tuple[_Session, Profile, Capabilities]:
    """The target, the plan and an empty report: everything a search (or a part of one) starts from."""
    if capabilities is not None and not isinstance(capabilities, Capabilities):
        raise TypeError(
            f"capabilities= must be a conformance.Capabilities (or None), got {type(capabilities).__name__}: "
            f"{capabilities!r}; build one: Capabilities(reasoning=False, ...)"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed= must be an int, got {type(seed).__name__}: {seed!r}")
    capabilities = capabilities or Capabilities()
    chosen = resolve_profile(profile)
    label = target or describe_factory(factory)
    the_target = make_target(factory, capabilities, adapter=adapter, label=label, deadline=deadline)
    the_plan = plan(
        capabilities,
        scenarios=scenarios,
        extra_scenarios=extra_scenarios,
        checks=checks,
        callbacks_refused=the_target.callbacks_refused,
    )
    report = Report(target=label, profile=chosen.name, seed=seed)
    report.target_spec = {"capabilities": capabilities.declared()}
    if realistic:
        the_plan, left_out = _observed_only(the_plan)
        report.target_spec["realistic"] = True
        report.notes.append(
            "--realistic: only input shapes a named server has been seen sending were drawn "
            "(conformance.wire.shapes)"
            + (f"; scenarios with theoretical shapes left out: {', '.join(left_out)}" if left_out else "")
        )
    session = _Session(the_target, the_plan, report, seed=seed, keep=keep, on_progress=on_progress, realistic=realistic)
    return session, chosen, capabilities


def _observed_only(the_plan: Plan) -> tuple[Plan, list[str]]:
    """The plan without the scenarios that, as written, show a shape no server was seen sending."""
    kept = tuple(s for s in the_plan.scenarios if not stream_realism(s.chunks, s.wire_dialects).theoretical)
    left_out = [s.name for s in the_plan.scenarios if s not in kept]
    return replace(the_plan, scenarios=kept), left_out


# A unit of the search: a built-in scenario (as written, then re-cut), or one part of the
# generated streams. The generated search is made of independent parts with their own seeds so
# that sharding can spread it (and the shrinking of what it finds) over workers; an unsharded run
# searches the very same parts.
_Unit = Scenario | int
GENERATED_PARTS = 6
_GENERATED_WEIGHT = 1


def shard_units(units: Sequence[_Unit], shard: tuple[int, int] | None) -> list[_Unit]:
    """The units shard ``(index, count)`` runs: a deterministic, cost-balanced partition (all when None).

    Every unit is searched exactly as in an unsharded run (same seed, same examples), so the
    merged shards give the same verdicts and counts as one run.
    """
    if shard is None:
        return list(units)
    index, count = shard
    if not 0 <= index < count:
        raise ValueError(f"shard must be (index, count) with 0 <= index < count, got {shard}")
    loads = [0] * count
    mine: list[_Unit] = []
    for unit in units:
        lightest = min(range(count), key=lambda position: (loads[position], position))
        loads[lightest] += _GENERATED_WEIGHT if isinstance(unit, int) else 1
        if lightest == index:
            mine.append(unit)
    return mine


def _part_seed(seed: int, part: int) -> int:
    """The seed of one part of the generated search: distinct per part, fixed by the run's seed."""
    return seed * GENERATED_PARTS + part


def search_units(the_plan: Plan) -> list[_Unit]:
    """Every unit of a run's search, in the order one run searches them."""
    units: list[_Unit] = list(range(GENERATED_PARTS)) if the_plan.generated else []
    return units + list(the_plan.scenarios)


def unit_label(unit: _Unit) -> str:
    """A unit's name: its example-database key and how a sharded run's shrinking finds its search again."""
    return f"generated#{unit}" if isinstance(unit, int) else unit.name


def unit_cases(unit: _Unit, capabilities: Capabilities, realistic: bool = False) -> st.SearchStrategy[Case]:
    """The inputs a unit's search draws (``realistic``: only shapes servers were seen sending)."""
    if isinstance(unit, int):
        return _generated_cases(capabilities, realistic)
    return _split_cases(unit, realistic)


def realistic_alternatives(
    unit: _Unit, capabilities: Capabilities, realistic: bool
) -> tuple[st.SearchStrategy[Case], ...]:
    """Where to look first for a failure met on a theoretical input of ``unit``: the unit's own inputs
    restricted to observed shapes, then any generated stream of observed shapes (none in a run that
    is already realistic: everything it meets is observed)."""
    if realistic:
        return ()
    generated = _generated_cases(capabilities, realistic=True)
    if isinstance(unit, int) or stream_realism(unit.chunks, unit.wire_dialects).theoretical:
        return (generated,)  # re-cutting a scenario that is theoretical as written keeps it theoretical
    return (_split_cases(unit, realistic=True), generated)


def _search_everything(
    session: _Session, chosen: Profile, capabilities: Capabilities, shard: tuple[int, int] | None, *, shrink: bool
) -> None:
    units = search_units(session.plan)
    positions = {id(unit): position for position, unit in enumerate(units)}
    generated_examples = chosen.examples_per_scenario * 3
    mine = list(shard_units(units, shard))
    for done, unit in enumerate(mine):
        session.unit = positions[id(unit)]
        if isinstance(unit, int):
            session.report.scenarios += 1 if unit == 0 else 0  # the generated streams count as one scenario
            if session.on_progress:
                session.on_progress(
                    ProgressStep(f"generated streams ({unit + 1} of {GENERATED_PARTS})", done, len(mine))
                )
            part_examples = generated_examples // GENERATED_PARTS + (unit < generated_examples % GENERATED_PARTS)
            session.count(
                unit_cases(unit, capabilities, session.realistic),
                part_examples,
                unit_label(unit),
                seed=_part_seed(session.seed, unit),
                realistic=realistic_alternatives(unit, capabilities, session.realistic),
            )
            continue
        session.report.scenarios += 1
        if session.on_progress:
            session.on_progress(ProgressStep(unit.name, done, len(mine)))
        session.record(session.judge(unit, unit.chunks, probe=True), unit, unit.chunks, None)
        session.count(
            unit_cases(unit, capabilities, session.realistic),
            chosen.examples_per_scenario,
            unit_label(unit),
            realistic=realistic_alternatives(unit, capabilities, session.realistic),
        )
    if not shrink:
        return  # a shard of a sharded run: its failures are shrunk once the shards are merged
    findings = list(session.found)
    for done, found in enumerate(findings):
        if session.on_progress:
            session.on_progress(ProgressStep(f"shrinking {found.result.check.id}", done, len(findings)))
        session.shrink(found)


def _finish(session: _Session, checks: Sequence[Check[CheckContext]] | None) -> None:
    """Every check's result in catalogue order: the ones the plan left out or nothing reached skipped."""
    report = session.report
    results = []
    for check in CHECKS if checks is None else checks:
        result = session.results.get(check.id)
        if result is None:
            result = CheckResult(for_target(check, session.target.capabilities))
            result.skip(session.plan.skipped.get(check.id, "not run"))
        elif result.status == "passed" and result.examples_run == 0:
            result.skip(
                "ran on no applicable input"
                if not report.stopped
                else f"not reached before the run stopped ({report.stopped})"
            )
        result.scenarios_run = len(session.scenarios_seen.get(check.id, ()))
        result.target = report.target
        results.append(result)
    report.results = results


def closing_notes(results: Sequence[CheckResult], capabilities: Capabilities) -> list[str]:
    """What the report's reader should consider: capability flags and adapters suggested by the
    failures, and declared capabilities that changed nothing (computed once the whole run is in)."""
    notes = list(_hints(results, capabilities))
    idle = idle_capabilities(capabilities)
    notes += [
        f"{field}={getattr(capabilities, field)!r} changes nothing for this target (no check or scenario depends "
        "on it here)"
        for field in idle
        # A final-result accumulator has no callbacks or lifecycle: implied, not declared.
        if capabilities.events or field not in ("callbacks", "lifecycle")
    ]
    if capabilities.json_numbers == "double" and "json_numbers" not in idle:
        notes.append(numbers_note())  # the verdict depends on it: whoever reads the report must know
    return notes
