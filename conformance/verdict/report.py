"""A ``Report``: every check's verdict for one run, over one or several targets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.verdict.check import CheckResult, Status
from conformance.verdict.harm import Harm, at_least, parse_harm

__all__ = ["Report", "describe_factory", "merge_reports"]


@dataclass
class Report:
    """What a run found: one ``CheckResult`` per check (and per target when several were run)."""

    target: str
    profile: str
    seed: int
    results: list[CheckResult] = field(default_factory=list)
    scenarios: int = 0
    examples: int = 0
    seconds: float = 0.0
    # Why the run stopped early (the user pressed Ctrl-C, the target hung), or "" when it ran to the end.
    stopped: str = ""
    # Advice for the reader (a capability flag that would explain a failure on every scenario).
    notes: list[str] = field(default_factory=list)
    # What produced the report, so a saved counterexample can name the same target again.
    target_spec: dict[str, Any] = field(default_factory=dict)
    # The least harm that fails the run (``--fail-on``); None: any failing check does.
    fail_on: Harm | None = None
    # What went wrong releasing the target after a complete run (a stack's ``close()`` raised), or "".
    cleanup_error: str = ""

    @property
    def conformant(self) -> bool:
        """No check failed (skipped checks neither pass nor fail a target)."""
        return all(result.status != "failed" for result in self.results)

    def gate(self, fail_on: Harm | str | None = None) -> list[CheckResult]:
        """The failing checks that fail a run gated at ``fail_on`` (default: the report's own ``fail_on``).

        A check gates when any of its failing runs is at least that harmful, or when a failing run's
        harm was not classified (an unknown harm is never let through). Without a threshold every
        failing check gates.
        """
        threshold = parse_harm(fail_on) if isinstance(fail_on, str) else (fail_on or self.fail_on)
        failed = self.by_status("failed")
        if threshold is None:
            return failed
        return [
            result
            for result in failed
            if result.unclassified > 0 or any(at_least(Harm(harm), threshold) for harm in result.harms)
        ]

    @property
    def passes(self) -> bool:
        """No failing check reaches the report's ``fail_on`` (with none set: the same as ``conformant``)."""
        return not self.gate()

    def by_status(self, status: Status) -> list[CheckResult]:
        """The results with this status, in report order."""
        return [result for result in self.results if result.status == status]

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (``docs/report-schema.md``)."""
        return {
            "conformant": self.conformant,
            "fail_on": self.fail_on.value if self.fail_on else None,
            "passes": self.passes,
            "target": self.target,
            "profile": self.profile,
            "seed": self.seed,
            "scenarios": self.scenarios,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "notes": list(self.notes),
            "checks": [result.to_json() for result in self.results],
        }


def merge_reports(reports: Sequence[Report], title: str) -> Report:
    """One report over several targets; each check result keeps its own target."""
    if not reports:
        raise ValueError("merge_reports needs at least one report")
    merged = Report(target=title, profile=reports[0].profile, seed=reports[0].seed)
    for report in reports:
        merged.results += report.results
        merged.scenarios += report.scenarios
        merged.examples += report.examples
        merged.seconds += report.seconds
        merged.notes += report.notes
        merged.stopped = merged.stopped or report.stopped
    if len(reports) == 1:
        merged.target_spec = dict(reports[0].target_spec)
    return merged


def describe_factory(factory: Callable[..., Any] | object) -> str:
    """``module:qualname`` for a function or class (what ``--handler`` takes), else its repr.

    Reports and JUnit class names show it, so it must be stable and readable, never
    ``<function make_handler at 0x7f...>``.
    """
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<lambda>" not in qualname:
        return f"{module}:{qualname}"
    text = repr(factory)
    return text.split(" at 0x")[0].lstrip("<") if " at 0x" in text else text
