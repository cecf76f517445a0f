"""The harm of a recording's outcome gone wrong: what a whole stack (or a converter) did to the user.

The same classes and rules as handler runs (``conformance.verdict.harm``), over outcomes: the
recording's expectation and what the target finished with, paired as ``compare_outcomes`` pairs
them. A turn the provider cut at its token limit, an in-band error or a cut stream runs none of
its calls; text or reasoning that differs from the recording's is lost.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.verdict.harm import CameOut, Harm, HarmVerdict, WantedCall, classify_calls
from conformance.wire.final import FinalResultError
from conformance.wire.may_run import WHY_NOT, derive_may_run, finish_reason_meaning, stream_why_not
from conformance.wire.numbers import same_json
from conformance.wire.outcome import ExpectedToolCall, Outcome
from conformance.wire.replay import compare_finish_reason, pair_outcome_calls

__all__ = ["outcome_harm"]


def _why_not(call: ExpectedToolCall) -> str:
    """Why the call must not run, as the finding says it (``conformance.wire.may_run.WHY_NOT``)."""
    if call.why_not == "invalid_arguments":
        return f"its arguments {call.raw_arguments!r} are not one JSON object"
    return WHY_NOT.get(str(call.why_not), "the stream ended abnormally")


def _came_out(call: ExpectedToolCall, label: str) -> CameOut:
    ids = frozenset({call.call_id} if call.call_id else ())
    return CameOut(label, call.name, ids, call.arguments, ran=call.arguments is not None, error=call.arguments is None)


def _lost_text(expected: Outcome, actual: Outcome, stream: str | None) -> str:
    """What of the turn's text, reasoning or ending the result lost or altered ("" when nothing)."""
    if actual.text != expected.text:
        return f"the text came out as {actual.text[:40]!r}, the recording's is {expected.text[:40]!r}"
    if expected.reasoning_recorded and actual.reasoning != expected.reasoning:
        return f"the reasoning came out as {actual.reasoning[:40]!r}, the recording's is {expected.reasoning[:40]!r}"
    if actual.error is not None:
        return ""
    if stream in ("incomplete", "provider_error"):
        ended = expected.error or expected.finish_reason
        return f"the stream ended in an error ({ended}) but the result reads as a finished turn"
    if stream == "truncated" and finish_reason_meaning(actual.api, actual.finish_reason or "") == "normal":
        return (
            f"the provider cut the turn at its token limit ({expected.finish_reason!r}) but the result says it "
            f"ended normally ({actual.finish_reason!r}): the text reads as complete"
        )
    return ""


def outcome_harm(
    expected: Outcome, actual: Outcome | None, crash: BaseException | None = None, *, numbers: str = "exact"
) -> HarmVerdict:
    """What ``actual`` (or the ``crash``) does to the user, given the recording's ``expected`` outcome
    (``numbers``: how the target reads JSON numbers, as ``compare_outcomes`` takes it)."""
    # Which calls may run, derived from the recording (``conformance.wire.may_run``), on a copy.
    expected = derive_may_run(replace(expected, tool_calls=list(expected.tool_calls)))
    stream = stream_why_not(expected.api, expected.finish_reason, expected.error)
    truncated = stream == "truncated"
    if actual is None:
        if isinstance(crash, FinalResultError):
            return HarmVerdict(Harm.CRASHED, f"the stack's result cannot be read ({crash}); nothing ran")
        if stream is not None:
            return HarmVerdict(Harm.STREAM_SHAPE, "the stack raised on an abnormal end: nothing ran")
        raised = f"{type(crash).__name__}: {crash}" if crash is not None else "no result"
        return HarmVerdict(Harm.CRASHED, f"the stack raised {raised}; nothing ran")
    pairs = []
    claimed: list[ExpectedToolCall] = []
    for position, want, got in pair_outcome_calls(expected, actual):
        label = f"call {position} ({want.name}, id {want.call_id!r})"
        runs = want.arguments if want.may_run else None
        why_not, cause = ("", "") if want.may_run else (_why_not(want), str(want.why_not))
        wanted = WantedCall(label, want.name, want.call_id, runs, why_not=why_not, cause=cause, truncated=truncated)
        pairs.append((wanted, _came_out(got, label) if got is not None else None))
        if got is not None:
            claimed.append(got)
    extra = [
        _came_out(call, f"{call.name}(id {call.call_id!r})")
        for call in actual.tool_calls
        if not any(call is taken for taken in claimed)
    ]
    lost_text = _lost_text(expected, actual, stream)
    verdict = classify_calls(
        pairs,
        extra,
        lost_text=lost_text,
        same_arguments=lambda got, want: same_json(got, want, numbers=numbers),
        turn_error=actual.error is not None,
        tools={call.name for call in expected.tool_calls if call.name},
    )
    if (
        verdict.harm is Harm.LOST
        and stream is None
        and actual.error is not None
        and not any(call.arguments is not None for call in actual.tool_calls)
    ):
        # The stack gave up on a stream that ended normally and said so: the same as raising
        # (the turn failed aloud, nothing ran), not a call lost with nothing said why.
        return HarmVerdict(
            Harm.CRASHED, f"the stack reported an error on a stream that ended normally ({actual.error}); nothing ran"
        )
    reported_end = compare_finish_reason(expected, actual)
    if verdict.harm is Harm.STREAM_SHAPE and reported_end:
        return HarmVerdict(
            Harm.STREAM_SHAPE, f"what runs and the text are right; only the stop reason differs: {reported_end[0]}"
        )
    if verdict.harm is Harm.LOST and stream is not None and verdict.why == lost_text:
        # The rest of the turn was lost to an abnormal end nothing surfaced: a library that exposes
        # the missing end (no finish reason) may leave that to its caller (AdapterInfo.policies).
        return HarmVerdict(Harm.LOST, verdict.why, stream)
    return verdict
