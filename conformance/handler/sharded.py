"""One ``run_conformance`` search split over parallel workers, with the same verdicts and counts.

Shrinking is most of a failing target's run, so splitting only the search would leave each worker
shrinking the same failures it happened to meet too. A sharded run therefore goes in two rounds:

1. **Search.** Each shard searches its units (``runner.shard_units``) without shrinking and says
   where it met each failure: ``(unit position, failure number)``.
2. **Merge.** The shards' results are put back in the order one run would have met them; the
   failures one run would have kept (the first of each kind, at most ``keep`` per check) become
   the shrink tasks, each found again by its own search (same label, same seed).
3. **Shrink.** The tasks are divided between the shards; each shrinks its own.
4. **Finish.** The shrunk counterexamples replace the first found ones, then the closing notes
   (hints, idle capabilities) are computed over the whole run.

Every step is deterministic and every part is picklable, so workers exchange them as files
(``conformance.pytest_plugin.sharing``). The result equals an unsharded ``run_conformance``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.handler.capabilities import Capabilities
from conformance.handler.checks import CheckContext
from conformance.handler.drive import DEFAULT_DEADLINE_SECONDS
from conformance.handler.observe import HandlerAdapter
from conformance.handler.runner import (
    _finish,
    _Found,
    _search_everything,
    _Session,
    _start,
    _Stop,
    closing_notes,
    realistic_alternatives,
    search_units,
    unit_cases,
    unit_label,
)
from conformance.handler.scenarios import Scenario
from conformance.verdict import DEFAULT_COUNTEREXAMPLES, Check, CheckResult, Profile, Report, signature
from conformance.verdict.check import Counterexample

__all__ = ["ShardSearch", "ShardedRun", "ShrinkTask", "Shrunk"]

Origin = tuple[int, int]  # (position of the search unit in the whole run, failure number within it)


@dataclass(frozen=True)
class ShrinkTask:
    """One kept failure to search for again and shrink."""

    check_id: str
    message: str
    label: str  # the search that met it (``runner.unit_label``)
    seed: int
    max_examples: int
    origin: Origin


@dataclass
class ShardSearch:
    """What one shard's search found, before any shrinking."""

    report: Report
    origins: dict[str, list[Origin]]  # per check, where each of its kept counterexamples was met
    first_failure: dict[str, Origin]  # per check, where it first failed (its message comes from there)
    scenarios_seen: dict[str, set[str]]
    tasks: list[ShrinkTask] = field(default_factory=list)


@dataclass
class Shrunk:
    """The outcome of one shrink task: the smaller counterexample (None: not found again)."""

    task: ShrinkTask
    counterexample: Counterexample | None
    notes: list[str]
    examples: int


class ShardedRun:
    """``run_conformance(factory, **options)`` in parts: ``search`` and ``shrink`` run in any worker,
    ``merge`` and ``finish`` in every worker (they are cheap and deterministic)."""

    def __init__(
        self,
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
        deadline: float | None = DEFAULT_DEADLINE_SECONDS,
        keep_counterexamples: int | None = DEFAULT_COUNTEREXAMPLES,
        realistic: bool = False,
    ) -> None:
        self.realistic = realistic
        self._start_options: dict[str, Any] = {
            "profile": profile,
            "seed": seed,
            "scenarios": scenarios,
            "extra_scenarios": extra_scenarios,
            "checks": checks,
            "adapter": adapter,
            "target": target,
            "on_progress": None,
            "deadline": deadline,
            "keep": keep_counterexamples,
            "realistic": realistic,
        }
        self.factory = factory
        self.capabilities = capabilities or Capabilities()
        self.checks = checks
        self.keep = keep_counterexamples

    def _session(self) -> tuple[_Session, Profile]:
        session, chosen, _ = _start(self.factory, self.capabilities, **self._start_options)
        return session, chosen

    def search(self, shard: tuple[int, int]) -> ShardSearch:
        """Round 1: search shard ``(index, count)``'s units, without shrinking."""
        session, chosen = self._session()
        started = time.perf_counter()
        try:
            _search_everything(session, chosen, self.capabilities, shard, shrink=False)
        except _Stop as stop:
            session.report.stopped = str(stop)
        _finish(session, self.checks)
        session.report.seconds = time.perf_counter() - started
        tasks = [
            ShrinkTask(f.result.check.id, f.message, f.label, f.seed, f.max_examples, f.origin) for f in session.found
        ]
        return ShardSearch(session.report, session.origins, session.first_failure, session.scenarios_seen, tasks)

    def merge(self, parts: Sequence[ShardSearch]) -> tuple[Report, list[ShrinkTask]]:
        """Round 2: the shards as one unshrunk report, and the failures one run would have shrunk."""
        first = parts[0].report
        merged = Report(first.target, first.profile, first.seed, target_spec=dict(first.target_spec))
        for part in parts:
            merged.scenarios += part.report.scenarios
            merged.examples += part.report.examples
            merged.seconds = max(merged.seconds, part.report.seconds)
            merged.stopped = merged.stopped or part.report.stopped
        kept: set[tuple[str, Origin]] = set()
        for position, result in enumerate(first.results):
            combined = self._merge_check(result.check.id, parts, position, merged.stopped)
            merged.results.append(combined[0])
            kept |= {(result.check.id, origin) for origin in combined[1]}
        tasks = sorted(
            (task for part in parts for task in part.tasks if (task.check_id, task.origin) in kept),
            key=lambda task: task.origin,
        )
        return merged, ([] if merged.stopped else tasks)

    def _merge_check(
        self, check_id: str, parts: Sequence[ShardSearch], position: int, stopped: str
    ) -> tuple[CheckResult, list[Origin]]:
        results = [part.report.results[position] for part in parts]
        merged = CheckResult(results[0].check, target=results[0].target)
        seen: set[str] = set()
        met: list[tuple[Origin, Counterexample]] = []
        firsts: list[tuple[Origin, str]] = []
        for part, result in zip(parts, results, strict=True):
            merged.examples_run += result.examples_run
            merged.failing_examples += result.failing_examples
            merged.failing_scenarios |= result.failing_scenarios
            merged.not_judged += result.not_judged
            for other, count in result.consequences.items():
                merged.consequences[other] = merged.consequences.get(other, 0) + count
            for harm, count in result.harms.items():
                merged.harms[harm] = merged.harms.get(harm, 0) + count
            seen |= part.scenarios_seen.get(check_id, set())
            met += zip(part.origins.get(check_id, []), result.counterexamples, strict=True)
            if check_id in part.first_failure:
                firsts.append((part.first_failure[check_id], result.message))
        merged.scenarios_run = len(seen)
        origins: list[Origin] = []
        for origin, counterexample in sorted(met, key=lambda pair: pair[0]):
            if merged.shows(counterexample.message) or (self.keep is not None and len(origins) >= self.keep):
                continue
            merged.counterexamples.append(counterexample)
            origins.append(origin)
        if firsts:
            merged.status, merged.message = "failed", min(firsts)[1]
        elif merged.examples_run == 0:
            # Skipped by the plan (the same reason in every shard), or reached by no shard.
            planned = [r.skipped_reason for r in results if r.status == "skipped" and r.examples_run == 0]
            reason = next((why for why in planned if not why.startswith(("ran on no", "not reached"))), "")
            merged.skip(
                reason
                or ("ran on no applicable input" if not stopped else f"not reached before the run stopped ({stopped})")
            )
        return merged, origins

    def shrink(self, merged: Report, tasks: Sequence[ShrinkTask], shard: tuple[int, int]) -> list[Shrunk]:
        """Round 3: shrink the tasks of shard ``(index, count)`` (every ``count``-th, from ``index``)."""
        index, count = shard
        mine = list(tasks)[index::count]
        if not mine:
            return []
        session, _ = self._session()
        units = {unit_label(unit): unit for unit in search_units(session.plan)}
        results = {result.check.id: result for result in merged.results}
        shrunk = []
        for task in mine:
            result = results[task.check_id]
            unit = units[task.label]
            # A task without examples is a scenario as written: nothing to search again.
            cases = unit_cases(unit, self.capabilities, self.realistic) if task.max_examples else None
            realistic = realistic_alternatives(unit, self.capabilities, self.realistic)
            notes_before, examples_before = len(session.report.notes), session.report.examples
            found = _Found(result, task.message, cases, task.max_examples, task.label, task.seed, task.origin)
            found.realistic = realistic
            session.shrink(found)
            wanted = signature(task.message)
            smaller = next((kept for kept in result.counterexamples if signature(kept.message) == wanted), None)
            shrunk.append(
                Shrunk(
                    task,
                    smaller,
                    session.report.notes[notes_before:],
                    session.report.examples - examples_before,
                )
            )
        return shrunk

    def finish(self, merged: Report, shrunk: Sequence[Shrunk]) -> Report:
        """Round 4: put the shrunk counterexamples in place (in the order one run shrinks them), then the notes."""
        results = {result.check.id: result for result in merged.results}
        for done in sorted(shrunk, key=lambda item: item.task.origin):
            merged.notes += [note for note in done.notes if note not in merged.notes]
            merged.examples += done.examples
            if done.counterexample is None:
                continue
            result = results[done.task.check_id]
            wanted = signature(done.task.message)
            for position, kept in enumerate(result.counterexamples):
                if signature(kept.message) == wanted:
                    result.counterexamples[position] = done.counterexample
                    if position == 0:
                        result.message = done.counterexample.message
        merged.notes += closing_notes(merged.results, self.capabilities)
        return merged
