"""The contract checks. Each has a stable snake_case id, a rationale and how-to-fix text.

A check reads one ``Transcript`` of a handler run over a ``Scenario`` and returns violation
messages (empty when the run conforms). Checks that need a capability the handler does not declare
are reported as skipped, by name, never as passed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from conformance.handler.capabilities import Capabilities
from conformance.handler.drive import Transcript
from conformance.handler.observe import ObservedEvent, short_segment_id
from conformance.handler.scenarios import Scenario
from conformance.verdict import Check, CheckRegistry

__all__ = ["CHECKS", "HANDLER_CHECKS", "CheckContext", "check_by_id"]


@dataclass(frozen=True)
class CheckContext:
    """What a handler check judges: one scenario, one run of the handler over it, its capabilities."""

    scenario: Scenario
    transcript: Transcript
    capabilities: Capabilities


def _segments(events: list[ObservedEvent]) -> dict[str, list[ObservedEvent]]:
    by_segment: dict[str, list[ObservedEvent]] = defaultdict(list)
    for event in events:
        by_segment[event.segment_id].append(event)
    return by_segment


def _tool_segments(events: list[ObservedEvent]) -> list[list[ObservedEvent]]:
    return [seq for seq in _segments(events).values() if seq[0].segment_type == "tool_call"]


def _raw_arguments_by_index(scenario: Scenario) -> dict[int, str]:
    parts: dict[int, list[str]] = defaultdict(list)
    for chunk in scenario.chunks:
        for delta in chunk.tool_calls or ():
            if delta.arguments_delta:
                parts[delta.index].append(delta.arguments_delta)
    return {index: "".join(pieces) for index, pieces in parts.items()}


def _fmt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


# -- individual checks -------------------------------------------------------------------------


def _joined(events: list[ObservedEvent], segment_type: str) -> str:
    return "".join(e.delta for e in events if e.kind == "content" and e.segment_type == segment_type)


def _end_metadata(seq: list[ObservedEvent]) -> dict[str, Any]:
    ends = [event for event in seq if event.kind == "end"]
    return dict(ends[-1].metadata) if ends else {}


def _wire_runs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    runs: list[tuple[str, list[str]]] = []
    for kind, text in pairs:
        if not text:
            continue
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(text)
        else:
            runs.append((kind, [text]))
    return [(kind, "".join(parts)) for kind, parts in runs]


HANDLER_CHECKS = CheckRegistry[CheckContext]()


@HANDLER_CHECKS.check(
    "no_crash",
    title="The handler never raises while streaming",
    rationale="An exception inside feed()/finalize() kills the turn, including valid sibling calls (D09, F04).",
    how_to_fix="Catch malformed input at the boundary and turn it into an error END instead of raising.",
    taxonomy=("D09", "F04"),
)
def _no_crash(ctx: CheckContext) -> list[str]:
    crash = ctx.transcript.crash
    if crash is None:
        return []
    return [f"the handler raised {type(crash).__name__}: {crash}"]


@HANDLER_CHECKS.check(
    "segment_lifecycle",
    title="Each segment has one START, CONTENT*, one END; nothing after END; finalize() ends all",
    rationale=(
        "UIs key spinners and buffers on START/END; a duplicate START or a missing END leaves them hanging (C01, C03)."
    ),
    how_to_fix="Track open segments in one place and end every one of them in finalize().",
    taxonomy=("C01", "C03", "C06"),
)
def _segment_lifecycle(ctx: CheckContext) -> list[str]:
    problems: list[str] = []
    for segment_id, seq in _segments(ctx.transcript.events).items():
        kinds = [event.kind for event in seq]
        label = f"segment {seq[0].segment_type}#{short_segment_id(segment_id)}"
        if kinds.count("start") != 1 or kinds[0] != "start":
            problems.append(f"{label} must begin with exactly one START, got {kinds}")
        elif kinds.count("end") != 1:
            problems.append(f"{label} must have exactly one END after finalize(), got {kinds.count('end')}")
        elif kinds[-1] != "end":
            problems.append(f"{label} has events after its END: {kinds}")
        if len({event.segment_type for event in seq}) > 1:
            problems.append(f"{label} changes segment_type mid-segment")
    return problems


@HANDLER_CHECKS.check(
    "finalize_idempotent",
    title="A second finalize() returns []",
    rationale="Two completion paths (stream end and an explicit finalize) must not end segments twice (C06).",
    how_to_fix="Set a finalized flag in finalize() and return [] when it is already set.",
    taxonomy=("C06",),
)
def _finalize_idempotent(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        return []
    extra = ctx.transcript.second_finalize
    if not extra:
        return []
    return [f"a second finalize() returned {len(extra)} events; it must return []: {extra[0].describe()}"]


@HANDLER_CHECKS.check(
    "feed_after_finalize_raises",
    title="feed() after finalize() raises RuntimeError",
    rationale="Chunks arriving after the end belong to another turn; accepting them silently corrupts this one (C06).",
    how_to_fix="Raise a RuntimeError (subclass) from feed() once finalized; reset() makes the handler reusable.",
    taxonomy=("C06",),
)
def _feed_after_finalize_raises(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.probed:
        return []
    error = ctx.transcript.feed_after_finalize_error
    if isinstance(error, RuntimeError):
        return []
    if error is None:
        return ["feed() after finalize() was accepted silently; it must raise RuntimeError"]
    return [f"feed() after finalize() raised {type(error).__name__}, expected a RuntimeError"]


@HANDLER_CHECKS.check(
    "returned_events_are_all_events",
    title="Events returned by feed()/finalize() are exactly get_all_events()",
    rationale="Consumers that use return values and consumers that read the log must see the same stream.",
    how_to_fix="Append every emitted event to the log and to the return batch in one function.",
)
def _returned_events_are_all_events(ctx: CheckContext) -> list[str]:
    returned = ctx.transcript.returned_flat
    if returned == ctx.transcript.events:
        return []
    return [
        f"events returned by feed()/finalize() ({len(returned)}) differ from get_all_events() "
        f"({len(ctx.transcript.events)})"
    ]


@HANDLER_CHECKS.check(
    "callbacks_see_returned_events",
    title="on_segment_event / on_tool_invocation see exactly the returned events and invocations",
    rationale="A UI driven by callbacks must not drift from the handler's own record.",
    how_to_fix="Call the callbacks from the same emit function, after recording the event.",
    requires=frozenset({"callbacks"}),
)
def _callbacks_see_returned_events(ctx: CheckContext) -> list[str]:
    if not ctx.transcript.callbacks_supported:
        return []
    problems = []
    if ctx.transcript.callback_events != ctx.transcript.events:
        problems.append(
            f"on_segment_event saw {len(ctx.transcript.callback_events)} events, "
            f"get_all_events() has {len(ctx.transcript.events)}"
        )
    if ctx.transcript.callback_invocations != ctx.transcript.invocations:
        problems.append(
            f"on_tool_invocation saw {len(ctx.transcript.callback_invocations)} invocations, "
            f"get_all_invocations() has {len(ctx.transcript.invocations)}"
        )
    return problems


@HANDLER_CHECKS.check(
    "text_conserved",
    title="TEXT deltas concatenate to the stream's text",
    rationale="Text must not be lost, duplicated or reordered by segmenting (E04, C04).",
    how_to_fix="Emit every content delta exactly once, in arrival order.",
    taxonomy=("C04", "E04"),
)
def _text_conserved(ctx: CheckContext) -> list[str]:
    got = _joined(ctx.transcript.events, "text")
    want = ctx.scenario.expected.text
    if got == want:
        return []
    return [f"TEXT deltas concatenate to {got!r}, the stream's text is {want!r}"]


@HANDLER_CHECKS.check(
    "reasoning_conserved",
    title="REASONING deltas concatenate to the stream's reasoning",
    rationale="Reasoning is shown to users and sent back on some providers (G09); it must survive intact (C05).",
    how_to_fix="Emit chunk.reasoning as REASONING segments, handled before content within a chunk.",
    requires=frozenset({"reasoning"}),
    taxonomy=("C05",),
)
def _reasoning_conserved(ctx: CheckContext) -> list[str]:
    got = _joined(ctx.transcript.events, "reasoning")
    want = ctx.scenario.expected.reasoning
    if got == want:
        return []
    return [f"REASONING deltas concatenate to {got!r}, the stream's reasoning is {want!r}"]


@HANDLER_CHECKS.check(
    "text_segments_follow_wire",
    title="No text segment spans a tool call",
    rationale="One text segment for the whole turn places text that came after a tool call before it (C04).",
    how_to_fix="End the open text segment when a tool call starts; open a new one for later text.",
    taxonomy=("C04",),
)
def _text_segments_follow_wire(ctx: CheckContext) -> list[str]:
    open_text: str | None = None
    for event in ctx.transcript.events:
        if event.segment_type in ("text", "reasoning"):
            if event.kind == "start":
                open_text = event.segment_id
            elif event.kind == "end" and event.segment_id == open_text:
                open_text = None
        elif event.segment_type == "tool_call" and event.kind == "start" and open_text is not None:
            return [
                f"a text segment (#{short_segment_id(open_text)}) stays open across a tool call START; text after the "
                "call would be placed before it"
            ]
    return []


@HANDLER_CHECKS.check(
    "argument_integrity",
    title="Tool CONTENT deltas concatenate to the streamed argument text",
    rationale="UIs render arguments from CONTENT; they must equal what the provider sent (INV-CONCAT).",
    how_to_fix="Emit each non-empty arguments_delta as one CONTENT event on the call's segment.",
    requires=frozenset({"api_tool_calls"}),
    taxonomy=("A21", "C07", "D01"),
)
def _argument_integrity(ctx: CheckContext) -> list[str]:
    raw_by_index = _raw_arguments_by_index(ctx.scenario)
    expected_raw = sorted(raw_by_index.values())
    got_raw = sorted(_joined(seq, "tool_call") for seq in _tool_segments(ctx.transcript.events))
    if Counter(got_raw) == Counter(expected_raw) or (
        # calls with no argument text at all may legitimately have no CONTENT
        Counter(r for r in got_raw if r) == Counter(r for r in expected_raw if r)
    ):
        return []
    return [f"tool CONTENT deltas concatenate to {got_raw}, the streamed argument texts are {expected_raw}"]


@HANDLER_CHECKS.check(
    "invalid_arguments_flagged",
    title="Invalid, truncated or non-object arguments end in an error, never an invocation",
    rationale="Running a tool with {} instead of its truncated arguments is silent data loss (D03-D08, F06-F08).",
    how_to_fix="Parse strictly at END; on failure emit END with 'error' and 'raw_arguments' and no invocation.",
    taxonomy=("D03", "D04", "D05", "D08", "F06", "F07", "F08"),
)
def _invalid_arguments_flagged(ctx: CheckContext) -> list[str]:
    problems = []
    invalid = [call for call in ctx.scenario.expected.tool_calls if not call.valid]
    tool_ends = [_end_metadata(seq) for seq in _tool_segments(ctx.transcript.events)]
    for call in invalid:
        executed = [inv for inv in ctx.transcript.invocations if inv.name == call.name and inv.id == call.call_id]
        if executed:
            problems.append(
                f"{call.name}({call.raw_arguments!r}) must not become an invocation, got {executed[0].describe()}"
            )
        flagged = [meta for meta in tool_ends if meta.get("error") and meta.get("tool_name", call.name) == call.name]
        if not flagged:
            problems.append(f"{call.name}({call.raw_arguments!r}) must END with an 'error' in its metadata")
        elif any("arguments" in meta for meta in flagged):
            problems.append(f"{call.name}: an error END must not carry 'arguments' (got {flagged[0]})")
    return problems


@HANDLER_CHECKS.check(
    "invocations_match_stream",
    title="One invocation per valid call, with the provider's name, id and arguments",
    rationale="Lost, merged or duplicated calls run the wrong tools (A02, B01, B06, B08).",
    how_to_fix="Key calls by index, adopt late ids, never merge two calls, parse the full concatenation once.",
    taxonomy=("A02", "A05", "A06", "A07", "A08", "B01", "B04", "B06", "D01", "D02"),
)
def _invocations_match_stream(ctx: CheckContext) -> list[str]:
    want = [(c.name, c.call_id, _fmt(c.arguments)) for c in ctx.scenario.expected.tool_calls if c.valid]
    got = [(inv.name, inv.id, _fmt(inv.arguments)) for inv in ctx.transcript.invocations]
    remaining = list(got)
    unmatched = []
    # Calls the provider gave an id must come out with exactly that id; calls without one get a
    # handler-chosen id, so they are matched on name and arguments among what is left.
    for name, call_id, arguments in sorted(want, key=lambda call: call[1] is None):
        if call_id is not None:
            match = next((g for g in remaining if g == (name, call_id, arguments)), None)
        else:
            match = next((g for g in remaining if (g[0], g[2]) == (name, arguments)), None)
        if match is None:
            unmatched.append((name, call_id, arguments))
        else:
            remaining.remove(match)
    if not unmatched and not remaining:
        return []
    lines = ["invocations differ from the stream's tool calls:"]
    lines += [f"  expected {n}({a}) id={i!r}" for n, i, a in want]
    lines += [f"  actual   {n}({a}) id={i!r}" for n, i, a in got]
    return ["\n".join(lines)]


@HANDLER_CHECKS.check(
    "tool_names_whole",
    title="Tool names are whole: never empty, never a prefix or a concatenation",
    rationale="A partial or doubled name dispatches to no tool or the wrong one (A05-A08).",
    how_to_fix=(
        "Ignore '' names, treat a restatement as a no-op, append true fragments, emit START once the name is known."
    ),
    taxonomy=("A05", "A06", "A07", "A08"),
)
def _tool_names_whole(ctx: CheckContext) -> list[str]:
    problems = []
    expected_names = sorted({c.name for c in ctx.scenario.expected.tool_calls if c.name})
    for seq in _tool_segments(ctx.transcript.events):
        start_name = seq[0].metadata.get("tool_name")
        end_name = _end_metadata(seq).get("tool_name", start_name)
        if not expected_names:
            continue
        # END is definitive: the whole name. START may only lack a fragment that arrived after the
        # arguments had begun, so it must at least be a non-empty prefix of a real name.
        if end_name not in expected_names:
            problems.append(f"END tool_name {end_name!r} is not a name the stream sent ({expected_names})")
        if not start_name or not any(name.startswith(start_name) for name in expected_names):
            problems.append(
                f"START tool_name {start_name!r} is neither a name the stream sent nor a prefix of one "
                f"({expected_names})"
            )
    return problems


@HANDLER_CHECKS.check(
    "segment_per_call",
    title="One tool segment per provider tool call",
    rationale="Merging calls on one index or splitting one call into several loses or repeats tools (A02, B01, B06).",
    how_to_fix="Give every call its own generated segment id; do not reuse the provider id as segment id.",
    taxonomy=("A02", "B01", "B06"),
)
def _segment_per_call(ctx: CheckContext) -> list[str]:
    want = len(ctx.scenario.expected.tool_calls)
    got = len(_tool_segments(ctx.transcript.events))
    if want == got:
        return []
    return [f"the stream has {want} tool calls but the handler opened {got} tool segments"]


@HANDLER_CHECKS.check(
    "get_all_returns_copies",
    title="get_all_events() / get_all_invocations() return copies",
    rationale="A consumer that sorts or clears the returned list must not corrupt the handler's record.",
    how_to_fix="Return list(self._events), not the list itself.",
    taxonomy=("C06",),
)
def _get_all_returns_copies(ctx: CheckContext) -> list[str]:
    return list(ctx.transcript.copy_leaks)


@HANDLER_CHECKS.check(
    "reset_behaves_like_new",
    title="After reset() the handler behaves exactly like a new one, with fresh segment ids",
    rationale="Handlers are reused across turns and retries; leaked state merges turns (B07).",
    how_to_fix="Clear every per-stream field (including the adapter's) in reset(); keep the id counter running.",
    taxonomy=("B07",),
)
def _reset_behaves_like_new(ctx: CheckContext) -> list[str]:
    return list(ctx.transcript.reset_problems)


@HANDLER_CHECKS.check(
    "callbacks_isolated",
    title="A raising callback changes nothing the handler records or returns",
    rationale="A broken UI listener must not lose tool calls or abort the stream (C06).",
    how_to_fix="Record the event first, then call the callback inside try/except and log the error.",
    requires=frozenset({"callbacks"}),
    taxonomy=("C06",),
)
def _callbacks_isolated(ctx: CheckContext) -> list[str]:
    return list(ctx.transcript.callback_isolation_problems)


@HANDLER_CHECKS.check(
    "text_and_reasoning_in_wire_order",
    title="Text and reasoning come out in wire order (reasoning before content within a chunk)",
    rationale=(
        "Reordered text changes what the user reads; reasoning leaking into text shows thoughts as answer (C04, C05)."
    ),
    how_to_fix="Handle chunk.reasoning, then chunk.content, then tool calls; never buffer one kind behind the other.",
    requires=frozenset({"api_tool_calls"}),
    taxonomy=("C04", "C05"),
)
def _text_and_reasoning_in_wire_order(ctx: CheckContext) -> list[str]:
    wire: list[tuple[str, str]] = []
    for chunk in ctx.scenario.chunks:
        # Within a chunk the contract handles reasoning first, then content.
        wire += [("reasoning", chunk.reasoning or ""), ("text", chunk.content)]
    got = _wire_runs(
        [
            (e.segment_type, e.delta)
            for e in ctx.transcript.events
            if e.kind == "content" and e.segment_type != "tool_call"
        ]
    )
    want = _wire_runs(wire)
    if not ctx.capabilities.reasoning:
        want = [run for run in want if run[0] == "text"]
        got = [run for run in got if run[0] == "text"]
    if got == want:
        return []
    return [f"text and reasoning arrive as {want}, the handler emitted them as {got}"]


@HANDLER_CHECKS.check(
    "tool_ends_in_start_order",
    title="Tool ENDs come in START order",
    rationale="Follow-up messages pair results with calls positionally on some providers (G06).",
    how_to_fix="Keep started calls in a list and end them in that order.",
    taxonomy=("G06",),
)
def _tool_ends_in_start_order(ctx: CheckContext) -> list[str]:
    starts = [e.segment_id for e in ctx.transcript.events if e.segment_type == "tool_call" and e.kind == "start"]
    ends = [e.segment_id for e in ctx.transcript.events if e.segment_type == "tool_call" and e.kind == "end"]
    if ends == [s for s in starts if s in set(ends)]:
        return []
    return ["tool ENDs are not in START order (consumers pair results with calls by that order)"]


@HANDLER_CHECKS.check(
    "arguments_stream_incrementally",
    title="Argument fragments are streamed as CONTENT, not held until the end",
    rationale="UIs freeze for the length of a large write_file call when arguments are buffered (C07).",
    how_to_fix="Emit a CONTENT event for each argument fragment as it arrives (after START).",
    requires=frozenset({"api_tool_calls"}),
    taxonomy=("C07",),
)
def _arguments_stream_incrementally(ctx: CheckContext) -> list[str]:
    # For each call: the feeds that carried argument text once its name was known (before that,
    # holding arguments back is the contract). With two or more such feeds, some tool CONTENT
    # must come out before the last of them.
    named: set[int] = set()
    feeds: dict[int, list[int]] = defaultdict(list)
    for position, chunk in enumerate(ctx.transcript.chunks):
        for delta in chunk.tool_calls or ():
            if delta.name:
                named.add(delta.index)
            if delta.arguments_delta and delta.index in named and position not in feeds[delta.index]:
                feeds[delta.index].append(position)
    for index, positions in feeds.items():
        if len(positions) < 2:
            continue
        earlier = [e for batch in ctx.transcript.returned[: positions[-1]] for e in batch]
        if not any(e.segment_type == "tool_call" and e.kind == "content" for e in earlier):
            return [
                f"call {index} streamed arguments in {len(positions)} chunks, but no tool CONTENT came out "
                f"before chunk #{positions[-1] + 1}: arguments were held back until the end"
            ]
    return []


@HANDLER_CHECKS.check(
    "text_streams_within_lag",
    title="Text is emitted within the handler's declared hold-back",
    rationale="A handler that buffers text defeats streaming; its users see nothing until the end.",
    how_to_fix=(
        "Emit text as it arrives; hold back only what could still begin a tool call, up to the declared maximum."
    ),
    requires=frozenset({"text_lag"}),
    taxonomy=("E04",),
)
def _text_streams_within_lag(ctx: CheckContext) -> list[str]:
    lag = ctx.capabilities.text_lag_chars or 0
    # Tool markup in the text (text-embedded formats) is never emitted as TEXT; allowing for all
    # of it keeps the bound sound without knowing where the blocks are.
    markup = sum(len(chunk.content) for chunk in ctx.transcript.chunks) - len(ctx.scenario.expected.text)
    fed = emitted = 0
    for position, (chunk, batch) in enumerate(zip(ctx.transcript.chunks, ctx.transcript.returned, strict=False)):
        fed += len(chunk.content)
        emitted += sum(len(e.delta) for e in batch if e.kind == "content" and e.segment_type == "text")
        if fed - emitted > lag + max(markup, 0):
            return [
                f"after feed #{position + 1} the handler had emitted {emitted} of {fed} text characters; "
                f"it declares a hold-back of at most {lag}"
            ]
    return []


@HANDLER_CHECKS.check(
    "provider_ids_kept",
    title="END carries the provider's call id, even when it arrived late",
    rationale="The tool result must echo the provider id or the next request is rejected (B04, G01).",
    how_to_fix="Adopt the first non-empty call_id whenever it arrives; never replace it by a synthetic id.",
    taxonomy=("B04", "G01"),
)
def _provider_ids_kept(ctx: CheckContext) -> list[str]:
    # Per tool name, the ids on the ENDs must be exactly the ids the provider sent (None where it
    # sent none), however late they arrived.
    want: dict[str | None, Counter[str | None]] = defaultdict(Counter)
    for call in ctx.scenario.expected.tool_calls:
        want[call.name][call.call_id] += 1
    got: dict[str | None, Counter[str | None]] = defaultdict(Counter)
    for seq in _tool_segments(ctx.transcript.events):
        end = _end_metadata(seq)
        name = end.get("tool_name") or seq[0].metadata.get("tool_name")
        got[name][end.get("call_id")] += 1
    problems = []
    for name, ids in want.items():
        if got.get(name, Counter()) != ids and any(ids):
            problems.append(
                f"{name}: END call ids {sorted(map(str, got.get(name, Counter()).elements()))}, "
                f"the provider sent {sorted(map(str, ids.elements()))}"
            )
    return problems


CHECKS: tuple[Check[CheckContext], ...] = HANDLER_CHECKS.all()


def check_by_id(check_id: str) -> Check[CheckContext]:
    """Look a handler check up by its stable id."""
    return HANDLER_CHECKS.by_id(check_id)
