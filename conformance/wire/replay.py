"""The full offline pipeline: body bytes -> real SDK -> converter -> handler -> outcome.

``replay_body`` is what ``toolcall-conformance replay`` prints and what the converter checks and
cassette tests compare against expectations. ``compare_outcomes`` states the comparison rules in
one place:

* a call runs exactly when the expectation's ``may_run`` says so (derived from the recording by
  ``conformance.wire.may_run``): a call it marks invalid (``arguments`` null) or unnamed, and
  every call of a stream that ended abnormally (truncated, in-band error, no terminal event),
  even one whose arguments parse, must not come out executable (``arguments`` null): the turn is
  incomplete and must be retried as a whole;
* every named call must come out with exactly that name (a rewritten, concatenated or other
  tool's name dispatches wrongly, and a rejected call's error names its tool), a call the stream
  never named without one, and the provider's id (when the provider sent one); every call that
  may run with equal parsed arguments (compared as JSON, not as text; numbers as IEEE doubles for
  a target that declares ``json_numbers: double``), in wire order;
* text is conserved exactly. Provider-executed (server) tool calls never appear.

A body the SDK or library cannot read at all (a ``data:`` line that is not JSON, bytes that are
not UTF-8) raises ``BodyReadError`` naming the file; an in-band error of the provider is not
that: it reaches the converter through ``fail()``, as in production.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.wire.apis import READERS, WireFormatError
from conformance.wire.bodies import Body
from conformance.wire.may_run import derive_may_run, finish_reason_meaning, stream_why_not
from conformance.wire.numbers import same_json
from conformance.wire.outcome import ExpectedToolCall, Outcome
from conformance.wire.pairing import pair_calls
from conformance.wire.sdk import iter_payload_events, iter_sdk_events
from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    StreamError,
    TokenUsage,
    ToolCallDelta,
)
from reference_impl.frozen import thaw

__all__ = [
    "BodyReadError",
    "ReplayResult",
    "as_chunk_response",
    "compare_finish_reason",
    "compare_outcomes",
    "outcome_from_events",
    "pair_outcome_calls",
    "replay_body",
]


class BodyReadError(WireFormatError):
    """The SDK or client library could not read the body (not a provider error: the bytes themselves)."""


@dataclass
class ReplayResult:
    api: str
    chunks: list[ChunkResponse] = field(default_factory=list)
    events: list[SegmentEvent] = field(default_factory=list)
    outcome: Outcome = field(default_factory=lambda: Outcome(""))
    unknown_events: dict[str, int] = field(default_factory=dict)
    # For each chunk, the position of the SDK event whose conversion returned it (0-based), or
    # None for the chunks of ``finish()`` / ``fail()``, after the SDK stream ended.
    chunk_events: list[int | None] = field(default_factory=list)


def _ending_of(outcome: Outcome, chunk: ChunkResponse) -> None:
    if chunk.finish_reason is not None:
        outcome.finish_reason = chunk.finish_reason
    if chunk.error is not None:
        outcome.error = f"{chunk.error.kind}: {chunk.error.message}"


def outcome_from_events(api: str, chunks: Sequence[ChunkResponse], events: Sequence[SegmentEvent]) -> Outcome:
    """What a handler made of a stream, in the public ``replay --json`` shape."""
    outcome = _calls_and_text(api, events)
    for chunk in chunks:
        _ending_of(outcome, chunk)
    return derive_may_run(outcome)


def _calls_and_text(api: str, events: Sequence[SegmentEvent]) -> Outcome:
    outcome = Outcome(api)
    raw: dict[str, list[str]] = {}
    text: list[str] = []
    reasoning: list[str] = []
    for event in events:
        if event.segment_type is SegmentType.TOOL_CALL:
            if event.event_type is SegmentEventType.CONTENT:
                raw.setdefault(event.segment_id, []).append(event.delta)
            elif event.event_type is SegmentEventType.END:
                metadata = event.metadata
                error = metadata.get("error")
                outcome.tool_calls.append(
                    ExpectedToolCall(
                        metadata.get("tool_name"),
                        metadata.get("call_id"),
                        thaw(metadata["arguments"]) if "arguments" in metadata else None,
                        "".join(raw.pop(event.segment_id, [])),
                        str(error) if error is not None else None,
                    )
                )
        elif event.event_type is SegmentEventType.CONTENT:
            (text if event.segment_type is SegmentType.TEXT else reasoning).append(event.delta)
    # Joined once: += on an attribute copies the whole text every time (quadratic on long streams).
    outcome.text, outcome.reasoning = "".join(text), "".join(reasoning)
    return outcome


def _read_through(
    stream: Iterator[Any], passed: tuple[type[BaseException], ...], source: str, api: str
) -> Iterator[Any]:
    """``stream``, with what the SDK raises on unreadable bytes turned into a ``BodyReadError``.

    The SDK's own API errors (``passed``: the converter's ``api_errors``) go through untouched: they
    are the provider's in-band errors, which the converter turns into a terminal chunk.
    """
    while True:
        try:
            event = next(stream)
        except StopIteration:
            return
        except passed:
            raise
        except WireFormatError as error:
            raise BodyReadError(str(error) if source in str(error) else f"{source}: {error}") from None
        except Exception as error:  # whatever the SDK or library raises on these bytes is the finding
            hint = ""
            if isinstance(error, UnicodeDecodeError) and "unexpected end of data" in str(error):
                hint = " (the body ends inside a UTF-8 sequence: the file was cut)"
            raise BodyReadError(
                f"{source}: {READERS[api]} could not read this {api} body: {type(error).__name__}: {error}{hint}"
            ) from error
        yield event


def _read(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def as_chunk_response(chunk: Any) -> ChunkResponse:
    """A converter's chunk as the contract's ``ChunkResponse``, whatever class the converter uses.

    Users' converters produce their own chunk types (the seed's ``ChunkResponse`` lives in their
    code base); they are read by duck typing: ``content``, ``reasoning``, ``tool_calls`` (each with
    ``index``, ``call_id``, ``name``, ``arguments_delta``, ``provider_metadata``), ``is_complete``,
    ``finish_reason``, ``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) and
    ``error`` (``kind``, ``message``). A value of the wrong type raises ``TypeError`` naming it.
    """
    if isinstance(chunk, ChunkResponse):
        return chunk
    deltas = _read(chunk, "tool_calls")
    error = _read(chunk, "error")
    usage = _read(chunk, "usage")
    return ChunkResponse(
        content=_read(chunk, "content") or "",
        reasoning=_read(chunk, "reasoning"),
        is_complete=bool(_read(chunk, "is_complete")),
        usage=TokenUsage(
            _read(usage, "prompt_tokens") or 0, _read(usage, "completion_tokens") or 0, _read(usage, "total_tokens")
        )
        if usage is not None
        else None,
        tool_calls=[
            ToolCallDelta(
                _read(d, "index"),
                _read(d, "call_id"),
                _read(d, "name"),
                _read(d, "arguments_delta"),
                provider_metadata=_read(d, "provider_metadata"),
            )
            for d in deltas
        ]
        if deltas is not None
        else None,
        finish_reason=_read(chunk, "finish_reason"),
        error=StreamError(_read(error, "kind"), _read(error, "message") or "") if error is not None else None,
    )


def replay_body(
    body: Body,
    pieces: Iterable[bytes] | None = None,
    *,
    via_sdk: bool = True,
    converter_factory: Callable[..., Any] | None = None,
    handler_factory: Callable[[], Any] = ApiToolCallStreamingResponseHandler,
    keep_chunks: bool = True,
) -> ReplayResult:
    """Replay ``body`` through SDK, converter and handler.

    With ``via_sdk`` the bytes go through the SDK's HTTP client and SSE decoder (the client
    library's, for Ollama, Bedrock and Cohere), served in ``pieces`` (default: one piece); without
    it the SDK's model objects are built straight from the decoded payloads. ``keep_chunks=False``
    keeps neither the chunks nor their event positions (``replay --json`` needs only the outcome;
    memory then stays within a few times the body's size). Raises ``BodyReadError`` when the
    SDK cannot read the bytes at all.
    """
    from reference_impl.converters import converter_for, iter_chunks

    # A cassette may declare converter options (a server profile such as cumulative arguments).
    converter = (converter_factory or converter_for)(body.api, **body.converter_options)
    result = ReplayResult(body.api)
    events = (
        iter_sdk_events(body.api, pieces if pieces is not None else body.chunks())
        if via_sdk
        else iter_payload_events(body.api, body.payloads())
    )
    current: list[int | None] = [None]

    def counted(stream: Iterator[Any]) -> Iterator[Any]:
        # Which event the converter is working on when a chunk comes out: iter_chunks asks for
        # the next event only after yielding every chunk of the previous one.
        try:
            for position, event in enumerate(stream):
                current[0] = position
                yield event
        finally:
            current[0] = None

    passed = tuple(getattr(converter, "api_errors", ()) or ())
    handler = handler_factory()
    ending = Outcome(body.api)
    for produced in iter_chunks(converter, counted(_read_through(iter(events), passed, body.source, body.api))):
        chunk = as_chunk_response(produced)
        if keep_chunks:
            result.chunks.append(chunk)
            result.chunk_events.append(current[0])
        _ending_of(ending, chunk)
        if not getattr(handler, "is_finalized", False):
            handler.feed(chunk)
    handler.finalize()
    result.events = handler.get_all_events()
    result.outcome = _calls_and_text(body.api, result.events)
    result.outcome.finish_reason, result.outcome.error = ending.finish_reason, ending.error
    derive_may_run(result.outcome)
    result.unknown_events = dict(getattr(converter, "unknown_events", {}) or {})
    return result


def pair_outcome_calls(
    expected: Outcome, actual: Outcome
) -> list[tuple[int, ExpectedToolCall, ExpectedToolCall | None]]:
    """Pair each expected call with an actual one (``conformance.wire.pairing``): by provider id when
    the provider sent one, else by wire position among the calls not carrying another expected id,
    in the target's output order. Never by name or arguments: those are each call's own findings.

    Calls are matched, so one lost call is one finding; their order is compared separately (calls
    keep wire order: ``_order_problems``). A call that lost or garbled its id keeps its slot and
    pairs with the call it is, so the finding says "wrong id", not "missing".
    """
    slots = pair_calls(
        [call.call_id for call in expected.tool_calls],
        [{got.call_id} if got.call_id else set() for got in actual.tool_calls],
        agrees=lambda i, j: _says_the_same(expected.tool_calls[i], actual.tool_calls[j]),
    )
    return [
        (position, want, actual.tool_calls[slot] if slot is not None else None)
        for position, (want, slot) in enumerate(zip(expected.tool_calls, slots, strict=True))
    ]


def _says_the_same(want: ExpectedToolCall, got: ExpectedToolCall) -> bool:
    """Same name and arguments (used only between calls the provider gave one id)."""
    return got.name == want.name and same_json(got.arguments, want.arguments)


def _order_problems(actual: Outcome, pairs: list[tuple[int, ExpectedToolCall, ExpectedToolCall | None]]) -> list[str]:
    """Calls must come out in the order they first appeared on the wire (rule R10)."""
    order = [next(i for i, got in enumerate(actual.tool_calls) if got is match) for _, _, match in pairs if match]
    if order == sorted(order):
        return []
    return [f"calls came out in the order {order} of the stream's calls; they must keep wire order"]


# What a "must not be executable" finding says, per ``why_not`` of the expected call.
_MUST_NOT_RUN = {
    "provider_error": "the stream ended abnormally",
    "incomplete": "the stream ended abnormally",
    "truncated": "the provider cut the turn at its token limit",
    "no_name": "the stream never named it: no tool to run",
}


def _name_problems(label: str, want: ExpectedToolCall, got: ExpectedToolCall) -> list[str]:
    """Names are compared exactly, on rejected calls too (the error sent back names the tool); a call
    the stream never named comes out without one (None or '')."""
    if want.name and got.name != want.name:
        return [f"{label}: tool name {got.name!r}, the provider sent {want.name!r}"]
    if not want.name and got.name:
        return [f"{label}: tool name {got.name!r}, but the stream never named it"]
    return []


def _call_problems(
    label: str, want: ExpectedToolCall, got: ExpectedToolCall | None, numbers: str = "exact"
) -> list[str]:
    """Where the call paired with ``want`` departs from it (name, id, then whether it runs, then arguments).

    ``got`` runs when it has arguments (what a handler's END or a stack's answer hands to the tool);
    a call the stream never named has no tool to run: it must not be executable, whatever its arguments.
    """
    if got is None:
        return [f"{label}: no call came out for it"]
    problems = _name_problems(label, want, got)
    if want.call_id and got.call_id != want.call_id:
        problems.append(f"{label}: call id {got.call_id!r}, the provider sent {want.call_id!r}")
    if not want.may_run:
        if got.arguments is not None:
            why = _MUST_NOT_RUN.get(str(want.why_not)) or f"its arguments are invalid ({want.raw_arguments!r})"
            problems.append(f"{label}: must not be executable ({why}), got arguments {got.arguments}")
    elif got.arguments is None:
        problems.append(f"{label}: expected arguments {want.arguments}, got an error END")
    elif not same_json(got.arguments, want.arguments, numbers=numbers):
        problems.append(f"{label}: arguments {got.arguments}, expected {want.arguments}")
    return problems


def compare_outcomes(expected: Outcome, actual: Outcome, *, numbers: str = "exact") -> list[str]:
    """Where ``actual`` departs from ``expected`` under the rules in the module docstring.

    ``numbers`` is how the target reads JSON numbers (``conformance.wire.numbers``): ``"double"``
    compares argument numbers as IEEE doubles, for a target that declares it.
    """
    # Which expected calls may run, derived here too (on a copy) so that an expectation built by
    # hand is judged by the same rule as one loaded from a file.
    expected = derive_may_run(replace(expected, tool_calls=list(expected.tool_calls)))
    problems: list[str] = []
    if expected.error is not None and actual.error is None:
        problems.append(f"the stream ended in an error ({expected.error}) but nothing surfaced it")
    if len(actual.tool_calls) != len(expected.tool_calls):
        problems.append(
            f"{len(expected.tool_calls)} tool calls expected ({[c.name for c in expected.tool_calls]}), "
            f"got {len(actual.tool_calls)} ({[(c.name, c.call_id) for c in actual.tool_calls]})"
        )
    pairs = pair_outcome_calls(expected, actual)
    problems += _order_problems(actual, pairs)
    for position, want, got in pairs:
        problems += _call_problems(f"call {position} ({want.name}, id {want.call_id!r})", want, got, numbers)
    if actual.text != expected.text:
        problems.append(f"text {actual.text!r}, expected {expected.text!r}")
    # Reasoning is compared when the expectation records it (third-party expectations may only
    # record its length): some providers require it to be sent back on the next turn (G09).
    if expected.reasoning_recorded and actual.reasoning != expected.reasoning:
        problems.append(f"reasoning {actual.reasoning[:60]!r}..., expected {expected.reasoning[:60]!r}...")
    return problems


def compare_finish_reason(expected: Outcome, actual: Outcome) -> list[str]:
    """Where the stop reason ``actual`` reports says something else of the turn than the stream did.

    Judged by meaning (``conformance.wire.may_run.finish_reason_meaning``), so a library may report
    the provider's value or its own normalised one (``tool-calls``, ``tool_call``); a result that
    gives none, or one that says nothing (``other``), is not judged. A turn that ended abnormally
    may be reported as finished only beside an ``error`` that says it did not.
    """
    if not actual.finish_reason:
        return []
    got = finish_reason_meaning(expected.api or actual.api, actual.finish_reason)
    if got is None:
        return []
    wanted = stream_why_not(expected.api, expected.finish_reason, expected.error) or "normal"
    said = f"finish_reason {actual.finish_reason!r}"
    stream = f"the stream's is {expected.finish_reason!r}" + (f" ({wanted})" if wanted != "normal" else "")
    if got == "unknown":
        return [
            f"{said} is no stop reason {expected.api or 'any wire API'} sends nor a known normalisation of one, so "
            f"a caller cannot tell how the turn ended; {stream}"
        ]
    if got == "normal" and wanted != "normal":
        return [] if actual.error else [f"{said} reads as a turn that ended normally; {stream}"]
    if wanted not in (got, "incomplete"):
        return [f"{said} says the turn ended {got}; {stream}"]
    return []
