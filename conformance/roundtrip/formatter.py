"""The round-trip formatter protocol, and the adapter that calls a user's formatter whatever its shape."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from reference_impl.followup import (
    FOLLOWUP_TARGETS,
    FinishedTurn,
    ToolResult,
)
from reference_impl.tools import ToolChoice, ToolDefinition

__all__ = ["Formatter", "FormatterAdapter", "as_formatter"]


class Formatter(Protocol):
    """A round-trip formatter: the follow-up request's messages for one provider target.

    Optional: ``format_tools(target, tools, choice) -> dict`` (the request's tool keyword arguments)
    and ``targets`` (the provider targets it writes for; default: all). ``as_formatter`` also takes
    a class or zero-argument factory returning one, or a bare ``format_followup`` function.
    """

    def format_followup(
        self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]
    ) -> list[dict[str, Any]]: ...


class FormatterAdapter:
    """Calls a user's formatter through the protocol, whatever shape it came in."""

    def __init__(self, formatter: Any, label: str = "") -> None:
        self.formatter = formatter
        self.label = label or getattr(formatter, "__qualname__", None) or type(formatter).__name__
        followup = getattr(formatter, "format_followup", None)
        if followup is None and callable(formatter):
            followup = formatter
        if followup is None:
            raise TypeError(
                f"{self.label} is not a round-trip formatter: it needs a format_followup(target, turn, results) "
                "method (or must itself be that function)"
            )
        self._followup: Callable[..., Any] = followup
        self._tools: Callable[..., Any] | None = getattr(formatter, "format_tools", None)
        declared = getattr(formatter, "targets", None)
        self.targets: tuple[str, ...] = tuple(declared) if declared else FOLLOWUP_TARGETS
        unknown = [t for t in self.targets if t not in FOLLOWUP_TARGETS]
        if unknown:
            raise ValueError(f"{self.label} declares unknown targets {unknown}; known: {', '.join(FOLLOWUP_TARGETS)}")

    @property
    def formats_tools(self) -> bool:
        return self._tools is not None

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        value = self._followup(target, turn, list(results))
        if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
            raise TypeError(f"format_followup must return a list of dicts, got {type(value).__name__}")
        return value

    def format_tools(self, target: str, tools: Sequence[ToolDefinition], choice: ToolChoice | str) -> dict[str, Any]:
        if self._tools is None:
            raise TypeError(f"{self.label} has no format_tools")
        value = self._tools(target, list(tools), choice)
        if not isinstance(value, dict):
            raise TypeError(f"format_tools must return a dict of request keyword arguments, got {type(value).__name__}")
        return value


def as_formatter(obj: Any, label: str = "") -> FormatterAdapter:
    """A ``FormatterAdapter`` from a formatter object, a class or zero-argument factory, or a bare function."""
    if isinstance(obj, FormatterAdapter):
        return obj
    if hasattr(obj, "format_followup") and not isinstance(obj, type):
        return FormatterAdapter(obj, label)
    if isinstance(obj, type):
        return FormatterAdapter(obj(), label)
    if callable(obj):
        try:
            parameters = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            parameters = []  # type: ignore[assignment]
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) >= 3 or any(p.kind is p.VAR_POSITIONAL for p in parameters):
            return FormatterAdapter(obj, label)  # format_followup itself: (target, turn, results)
        return FormatterAdapter(obj(), label)  # a zero-argument factory
    raise TypeError(f"{obj!r} is not a round-trip formatter, class or factory")
