"""What a rendered turn must come to: its expected outcome, straight from its definition.

The corpus stores it (confirmed by the SDK's own reading) and the stack suite's generated search
judges against it: the calls with their names, ids and argument text (arguments that are not one
JSON object are an error), the text and reasoning, and for a stream cut short the error the SDKs
do not raise. Which calls may run follows from it (``conformance.wire.may_run``).
"""

from __future__ import annotations

from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.wire.may_run import derive_may_run
from conformance.wire.outcome import ExpectedToolCall, Outcome, decode_expected_arguments

__all__ = ["CUT_ERROR", "INVALID_ARGUMENTS", "expected_from_turn"]

# What the expectation says when a stream stops without its terminal event: the SDKs raise nothing
# (the connection just ends), so the definition says it; a converter must surface it (taxonomy F07).
CUT_ERROR = "incomplete: the stream ended without its terminal event"
INVALID_ARGUMENTS = "the arguments are not one complete JSON object"


def expected_from_turn(turn: Turn, api: str) -> Outcome:
    """The hand-checked outcome of a scenario, straight from its definition."""
    outcome = Outcome(api)
    for item in turn.items:
        if isinstance(item, Call):
            arguments = decode_expected_arguments(item.arguments)
            error = INVALID_ARGUMENTS if arguments is None else None
            outcome.tool_calls.append(ExpectedToolCall(item.name, item.call_id, arguments, item.arguments, error))
        elif isinstance(item, Text):
            outcome.text += item.text
        elif isinstance(item, Reasoning):
            outcome.reasoning += item.text
        # A ServerCall ran at the provider: it is never a client tool call, text or reasoning.
    if turn.ending == "cut":
        outcome.error = CUT_ERROR
    return derive_may_run(outcome)
