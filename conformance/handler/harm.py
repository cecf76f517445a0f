"""The harm of one failing handler run, from what it ran and what it lost (``conformance.verdict.harm``).

The stream's calls are paired with the target's calls as the checks pair them
(``CheckContext.matches``); a call "ran" when it became an invocation (an accumulator: when its
result gives it arguments). Text and reasoning count as lost when the output's concatenation
differs from the stream's.

The lifecycle probes are runs of their own: a check judged on a probe (``reset()`` and the same
stream again, raising callbacks, a second ``finalize()``...) is classed by what that probe did,
not by the main run: after ``reset()`` a call of the previous stream running again is
``ran_wrong``, one fewer is ``lost``, a raise is ``crashed``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from conformance.handler.checks.context import CheckContext, as_json
from conformance.handler.drive import ObservedCall
from conformance.handler.observe import ObservedInvocation
from conformance.turns.generate import TOOL_NAMES
from conformance.verdict.harm import CameOut, Harm, HarmVerdict, WantedCall, classify_calls

__all__ = ["PROBED_CHECKS", "check_harm", "run_harm"]


_STREAM_ENDS = {
    "truncated": "the provider cut the turn at its token limit",
    "provider_error": "the provider reported an error in the stream",
    "incomplete": "the stream was cut before its end",
}


def _why_not(ctx: CheckContext, name: str | None, raw: str) -> tuple[str, str]:
    """Why a call must not run: a phrase, and its one-word cause (``HarmVerdict.cause``)."""
    error = next((chunk.error for chunk in ctx.scenario.chunks if chunk.error is not None), None)
    if error is not None:
        return _STREAM_ENDS.get(error.kind, "the stream ended abnormally"), error.kind
    if not name:
        return "the stream never named it: no tool to run", "no_name"
    return f"its arguments {raw!r} are not one JSON object", "invalid_arguments"


def _came_out(call: ObservedCall, label: str, decides: bool) -> CameOut:
    """One output call for the harm rules: what ran is its invocation (under the invocation's name);
    for a target that decides nothing (``Capabilities.invocations`` False) what it hands on, an END
    with arguments."""
    if decides:
        invocation = call.invocation
        name = invocation.name if invocation is not None else call.name
        arguments = invocation.arguments if invocation is not None else call.arguments
        ran = call.executed
    else:
        name, arguments = call.name, call.arguments
        ran = call.ended and call.arguments is not None and not call.error
    return CameOut(label, name, frozenset(call.ids), arguments, ran=ran, error=bool(call.error))


def _crashed(ctx: CheckContext) -> str:
    transcript = ctx.transcript
    if transcript.hung:
        return "the target hung and was stopped: the turn never finished"
    if transcript.unreadable is not None:
        return f"nothing the target returned can be read: {transcript.unreadable}"
    if transcript.crash is not None and not ctx.surfaced_by_exception:
        return f"the turn raised {type(transcript.crash).__name__}: {transcript.crash}"
    return ""


def _lost_text(ctx: CheckContext) -> str:
    transcript = ctx.transcript
    if not transcript.completed:
        return ""
    for field, want, kind in (
        ("text", ctx.scenario.expected.text, "text"),
        ("reasoning", ctx.scenario.expected.reasoning, "reasoning"),
    ):
        if kind == "reasoning" and not ctx.capabilities.reasoning:
            continue
        if transcript.kind == "accumulator":
            got = transcript.text if field == "text" else transcript.reasoning
            if got is None:
                continue
        else:
            judge = ctx.is_text if field == "text" else ctx.is_reasoning
            got = "".join(e.delta for e in transcript.events if e.kind == "content" and judge(e))
        if got != want:
            return f"the {kind} came out as {got[:40]!r}, the stream's is {want[:40]!r}"
    return ""


def _rerun_harm(first: Sequence[ObservedInvocation], again: Sequence[ObservedInvocation], when: str) -> HarmVerdict:
    runs = Counter((i.name, as_json(i.arguments)) for i in first)
    reran = Counter((i.name, as_json(i.arguments)) for i in again)
    if reran - runs:
        extra = next(iter(reran - runs))[0]
        return HarmVerdict(Harm.RAN_WRONG, f"{when}, {extra} ran although the stream has no such call there")
    if runs - reran:
        missing = next(iter(runs - reran))[0]
        return HarmVerdict(Harm.LOST, f"{when}, the call {missing} never ran")
    return HarmVerdict(Harm.STREAM_SHAPE, f"{when}, the same calls ran; only the events differ")


def _merged_groups(ctx: CheckContext) -> set[int]:
    """The index groups (``ExpectedCall.conflict_group``) in which an output call carries argument
    text that is not its own: the calls were merged into one."""
    merged: set[int] = set()
    for match in ctx.matches:
        group, actual = match.expected.conflict_group, match.actual
        if group is None or actual is None:
            continue
        own = ctx.raw_arguments[match.position]
        streamed = "".join(e.delta for e in ctx.segments.get(actual.segment_id or "", []) if e.kind == "content")
        if any(text and not own.startswith(text) for text in (actual.raw_arguments, streamed)):
            merged.add(group)
    return merged


def run_harm(ctx: CheckContext) -> HarmVerdict:
    """What one failing run does to the person running the agent (worst first)."""
    abnormal = ctx.scenario.abnormal
    truncated = any(chunk.error is not None and chunk.error.kind == "truncated" for chunk in ctx.scenario.chunks)
    raw = ctx.raw_arguments
    stand_ins = ctx.id_lost  # a call that lost its provider id is still the call it stands for
    merged = _merged_groups(ctx)
    decides = ctx.capabilities.invocations
    ignored: set[int] = set()
    pairs = []
    for match in ctx.matches:
        want = match.expected
        arguments = None if abnormal else want.arguments
        why_not, cause = _why_not(ctx, want.name, raw[match.position]) if arguments is None else ("", "")
        wanted = WantedCall(
            match.label,
            want.name,
            want.call_id,
            arguments,
            why_not=why_not,
            cause=cause,
            truncated=truncated,
            # An error answers a call sharing its index with another id only when the handler said
            # so: an error that comes from parsing two calls' merged text is the merge, not an answer.
            error_answers=want.conflict_group is not None and want.conflict_group not in merged,
            null_arguments=want.null_arguments,
        )
        actual = match.actual if match.actual is not None else stand_ins.get(match.position)
        if arguments is None and not decides:
            # Whether a call that must not run runs is its runner's decision, beyond this target.
            ignored.add(id(actual))
            continue
        pairs.append((wanted, _came_out(actual, match.label, decides) if actual is not None else None))
    taken = {id(call) for call in stand_ins.values()} | ignored
    extra = [_came_out(call, call.describe(), decides) for call in ctx.unmatched if id(call) not in taken]
    return classify_calls(
        pairs,
        extra,
        crashed=_crashed(ctx),
        lost_text=_lost_text(ctx),
        same_arguments=ctx.same_arguments,
        tools=_tools(ctx),
    )


def _tools(ctx: CheckContext) -> frozenset[str]:
    """The names a runner would find a tool under: every tool a generated turn offers (a generated
    call's name on the wire may be a prefix of one, its stream cut short), and a written
    scenario's own call names."""
    if ctx.scenario.source == "generated":
        return frozenset(TOOL_NAMES)
    return frozenset({call.name for call in ctx.scenario.expected.tool_calls if call.name} | set(TOOL_NAMES))


def _reset_harm(ctx: CheckContext) -> HarmVerdict:
    transcript = ctx.transcript
    if transcript.reset_crash:
        return HarmVerdict(Harm.CRASHED, transcript.reset_crash)
    if transcript.reset_invocations is None:
        return HarmVerdict(Harm.STREAM_SHAPE, "reset() was not probed")
    return _rerun_harm(transcript.invocations, transcript.reset_invocations, "after reset() and the same stream again")


def _isolation_harm(ctx: CheckContext) -> HarmVerdict:
    transcript = ctx.transcript
    if transcript.callback_crash:
        return HarmVerdict(Harm.CRASHED, transcript.callback_crash)
    if transcript.isolated_invocations is None:
        return HarmVerdict(Harm.STREAM_SHAPE, "raising callbacks were not probed")
    return _rerun_harm(transcript.invocations, transcript.isolated_invocations, "with raising callbacks")


def _probe_shape(_ctx: CheckContext) -> HarmVerdict:
    return HarmVerdict(Harm.STREAM_SHAPE, "the turn itself is right; only the handler's interface deviates")


# The checks judged on a lifecycle probe rather than on the main run, and how each probe is classed.
PROBED_CHECKS = {
    "reset_behaves_like_new": _reset_harm,
    "callbacks_isolated": _isolation_harm,
    "finalize_idempotent": _probe_shape,
    "feed_after_finalize_raises": _probe_shape,
    "get_all_returns_copies": _probe_shape,
}


# Checks whose violation is in the event stream alone (order, segmentation, hold-back, how CONTENT
# adds up): what runs is judged by the others. When one of those failed on the same run too, the
# run's harm is that check's finding, not this one's (``attribute_harms``).
EVENT_SHAPE_CHECKS = frozenset(
    {
        "segment_lifecycle",
        "returned_events_are_all_events",
        "callbacks_see_returned_events",
        "text_segments_follow_wire",
        "text_and_reasoning_in_wire_order",
        "text_streams_within_lag",
        "calls_in_wire_order",
        "argument_integrity",
        "arguments_stream_incrementally",
    }
)


def attribute_harms(harms: dict[str, HarmVerdict]) -> dict[str, HarmVerdict]:
    """Each failing check's harm on one run, the run's harm given to the checks that explain it.

    ``harms`` holds the run's harm per failing check. An event-shape check keeps the run's harm only
    when no other check failed on the run (its violation is then the only thing that can explain
    it: two STARTs for one call, say); otherwise it is ``stream_shape``, naming the check that
    carries the harm, so one bug is not published under every check it disturbs.
    """
    carriers = sorted(check for check in harms if check not in EVENT_SHAPE_CHECKS and check not in PROBED_CHECKS)
    if not carriers:
        return dict(harms)
    attributed = dict(harms)
    for check, verdict in harms.items():
        if check in EVENT_SHAPE_CHECKS and verdict.harm is not Harm.STREAM_SHAPE:
            why = (
                f"the run's harm ({verdict.harm.value}: {verdict.why}) is {carriers[0]}'s finding; "
                "this one is in the event stream alone"
            )
            attributed[check] = HarmVerdict(Harm.STREAM_SHAPE, why)
    return attributed


def check_harm(check_id: str, ctx: CheckContext) -> HarmVerdict:
    """The harm of ``check_id``'s failure on this run: its probe's, or the main run's."""
    probe = PROBED_CHECKS.get(check_id)
    return probe(ctx) if probe is not None else run_harm(ctx)
