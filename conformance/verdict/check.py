"""A check (stable id, rationale, how to fix, the function that judges one input) and its verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

__all__ = ["Check", "CheckRegistry", "CheckResult", "Status"]

ContextT = TypeVar("ContextT")

# passed: applied to at least one input and never violated; failed: violated at least once;
# skipped: applied to nothing (a capability excluded it, or no input could exercise it).
Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class Check(Generic[ContextT]):
    """One contract rule: ``run(context)`` returns violation messages, empty when the input conforms.

    ``requires`` names the capabilities a target must declare for the check to apply; ``taxonomy``
    the bug classes of ``shared/research/bug-taxonomy.md`` it catches.
    """

    id: str
    title: str
    rationale: str
    how_to_fix: str
    run: Callable[[ContextT], list[str]]
    requires: frozenset[str] = field(default_factory=frozenset)
    taxonomy: tuple[str, ...] = ()


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
    ) -> Callable[[Callable[[ContextT], list[str]]], Callable[[ContextT], list[str]]]:
        """Register the decorated function as the check ``check_id`` (ids are unique per registry)."""

        def register(run: Callable[[ContextT], list[str]]) -> Callable[[ContextT], list[str]]:
            self.add(Check(check_id, title, rationale, how_to_fix, run, frozenset(requires), taxonomy))
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
class CheckResult:
    """The verdict of one check over every input it was run on."""

    check: Check[Any]
    status: Status = "passed"
    message: str = ""
    counterexample: str | None = None
    scenarios_run: int = 0
    skipped_reason: str = ""
    target: str = ""  # which handler, converter or formatter this verdict is about, when a report covers several
    # The minimal failing input in the suite's own terms, kept so it can be saved and re-run
    # (``run --save-failures``); the handler suite stores a ``conformance.handler.Counterexample``.
    counterexample_input: object | None = None
    # Inputs the check could not apply to, each "<input>: <why>" (converter checks whose recording
    # lacks what they compare). Never counted in ``scenarios_run``.
    not_applicable: list[str] = field(default_factory=list)

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
            "taxonomy": list(self.check.taxonomy),
        }
        if self.not_applicable:
            document["not_applicable"] = list(self.not_applicable)
        return document
