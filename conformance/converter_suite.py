"""Conformance checks for converters (provider stream -> ``ChunkResponse``/``ToolCallDelta``).

A converter is checked on recordings with expectations (the bundled cassettes, or any directory
of yours): each body is replayed through the real SDK, offline, as one piece and cut at arbitrary
byte offsets by hypothesis (inside UTF-8 sequences, inside ``\\n\\n``, one-byte pieces), and the
converter's output is checked both structurally and, through the reference handler, against the
expectation. A converter factory takes the wire API name (``converter_for`` is the reference).

Three checks compare the converter with facts of the recording that no expectation file holds,
read off the SDK's own stream objects and accumulators by ``conformance.recorded``: how far each
call's arguments had arrived after each SDK event (``converter_arguments_stream_incrementally``;
the pipeline converts event by event, so what a converter returned for each event is known), the
provider's final usage (``converter_usage_is_last_snapshot``) and the per-call metadata a
follow-up must echo (``converter_provider_metadata_kept``). A recording without such facts (no
usage sent, arguments sent whole, no signature or item id) is *not applicable* to the check: it
is listed in the check's ``not_applicable`` and never counted as a pass; a check that applies to
no recording at all is reported as skipped.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from conformance.cassettes import Case, discover_cases
from conformance.checks import Check
from conformance.expectations import Outcome
from conformance.pipeline import ReplayResult, compare_outcomes, replay_body
from conformance.recorded import Recording, describe_text, read_recording, signature_bytes
from conformance.runner import PROFILES, CheckResult, Profile, Report, describe_factory, search_settings
from conformance.wire import Body, WireFormatError, load_body
from reference_impl.types import ChunkResponse

__all__ = ["CONVERTER_CHECKS", "NotApplicable", "run_converter_conformance"]


class NotApplicable(Exception):
    """Raised by a converter check when the recording holds nothing the check can compare."""


@dataclass(frozen=True)
class ConverterContext:
    case: Case
    body: Body
    expected: Outcome
    result: ReplayResult
    crash: BaseException | None = None
    recording: Recording | None = None  # facts read from the recording by the SDK (conformance.recorded)


def _deltas(chunks: Sequence[ChunkResponse]) -> list[Any]:
    return [delta for chunk in chunks for delta in chunk.tool_calls or ()]


def _outcome_matches(ctx: ConverterContext) -> list[str]:
    if ctx.crash is not None:
        return [f"replay raised {type(ctx.crash).__name__}: {ctx.crash}"]
    return compare_outcomes(ctx.expected, ctx.result.outcome)


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


_TRUNCATION = {"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"}


def _abnormal_end_surfaced(ctx: ConverterContext) -> list[str]:
    abnormal = ctx.expected.error is not None or ctx.expected.finish_reason in _TRUNCATION
    surfaced = any(chunk.error is not None for chunk in ctx.result.chunks)
    if abnormal and not surfaced:
        why = ctx.expected.error or f"finish_reason {ctx.expected.finish_reason!r}"
        return [f"the stream ended abnormally ({why}) but no chunk carries ChunkResponse.error"]
    if (
        surfaced
        and not abnormal
        and ctx.expected.tool_calls
        and all(c.arguments is not None for c in ctx.expected.tool_calls)
    ):
        kinds = [chunk.error.kind for chunk in ctx.result.chunks if chunk.error is not None]
        return [f"a normal stream was reported as abnormal ({kinds})"]
    return []


def _one_terminal_chunk_last(ctx: ConverterContext) -> list[str]:
    complete = [position for position, chunk in enumerate(ctx.result.chunks) if chunk.is_complete]
    if complete == [len(ctx.result.chunks) - 1]:
        return []
    return [
        f"exactly one chunk, the last, must have is_complete=True; got positions {complete} of {len(ctx.result.chunks)}"
    ]


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
    order = _calls_in_order(ctx.result.chunks)
    # Per call position: (event position or None for finish/fail, argument text), in output order.
    emitted: dict[int, list[tuple[int | None, str]]] = defaultdict(list)
    for chunk, event in zip(ctx.result.chunks, ctx.result.chunk_events, strict=True):
        for delta in chunk.tool_calls or ():
            if delta.arguments_delta:
                emitted[order[delta.index]].append((event, delta.arguments_delta))

    def emitted_through(position: int, last_event: int) -> str:
        return "".join(text for event, text in emitted[position] if event is not None and event <= last_event)

    problems = []
    for position, call in streamed:
        label = f"call {position} ({call.name})"
        if call.progress is not None and len(call.progress) >= 2:
            for event, recorded in call.progress:
                got = emitted_through(position, event)
                if not got.startswith(recorded):
                    why = (
                        f"argument text held back (the arguments arrive in {len(call.progress)} events)"
                        if recorded.startswith(got)
                        else "the argument text is not the text the provider sent, in order"
                    )
                    problems.append(
                        f"{label}: after {recording.describe_event(event)} the recording's arguments were "
                        f"{describe_text(recorded)}, but the converter had emitted {describe_text(got)}: {why}"
                    )
                    break
        else:
            last = call.value_events[-1]
            if not emitted_through(position, last - 1):
                problems.append(
                    f"{label}: the recording carries argument values in {len(call.value_events)} events "
                    f"(partialArgs), but no argument text came out before {recording.describe_event(last)}, "
                    "the last of them: arguments held back until the end"
                )
    return problems


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


CONVERTER_CHECKS: tuple[Check, ...] = (
    Check(
        "converter_outcome_matches",
        "Replayed through the converter, each recording gives its expected tool calls and text",
        "The expectation comes from the SDK's own accumulator or a hand-checked definition, not from our code.",
        "Compare your converter's output with `toolcall-conformance replay --json` on the failing recording.",
        _outcome_matches,
        taxonomy=("A01", "A02", "A05", "A06", "A09", "A13", "A16", "A19", "F01", "F02", "F04"),
    ),
    Check(
        "converter_indices_dense",
        "Tool indices are dense, 0-based, in order of first appearance",
        "Block indices and output indices count text and reasoning too; leaked, they open phantom calls (A03).",
        "Map provider keys (output_index, item_id, block index) through a tracker to a running counter.",
        _indices_dense,
        taxonomy=("A03", "A18"),
    ),
    Check(
        "converter_id_and_name_once",
        "Each call's id is stable and its name is sent once",
        "Restated names concatenate and changing ids split calls in naive accumulators (A06, B03).",
        "Emit the name on the first delta only; drop restatements and '' placeholders.",
        _id_and_name_once,
        taxonomy=("A05", "A06", "B03"),
    ),
    Check(
        "converter_deltas_match_final_arguments",
        "Argument deltas concatenate to the provider's final arguments",
        "Snapshot-as-delta, done-only and double-encoded arguments corrupt calls silently (A09, A11, A15, D06).",
        "Forward only new text; serialise object arguments once; take done-only arguments from the done event.",
        _deltas_match_final_arguments,
        taxonomy=("A09", "A11", "A15", "D06"),
    ),
    Check(
        "converter_abnormal_end_surfaced",
        "Truncation, in-band errors and missing terminal events are surfaced as ChunkResponse.error",
        "A truncated or failed stream reported as success runs half-written tool calls (F06-F08).",
        "Map length/max_tokens stops, error events and a missing terminal event to a StreamError.",
        _abnormal_end_surfaced,
        taxonomy=("F06", "F07", "F08"),
    ),
    Check(
        "converter_one_terminal_chunk",
        "Exactly one chunk, the last, is marked is_complete",
        "Handlers finalize on is_complete; an early one drops the rest of the stream (F03).",
        "Mark completion once, on the stream's real terminal event (or at the end of iteration).",
        _one_terminal_chunk_last,
        taxonomy=("F03",),
    ),
    Check(
        "converter_arguments_stream_incrementally",
        "Argument text is forwarded in the event that carried it, never held back",
        "A converter that buffers arguments until the block or stream ends freezes UIs on long calls "
        "and defeats incremental handling (C07). Each streamed call is checked against the SDK's own "
        "accumulator: after each event that extended its arguments, the converter's argument deltas so "
        "far start with the recorded text so far (any split is fine). Gemini partialArgs carry values, "
        "not text: some argument text must come out before the last value. Calls sent whole (one "
        "event) are not applicable.",
        "Forward each argument fragment in the chunks you return for the event that carried it.",
        _arguments_stream_incrementally,
        taxonomy=("C07",),
    ),
    Check(
        "converter_usage_is_last_snapshot",
        "The last usage reported is the provider's last cumulative snapshot",
        "Anthropic message_delta usage, Gemini usageMetadata and continuous usage chunks are cumulative: "
        "summing them inflates the bill, and a later empty usage must not erase it (F05). The expected "
        "numbers are the last usage the SDK parsed (Anthropic: accumulate_event's fold); prompt tokens "
        "may include Anthropic cache tokens and Gemini tool-prompt tokens, completion tokens Gemini "
        "thought tokens. Recordings without usage are not applicable.",
        "Overwrite usage with each snapshot (keeping fields a snapshot leaves out); never add snapshots up.",
        _usage_is_last_snapshot,
        taxonomy=("F05",),
    ),
    Check(
        "converter_provider_metadata_kept",
        "Each call keeps the provider metadata a follow-up must echo, exactly and on its own call",
        "Gemini 3 rejects a follow-up whose function call lacks its thoughtSignature; only the first of "
        "parallel calls has one, and a restatement must not drop it (G07). A Responses item_id, when "
        "given, must be the function_call item's fc_ id, not the call id (A13, G02). Values are compared "
        "with the recording's own parts and items; recordings without them are not applicable.",
        "Put thought_signature (base64) and item_id in ToolCallDelta.provider_metadata of their own call.",
        _provider_metadata_kept,
        taxonomy=("G07", "A13", "G02"),
    ),
    Check(
        "converter_sse_chunking_invariant",
        "Any byte-level split of the body gives the same outcome",
        "Network reads split events and UTF-8 sequences anywhere (H01, H02).",
        "Decode SSE incrementally on bytes; never decode or parse per network read.",
        lambda _ctx: [],  # evaluated by the byte-split search in run_converter_conformance
        taxonomy=("H01", "H02", "H03"),
    ),
)


def _byte_pieces(body: bytes) -> st.SearchStrategy[list[bytes]]:
    cuts = st.lists(st.integers(0, len(body)), max_size=24).map(sorted)

    def split(points: list[int]) -> list[bytes]:
        bounds = [0, *points, len(body)]
        return [body[a:b] for a, b in itertools.pairwise(bounds)]

    one_byte = st.just([body[i : i + 1] for i in range(len(body))]) if len(body) <= 4096 else st.nothing()
    return st.one_of(cuts.map(split), one_byte)


def _summary(outcome: Outcome) -> str:
    return json.dumps(outcome.to_json(), sort_keys=True, ensure_ascii=False)


def run_converter_conformance(
    converter_factory: Callable[..., Any],
    cassette_dirs: Iterable[Path],
    *,
    profile: str | Profile = "ci",
    seed: int = 0,
    target: str = "",
    apis: Sequence[str] | None = None,
) -> Report:
    """Run the converter checks over every recording with an expectation under ``cassette_dirs``."""
    chosen = PROFILES[profile] if isinstance(profile, str) else profile
    report = Report(target=target or describe_factory(converter_factory), profile=chosen.name, seed=seed)
    results = {check.id: CheckResult(check) for check in CONVERTER_CHECKS}
    started = time.perf_counter()
    # Byte-split search is the expensive part: a fraction of the handler profile's effort per body.
    examples = max(3, chosen.examples_per_scenario // 6)
    for case in discover_cases(cassette_dirs):
        try:
            body = load_body(case.body_path)
        except WireFormatError:
            continue  # not a body the SDKs here can read (e.g. Bedrock event streams)
        if apis is not None and body.api not in apis:
            continue
        expected = case.expected()
        report.scenarios += 1
        crash: BaseException | None = None
        try:
            result = replay_body(body, converter_factory=converter_factory)
        except Exception as error:  # a converter bug is a finding, not a suite error
            crash, result = error, ReplayResult(body.api)
        report.examples += 1
        try:
            recording: Recording | None = read_recording(body.api, body.sse, expected)
        except Exception:  # the facts are optional; their checks report the case as not applicable
            recording = None
        context = ConverterContext(case, body, expected, result, crash, recording)
        for check in CONVERTER_CHECKS:
            if crash is not None and check.id != "converter_outcome_matches":
                # Nothing came out to check: the crash is converter_outcome_matches's finding.
                results[check.id].not_applicable.append(f"{case.name}: the replay raised {type(crash).__name__}")
                continue
            try:
                problems = check.run(context)
            except NotApplicable as why:
                results[check.id].not_applicable.append(f"{case.name}: {why}")
                continue
            results[check.id].scenarios_run += 1
            if problems and results[check.id].status != "failed":
                results[check.id].status = "failed"
                results[check.id].message = problems[0]
                results[check.id].counterexample = f"recording: {case.body_path}\nviolation: " + "\n".join(problems)
        if crash is None and results["converter_sse_chunking_invariant"].status != "failed":
            _search_byte_split(
                case,
                body=body,
                baseline=_summary(result.outcome),
                converter_factory=converter_factory,
                examples=examples,
                seed=seed,
                results=results,
                report=report,
            )
    for check_result in results.values():
        if check_result.status == "passed" and check_result.scenarios_run == 0 and check_result.not_applicable:
            reasons = {entry.split(": ", 1)[-1] for entry in check_result.not_applicable}
            check_result.status = "skipped"
            check_result.skipped_reason = (
                f"not applicable to any of the {len(check_result.not_applicable)} recordings"
                + (f": {reasons.pop()}" if len(reasons) == 1 else f"; first: {check_result.not_applicable[0]}")
            )
    report.results = [results[check.id] for check in CONVERTER_CHECKS]
    for check_result in report.results:
        check_result.target = report.target
    report.seconds = time.perf_counter() - started
    return report


def _search_byte_split(
    case: Case,
    *,
    body: Body,
    baseline: str,
    converter_factory: Callable[..., Any],
    examples: int,
    seed: int,
    results: dict[str, CheckResult],
    report: Report,
) -> None:
    failure: list[tuple[list[bytes], str]] = []

    @search_settings(examples, seed)
    @given(_byte_pieces(body.sse))
    def same_outcome(pieces: list[bytes]) -> None:
        report.examples += 1
        try:
            got = _summary(replay_body(body, pieces, converter_factory=converter_factory).outcome)
        except Exception as error:
            got = f"raised {type(error).__name__}: {error}"
        if got != baseline:
            failure[:] = [(pieces, got)]
            raise AssertionError(got)

    try:
        same_outcome()
    except AssertionError:
        if failure:
            pieces, got = failure[0]
            result = results["converter_sse_chunking_invariant"]
            result.status = "failed"
            result.message = f"{case.name}: a {len(pieces)}-piece split changes the outcome"
            shown = " | ".join(repr(p) for p in pieces[:12]) + (" | ..." if len(pieces) > 12 else "")
            result.counterexample = (
                f"recording: {case.body_path}\npieces: {shown}\none piece: {baseline}\nsplit:     {got}"
            )
