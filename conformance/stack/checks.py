"""The stack checks: one recording's expectation against what the stack finished with."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.verdict import Check, CheckRegistry, NotApplicable
from conformance.wire import Case, Outcome
from conformance.wire.may_run import stream_why_not
from conformance.wire.numbers import JSON_NUMBERS
from conformance.wire.replay import compare_outcomes

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
    if ctx.crash is not None:
        expected = ctx.expected
        if stream_why_not(expected.api, expected.finish_reason, expected.error) is not None:
            return []  # raising on an abnormal end (error, cut or truncation) surfaces it, and nothing ran (R13)
        return [f"the stack raised {type(ctx.crash).__name__}: {ctx.crash}"]
    assert ctx.actual is not None
    expected = ctx.expected
    actual = ctx.actual
    if not (ctx.capabilities.text and ctx.has_text):
        actual = Outcome(
            actual.api, actual.tool_calls, expected.text, actual.reasoning, True, actual.finish_reason, actual.error
        )
    if not (ctx.capabilities.reasoning and ctx.has_reasoning):
        actual = Outcome(
            actual.api, actual.tool_calls, actual.text, expected.reasoning, True, actual.finish_reason, actual.error
        )
    return compare_outcomes(expected, actual, numbers=ctx.capabilities.json_numbers)


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
