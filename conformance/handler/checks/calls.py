"""Tool calls: one per provider call, whole names, provider ids kept, arguments strict, wire order.

Each expected call is matched to the target's call by provider id (END ``call_id``, segment id or
invocation id), and id-less calls by wire position (``CheckContext.matches``). Calls that
share one index with different ids (a ``conflict_group``) may each run as themselves or end with an
error (one for the index is enough); a merge (wrong arguments) or a silent loss fails.
"""

from __future__ import annotations

from collections import defaultdict

from conformance.handler.capabilities import DEFAULT_ARGS_LAG, Capabilities
from conformance.handler.checks.context import HANDLER_CHECKS, TARGET_TITLES, CallMatch, CheckContext, as_json
from conformance.handler.contract import rule
from conformance.handler.drive import ObservedCall
from conformance.verdict import NotApplicable

_CALL_CHECKS = {"tool_calls"}


def _in_conflict(ctx: CheckContext, match: CallMatch) -> bool:
    return match.position in ctx.flagged_conflicts


def _conflict_groups_ok(ctx: CheckContext) -> list[str]:
    """Calls sharing an index with different ids that did not run are answered by an error.

    A call of the group that did not run must end with an error of its own, or, when it did not
    come out at all, the group must show one (a single error for the whole index), and its segment
    never carries another call's argument text (a merge that happened to fail to parse). A call
    that ran is judged by the other checks, which see a merge as wrong arguments.
    """
    if ctx.surfaced_by_exception:
        return []
    problems = []
    for position in sorted(ctx.flagged_conflicts):
        match = ctx.matches[position]
        group = match.expected.conflict_group
        members = [m for m in ctx.matches if m.expected.conflict_group == group]
        ids = {m.expected.call_id for m in members if m.expected.call_id}
        shown = [m.actual for m in members if m.actual is not None]
        shown += [a for a in ctx.unmatched if a.ids & ids or not a.ids]
        actual = match.actual
        own = ctx.raw_arguments[position]
        carried = _argument_texts(ctx, actual) if actual is not None else []
        merged = next((text for text in carried if not own.startswith(text)), None)
        if merged is not None:
            problems.append(
                f"{match.label} shares its index with {sorted(ids - {match.expected.call_id})}; its segment carries "
                f"the arguments {merged!r}, not its own {own!r}: the calls were merged"
            )
        elif actual is not None and actual.ended and not actual.error:
            problems.append(
                f"{match.label} shares its index with {sorted(ids - {match.expected.call_id})} and did not run, "
                f"but its END carries no error: {actual.describe()}"
            )
        elif actual is None and not any(a.error for a in shown):
            problems.append(
                f"{match.label} shares its index with {sorted(ids - {match.expected.call_id})}; it neither ran "
                "nor did an error say why: run it as its own call, or end it (or the index) with an error"
            )
    return problems


def _argument_texts(ctx: CheckContext, actual: ObservedCall) -> list[str]:
    """The argument text a call's segment showed: its CONTENT, and its END's raw_arguments."""
    texts = [actual.raw_arguments] if actual.raw_arguments else []
    if actual.segment_id is not None:
        streamed = "".join(e.delta for e in ctx.segments.get(actual.segment_id, []) if e.kind == "content")
        texts += [streamed] if streamed else []
    return texts


@HANDLER_CHECKS.check(
    "segment_per_call",
    title="One tool call out per provider tool call (never merged, never split)",
    rationale="Merging calls on one index or splitting one call into several loses or repeats tools (A02, B01, B06).",
    how_to_fix=(
        "Key calls by index; give every call its own segment; a new id on an occupied index is a new call or an error."
    ),
    requires=_CALL_CHECKS,
    taxonomy=("A02", "B01", "B06"),
    rule=rule("R6"),
)
def segment_per_call(ctx: CheckContext) -> list[str]:
    if ctx.surfaced_by_exception:
        raise NotApplicable("the target stopped the stream by raising on its abnormal end")
    ctx.require_calls()
    problems = _conflict_groups_ok(ctx)
    expected = ctx.scenario.expected.tool_calls
    flagged = [m for m in ctx.matches if _in_conflict(ctx, m)]
    want = len(expected) - len(flagged)
    got = len(ctx.transcript.calls) - sum(1 for m in flagged if m.actual is not None)
    if got != want:
        problems.append(
            f"the stream has {len(expected)} tool calls ({[c.name for c in expected]}); the target produced "
            f"{len(ctx.transcript.calls)} ({[c.name for c in ctx.transcript.calls]})"
        )
    return problems


@HANDLER_CHECKS.check(
    "tool_names_whole",
    title="Tool names are whole: never empty, never a prefix or a concatenation",
    rationale="A partial or doubled name dispatches to no tool or the wrong one (A05-A08).",
    how_to_fix=(
        "Ignore '' names, treat a restatement as a no-op, append true fragments. START as soon as the call "
        "has a name and must start (its arguments began or a later call appeared): with the whole name when "
        "it arrived first; when arguments came before the name, a prefix START is fine, and the END must "
        "carry the whole name."
    ),
    requires=_CALL_CHECKS,
    taxonomy=("A05", "A06", "A07", "A08"),
    rule=rule("R6"),
    consequence_of={"segment_per_call"},
)
def tool_names_whole(ctx: CheckContext) -> list[str]:
    if not any(call.name for call in ctx.scenario.expected.tool_calls):
        raise NotApplicable("the stream names no tool call")
    problems = []
    for match in ctx.matches:
        actual, want = match.actual, match.expected.name
        if actual is None or want is None or not actual.ended or _in_conflict(ctx, match):
            continue
        settled = match.position < len(ctx.name_settled) and ctx.name_settled[match.position]
        if actual.name != want:
            problems.append(f"{match.label} ended with tool name {actual.name!r}; the stream sent {want!r}")
        elif settled and actual.start_name != want and ctx.transcript.kind == "handler":
            problems.append(
                f"{match.label} started with tool name {actual.start_name!r}, but the whole name {want!r} "
                "had arrived before the call had to start"
            )
        elif actual.start_name is not None and (not actual.start_name or not want.startswith(actual.start_name)):
            problems.append(f"{match.label} started with tool name {actual.start_name!r}, not a prefix of {want!r}")
    return problems


@HANDLER_CHECKS.check(
    "provider_ids_kept",
    title="The provider's call id reaches the consumer, even when it arrived late",
    rationale="The tool result must echo the provider id or the next request is rejected (B04, G01).",
    how_to_fix=(
        "Adopt the first non-empty call_id whenever it arrives; keep it on the END, the segment or the invocation."
    ),
    requires=_CALL_CHECKS,
    taxonomy=("B04", "G01"),
    rule=rule("R9"),
    consequence_of={"segment_per_call"},
)
def provider_ids_kept(ctx: CheckContext) -> list[str]:
    if ctx.surfaced_by_exception:
        raise NotApplicable("the target stopped the stream by raising on its abnormal end")
    if not any(call.call_id for call in ctx.scenario.expected.tool_calls):
        raise NotApplicable("no call of the stream carries a provider id")
    problems = []
    for match in ctx.matches:
        want = match.expected.call_id
        if not want or match.actual is not None or _in_conflict(ctx, match):
            continue
        same_name = [a for a in ctx.unmatched if a.name == match.expected.name]
        if same_name:
            problems.append(
                f"{match.label}: the provider's id {want!r} is on no END, segment or invocation "
                f"(the call came out as {same_name[0].describe()}, segment {same_name[0].segment_id!r})"
            )
    return problems


@HANDLER_CHECKS.check(
    "invalid_arguments_flagged",
    title="Invalid, truncated or non-object arguments end in an error, never an invocation",
    rationale="Running a tool with {} instead of its truncated arguments is silent data loss (D03-D08, F06-F08).",
    how_to_fix="Parse strictly at END; on failure emit END with 'error' and 'raw_arguments' and no invocation.",
    requires=_CALL_CHECKS | {"invocations"},
    taxonomy=("D03", "D04", "D05", "D08", "F06", "F07", "F08"),
    rule=rule("R7"),
    consequence_of={"segment_per_call"},
)
def invalid_arguments_flagged(ctx: CheckContext) -> list[str]:
    if all(call.valid for call in ctx.scenario.expected.tool_calls):
        raise NotApplicable("every call of the stream may run")
    problems = []
    for match in ctx.matches:
        call, actual = match.expected, match.actual
        if call.valid or _in_conflict(ctx, match):
            continue
        if ctx.scenario.abnormal:
            why = "the stream ended abnormally"
        elif not call.name:
            why = "the stream never named it: no tool to run"  # a nameless call is rejected whatever its arguments
        else:
            why = f"its arguments {call.raw_arguments!r} are invalid"
        ran_as_empty = actual is not None and actual.invocation is not None and actual.invocation.arguments == {}
        if call.null_arguments and not ctx.scenario.abnormal and ran_as_empty:
            continue  # null read as "no arguments": {} is a conformant reading (taxonomy A12)
        if actual is not None and actual.executed:
            problems.append(f"{match.label} must not run ({why}), but it ran as {actual.describe()}")
        elif actual is not None and actual.ended and not actual.error and not ctx.surfaced_by_exception:
            problems.append(f"{match.label} must end with an 'error' ({why}); its END carries none")
        elif actual is None and not ctx.surfaced_by_exception and not ctx.unmatched:
            problems.append(f"{match.label} vanished: it must end with an 'error' ({why}), not disappear")
    return problems


@HANDLER_CHECKS.check(
    "invocations_match_stream",
    title="One invocation per valid call, with the provider's name, id and arguments",
    rationale="Lost, merged or duplicated calls run the wrong tools (A02, B01, B06, B08).",
    how_to_fix="Key calls by index, adopt late ids, never merge two calls, parse the full concatenation once.",
    requires=_CALL_CHECKS | {"invocations"},
    taxonomy=("A02", "A05", "A06", "A07", "A08", "B01", "B04", "B06", "D01", "D02"),
    rule=rule("R8"),
    consequence_of={"segment_per_call", "tool_names_whole", "invalid_arguments_flagged", "provider_ids_kept"},
)
def invocations_match_stream(ctx: CheckContext) -> list[str]:
    ctx.require_calls()
    problems = []
    for match in ctx.matches:
        call, actual = match.expected, match.actual
        if not call.valid or ctx.scenario.abnormal or _in_conflict(ctx, match):
            continue
        if actual is None or not actual.executed:
            state = "no call came out" if actual is None else f"it ended as {actual.describe()}"
            problems.append(f"{match.label} with arguments {as_json(call.arguments)} never ran: {state}")
            continue
        assert actual.invocation is not None
        if actual.invocation.name != call.name:
            problems.append(f"{match.label} ran under the name {actual.invocation.name!r}")
        if not ctx.same_arguments(actual.invocation.arguments, call.arguments):
            problems.append(
                f"{match.label} ran with arguments {as_json(actual.invocation.arguments)}, "
                f"the stream's arguments are {as_json(call.arguments)}"
            )
    problems += [
        f"{extra.describe()} ran, but the stream has no such call" for extra in ctx.unmatched if extra.executed
    ]
    if ctx.scenario.abnormal:
        ran = [m.actual.describe() for m in ctx.matches if m.actual is not None and m.actual.executed]
        problems += [f"{shown} ran although the stream ended abnormally" for shown in ran]
    return problems


@HANDLER_CHECKS.check(
    "calls_in_wire_order",
    title="Calls are started, ended and invoked in the order they first appeared on the wire",
    rationale=(
        "Follow-ups answer calls in call order, and Gemini wants its thought signature on the first call (G06, G07)."
    ),
    how_to_fix="Start each call when it must start (its arguments began, a later call appeared, or the stream "
    "ended), in the order the calls first appeared; end and invoke them in that order.",
    requires=_CALL_CHECKS,
    taxonomy=("G06", "G07"),
    rule=rule("R10"),
    consequence_of={"segment_per_call", "provider_ids_kept", "tool_names_whole"},
)
def calls_in_wire_order(ctx: CheckContext) -> list[str]:
    if ctx.surfaced_by_exception:
        raise NotApplicable("the target stopped the stream by raising on its abnormal end")
    position = {id(m.actual): m.position for m in ctx.matches if m.actual is not None}
    if len(position) < 2:
        raise NotApplicable("fewer than two calls came out")
    orders: dict[str, list[int]] = defaultdict(list)
    if ctx.transcript.kind == "accumulator":
        orders["the result lists"] = [position[id(c)] for c in ctx.transcript.calls if id(c) in position]
    else:
        by_segment = {c.segment_id: position[id(c)] for c in ctx.transcript.calls if id(c) in position}
        for event in ctx.transcript.events:
            if event.segment_id in by_segment and event.kind in ("start", "end"):
                orders[f"{event.kind.upper()}s come"].append(by_segment[event.segment_id])
        invoked = {c.invocation.id: position[id(c)] for c in ctx.transcript.calls if id(c) in position and c.invocation}
        orders["invocations come"] = [invoked[i.id] for i in ctx.transcript.invocations if i.id in invoked]
    for what, seen in orders.items():
        if seen != sorted(seen):
            return [f"{what} in the order of calls {seen}; the calls appeared on the wire as {sorted(seen)}"]
    return []


@HANDLER_CHECKS.check(
    "argument_integrity",
    title="Each call's argument CONTENT concatenates to the argument text the provider sent for it",
    rationale="UIs render arguments from CONTENT; they must equal what the provider sent (INV-CONCAT).",
    how_to_fix="Emit each non-empty arguments_delta as one CONTENT event on the call's own segment.",
    requires={"api_tool_calls", "events", "tool_calls"},
    taxonomy=("A21", "C07", "D01"),
    rule=rule("R6"),
    consequence_of={"segment_per_call"},
)
def argument_integrity(ctx: CheckContext) -> list[str]:
    ctx.require_calls()
    problems = []
    for match in ctx.matches:
        actual = match.actual
        if actual is None or _in_conflict(ctx, match) or not actual.ended or actual.segment_id is None:
            continue
        streamed = "".join(e.delta for e in ctx.segments.get(actual.segment_id, []) if e.kind == "content")
        sent = ctx.raw_arguments[match.position]
        if streamed and streamed != sent:
            problems.append(f"{match.label}: CONTENT concatenates to {streamed!r}, the provider sent {sent!r}")
    return problems


def _segments_by_position(ctx: CheckContext) -> dict[int, str | None]:
    """The segment of each expected call (by wire position) that came out as its own call."""
    return {m.position: m.actual.segment_id for m in ctx.matches if m.actual is not None and not _in_conflict(ctx, m)}


def _name_final_at(ctx: CheckContext, wire_position: int) -> int | None:
    """The chunk from which a call's name is known to be final, so its arguments must flow.

    When the name arrived before the arguments, that is its first name fragment. When arguments
    came first, a name fragment may be followed by more of the name (``read_`` then ``file``): a
    handler may wait for evidence that the name is whole, an argument fragment without a name or
    another call's delta after it (R6: START names the tool).
    """
    deltas = ctx.deltas_by_call[wire_position]
    named_at = next((p for p, d in deltas if d.name), None)
    args_at = next((p for p, d in deltas if d.arguments_delta), None)
    if named_at is None or args_at is None or named_at <= args_at:
        return named_at
    others = {p for number, other in enumerate(ctx.deltas_by_call) if number != wire_position for p, _ in other}
    evidence = [p for p, d in deltas if p > named_at and d.arguments_delta and not d.name]
    evidence += [p for p in others if p > named_at]
    return min(evidence, default=None)


def _arguments_title(capabilities: Capabilities) -> str:
    bound = capabilities.args_lag
    held = "no hold-back bound declared" if bound is None else f"hold-back <= {bound} chars"
    return f"Every call's argument fragments come out as CONTENT as they arrive ({held})"


TARGET_TITLES["arguments_stream_incrementally"] = _arguments_title


@HANDLER_CHECKS.check(
    "arguments_stream_incrementally",
    title=_arguments_title(Capabilities()),
    rationale=(
        "UIs freeze for the length of a large write_file call when arguments are buffered (C07). A handler may "
        f"hold argument text back within a bound (to a JSON token boundary, an escape sequence): {DEFAULT_ARGS_LAG} "
        "characters, or the bound it declares (--args-lag N, Capabilities(args_lag=N), args_lag in a bridge hello); "
        "--args-lag none skips the check by name."
    ),
    how_to_fix=(
        "Emit a CONTENT event for each argument fragment as it arrives (after START), for every call; if the "
        "handler holds text back to token boundaries, declare the most it holds back (--args-lag N)."
    ),
    requires={"incremental_arguments", "api_tool_calls", "args_lag", "events", "tool_calls"},
    taxonomy=("C07",),
    rule=rule("R14"),
    consequence_of={"segment_per_call", "argument_integrity"},
)
def arguments_stream_incrementally(ctx: CheckContext) -> list[str]:
    # For each call, after each feed once its name is known to be final (holding arguments back
    # before that is the contract): the argument text received minus the CONTENT emitted so far.
    lag = ctx.capabilities.args_lag
    assert lag is not None  # the check requires a declared bound ("args_lag")
    segments = {
        m.position: m.actual.segment_id for m in ctx.matches if m.actual is not None and not _in_conflict(ctx, m)
    }
    checked = False
    for wire_position, deltas in enumerate(ctx.deltas_by_call):
        segment = segments.get(wire_position)
        last = max((p for p, d in deltas if d.arguments_delta), default=-1)
        if segment is None or last < 0:
            continue
        received: dict[int, int] = {}
        for position, delta in deltas:
            received[position] = received.get(position, 0) + len(delta.arguments_delta or "")
        named_at = _name_final_at(ctx, wire_position)
        total = emitted = 0
        for position in range(min(last, len(ctx.transcript.returned))):
            total += received.get(position, 0)
            emitted += sum(
                len(e.delta)
                for e in ctx.transcript.returned[position]
                if e.segment_id == segment and e.kind == "content"
            )
            if named_at is None or position < named_at:
                continue
            checked = True
            if total - emitted > lag:
                return [
                    f"call {wire_position}: after chunk #{position + 1} it had received {total} characters of "
                    f"arguments but emitted {emitted} as CONTENT: its arguments were held back, and the declared "
                    f"hold-back is {lag} characters"
                ]
    if not checked:
        raise NotApplicable("no call streamed its arguments over several chunks")
    return []
