"""Robustness: the suite can read what the target returns, and the target neither raises nor hangs.

A failure here means the run could not be judged any further: every other check's failure on
the same input is reported as its consequence.
"""

from __future__ import annotations

from conformance.handler.checks.context import HANDLER_CHECKS, CheckContext
from conformance.handler.contract import rule

ROBUSTNESS = frozenset({"events_readable", "no_crash", "finishes_within_deadline"})


@HANDLER_CHECKS.check(
    "events_readable",
    title="Every event, invocation and return value can be read as the contract describes",
    rationale=(
        "Consumers read events by their documented shape; an event without a segment type, with its data "
        "outside payload['metadata'], or a feed() that returns None breaks every consumer at once."
    ),
    how_to_fix=(
        "Return a list from feed()/finalize(); give START a segment_type; put START/END data in "
        "payload['metadata'] and CONTENT text in payload['delta'] (or plug in a HandlerAdapter: --adapter)."
    ),
    rule=rule("R2"),
)
def events_readable(ctx: CheckContext) -> list[str]:
    if ctx.transcript.unreadable is None:
        return []
    return [f"the suite cannot read what the target returned: {ctx.transcript.unreadable}"]


@HANDLER_CHECKS.check(
    "no_crash",
    title="The target never raises while streaming (except to surface an abnormal end)",
    rationale="An exception inside feed()/finalize() kills the turn, including valid sibling calls (D09, F04).",
    how_to_fix="Catch malformed input at the boundary and turn it into an error END instead of raising.",
    taxonomy=("D09", "F04"),
    rule=rule("R15"),
)
def no_crash(ctx: CheckContext) -> list[str]:
    transcript = ctx.transcript
    if transcript.crash is None or ctx.surfaced_by_exception:
        return []
    at = transcript.crashed_at
    where = (
        "in finalize()"
        if at is not None and at >= len(transcript.chunks)
        else (f"feeding chunk #{at + 1}" if at is not None else "reading its events back")
    )
    return [f"the target raised {type(transcript.crash).__name__} {where}: {transcript.crash}"]


@HANDLER_CHECKS.check(
    "finishes_within_deadline",
    title="The target finishes every scenario within the per-scenario deadline",
    rationale="A handler that loops forever on some input hangs the agent; the suite stops it and says where.",
    how_to_fix="Look for a loop that waits for input that never comes (a closing tag, a terminator, a full buffer).",
    taxonomy=("E08",),
    rule=rule("R15"),
)
def finishes_within_deadline(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.hung:
        return []
    return [
        f"the target did not finish the scenario within the deadline and was stopped ({ctx.transcript.fed} chunks fed)"
    ]
