"""Text and reasoning: conserved, in wire order, segmented around tool calls, not held back."""

from __future__ import annotations

from conformance.handler.checks.context import HANDLER_CHECKS, CheckContext
from conformance.handler.contract import rule
from conformance.handler.observe import short_segment_id
from conformance.verdict import NotApplicable


def _fed_text(ctx: CheckContext, field: str) -> str:
    """The text (or reasoning) of the chunks the target received before it stopped."""
    chunks = ctx.transcript.chunks
    if ctx.surfaced_by_exception and ctx.transcript.crashed_at is not None:
        chunks = chunks[: ctx.transcript.crashed_at]
    return "".join(getattr(chunk, field) or "" for chunk in chunks)


def _want(ctx: CheckContext, field: str) -> str:
    if ctx.surfaced_by_exception:
        return _fed_text(ctx, field)
    return ctx.scenario.expected.text if field == "content" else ctx.scenario.expected.reasoning


@HANDLER_CHECKS.check(
    "text_conserved",
    title="Text deltas concatenate to the stream's text",
    rationale="Text must not be lost, duplicated or reordered by segmenting (E04, C04).",
    how_to_fix="Emit every content delta exactly once, in arrival order.",
    taxonomy=("C04", "E04"),
    rule=rule("R4"),
)
def text_conserved(ctx: CheckContext) -> list[str]:
    if ctx.transcript.kind == "accumulator":
        if ctx.transcript.text is None:
            raise NotApplicable("the accumulator's result carries no text")
        got = ctx.transcript.text
    else:
        got = "".join(e.delta for e in ctx.transcript.events if e.kind == "content" and ctx.is_text(e))
    want = _want(ctx, "content")
    if not got and not want:
        raise NotApplicable("no text in the stream or in the target's output")
    if got == want:
        return []
    return [f"text deltas concatenate to {got!r}, the stream's text is {want!r}"]


@HANDLER_CHECKS.check(
    "reasoning_conserved",
    title="Reasoning deltas concatenate to the stream's reasoning",
    rationale="Reasoning is shown to users and sent back on some providers (G09); it must survive intact (C05).",
    how_to_fix="Emit chunk.reasoning as REASONING segments, handled before content within a chunk.",
    requires={"reasoning"},
    taxonomy=("C05",),
    rule=rule("R4"),
)
def reasoning_conserved(ctx: CheckContext) -> list[str]:
    if ctx.transcript.kind == "accumulator":
        if ctx.transcript.reasoning is None:
            raise NotApplicable("the accumulator's result carries no reasoning")
        got = ctx.transcript.reasoning
    else:
        got = "".join(e.delta for e in ctx.transcript.events if e.kind == "content" and ctx.is_reasoning(e))
    want = _want(ctx, "reasoning")
    if not got and not want:
        raise NotApplicable("no reasoning in the stream or in the target's output")
    if got == want:
        return []
    return [f"reasoning deltas concatenate to {got!r}, the stream's reasoning is {want!r}"]


@HANDLER_CHECKS.check(
    "text_segments_follow_wire",
    title="Text that follows a tool call is never placed in a text segment opened before it",
    rationale="One text segment for the whole turn shows text that came after a tool call before it (C04).",
    how_to_fix="End the open text segment when a tool call starts; open a new one for later text.",
    requires={"segmented_text", "events", "tool_calls"},
    taxonomy=("C04",),
    rule=rule("R5"),
)
def text_segments_follow_wire(ctx: CheckContext) -> list[str]:
    if not ctx.tool_segment_ids or not any(e.kind == "content" and ctx.is_text(e) for e in ctx.transcript.events):
        raise NotApplicable("the target's output has no tool segment or no text")
    started_calls: list[str] = []
    opened_before: dict[str, int] = {}  # text segment -> number of tool STARTs before its START
    for event in ctx.transcript.events:
        if event.segment_id in ctx.tool_segment_ids:
            if event.kind == "start":
                started_calls.append(event.segment_id)
            continue
        if event.kind == "start":
            opened_before[event.segment_id] = len(started_calls)
        elif event.kind == "content" and len(started_calls) > opened_before.get(event.segment_id, len(started_calls)):
            return [
                f"text {event.delta!r} arrived after a tool call started but went into the "
                f"{event.segment_type} segment #{short_segment_id(event.segment_id)} opened before it"
            ]
    return []


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


@HANDLER_CHECKS.check(
    "text_and_reasoning_in_wire_order",
    title="Text and reasoning come out in wire order (reasoning before content within a chunk)",
    rationale=(
        "Reordered text changes what the user reads; reasoning leaking into text shows thoughts as answer (C04, C05)."
    ),
    how_to_fix="Handle chunk.reasoning, then chunk.content, then tool calls; never buffer one kind behind the other.",
    requires={"api_tool_calls", "events"},
    taxonomy=("C04", "C05"),
    rule=rule("R4"),
    consequence_of={"text_conserved", "reasoning_conserved"},
)
def text_and_reasoning_in_wire_order(ctx: CheckContext) -> list[str]:
    wire: list[tuple[str, str]] = []
    for chunk in ctx.transcript.chunks[: ctx.transcript.fed or len(ctx.transcript.chunks)]:
        wire += [("reasoning", chunk.reasoning or ""), ("text", chunk.content)]
    got = _wire_runs(
        [
            ("reasoning" if ctx.is_reasoning(e) else "text", e.delta)
            for e in ctx.transcript.events
            if e.kind == "content" and e.segment_id not in ctx.tool_segment_ids
        ]
    )
    want = _wire_runs(wire)
    if not ctx.capabilities.reasoning:
        want = [run for run in want if run[0] == "text"]
        got = [run for run in got if run[0] == "text"]
    if not got and not want:
        raise NotApplicable("no text or reasoning in the stream or in the target's output")
    if got == want:
        return []
    return [f"text and reasoning arrive as {want}, the target emitted them as {got}"]


@HANDLER_CHECKS.check(
    "text_streams_within_lag",
    title="Text is emitted within the target's declared hold-back",
    rationale="A handler that buffers text defeats streaming; its users see nothing until the end.",
    how_to_fix=(
        "Emit text as it arrives; hold back only what could still begin a tool call, up to the declared maximum."
    ),
    requires={"text_lag", "events"},
    taxonomy=("E04",),
    rule=rule("R14"),
)
def text_streams_within_lag(ctx: CheckContext) -> list[str]:
    if not any(chunk.content for chunk in ctx.transcript.chunks):
        raise NotApplicable("the stream carries no text")
    lag = ctx.capabilities.text_lag_chars or 0
    # Tool markup in the text (text-embedded formats) is never emitted as text; allowing for all
    # of it keeps the bound sound without knowing where the blocks are.
    markup = max(sum(len(chunk.content) for chunk in ctx.transcript.chunks) - len(ctx.scenario.expected.text), 0)
    fed = emitted = 0
    for position, (chunk, batch) in enumerate(zip(ctx.transcript.chunks, ctx.transcript.returned, strict=False)):
        fed += len(chunk.content)
        emitted += sum(len(e.delta) for e in batch if e.kind == "content" and ctx.is_text(e))
        if fed - emitted > lag + markup:
            return [
                f"after feed #{position + 1} the target had emitted {emitted} of {fed} text characters; "
                f"it declares a hold-back of at most {lag}"
            ]
    return []
