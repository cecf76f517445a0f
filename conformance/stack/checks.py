"""The stack checks: one recording's expectation against what the stack finished with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from conformance.verdict import Check, CheckRegistry, NotApplicable
from conformance.wire import WIRE_APIS, Case, Outcome
from conformance.wire.final import FinalResultError
from conformance.wire.may_run import stream_why_not
from conformance.wire.numbers import JSON_NUMBERS
from conformance.wire.replay import compare_finish_reason, compare_outcomes

__all__ = ["STACK_CHECKS", "STACK_CHECK_REGISTRY", "StackCapabilities", "StackContext"]


@dataclass(frozen=True)
class StackCapabilities:
    """What a stack declares: the wire APIs it runs, whether its result reports text and reasoning,
    and whether it honours a recording's converter options (a server profile such as cumulative
    arguments). Recordings it cannot run are listed as not applicable, never passed.

    ``json_numbers`` is how it reads argument numbers (``conformance.wire.numbers``): ``"double"``
    for a stack whose JSON numbers are IEEE doubles (JavaScript's ``JSON.parse``), whose arguments
    are then compared as doubles.
    """

    apis: tuple[str, ...] | None = None
    text: bool = True
    reasoning: bool = True
    converter_options: bool = False
    json_numbers: str = "exact"

    def __post_init__(self) -> None:
        if self.json_numbers not in JSON_NUMBERS:
            raise ValueError(f"json_numbers must be one of {', '.join(JSON_NUMBERS)}, got {self.json_numbers!r}")
        if self.apis is not None:
            if isinstance(self.apis, str) or not all(isinstance(api, str) for api in self.apis):
                raise ValueError(f"apis must be a tuple of wire API names, got {self.apis!r}")
            unknown = [api for api in self.apis if api not in WIRE_APIS]
            if unknown:
                raise ValueError(f"unknown wire APIs {unknown} in apis; known: {', '.join(WIRE_APIS)}")

    def declared(self) -> dict[str, Any]:
        """The fields that differ from the defaults, JSON-ready (what a report's ``target_spec`` records)."""
        default = StackCapabilities()
        found = {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)
        }
        if found.get("apis") is not None:
            found["apis"] = list(found["apis"])
        return found

    @classmethod
    def from_declared(cls, declared: Mapping[str, Any]) -> StackCapabilities:
        """The capabilities a JSON-like mapping declares (a bridge hello's, a stack's ``capabilities``
        attribute): the field names, ``apis`` a list of wire API names, the flags true or false.
        Anything else is a ``ValueError`` saying which key is wrong."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(declared) - known)
        if unknown:
            raise ValueError(f"unknown stack capabilities {unknown}; known: {', '.join(sorted(known))}")
        apis = declared.get("apis")
        if apis is not None and (
            isinstance(apis, str) or not isinstance(apis, Iterable) or not all(isinstance(a, str) for a in apis)
        ):
            raise ValueError(f"capability apis must be a list of wire API names, got {apis!r}")
        values: dict[str, Any] = {}
        for key in ("text", "reasoning", "converter_options"):
            if key in declared:
                if not isinstance(declared[key], bool):
                    raise ValueError(f"capability {key} must be true or false, got {declared[key]!r}")
                values[key] = declared[key]
        if "json_numbers" in declared:
            values["json_numbers"] = declared["json_numbers"]
        return cls(apis=None if apis is None else tuple(apis), **values)

    def restricted_to(self, apis: Iterable[str] | None) -> StackCapabilities:
        """These capabilities, running only ``apis`` (``--format``); None or empty: unchanged.

        An API the stack does not declare is a ``ValueError``: a run restricted to it would judge
        nothing and read as a pass.
        """
        wanted = tuple(dict.fromkeys(apis or ()))
        if not wanted:
            return self
        if self.apis is not None:
            undeclared = [api for api in wanted if api not in self.apis]
            if undeclared:
                raise ValueError(
                    f"the stack does not declare {', '.join(undeclared)} (it declares apis: {', '.join(self.apis)})"
                )
        return replace(self, apis=wanted)


@dataclass(frozen=True)
class StackContext:
    """What a stack check judges: one recording, its expectation, and the stack's result (or what it raised)."""

    case: Case
    expected: Outcome
    actual: Outcome | None
    crash: BaseException | None
    has_text: bool
    has_reasoning: bool
    capabilities: StackCapabilities


STACK_CHECK_REGISTRY = CheckRegistry[StackContext]()


@STACK_CHECK_REGISTRY.check(
    "stack_outcome_matches",
    title="The stack finishes each recording with the calls, text and reasoning the recording holds",
    rationale=(
        "This is what the agent runs: a lost, merged or renamed call, arguments that changed, an invalid or "
        "interrupted call that still runs, or a lost provider id breaks the turn (A-D, F classes)."
    ),
    how_to_fix="Compare the final calls with the recording's expectation shown; fix the first difference.",
    taxonomy=("A02", "B01", "B04", "D03", "F06", "F07", "F08"),
)
def stack_outcome_matches(ctx: StackContext) -> list[str]:
    if isinstance(ctx.crash, FinalResultError):
        # The suite could not read what the stack returned: never "raising on an abnormal end"
        # (a stack returning None on every cut stream would pass).
        return [f"the stack's result cannot be read: {ctx.crash}"]
    if ctx.crash is not None:
        expected = ctx.expected
        if stream_why_not(expected.api, expected.finish_reason, expected.error) is not None:
            return []  # raising on an abnormal end (error, cut or truncation) surfaces it, and nothing ran (R13)
        return [f"the stack raised {type(ctx.crash).__name__}: {ctx.crash}"]
    assert ctx.actual is not None
    expected = ctx.expected
    actual = ctx.actual
    # A capability the stack declares but whose field its result leaves out would turn the
    # comparison off unseen: a stack that drops the text would pass.
    missing = [
        f"the stack declares {name} but its result has no {name!r} (return it, or declare {name}=False)"
        for name, declared, given, wanted in (
            ("text", ctx.capabilities.text, ctx.has_text, expected.text),
            ("reasoning", ctx.capabilities.reasoning, ctx.has_reasoning, expected.reasoning),
        )
        if declared and not given and wanted
    ]
    if not (ctx.capabilities.text and ctx.has_text):
        actual = Outcome(
            actual.api, actual.tool_calls, expected.text, actual.reasoning, True, actual.finish_reason, actual.error
        )
    if not (ctx.capabilities.reasoning and ctx.has_reasoning):
        actual = Outcome(
            actual.api, actual.tool_calls, actual.text, expected.reasoning, True, actual.finish_reason, actual.error
        )
    return (
        missing
        + compare_outcomes(expected, actual, numbers=ctx.capabilities.json_numbers)
        + compare_finish_reason(expected, actual)
    )


@STACK_CHECK_REGISTRY.check(
    "stack_byte_split_invariant",
    title="Any split of the response body into network reads gives the same result",
    rationale="Network reads split SSE events and UTF-8 sequences anywhere (H01, H02); the result must not change.",
    how_to_fix="Decode the stream incrementally on bytes: buffer until a whole line or event, decode UTF-8 only then.",
    taxonomy=("H01", "H02", "H03"),
)
def stack_byte_split_invariant(_ctx: StackContext) -> list[str]:
    raise NotApplicable("judged by the byte-split search in conformance.stack.runner")


STACK_CHECKS: tuple[Check[StackContext], ...] = STACK_CHECK_REGISTRY.all()
