"""Run the stack checks over recordings and generated bodies: each served whole, then cut at arbitrary byte offsets."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hypothesis import given
from hypothesis import strategies as st

from conformance.stack.checks import STACK_CHECKS, StackCapabilities, StackContext
from conformance.stack.failures import FailingRecording, StackFinding
from conformance.stack.generated import GeneratedBody, describe_turn, generated_body, generated_turns
from conformance.stack.simplify import simplest_failing
from conformance.turns.model import Turn
from conformance.turns.render import RENDERED_APIS
from conformance.verdict import (
    CheckResult,
    Counterexample,
    Harm,
    HarmVerdict,
    NotApplicable,
    Profile,
    ProgressStep,
    Report,
    describe_factory,
    resolve_profile,
    search_settings,
    signature,
    the_same_search_in_every_process,
)
from conformance.verdict.deadline import DEFAULT_DEADLINE_SECONDS, TargetHung, deadline
from conformance.wire import Body, Case, Outcome, WireFormatError, discover_cases, iter_sdk_events, load_body
from conformance.wire.final import FinalResultError, read_final_result
from conformance.wire.harm import outcome_harm
from conformance.wire.numbers import numbers_note
from conformance.wire.replay import compare_outcomes
from conformance.wire.stream_shapes import recording_realism

__all__ = ["Stack", "generated_turns_for", "run_stack_conformance", "sdk_stack"]


class Stack(Protocol):
    """A whole provider stack: the response body of ``api`` in byte pieces in, the final result out."""

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any: ...


class _SdkStack:
    """The real SDK (offline replay) and an accumulator of its stream objects, as one stack."""

    def __init__(self, accumulate: Callable[[str, Iterator[Any]], Any], capabilities: StackCapabilities | None) -> None:
        self.accumulate = accumulate
        self.capabilities = capabilities
        # Reports name the accumulator, the code under test (describe_factory reads these).
        self.__module__ = getattr(accumulate, "__module__", __name__)
        self.__qualname__ = getattr(accumulate, "__qualname__", "accumulate")

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
        del options
        return self.accumulate(api, iter_sdk_events(api, pieces))


def sdk_stack(accumulate: Callable[[str, Iterator[Any]], Any], capabilities: StackCapabilities | None = None) -> Stack:
    """A stack made of the real SDK (offline replay) and ``accumulate(api, sdk_events)``: for
    accumulators that take SDK stream objects (the SDKs' own stream states, a framework's chunk merger).
    ``capabilities`` become the stack's ``capabilities`` attribute (what ``run --stack`` reads)."""
    return _SdkStack(accumulate, capabilities)


def _telling_offsets(body: bytes) -> list[int]:
    """Offsets where a cut tests something: inside a UTF-8 character, around a line end, after a
    backslash (inside an escape). Random offsets alone rarely land there in a long body."""
    offsets: set[int] = set()
    for position, byte in enumerate(body):
        if 0x80 <= byte <= 0xBF:  # a continuation byte: cutting before it splits a character
            offsets.add(position)
        elif byte == 0x0A:  # a cut on either side of a line end ("\r" | "\n", "\n" | "\n")
            offsets.update((position, position + 1))
        elif byte == 0x5C:
            offsets.add(position + 1)
    return sorted(offset for offset in offsets if 0 < offset < len(body))


def _split(body: bytes, points: Iterable[int]) -> list[bytes]:
    return [body[a:b] for a, b in itertools.pairwise([0, *sorted(points), len(body)])]


def _pieces(body: bytes) -> st.SearchStrategy[list[bytes]]:
    telling = _telling_offsets(body)
    anywhere = st.integers(0, len(body))
    point = st.one_of(anywhere, st.sampled_from(telling)) if telling else anywhere
    return st.lists(point, max_size=24).map(lambda points: _split(body, points))


def _fixed_splits(body: bytes) -> list[list[bytes]]:
    """Splits tried before the random search: one byte per read (every boundary at once) and a
    cut at every telling offset. A decoder that reads each piece alone fails the first."""
    return [[body[i : i + 1] for i in range(len(body))], _split(body, _telling_offsets(body))]


def _run(stack: Stack, body: Body, pieces: Sequence[bytes]) -> tuple[Outcome | None, BaseException | None, bool, bool]:
    try:
        result = stack(body.api, pieces, dict(body.converter_options))
        outcome, has_text, has_reasoning = read_final_result(result, body.api)
    except FinalResultError as error:
        return None, error, False, False
    except Exception as error:  # noqa: BLE001 - the stack under test may raise anything: it is reported
        return None, error, False, False
    return outcome, None, has_text, has_reasoning


def _summary(outcome: Outcome | None, crash: BaseException | None, body: bytes, *, mask: bool = True) -> str:
    """The result as comparable text. Call ids that are not in the body were minted by the stack
    (random per run, like the Vercel AI SDK's): with ``mask`` they read as "minted #n", so only
    where they sit is compared, not their value (a report shows them as they came out)."""
    if crash is not None:
        return f"raised {type(crash).__name__}: {crash}"
    assert outcome is not None
    data = outcome.to_json()
    minted: dict[str, str] = {}
    for call in data["tool_calls"]:
        call_id = call.get("call_id")
        if mask and isinstance(call_id, str) and call_id and call_id.encode() not in body:
            call["call_id"] = minted.setdefault(call_id, f"<minted #{len(minted) + 1}>")
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _shown(text: str) -> str:
    """``text`` as a terminal shows it faithfully: a character that is not printable (a control
    character, U+2028, a private-use one) as its escape, so a report never breaks a line or moves
    the cursor where the value does not."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)


def _why_not(case: Case, body: Body, capabilities: StackCapabilities) -> str:
    if capabilities.apis is not None and body.api not in capabilities.apis:
        return f"{case.name}: the stack does not run {body.api}"
    if body.converter_options and not capabilities.converter_options:
        return f"{case.name}: needs the server profile {dict(body.converter_options)}, which the stack does not take"
    return ""


def generated_turns_for(profile: str | Profile) -> int:
    """How many generated turns a profile draws per API for a stack (``run --stack``'s default)."""
    return max(5, resolve_profile(profile).examples_per_scenario // 2)


def run_stack_conformance(
    stack: Stack,
    cassette_dirs: Iterable[Path],
    *,
    capabilities: StackCapabilities | None = None,
    profile: str | Profile = "ci",
    seed: int = 0,
    target: str = "",
    on_progress: Callable[[str], None] | None = None,
    excluded: Mapping[str, str] | None = None,
    generated: int | None = None,
    deadline_seconds: float | None = DEFAULT_DEADLINE_SECONDS,
) -> Report:
    """Run the stack checks over every recording with an expectation under ``cassette_dirs``, then
    over ``generated`` turns drawn per API the stack runs, rendered to bytes
    (``conformance.stack.generated``; None: as many as the profile says, 0: none), each judged
    like a recording.

    ``excluded`` maps recordings (``Case.name``, e.g. ``anthropic/stream_cut_mid_call.yaml``) the
    stack is not judged on to why (a legitimate alternative the outcome check cannot tell apart, or
    a convention of our corpus): they are listed as not applicable, never counted as passes.

    Every failing recording is named: each finding (a distinct failure, by ``signature``) lists all
    the recordings that fail that way (``Counterexample.recordings``), and carries them as a
    ``StackFinding`` (``conformance.stack.failures``: ``save_failures`` writes their bodies).

    One call of the stack may take ``deadline_seconds`` (None: no deadline): a stack that takes
    longer is stopped there, the run ends (``Report.stopped``) and the hang is a ``crashed`` finding.
    """
    excluded = excluded or {}
    capabilities = capabilities or StackCapabilities()
    chosen = resolve_profile(profile)
    report = Report(target=target or describe_factory(stack), profile=chosen.name, seed=seed)
    results = {check.id: CheckResult(check) for check in STACK_CHECKS}
    outcome_check, split_check = results["stack_outcome_matches"], results["stack_byte_split_invariant"]
    started = time.perf_counter()
    examples = max(3, chosen.examples_per_scenario // 6)
    if generated is None:
        generated = generated_turns_for(chosen)
    judging = _Judging(
        _Within(stack, deadline_seconds), capabilities, outcome_check, split_check, report, examples, seed
    )
    cases = list(discover_cases(cassette_dirs))
    apis = _generated_apis(capabilities, cases) if generated else []
    try:
        _search_all(cases, apis, excluded, judging, generated=generated or 0, on_progress=on_progress)
    except _Hung as hung:
        report.stopped = f"the stack did not finish within {deadline_seconds} s on {hung.body}; the run stopped there"
        # The check whose run it hung in: a hang on a split body is what that split changes.
        hung_in = split_check if hung.split else outcome_check
        hung_in.scenarios_run += 1
        hung_in.examples_run += 1
        message = f"the stack did not finish within {deadline_seconds} s on {hung.body}"
        harm = HarmVerdict(Harm.CRASHED, "the stack hung and was stopped: the turn never finished")
        assert isinstance(judging.stack, _Within)
        shown = hung_in.fail(
            message,
            f"recording: {hung.body}\nresult: none: the stack was still running after {deadline_seconds} s",
            StackFinding(),
            scenario=hung.body,
            keep=None,
            harm=harm,
            kind="hung",
        )
        failing = _hung_recording(hung, judging.stack.judged, hung_in.check.id, message, harm)
        if failing is not None:
            _keep(shown, failing)
    for result in results.values():
        if result.status == "passed" and result.examples_run == 0:
            if report.stopped:
                result.skip(f"not reached before the run stopped ({report.stopped})")
            else:
                result.skip("no recording this stack could run" if result.not_applicable else "no recordings found")
    report.results = [results[check.id] for check in STACK_CHECKS]
    for result in report.results:
        result.target = report.target
    if capabilities.json_numbers == "double":
        report.notes.append(numbers_note())
    report.seconds = time.perf_counter() - started
    return report


class _Hung(BaseException):
    """The stack did not return within its deadline: the run stops (a ``BaseException``, so that no
    search in between takes it for a failing example)."""

    def __init__(self, body: str, *, split: bool, pieces: Sequence[bytes] = ()) -> None:
        super().__init__(body)
        self.body = body
        self.split = split  # it hung on the body cut into several reads (the split check's search)
        self.pieces = tuple(pieces)  # the reads it hung on


@dataclass
class _Judged:
    """The body being judged, with what ``--save-failures`` needs to write it when the stack hangs on it."""

    name: str
    source: Path
    body: Body
    expected: Outcome


class _Within:
    """``stack``, stopped with ``_Hung`` when one call takes longer than ``seconds``; ``judged`` is the
    body being judged (what the hang is reported on and saved as)."""

    def __init__(self, stack: Stack, seconds: float | None) -> None:
        self.stack, self.seconds = stack, seconds
        self.judged: _Judged | None = None

    @property
    def current(self) -> str:
        return self.judged.name if self.judged is not None else ""

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
        try:
            with deadline(self.seconds, lambda: self.current or f"an {api} body"):
                return self.stack(api, pieces, options)
        except TargetHung:
            size = sum(len(piece) for piece in pieces)
            where = self.current or f"an {api} body"
            hung = f"{where} ({size} bytes in {len(pieces)} reads)"
            raise _Hung(hung, split=len(pieces) > 1, pieces=pieces) from None


def _hung_recording(
    hung: _Hung, judged: _Judged | None, check: str, message: str, harm: HarmVerdict
) -> FailingRecording | None:
    """The body the stack hung on (and its reads, when split), as ``--save-failures`` writes it."""
    if judged is None:
        return None
    result = "none: the stack was still running at its deadline"
    pieces = hung.pieces if hung.split else None
    return FailingRecording(
        judged.name, judged.source, judged.body, judged.expected, check, message, result, harm, pieces
    )


def _search_all(
    cases: Sequence[Case],
    apis: Sequence[str],
    excluded: Mapping[str, str],
    judging: _Judging,
    *,
    generated: int,
    on_progress: Callable[[str], None] | None,
) -> None:
    """Every recording, then the generated turns of every API."""
    for done, case in enumerate(cases):
        if on_progress:
            on_progress(ProgressStep(case.name, done, len(cases) + len(apis)))
        _judge_recording(case, excluded, judging)
    for done, api in enumerate(apis, len(cases)):
        if on_progress:
            on_progress(ProgressStep(f"generated/{api}", done, len(cases) + len(apis)))
        _search_generated(api, generated, judging)


@dataclass
class _Judging:
    """What judging one body needs besides the body: the target, the results and the budget."""

    stack: Stack
    capabilities: StackCapabilities
    outcome_check: CheckResult
    split_check: CheckResult
    report: Report
    examples: int
    seed: int


def _judge_recording(case: Case, excluded: Mapping[str, str], judging: _Judging) -> None:
    try:
        body = load_body(case.body_path)
    except WireFormatError as error:
        judging.outcome_check.not_applicable.append(f"{case.name}: unreadable ({error})")
        return
    why = f"{case.name}: {excluded[case.name]}" if case.name in excluded else _why_not(case, body, judging.capabilities)
    if why:
        judging.outcome_check.not_applicable.append(why)
        return
    _judge(case, body, case.expected(), judging)


_Whole = tuple[Outcome | None, BaseException | None, bool, bool]


def _judge(
    case: Case, body: Body, expected: Outcome, judging: _Judging, *, text_head: str = "", whole: _Whole | None = None
) -> bool:
    """Judge one body as a recording: the whole body by the outcome check (``whole``: its run, when
    already made), then splits of it; True when the whole body failed."""
    stack, report, capabilities = judging.stack, judging.report, judging.capabilities
    outcome_check = judging.outcome_check
    report.scenarios += 1
    report.examples += 1
    if isinstance(stack, _Within):
        stack.judged = _Judged(case.name, case.body_path, body, expected)
    actual, crash, has_text, has_reasoning = whole if whole is not None else _run(stack, body, [body.sse])
    context = StackContext(case, expected, actual, crash, has_text, has_reasoning, capabilities)
    problems = STACK_CHECKS[0].run(context)
    outcome_check.scenarios_run += 1
    outcome_check.examples_run += 1
    if problems:
        summary = _summary(actual, crash, body.sse)
        head = text_head or f"recording: {case.body_path}\n"
        as_returned = _summary(actual, crash, body.sse, mask=False)
        text = f"{head}result: {_shown(as_returned)}\n" + "\n".join(f"violation: {_shown(p)}" for p in problems)
        harm = outcome_harm(context.expected, actual, crash, numbers=capabilities.json_numbers)
        failing = FailingRecording(
            case.name, case.body_path, body, context.expected, "stack_outcome_matches", problems[0], summary, harm
        )
        shown = outcome_check.fail(
            problems[0],
            text,
            StackFinding(),
            scenario=case.name,
            keep=None,
            harm=harm,
            realism=recording_realism(body),
            kind=_kind(problems, harm),
        )
        _keep(shown, failing)
    _search_splits(
        stack,
        case,
        body=body,
        expected=context.expected,
        baseline=_summary(actual, crash, body.sse),
        examples=judging.examples,
        seed=judging.seed,
        result=judging.split_check,
        report=report,
        numbers=capabilities.json_numbers,
    )
    return bool(problems)


def _generated_apis(capabilities: StackCapabilities, cases: Sequence[Case]) -> list[str]:
    """The APIs to draw turns for: those the stack declares, else those of the recordings it ran."""
    if capabilities.apis is not None:
        return [api for api in capabilities.apis if api in RENDERED_APIS]
    return [api for api in RENDERED_APIS if any(case.name.startswith(f"{api}/") for case in cases)]


def _search_generated(api: str, turns: int, judging: _Judging) -> None:
    """Judge ``turns`` drawn turns rendered for ``api`` (``conformance.stack.generated``), each as a
    recording. Every failing one is kept under its finding; the first of a new kind of failure is
    shown on the simplest turn that still fails that way (``conformance.stack.simplify``: a few
    greedy steps, not hypothesis's shrinking, since each step is a run of the stack)."""
    drawn: list[GeneratedBody] = []

    # OpenAI's Chat Completions API has no reasoning field (DeepSeek's reasoning_content is a server
    # convention the recordings cover): drawn there, a stack reading OpenAI's wire would be wrong to
    # read it.
    reasoning = judging.capabilities.reasoning and api != "openai-chat"

    @search_settings(turns, judging.seed + RENDERED_APIS.index(api))
    @given(generated_turns(api, with_reasoning=reasoning))
    def draw(turn_and_dialects: tuple[Turn, tuple[str, ...]]) -> None:
        generated = generated_body(api, *turn_and_dialects)
        if generated is not None:
            drawn.append(generated)

    with the_same_search_in_every_process():
        draw()
    distinct = {generated.body.data: generated for generated in drawn}.values()  # one run per body
    for number, unnamed in enumerate(sorted(distinct, key=lambda g: len(g.body.data))):
        generated = unnamed.numbered(number)
        if isinstance(judging.stack, _Within):
            judging.stack.judged = _Judged(generated.name, generated.path, generated.body, generated.expected)
        first = _run(judging.stack, generated.body, [generated.body.sse])
        whole: _Whole | None = first
        kind = _failure_kind(generated, first, judging)
        if kind and judging.outcome_check.shown_by("", kind) is None:
            # A new kind of failure: shown on the simplest turn that still fails this way.
            generated = _simplified(generated, kind, judging).numbered(number)
            whole = None
        case = Case(generated.path, generated.path, generated.name)
        head = f"generated: {describe_turn(generated.turn, generated.dialects)}\n"
        _judge(case, generated.body, generated.expected, judging, text_head=head, whole=whole)


def _failure_kind(generated: GeneratedBody, whole: _Whole, judging: _Judging) -> str:
    """The kind of failure (``_kind``) of a generated body's whole run, "" when it passes."""
    actual, crash, has_text, has_reasoning = whole
    case = Case(generated.path, generated.path, generated.name)
    context = StackContext(case, generated.expected, actual, crash, has_text, has_reasoning, judging.capabilities)
    problems = STACK_CHECKS[0].run(context)
    if not problems:
        return ""
    return _kind(problems, outcome_harm(generated.expected, actual, crash, numbers=judging.capabilities.json_numbers))


def _simplified(generated: GeneratedBody, kind: str, judging: _Judging) -> GeneratedBody:
    """``generated`` on the simplest turn that still fails the ``kind`` way (``conformance.stack.simplify``)."""
    api = generated.body.api
    accepted = [generated]  # every simpler turn kept; the last is the simplest

    def fails_the_same_way(turn: Turn, dialects: tuple[str, ...]) -> bool:
        candidate = generated_body(api, turn, dialects)
        if candidate is None:
            return False
        if _failure_kind(candidate, _run(judging.stack, candidate.body, [candidate.body.sse]), judging) != kind:
            return False
        accepted.append(candidate)
        return True

    simplest_failing(generated.turn, generated.dialects, fails_the_same_way)
    return accepted[-1]


# A call as compare_outcomes names it, after signature(): "call _ (get_weather, id _)", or "id None"
# for a call the stream gave no id (whether it had one is not what makes two failures differ).
_CALL_LABEL = re.compile(r"\bcall _ \([^(),]*, id (?:_|None)\)")


def _kind(problems: Sequence[str], harm: HarmVerdict) -> str:
    """What makes two failing recordings one finding: the same kinds of violation (whichever call,
    tool or value) and the same harm. A cut call that ran (``ran_wrong``) and one that was dropped
    (``lost``) may both first say "nothing surfaced the error", but they are not the same bug."""
    kinds = dict.fromkeys(_CALL_LABEL.sub("call _", signature(problem)) for problem in problems)
    return " | ".join(kinds) + f" [{harm.harm.value}]"


def _keep(shown: Counterexample | None, failing: FailingRecording) -> None:
    """List ``failing`` under the finding that shows its kind of failure (every failing recording is named)."""
    if shown is not None and isinstance(shown.input, StackFinding):
        shown.recordings.append(failing.name)
        shown.input.recordings.append(failing)


def _split_harm(
    expected: Outcome, actual: Outcome | None, crash: BaseException | None, numbers: str = "exact"
) -> HarmVerdict:
    """What a split that changed the result does: the split result judged against the recording
    (a split that only changes what the comparison leaves out changes the stream's shape)."""
    if actual is not None and not compare_outcomes(expected, actual, numbers=numbers):
        return HarmVerdict(Harm.STREAM_SHAPE, "this split changes the result, but not what runs or the text")
    return outcome_harm(expected, actual, crash, numbers=numbers)


def _search_splits(
    stack: Stack,
    case: Case,
    *,
    body: Body,
    expected: Outcome,
    baseline: str,
    examples: int,
    seed: int,
    result: CheckResult,
    report: Report,
    numbers: str = "exact",
) -> None:
    failure: list[tuple[list[bytes], str, HarmVerdict]] = []

    @search_settings(examples, seed)
    @given(_pieces(body.sse))
    def same_result(pieces: list[bytes]) -> None:
        report.examples += 1
        actual, crash, _, _ = _run(stack, body, pieces)
        got = _summary(actual, crash, body.sse)
        if got != baseline:
            failure[:] = [(pieces, got, _split_harm(expected, actual, crash, numbers))]
            raise AssertionError(got)

    result.scenarios_run += 1
    fixed = _fixed_splits(body.sse)
    result.examples_run += examples + len(fixed)
    try:
        for pieces in fixed:
            same_result.hypothesis.inner_test(pieces)  # type: ignore[attr-defined]
        with the_same_search_in_every_process():
            same_result()
    except AssertionError:
        if failure:
            pieces, got, harm = failure[0]
            shown = " | ".join(repr(p) for p in pieces[:12]) + (" | ..." if len(pieces) > 12 else "")
            message = f"{case.name}: a {len(pieces)}-piece split changes the result"
            failing = FailingRecording(
                case.name, case.body_path, body, expected, result.check.id, message, got, harm, tuple(pieces)
            )
            text = (
                f"recording: {case.body_path}\npieces: {_shown(shown)}\none piece: {_shown(baseline)}\n"
                f"split:     {_shown(got)}"
            )
            # Splits are one finding per harm and its kind of reason, whichever recording they cut.
            kind = f"split: {harm.harm.value}: {signature(harm.why)}"
            found = result.fail(
                message,
                text,
                StackFinding(),
                scenario=case.name,
                keep=None,
                harm=harm,
                realism=recording_realism(body),  # any byte split is what a network does
                kind=kind,
            )
            _keep(found, failing)
    except NotApplicable:
        pass
