"""Conformance checks for converters (provider stream -> ``ChunkResponse``/``ToolCallDelta``).

A converter is checked on recordings with expectations (the bundled cassettes, or any directory
of yours): each body is replayed through the real SDK, offline, as one piece and cut at arbitrary
byte offsets by hypothesis (inside UTF-8 sequences, inside ``\\n\\n``, one-byte pieces), and the
converter's output is checked both structurally and, through the reference handler, against the
expectation. A converter factory takes the wire API name (``converter_for`` is the reference).
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
from conformance.runner import PROFILES, CheckResult, Profile, Report, search_settings
from conformance.wire import Body, WireFormatError, load_body
from reference_impl.types import ChunkResponse

__all__ = ["CONVERTER_CHECKS", "run_converter_conformance"]


@dataclass(frozen=True)
class ConverterContext:
    case: Case
    body: Body
    expected: Outcome
    result: ReplayResult
    crash: BaseException | None = None


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
    report = Report(target=target or repr(converter_factory), profile=chosen.name, seed=seed)
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
        context = ConverterContext(case, body, expected, result, crash)
        for check in CONVERTER_CHECKS:
            results[check.id].scenarios_run += 1
            problems = check.run(context) if crash is None or check.id == "converter_outcome_matches" else []
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
