"""A check (stable id, rationale, how to fix, the function that judges one input) and its verdict."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from conformance.verdict.harm import Harm, HarmVerdict, worst
from conformance.verdict.realism import Realism

__all__ = [
    "DEFAULT_COUNTEREXAMPLES",
    "Check",
    "CheckRegistry",
    "CheckResult",
    "Counterexample",
    "NotApplicable",
    "Status",
    "signature",
]

# How many distinct failures of one check a report shows by default (``--all-counterexamples``: all).
DEFAULT_COUNTEREXAMPLES = 3

# Values that differ from run to run without changing what kind of failure a message describes.
# A quote opens a value only after a non-word character: the apostrophe of "provider's" is prose,
# and reading it as a quote would swallow the message up to the next quote.
_QUOTED = re.compile(r"(?<!\w)'(?:[^'\\]|\\.)*'|(?<!\w)\"(?:[^\"\\]|\\.)*\"")
# Innermost objects and lists, blanked repeatedly so that a nested one becomes one value.
_INNERMOST = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]")
# Segment references (``#...``), uuids, numbers.
_SCALARS = re.compile(r"#\S+|\b[0-9a-f]{32}\b|-?\d+(?:\.\d+)?")
# The tool name in a call's label ("call 0 (get_weather id=..."): which tool the generator drew is
# data, not the kind of failure (the same merge on get_weather and on get_time is one finding).
_CALL_LABEL_NAME = re.compile(r"\b(call _ \()(?!id[ =])[^\s,()]+")
# A call rendered as "NAME(ARGUMENTS)" once its arguments are blanked ("it ran as rea(_)").
_RENDERED_CALL_NAME = re.compile(r"(?<![\w.-])[\w.-]+\(_\)")


def signature(message: str) -> str:
    """What kind of failure a violation message describes: the message with its values blanked.

    Two failures with the same signature are the same bug on different data (``'read_'`` and
    ``'get_'`` cut short; ``{}`` and a deeply nested object run where neither should); different
    signatures are distinct findings, each shown with its own minimal counterexample.
    """
    # The first line by "\n" only: str.splitlines() would also cut at a U+2028 inside a quoted value.
    text = _QUOTED.sub("_", message.split("\n", 1)[0])
    while True:
        blanked = _INNERMOST.sub("_", text)
        if blanked == text:
            return _RENDERED_CALL_NAME.sub("_(_)", _CALL_LABEL_NAME.sub(r"\1_", _SCALARS.sub("_", text)))
        text = blanked


ContextT = TypeVar("ContextT")

# passed: applied to at least one input and never violated; failed: violated at least once;
# skipped: applied to nothing (a capability excluded it, or no input could exercise it).
Status = Literal["passed", "failed", "skipped"]


class NotApplicable(Exception):
    """Raised by a check when this input holds nothing it can judge (never counted as a pass)."""


@dataclass(frozen=True)
class Check(Generic[ContextT]):
    """One contract rule: ``run(context)`` returns violation messages, empty when the input conforms.

    ``requires`` names the capabilities a target must declare for the check to apply; ``taxonomy``
    the bug classes of ``shared/research/bug-taxonomy.md`` it catches; ``rule`` the rule of the
    design it enforces (an id of the suite's contract, e.g. ``conformance.handler.contract``);
    ``consequence_of`` the checks whose failure on the same input explains this one's, so one root
    cause is reported once. ``harm`` is the declared harm of a check whose suite has no executed
    outcome to classify (a follow-up request, a converter's own contract); checks judged on what ran
    get their harm from each failing run instead (``conformance.verdict.harm``).
    """

    id: str
    title: str
    rationale: str
    how_to_fix: str
    run: Callable[[ContextT], list[str]]
    requires: frozenset[str] = field(default_factory=frozenset)
    taxonomy: tuple[str, ...] = ()
    rule: str = ""
    consequence_of: frozenset[str] = field(default_factory=frozenset)
    harm: Harm | None = None


class CheckRegistry(Generic[ContextT]):
    """The checks of one suite, in report order, each declared next to the function that runs it::

    HANDLER_CHECKS = CheckRegistry[CheckContext]()

    @HANDLER_CHECKS.check("no_crash", title=..., rationale=..., how_to_fix=..., taxonomy=("D09",))
    def no_crash(ctx: CheckContext) -> list[str]: ...
    """

    def __init__(self) -> None:
        self._checks: dict[str, Check[ContextT]] = {}

    def check(
        self,
        check_id: str,
        *,
        title: str,
        rationale: str,
        how_to_fix: str,
        requires: frozenset[str] | set[str] = frozenset(),
        taxonomy: tuple[str, ...] = (),
        rule: str = "",
        consequence_of: frozenset[str] | set[str] = frozenset(),
        harm: Harm | None = None,
    ) -> Callable[[Callable[[ContextT], list[str]]], Callable[[ContextT], list[str]]]:
        """Register the decorated function as the check ``check_id`` (ids are unique per registry)."""

        def register(run: Callable[[ContextT], list[str]]) -> Callable[[ContextT], list[str]]:
            self.add(
                Check(
                    check_id,
                    title,
                    rationale,
                    how_to_fix,
                    run,
                    frozenset(requires),
                    taxonomy,
                    rule,
                    frozenset(consequence_of),
                    harm,
                )
            )
            return run

        return register

    def add(self, check: Check[ContextT]) -> None:
        """Register a check built elsewhere (one whose verdict comes from a search, not a function)."""
        if check.id in self._checks:
            raise ValueError(f"check id {check.id!r} is registered twice")
        self._checks[check.id] = check

    def __iter__(self) -> Iterator[Check[ContextT]]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def all(self) -> tuple[Check[ContextT], ...]:
        """Every check, in registration (report) order."""
        return tuple(self._checks.values())

    def by_id(self, check_id: str) -> Check[ContextT]:
        """Look a check up by its stable id; ``KeyError`` names the known ids."""
        try:
            return self._checks[check_id]
        except KeyError:
            raise KeyError(f"unknown check id {check_id!r}; known: {', '.join(self._checks)}") from None


@dataclass
class Counterexample:
    """One finding of a check: its minimal failing input as readable text, the violation, (for
    suites that can re-run it) the input itself (``run --save-failures``), what the failing run
    does to the user (``harm``) and how real its input is (``realism``).

    ``kind`` is what makes two failures the same finding: the ``signature`` of the message, unless
    the suite gave a finer one. ``recordings`` names every recording that fails this way, this one
    first (suites over recordings fill it: the stack suite lists them all; empty elsewhere).
    """

    text: str
    message: str
    input: object | None = None
    harm: HarmVerdict | None = None
    realism: Realism | None = None
    recordings: list[str] = field(default_factory=list)
    kind: str = ""

    def __post_init__(self) -> None:
        self.kind = self.kind or signature(self.message)

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape of one finding (``docs/report-schema.md``)."""
        document: dict[str, Any] = {
            "message": self.message,
            "text": self.text,
            "harm": self.harm.harm.value if self.harm else None,
            "harm_why": self.harm.why if self.harm else None,
            "harm_cause": self.harm.cause if self.harm and self.harm.cause else None,
            "realism": self.realism.to_json() if self.realism else None,
        }
        if self.recordings:
            document["recordings"] = list(self.recordings)
        return document


@dataclass
class CheckResult:
    """The verdict of one check over every input it was run on.

    ``examples_run`` counts the inputs the check applied to (a check with none is skipped, never
    passed); ``failing_examples`` those it failed on, in ``failing_scenarios`` distinct scenarios;
    ``counterexamples`` holds the smallest input of each distinct failure (capped);
    ``consequences`` counts, per other check, the inputs where that check failed only because this
    one did (reported here, not as a failure of its own); ``not_judged`` the inputs it could not
    judge because the target crashed, hung or was unreadable there.
    """

    check: Check[Any]
    status: Status = "passed"
    message: str = ""
    scenarios_run: int = 0
    examples_run: int = 0
    failing_examples: int = 0
    failing_scenarios: set[str] = field(default_factory=set)
    counterexamples: list[Counterexample] = field(default_factory=list)
    consequences: dict[str, int] = field(default_factory=dict)
    # Runs this check did not judge because the target crashed, hung or gave unreadable output
    # there (a robustness check's finding): a pass says nothing about those runs.
    not_judged: int = 0
    skipped_reason: str = ""
    target: str = ""  # which handler, converter or formatter this verdict is about, when a report covers several
    # Inputs the check could not apply to, each "<input>: <why>" (converter checks whose recording
    # lacks what they compare). Never counted in ``scenarios_run``.
    not_applicable: list[str] = field(default_factory=list)
    # Failing runs per harm (``Harm.value``), counted for every failing run, kept or not.
    harms: dict[str, int] = field(default_factory=dict)

    @property
    def harm(self) -> Harm | None:
        """The worst harm of any failing run (None: passed, skipped, or no run was classified)."""
        return worst(Harm(name) for name in self.harms)

    @property
    def unclassified(self) -> int:
        """Failing runs whose harm nobody classified (a gate treats them as the worst)."""
        return self.failing_examples - sum(self.harms.values())

    @property
    def counterexample(self) -> str | None:
        """The first (smallest) counterexample, as text."""
        return self.counterexamples[0].text if self.counterexamples else None

    @property
    def counterexample_input(self) -> object | None:
        """The first counterexample's input, for suites that can save and re-run it."""
        return self.counterexamples[0].input if self.counterexamples else None

    def fail(
        self,
        message: str,
        text: str,
        failing_input: object | None = None,
        *,
        scenario: str = "",
        keep: int | None = DEFAULT_COUNTEREXAMPLES,
        harm: HarmVerdict | None = None,
        realism: Realism | None = None,
        kind: str = "",
    ) -> Counterexample | None:
        """Record one failing input: counted always; kept as a counterexample if its failure is new.

        A failure whose ``signature`` is already shown is not kept twice; at most ``keep``
        counterexamples are kept (``None``: all). The first message becomes the result's message.
        ``harm`` is what the failing run did (the check's declared harm when not given). ``kind``
        groups failures into findings when the message's signature is too coarse (default: it). Returns
        the counterexample that shows this kind of failure (the one just kept, or the one kept before),
        None when none does (``keep`` reached), so a suite can list every input that fails its way.
        """
        if self.status != "failed":
            self.status = "failed"
            self.message = message
        self.failing_examples += 1
        if scenario:
            self.failing_scenarios.add(scenario)
        if harm is None and self.check.harm is not None:
            harm = HarmVerdict(self.check.harm, f"declared by the check: {self.check.harm.meaning}")
        if harm is not None:
            self.harms[harm.harm.value] = self.harms.get(harm.harm.value, 0) + 1
        shown = self.shown_by(message, kind)
        if shown is not None or (keep is not None and len(self.counterexamples) >= keep):
            return shown
        self.counterexamples.append(Counterexample(text, message, failing_input, harm, realism, kind=kind))
        return self.counterexamples[-1]

    def shows(self, message: str) -> bool:
        """Whether a counterexample of this kind of failure is already kept."""
        return self.shown_by(message) is not None

    def shown_by(self, message: str, kind: str = "") -> Counterexample | None:
        """The kept counterexample of this kind of failure (same ``kind``: by default the message's
        ``signature``), or None."""
        wanted = kind or signature(message)
        return next((kept for kept in self.counterexamples if kept.kind == wanted), None)

    def skip(self, reason: str) -> None:
        """Mark the check as not applicable to this target, saying why."""
        self.status = "skipped"
        self.skipped_reason = reason

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (``docs/report-schema.md``)."""
        document: dict[str, Any] = {
            "id": self.check.id,
            "target": self.target,
            "title": self.check.title,
            "status": self.status,
            "message": self.message or self.skipped_reason,
            "counterexample": self.counterexample,
            "scenarios_run": self.scenarios_run,
            "examples_run": self.examples_run,
            "failing_examples": self.failing_examples,
            "failing_scenarios": len(self.failing_scenarios),
            "counterexamples": [c.to_json() for c in self.counterexamples],
            "harm": self.harm.value if self.harm else None,
            "harms": dict(self.harms),
            "consequences": dict(self.consequences),
            "not_judged": self.not_judged,
            "rule": self.check.rule,
            "taxonomy": list(self.check.taxonomy),
        }
        if self.not_applicable:
            document["not_applicable"] = list(self.not_applicable)
        return document
