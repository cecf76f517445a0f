"""Lifecycle: segments open and close properly, and the handler interface keeps its promises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.handler.checks.context import HANDLER_CHECKS, CheckContext
from conformance.handler.contract import rule
from conformance.handler.observe import short_segment_id
from conformance.verdict import NotApplicable


def _first_difference(seen: Sequence[Any], logged: Sequence[Any], log_name: str) -> str:
    """Where two event (or invocation) lists part, shown item by item: counts alone hide which one."""
    position = next(
        (i for i, (left, right) in enumerate(zip(seen, logged, strict=False)) if left != right),
        min(len(seen), len(logged)),
    )

    def shown(items: Sequence[Any]) -> str:
        if position >= len(items):
            return "nothing"
        item = items[position]
        return str(item.describe()) if hasattr(item, "describe") else repr(item)

    return f"item #{position + 1} is {shown(seen)}, in {log_name} {shown(logged)}"


@HANDLER_CHECKS.check(
    "segment_lifecycle",
    title="Each segment has one START, CONTENT*, one END; nothing after END; finalize() ends all",
    rationale=(
        "UIs key spinners and buffers on START/END; a duplicate START or a missing END leaves them hanging (C01, C03)."
    ),
    how_to_fix="Track open segments in one place and end every one of them in finalize().",
    requires={"events"},
    taxonomy=("C01", "C03", "C06"),
    rule=rule("R3"),
)
def segment_lifecycle(ctx: CheckContext) -> list[str]:
    if ctx.surfaced_by_exception:
        raise NotApplicable("the target stopped the stream by raising on its abnormal end")
    if not ctx.segments:
        raise NotApplicable("the target emitted no segment")
    problems: list[str] = []
    for segment_id, seq in ctx.segments.items():
        kinds = [event.kind for event in seq]
        label = f"segment {seq[0].segment_type}#{short_segment_id(segment_id)}"
        if kinds.count("start") != 1 or kinds[0] != "start":
            problems.append(f"{label} must begin with exactly one START, got {kinds}")
        elif kinds.count("end") != 1:
            problems.append(f"{label} must have exactly one END after finalize(), got {kinds.count('end')}")
        elif kinds[-1] != "end":
            problems.append(f"{label} has events after its END: {kinds}")
        if len({event.segment_type for event in seq}) > 1:
            problems.append(f"{label} changes segment_type mid-segment: {sorted({e.segment_type for e in seq})}")
    return problems


@HANDLER_CHECKS.check(
    "returned_events_are_all_events",
    title="Events returned by feed()/finalize() are exactly get_all_events()",
    rationale="Consumers that use return values and consumers that read the log must see the same stream.",
    how_to_fix="Append every emitted event to the log and to the return batch in one function.",
    requires={"events"},
    rule=rule("R1"),
)
def returned_events_are_all_events(ctx: CheckContext) -> list[str]:
    if ctx.surfaced_by_exception:
        raise NotApplicable("the target stopped the stream by raising on its abnormal end")
    returned = ctx.transcript.returned_flat
    if not returned and not ctx.transcript.events:
        raise NotApplicable("the target emitted no event")
    if returned == ctx.transcript.events:
        return []
    return [
        f"events returned by feed()/finalize() ({len(returned)}) differ from get_all_events() "
        f"({len(ctx.transcript.events)}): {_first_difference(returned, ctx.transcript.events, 'get_all_events()')}"
    ]


@HANDLER_CHECKS.check(
    "callbacks_see_returned_events",
    title="on_segment_event / on_tool_invocation see exactly the recorded events and invocations",
    rationale="A UI driven by callbacks must not drift from the handler's own record.",
    how_to_fix="Call the callbacks from the same emit function, after recording the event.",
    requires={"callbacks", "events"},
    taxonomy=("C06",),
    rule=rule("R12"),
)
def callbacks_see_returned_events(ctx: CheckContext) -> list[str]:
    problems = []
    transcript = ctx.transcript
    if not (
        transcript.callback_events or transcript.events or transcript.callback_invocations or transcript.invocations
    ):
        raise NotApplicable("the target emitted no event and no invocation")
    if transcript.callback_events != transcript.events:
        problems.append(
            f"on_segment_event saw {len(transcript.callback_events)} events, get_all_events() has "
            f"{len(transcript.events)}: {_first_difference(transcript.callback_events, transcript.events, 'the log')}"
        )
    if transcript.callback_invocations != transcript.invocations:
        difference = _first_difference(transcript.callback_invocations, transcript.invocations, "the log")
        problems.append(
            f"on_tool_invocation saw {len(transcript.callback_invocations)} invocations, get_all_invocations() has "
            f"{len(transcript.invocations)}: {difference}"
        )
    return problems


@HANDLER_CHECKS.check(
    "finalize_idempotent",
    title="A second finalize() returns []",
    rationale="Two completion paths (stream end and an explicit finalize) must not end segments twice (C06).",
    how_to_fix="Set a finalized flag in finalize() and return [] when it is already set.",
    requires={"lifecycle", "events"},
    taxonomy=("C06",),
    rule=rule("R11"),
)
def finalize_idempotent(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        raise NotApplicable("only the unfragmented run of a scenario is probed")
    extra = ctx.transcript.second_finalize
    if not extra:
        return []
    return [f"a second finalize() returned {len(extra)} events; it must return []: {extra[0].describe()}"]


@HANDLER_CHECKS.check(
    "feed_after_finalize_raises",
    title="feed() after finalize() raises RuntimeError",
    rationale="Chunks arriving after the end belong to another turn; accepting them silently corrupts this one (C06).",
    how_to_fix="Raise a RuntimeError (subclass) from feed() once finalized; reset() makes the handler reusable.",
    requires={"lifecycle", "events"},
    taxonomy=("C06",),
    rule=rule("R11"),
)
def feed_after_finalize_raises(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        raise NotApplicable("only the unfragmented run of a scenario is probed")
    error = ctx.transcript.feed_after_finalize_error
    if isinstance(error, RuntimeError):
        return []
    if error is None:
        return ["feed() after finalize() was accepted silently; it must raise RuntimeError"]
    return [f"feed() after finalize() raised {type(error).__name__}, expected a RuntimeError"]


@HANDLER_CHECKS.check(
    "get_all_returns_copies",
    title="get_all_events() / get_all_invocations() return copies",
    rationale="A consumer that sorts or clears the returned list must not corrupt the handler's record.",
    how_to_fix="Return list(self._events), not the list itself.",
    requires={"lifecycle", "events"},
    taxonomy=("C06",),
    rule=rule("R11"),
)
def get_all_returns_copies(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        raise NotApplicable("only the unfragmented run of a scenario is probed")
    return list(ctx.transcript.copy_leaks)


@HANDLER_CHECKS.check(
    "reset_behaves_like_new",
    title="After reset() the handler behaves exactly like a new one (ids it generates may differ)",
    rationale="Handlers are reused across turns and retries; leaked state merges turns (B07).",
    how_to_fix="Clear every per-stream field (including the adapter's) in reset().",
    requires={"lifecycle", "events"},
    taxonomy=("B07",),
    rule=rule("R11"),
)
def reset_behaves_like_new(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        raise NotApplicable("only the unfragmented run of a scenario is probed")
    return list(ctx.transcript.reset_problems)


@HANDLER_CHECKS.check(
    "callbacks_isolated",
    title="A raising callback changes nothing the handler records or returns",
    rationale="A broken UI listener must not lose tool calls or abort the stream (C06).",
    how_to_fix="Record the event first, then call the callback inside try/except and log the error.",
    requires={"callbacks", "events"},
    taxonomy=("C06",),
    rule=rule("R12"),
)
def callbacks_isolated(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        raise NotApplicable("only the unfragmented run of a scenario is probed")
    return list(ctx.transcript.callback_isolation_problems)
