"""Conformance checks for converters (provider stream -> ``ChunkResponse``/``ToolCallDelta``).

A converter is checked on recordings with expectations (the bundled cassettes, or any directory
of yours): each body is replayed through the real SDK or client library, offline, and the
converter's output is checked both structurally and, through the reference handler, against the
expectation. A converter only sees the SDK's objects, so byte splits of the body cannot reach it
(the SDK's own parsing absorbs them; the stack checks and the project's replay tests cut bodies at
arbitrary byte offsets). A converter factory takes the wire API name, or nothing for a converter
class of one wire API (``conformance.converter.factory``; ``converter_for`` is the reference).

Three checks compare the converter with facts of the recording that no expectation file holds,
read off the SDK's own stream objects and accumulators by ``conformance.wire.recorded``: how far each
call's arguments had arrived after each SDK event (``converter_arguments_stream_incrementally``;
the pipeline converts event by event, so what a converter returned for each event is known), the
provider's final usage (``converter_usage_is_last_snapshot``) and the per-call metadata a
follow-up must echo (``converter_provider_metadata_kept``). A recording without such facts (no
usage sent, arguments sent whole, no signature or item id) is *not applicable* to the check: it
is listed in the check's ``not_applicable`` and never counted as a pass; a check that applies to
no recording at all is reported as skipped.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.verdict import Check, CheckRegistry, Harm, NotApplicable
from conformance.wire import Body
from conformance.wire.cases import Case
from conformance.wire.may_run import stream_why_not
from conformance.wire.outcome import Outcome
from conformance.wire.recorded import Recording, describe_text, signature_bytes
from conformance.wire.replay import ReplayResult, compare_outcomes
from reference_impl.types import ChunkResponse

__all__ = ["CONVERTER_CHECKS", "CONVERTER_CHECK_REGISTRY", "ConverterContext", "NotApplicable"]


@dataclass(frozen=True)
class ConverterContext:
    """What a converter check judges: one recording, its expectation, and the converter's replay of it."""

    case: Case
    body: Body
    expected: Outcome
    result: ReplayResult
    crash: BaseException | None = None
    recording: Recording | None = None  # facts read from the recording by the SDK (conformance.wire.recorded)
    # This recording's chunks from a converter alone, and from one fed alternately, event by event,
    # with a second converter from the factory working on another recording.
    interleaved: tuple[list[ChunkResponse], list[ChunkResponse]] | None = None


def _deltas(chunks: Sequence[ChunkResponse]) -> list[Any]:
    return [delta for chunk in chunks for delta in chunk.tool_calls or ()]


def _recording(ctx: ConverterContext) -> Recording:
    if ctx.recording is None:
        raise NotApplicable("the recording could not be read through the SDK")
    return ctx.recording


def _calls_in_order(chunks: Sequence[ChunkResponse]) -> dict[int, int]:
    """Converter tool index -> call position, by order of first appearance (dense indices map to themselves)."""
    order: dict[int, int] = {}
    for delta in _deltas(chunks):
        order.setdefault(delta.index, len(order))
    return order


def _merged_metadata(chunks: Sequence[ChunkResponse]) -> dict[int, dict[str, Any]]:
    """Call position -> provider_metadata merged over its deltas (non-empty values, later ones win),
    which is what a handler puts on the call's END."""
    order = _calls_in_order(chunks)
    merged: dict[int, dict[str, Any]] = defaultdict(dict)
    for delta in _deltas(chunks):
        if delta.provider_metadata:
            merged[order[delta.index]].update(
                {key: value for key, value in delta.provider_metadata.items() if value not in (None, "")}
            )
    return merged


CONVERTER_CHECK_REGISTRY = CheckRegistry[ConverterContext]()


@CONVERTER_CHECK_REGISTRY.check(
    "converter_outcome_matches",
    title="Replayed through the converter, each recording gives its expected tool calls and text",
    rationale="The expectation comes from the SDK's own accumulator or a hand-checked definition, not from our code.",
    how_to_fix="Compare your converter's output with `toolcall-conformance replay --json` on the failing recording.",
    taxonomy=("A01", "A02", "A05", "A06", "A09", "A13", "A16", "A19", "F01", "F02", "F04"),
)
def _outcome_matches(ctx: ConverterContext) -> list[str]:
    if ctx.crash is not None:
        return [f"replay raised {type(ctx.crash).__name__}: {ctx.crash}"]
    problems = compare_outcomes(ctx.expected, ctx.result.outcome)
    # The provider's raw finish reason travels on the terminal chunk: agent loops branch on it
    # ("tool_calls" / "tool_use" means: run the tools and continue).
    want, got = ctx.expected.finish_reason, ctx.result.outcome.finish_reason
    if want is not None and got != want:
        problems.append(f"finish_reason {got!r} on the terminal chunk, the provider sent {want!r}")
    return problems


@CONVERTER_CHECK_REGISTRY.check(
    "converter_indices_dense",
    title="Tool indices are dense, 0-based, in order of first appearance",
    rationale="Block indices and output indices count text and reasoning too; leaked, they open phantom calls (A03).",
    how_to_fix="Map provider keys (output_index, item_id, block index) through a tracker to a running counter.",
    taxonomy=("A03", "A18"),
    harm=Harm.STREAM_SHAPE,
)
def _indices_dense(ctx: ConverterContext) -> list[str]:
    seen: list[int] = []
    for delta in _deltas(ctx.result.chunks):
        if delta.index not in seen:
            if delta.index != len(seen):
                return [
                    f"tool index {delta.index} appeared after {seen}: "
                    "indices must be dense, 0-based, in first-appearance order"
                ]
            seen.append(delta.index)
    return []


@CONVERTER_CHECK_REGISTRY.check(
    "converter_id_and_name_once",
    title="Each call's id is stable and its name is sent once",
    rationale="Restated names concatenate and changing ids split calls in naive accumulators (A06, B03).",
    how_to_fix="Emit the name on the first delta only; drop restatements and '' placeholders.",
    taxonomy=("A05", "A06", "B03"),
    harm=Harm.STREAM_SHAPE,
)
def _id_and_name_once(ctx: ConverterContext) -> list[str]:
    ids: dict[int, set[str]] = defaultdict(set)
    names: dict[int, list[str]] = defaultdict(list)
    for delta in _deltas(ctx.result.chunks):
        if delta.call_id:
            ids[delta.index].add(delta.call_id)
        if delta.name:
            names[delta.index].append(delta.name)
    problems = [f"tool index {i} carries several call ids {sorted(v)}" for i, v in ids.items() if len(v) > 1]
    problems += [
        f"tool index {i} restates its name {n!r}: send it once (restatements concatenate in naive accumulators)"
        for i, n in names.items()
        if len(n) != len(set(n)) or (len(n) > 1 and "".join(n) in n)
    ]
    return problems


@CONVERTER_CHECK_REGISTRY.check(
    "converter_deltas_match_final_arguments",
    title="Argument deltas concatenate to the provider's final arguments",
    rationale="Snapshot-as-delta, done-only and double-encoded arguments corrupt calls silently (A09, A11, A15, D06).",
    how_to_fix="Forward only new text; serialise object arguments once; take done-only arguments from the done event.",
    taxonomy=("A09", "A11", "A15", "D06"),
    harm=Harm.RAN_WRONG,
)
def _deltas_match_final_arguments(ctx: ConverterContext) -> list[str]:
    texts: dict[int, list[str]] = defaultdict(list)
    for delta in _deltas(ctx.result.chunks):
        if delta.arguments_delta:
            texts[delta.index].append(delta.arguments_delta)
    problems = []
    for index, want in enumerate(ctx.expected.tool_calls):
        got = "".join(texts.get(index, []))
        if want.arguments is not None:
            try:
                parsed = json.loads(got) if got.strip() else {}
            except json.JSONDecodeError:
                problems.append(f"call {index} ({want.name}): deltas concatenate to invalid JSON {got[:80]!r}")
                continue
            if json.dumps(parsed, sort_keys=True) != json.dumps(want.arguments, sort_keys=True):
                problems.append(
                    f"call {index} ({want.name}): deltas give {parsed}, the provider's arguments are {want.arguments}"
                )
        elif got != want.raw_arguments and want.raw_arguments:
            problems.append(
                f"call {index} ({want.name}): deltas give {got[:80]!r}, the provider sent {want.raw_arguments[:80]!r}"
            )
    return problems


def _expected_kind(ctx: ConverterContext) -> str | None:
    """The ``StreamError.kind`` the recording calls for, or None for a normal end."""
    # The stream-level reasons no call may run are exactly the StreamError kinds; the wire API is
    # the body's (a third-party expectation names its format its own way).
    return stream_why_not(ctx.body.api, ctx.expected.finish_reason, ctx.expected.error)


@CONVERTER_CHECK_REGISTRY.check(
    "converter_abnormal_end_surfaced",
    title="Truncation, in-band errors and missing ends are surfaced as ChunkResponse.error of the right kind",
    rationale=(
        "A truncated or failed stream reported as success runs half-written tool calls (F06-F08); a normal one "
        "reported as failed loses the turn; the kind decides the remedy (retry with more tokens, retry, reconnect)."
    ),
    how_to_fix=(
        "Map length/max_tokens stops to 'truncated', error events to 'provider_error' and a missing terminal event "
        "to 'incomplete'; never mark a normal end."
    ),
    taxonomy=("F06", "F07", "F08"),
    harm=Harm.RAN_WRONG,
)
def _abnormal_end_surfaced(ctx: ConverterContext) -> list[str]:
    want = _expected_kind(ctx)
    kinds = [chunk.error.kind for chunk in ctx.result.chunks if chunk.error is not None]
    if want is not None and not kinds:
        why = ctx.expected.error or f"finish_reason {ctx.expected.finish_reason!r}"
        return [f"the stream ended abnormally ({why}) but no chunk carries ChunkResponse.error"]
    if want is None and kinds:
        return [f"a stream that ended normally was reported as abnormal ({kinds})"]
    if want is not None and want not in kinds:
        return [f"the stream ended {want} ({ctx.expected.error or ctx.expected.finish_reason}), reported as {kinds}"]
    return []


@CONVERTER_CHECK_REGISTRY.check(
    "converter_one_terminal_chunk",
    title="Exactly one chunk, the last, is marked is_complete",
    rationale="Handlers finalize on is_complete; an early one drops the rest of the stream (F03).",
    how_to_fix="Mark completion once, on the stream's real terminal event (or at the end of iteration).",
    taxonomy=("F03",),
    harm=Harm.STREAM_SHAPE,
)
def _one_terminal_chunk_last(ctx: ConverterContext) -> list[str]:
    complete = [position for position, chunk in enumerate(ctx.result.chunks) if chunk.is_complete]
    if complete == [len(ctx.result.chunks) - 1]:
        return []
    return [
        f"exactly one chunk, the last, must have is_complete=True; got positions {complete} of {len(ctx.result.chunks)}"
    ]


@CONVERTER_CHECK_REGISTRY.check(
    "converter_arguments_stream_incrementally",
    title="Argument text is forwarded in the event that carried it, never held back",
    rationale="A converter that buffers arguments until the block or stream ends freezes UIs on long calls "
    "and defeats incremental handling (C07). Each streamed call is checked against the SDK's own "
    "accumulator: after each event that extended its arguments, the converter's argument deltas so "
    "far start with the recorded text so far (any split is fine). Gemini partialArgs carry values, "
    "not text: some argument text must come out before the last value. Calls sent whole (one "
    "event) are not applicable.",
    how_to_fix="Forward each argument fragment in the chunks you return for the event that carried it.",
    taxonomy=("C07",),
    harm=Harm.STREAM_SHAPE,
)
def _arguments_stream_incrementally(ctx: ConverterContext) -> list[str]:
    """After each SDK event that extended a streamed call's arguments, the converter's argument text
    for the call so far starts with the recorded text so far.

    A call is streamed when the SDK's accumulator sees its argument text grow in two or more events
    (Gemini ``partialArgs``: values in two or more events; there, some text must come out before the
    last of them). Deltas are compared concatenated, so any split passes; only holding text back fails.
    """
    recording = _recording(ctx)
    if recording.calls is None:
        raise NotApplicable(recording.why.get("calls", "the recording's calls could not be read"))
    streamed = [
        (position, call)
        for position, call in enumerate(recording.calls)
        if (call.progress is not None and len(call.progress) >= 2) or len(call.value_events) >= 2
    ]
    if not streamed:
        raise NotApplicable("no call's arguments arrive in two or more events (sent whole, or not read)")
    emitted = _argument_text_by_call(ctx.result)
    problems = []
    for position, call in streamed:
        problem = _held_back(recording, position, call, emitted[position])
        if problem:
            problems.append(problem)
    return problems


def _argument_text_by_call(result: ReplayResult) -> dict[int, list[tuple[int | None, str]]]:
    """Per call position: (event position or None for finish/fail, argument text), in output order."""
    order = _calls_in_order(result.chunks)
    emitted: dict[int, list[tuple[int | None, str]]] = defaultdict(list)
    for chunk, event in zip(result.chunks, result.chunk_events, strict=True):
        for delta in chunk.tool_calls or ():
            if delta.arguments_delta:
                emitted[order[delta.index]].append((event, delta.arguments_delta))
    return emitted


def _held_back(recording: Recording, position: int, call: Any, emitted: list[tuple[int | None, str]]) -> str | None:
    """Why a streamed call's argument text was held back (or is not the recorded text), or None."""

    def emitted_through(last_event: int) -> str:
        return "".join(text for event, text in emitted if event is not None and event <= last_event)

    label = f"call {position} ({call.name})"
    if call.progress is not None and len(call.progress) >= 2:
        for event, recorded in call.progress:
            got = emitted_through(event)
            if not got.startswith(recorded):
                why = (
                    f"argument text held back (the arguments arrive in {len(call.progress)} events)"
                    if recorded.startswith(got)
                    else "the argument text is not the text the provider sent, in order"
                )
                return (
                    f"{label}: after {recording.describe_event(event)} the recording's arguments were "
                    f"{describe_text(recorded)}, but the converter had emitted {describe_text(got)}: {why}"
                )
        return None
    last = call.value_events[-1]
    if not emitted_through(last - 1):
        return (
            f"{label}: the recording carries argument values in {len(call.value_events)} events "
            f"(partialArgs), but no argument text came out before {recording.describe_event(last)}, "
            "the last of them: arguments held back until the end"
        )
    return None


@CONVERTER_CHECK_REGISTRY.check(
    "converter_usage_is_last_snapshot",
    title="The last usage reported is the provider's last cumulative snapshot",
    rationale="Anthropic message_delta usage, Gemini usageMetadata and continuous usage chunks are cumulative: "
    "summing them inflates the bill, and a later empty usage must not erase it (F05). The expected "
    "numbers are the last usage the SDK parsed (Anthropic: accumulate_event's fold); prompt tokens "
    "may include Anthropic cache tokens and Gemini tool-prompt tokens, completion tokens Gemini "
    "thought tokens. Recordings without usage are not applicable.",
    how_to_fix="Overwrite usage with each snapshot (keeping fields a snapshot leaves out); never add snapshots up.",
    taxonomy=("F05",),
    harm=Harm.STREAM_SHAPE,
)
def _usage_is_last_snapshot(ctx: ConverterContext) -> list[str]:
    """The last ``ChunkResponse.usage`` is a reading of the provider's last cumulative usage snapshot.

    Prompt and completion tokens must be one of the readings ``RecordedUsage`` allows; the total, when
    the provider sent one, is either it or prompt + completion.
    """
    recording = _recording(ctx)
    want = recording.usage
    if want is None:
        raise NotApplicable(recording.why.get("usage", "the recording carries no usage"))
    got = next((chunk.usage for chunk in reversed(ctx.result.chunks) if chunk.usage is not None), None)
    if got is None:
        return [f"the provider reported usage ({want.describe()}) but no chunk carries ChunkResponse.usage"]
    problems = []
    if got.prompt_tokens not in want.prompt:
        problems.append(f"prompt_tokens {got.prompt_tokens}")
    if got.completion_tokens not in want.completion:
        problems.append(f"completion_tokens {got.completion_tokens}")
    if want.total is not None and got.total_tokens not in (want.total, got.prompt_tokens + got.completion_tokens):
        problems.append(f"total_tokens {got.total_tokens}")
    if not problems:
        return []
    return [
        f"the last usage the converter reported has {', '.join(problems)}; the provider's last cumulative "
        f"snapshot is {want.describe()}: usage snapshots are cumulative, the last one wins (never a sum)"
    ]


@CONVERTER_CHECK_REGISTRY.check(
    "converter_provider_metadata_kept",
    title="Each call keeps the provider metadata a follow-up must echo, exactly and on its own call",
    rationale="Gemini 3 rejects a follow-up whose function call lacks its thoughtSignature; only the first of "
    "parallel calls has one, and a restatement must not drop it (G07). A Responses item_id, when "
    "given, must be the function_call item's fc_ id, not the call id (A13, G02). Values are compared "
    "with the recording's own parts and items; recordings without them are not applicable.",
    how_to_fix="Put thought_signature (base64) and item_id in ToolCallDelta.provider_metadata of their own call.",
    taxonomy=("G07", "A13", "G02"),
    harm=Harm.MISIDENTIFIED,
)
def _provider_metadata_kept(ctx: ConverterContext) -> list[str]:
    """Each call's merged ``provider_metadata`` holds what the recording sent for that call.

    Gemini thought signatures are required (the next request is rejected without them) and must be
    exactly the call's own, never copied to a call that had none. A Responses ``item_id`` may be left
    out (a follow-up may omit the item id) but, when given, must be the recorded function_call item id.
    """
    recording = _recording(ctx)
    if recording.api not in ("gemini", "openai-responses"):
        raise NotApplicable(f"the {recording.api} wire format has no per-call metadata to echo")
    if recording.calls is None:
        raise NotApplicable(recording.why.get("calls", "the recording's calls could not be read"))
    signed = any(call.thought_signatures for call in recording.calls)
    merged = _merged_metadata(ctx.result.chunks)
    item_ids_given = any(
        recording.calls[p].item_id is not None and "item_id" in merged.get(p, {}) for p in range(len(recording.calls))
    )
    if not signed and not item_ids_given:
        why = (
            "the recording's calls carry no thought signature"
            if recording.api == "gemini"
            else "the converter reports no item ids (optional), so there is nothing to compare"
            if any(call.item_id for call in recording.calls)
            else "the recording has no function_call item ids"
        )
        raise NotApplicable(why)
    problems = []
    for position, call in enumerate(recording.calls):
        got = merged.get(position, {})
        label = f"call {position} ({call.name})"
        if recording.api == "gemini":
            value = got.get("thought_signature")
            if call.thought_signatures and value is None:
                problems.append(
                    f"{label}: the recording's functionCall part carries a thoughtSignature, but the call's "
                    "provider_metadata has no 'thought_signature' (Gemini 3 rejects the follow-up without it)"
                )
            elif call.thought_signatures and signature_bytes(value) not in call.thought_signatures:
                problems.append(f"{label}: thought_signature {str(value)[:24]!r}... is not the one the recording sent")
            elif not call.thought_signatures and value is not None:
                problems.append(
                    f"{label}: the recording sent no thoughtSignature for this call, but the converter gives it "
                    f"{str(value)[:24]!r}... (a signature belongs to its own call only)"
                )
        if call.item_id is not None and "item_id" in got and got["item_id"] != call.item_id:
            problems.append(
                f"{label}: item_id {got['item_id']!r}, but the recording's function_call item is {call.item_id!r}"
            )
    return problems


@CONVERTER_CHECK_REGISTRY.check(
    "converter_instances_independent",
    title="Two converters from the factory, fed at the same time, do not share state",
    rationale=(
        "Servers convert many streams at once; a tracker, buffer or counter shared between converter instances "
        "(a class attribute, a module global) merges other users' calls or shifts their indices (B07)."
    ),
    how_to_fix="Keep every piece of per-stream state on the converter instance, created in __init__.",
    taxonomy=("B07",),
    harm=Harm.RAN_WRONG,
)
def _instances_independent(ctx: ConverterContext) -> list[str]:
    if ctx.interleaved is None:
        raise NotApplicable("the recording could not be converted side by side with another one")
    alone, together = ([_chunk_summary(chunk) for chunk in chunks] for chunks in ctx.interleaved)
    if together == alone:
        return []
    differs = next((i for i, (a, b) in enumerate(zip(alone, together, strict=False)) if a != b), len(alone))
    return [
        f"converting this recording while another converter from the factory converted a second recording gave "
        f"different chunks from chunk #{differs + 1} on ({len(together)} chunks, {len(alone)} alone)"
    ]


def _chunk_summary(chunk: ChunkResponse) -> str:
    return repr(chunk)


CONVERTER_CHECKS: tuple[Check[ConverterContext], ...] = CONVERTER_CHECK_REGISTRY.all()
