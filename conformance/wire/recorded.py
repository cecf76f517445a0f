"""What a recording itself says beyond its expected outcome, read through the SDK's own objects.

Three converter checks compare a converter's output with facts that an expectation file does not
hold: how far each call's argument text had arrived after each SDK event, the provider's final
token usage, and the per-call metadata a follow-up request must echo. Like the expectations
(``conformance.expectations``), these facts never come from the code under test: ``read_recording``
replays the body through the provider's SDK and reads them off the SDK's stream objects, folded by
the SDK's own accumulators where the SDK has one:

* argument progress: after each event, the call's argument text in the running snapshot of
  ``ChatCompletionStreamState`` (OpenAI Chat), ``ResponseStreamState`` (Responses) or
  ``accumulate_event`` (Anthropic: the raw ``input_json`` text it keeps per block). google-genai
  has no accumulator and Gemini sends no argument text: Vertex ``partialArgs`` parts are values,
  so for Gemini only the events that carried a value are recorded;
* usage: the last usage the SDK parsed (Chat ``chunk.usage``, the Responses terminal
  ``response.usage``, Gemini ``usage_metadata``; each is a cumulative snapshot) and, for
  Anthropic, ``accumulate_event``'s fold of ``message_start`` and the cumulative
  ``message_delta`` counts. (The Chat accumulator is not used for usage: it keeps the *last
  chunk's* ``usage`` even when that is null, the very overwrite taxonomy F05 warns about.);
* metadata: the ``thoughtSignature`` bytes on each Gemini call's parts and the ``id`` (``fc_...``)
  of each Responses ``function_call`` item.

The client-library APIs are read the same way, through the objects ollama-python, cohere and
boto3 parsed (``conformance.wire.libraries``): Bedrock ConverseStream and Cohere v2 argument text
by the plain folds of ``conformance.wire.outcome_libraries`` (each call's running text after each
event), Bedrock InvokeModel through Anthropic's ``accumulate_event`` over the decoded ``chunk``
events; usage from Ollama's ``done`` line (``prompt_eval_count`` / ``eval_count``), Bedrock's
``metadata.usage`` (cache reads and writes counted in or not) and Cohere's ``message-end`` usage
(``tokens`` or ``billed_units``). Ollama sends each call whole, so no call of it is streamed.

The facts are matched to the expectation's calls by position and kept only where the SDK's view
agrees with the expectation (same number of calls, same names, arguments that add up to the
expected ones); where it does not, the fact is absent and ``why`` says so, so a check reports the
recording as not applicable rather than guessing.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.wire.outcome import ExpectedToolCall, Outcome, decode_expected_arguments
from conformance.wire.sdk import iter_sdk_events

__all__ = ["RecordedCall", "RecordedUsage", "Recording", "describe_text", "read_recording", "signature_bytes"]


@dataclass(frozen=True)
class RecordedUsage:
    """The provider's final usage, as the ``TokenUsage`` readings a correct converter may give.

    ``prompt`` / ``completion`` hold every defensible reading (Anthropic reports cache reads and
    writes beside ``input_tokens``; Gemini reports thought and tool-prompt tokens beside its
    candidate and prompt counts: counting them in or not are both accepted). ``total`` is the
    provider's own total, when it sent one.
    """

    prompt: frozenset[int]
    completion: frozenset[int]
    total: int | None
    source: str  # where the numbers were read, for messages

    def describe(self) -> str:
        def show(values: frozenset[int]) -> str:
            return " or ".join(str(v) for v in sorted(values))

        total = f", total {self.total}" if self.total is not None else ""
        return f"prompt {show(self.prompt)}, completion {show(self.completion)}{total} ({self.source})"


@dataclass
class RecordedCall:
    """One client tool call of the recording, in the expectation's order."""

    name: str | None
    # (event position, the call's argument text after that event) for every event that extended
    # it, per the SDK's accumulator. None: the SDK's running text cannot be trusted for this call.
    progress: list[tuple[int, str]] | None = None
    # Gemini partialArgs: positions of the events that carried an argument value for this call.
    value_events: list[int] = field(default_factory=list)
    thought_signatures: list[bytes] = field(default_factory=list)  # Gemini, in wire order
    item_id: str | None = None  # Responses function_call item id


@dataclass
class Recording:
    """The facts ``read_recording`` found. ``None`` fields were not readable; ``why`` says why."""

    api: str
    event_kinds: list[str] = field(default_factory=list)  # the type of each SDK event, for messages
    usage: RecordedUsage | None = None
    calls: list[RecordedCall] | None = None
    why: dict[str, str] = field(default_factory=dict)  # "usage" / "calls" -> why it is missing

    def describe_event(self, position: int) -> str:
        kind = self.event_kinds[position] if 0 <= position < len(self.event_kinds) else "?"
        return f"SDK event #{position + 1} ({kind})"


def signature_bytes(value: Any) -> bytes | None:
    """A thought signature as bytes: ``bytes`` as is, ``str`` as base64 (what the wire carries)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _kind(event: Any) -> str:
    if isinstance(event, Mapping) and len(event) == 1:  # a boto3 event: {eventType: payload}
        return str(next(iter(event)))
    kind = getattr(event, "type", None) or getattr(event, "object", None)
    return str(kind) if kind else type(event).__name__


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


# -- usage ----------------------------------------------------------------------------------------


def _chat_usage(events: Sequence[Any]) -> RecordedUsage | None:
    usage = next((event.usage for event in reversed(events) if getattr(event, "usage", None) is not None), None)
    if usage is None:
        return None
    prompt, completion = _count(usage.prompt_tokens) or 0, _count(usage.completion_tokens) or 0
    return RecordedUsage(
        frozenset({prompt}), frozenset({completion}), _count(usage.total_tokens), "the last chunk.usage"
    )


def _responses_usage(events: Sequence[Any]) -> RecordedUsage | None:
    usage = next(
        (
            event.response.usage
            for event in reversed(events)
            if getattr(getattr(event, "response", None), "usage", None) is not None
        ),
        None,
    )
    if usage is None:
        return None
    prompt, completion = _count(usage.input_tokens) or 0, _count(usage.output_tokens) or 0
    return RecordedUsage(
        frozenset({prompt}), frozenset({completion}), _count(usage.total_tokens), "the terminal response.usage"
    )


def _anthropic_usage(events: Sequence[Any]) -> RecordedUsage | None:
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    usage = getattr(snapshot, "usage", None)
    if usage is None:
        return None
    prompt = _count(usage.input_tokens) or 0
    cached = (_count(usage.cache_creation_input_tokens) or 0) + (_count(usage.cache_read_input_tokens) or 0)
    return RecordedUsage(
        frozenset({prompt, prompt + cached}),
        frozenset({_count(usage.output_tokens) or 0}),
        None,
        "message_start usage updated by the cumulative message_delta usage (anthropic accumulate_event)",
    )


def _gemini_usage(events: Sequence[Any]) -> RecordedUsage | None:
    counts = ("prompt_token_count", "candidates_token_count", "thoughts_token_count", "total_token_count")
    usage = next(
        (
            event.usage_metadata
            for event in reversed(events)
            if event.usage_metadata is not None and any(_count(getattr(event.usage_metadata, c)) for c in counts)
        ),
        None,
    )
    if usage is None:
        return None
    prompt = _count(usage.prompt_token_count) or 0
    tool_prompt = _count(usage.tool_use_prompt_token_count) or 0
    candidates = _count(usage.candidates_token_count) or 0
    thoughts = _count(usage.thoughts_token_count) or 0
    return RecordedUsage(
        frozenset({prompt, prompt + tool_prompt}),
        frozenset({candidates, candidates + thoughts}),
        _count(usage.total_token_count),
        "the last usageMetadata",
    )


# -- argument progress and metadata ---------------------------------------------------------------


def _progress(snapshots: Sequence[list[str]]) -> list[list[tuple[int, str]]]:
    """Per call position: (event, text) at each event where the call's running text changed."""
    calls: list[list[tuple[int, str]]] = []
    for position, texts in enumerate(snapshots):
        for index, text in enumerate(texts):
            while len(calls) <= index:
                calls.append([])
            previous = calls[index][-1][1] if calls[index] else ""
            if text != previous:
                calls[index].append((position, text))
    return calls


def _chat_calls(events: Sequence[Any]) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState()
    snapshots: list[list[str]] = []
    names: list[str | None] = []
    for event in events:
        state.handle_chunk(event)
        completion = state.current_completion_snapshot
        calls = (completion.choices[0].message.tool_calls or []) if completion.choices else []
        snapshots.append([call.function.arguments or "" for call in calls])
        names = [call.function.name for call in calls]
    return names, _progress(snapshots), [None] * len(names)


def _responses_calls(
    events: Sequence[Any],
) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    from openai import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    snapshots: list[list[str]] = []
    items: list[Any] = []
    for event in events:
        state.handle_event(event)
        snapshot = getattr(state, "_ResponseStreamState__current_snapshot", None)
        items = [item for item in getattr(snapshot, "output", None) or [] if item.type == "function_call"]
        snapshots.append([item.arguments or "" for item in items])
    return [item.name for item in items], _progress(snapshots), [getattr(item, "id", None) or None for item in items]


def _anthropic_calls(
    events: Sequence[Any],
) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    snapshots: list[list[str]] = []
    blocks: list[tuple[int, Any]] = []
    for event in events:
        if event is not None:  # None: a position that carries no Anthropic event (Bedrock InvokeModel)
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        blocks = [(i, b) for i, b in enumerate(snapshot.content if snapshot else []) if b.type == "tool_use"]
        snapshots.append([json_bufs.get(i, b"").decode("utf-8") for i, _ in blocks])
    return [block.name for _, block in blocks], _progress(snapshots), [None] * len(blocks)


@dataclass
class _GeminiCall:
    name: str | None
    call_id: str | None
    signatures: list[bytes] = field(default_factory=list)
    value_events: list[int] = field(default_factory=list)


def _has_value(partial: Any) -> bool:
    if partial.string_value:
        return True
    return any(getattr(partial, name) is not None for name in ("number_value", "bool_value", "null_value"))


class _GeminiFold:
    """Candidate 0's function-call parts folded into calls (google-genai has no accumulator).

    A part with a name starts a call, unless its id was seen (a restatement: the same call) or it
    continues the open streamed call (Vertex ``partialArgs``: continuation parts may restate the
    name; a part without a name continues the open call; ``{}`` or ``willContinue: false`` closes it).
    """

    def __init__(self) -> None:
        self.calls: list[_GeminiCall] = []
        self.by_id: dict[str, int] = {}
        self.open_call: int | None = None

    def _continues(self, call: Any, name: str | None, partial: list[Any]) -> bool:
        if self.open_call is None or call.args is not None:
            return False
        if name is None:
            return True
        return name == self.calls[self.open_call].name and (bool(partial) or call.will_continue is False)

    def _target(
        self, position: int, call: Any, name: str | None, call_id: str | None, partial: list[Any]
    ) -> int | None:
        if call_id is not None and call_id in self.by_id:
            return self.by_id[call_id]
        if self._continues(call, name, partial):
            return self.open_call
        if name is not None:
            self.calls.append(_GeminiCall(name, call_id))
            target = len(self.calls) - 1
            if call_id is not None:
                self.by_id[call_id] = target
            self.open_call = target if (call.will_continue or partial) else None
            return target
        if partial:
            raise ValueError(f"event {position + 1}: partialArgs without a name and no open call")
        return None  # a terminator or an empty restatement with nothing to attach to

    def part(self, position: int, part: Any) -> None:
        call = part.function_call
        if call is None:
            return
        name, call_id, partial = call.name or None, call.id or None, call.partial_args or []
        target = self._target(position, call, name, call_id, partial)
        if target is None:
            return
        if part.thought_signature:
            self.calls[target].signatures.append(bytes(part.thought_signature))
        if any(_has_value(p) for p in partial) and position not in self.calls[target].value_events:
            self.calls[target].value_events.append(position)
        closes = call.will_continue is False or (
            name is None and call_id is None and not partial and call.will_continue is None
        )
        if target == self.open_call and closes:
            self.open_call = None


def _gemini_calls(events: Sequence[Any]) -> list[_GeminiCall]:
    """Candidate 0's function-call parts folded into calls (``_GeminiFold``)."""
    fold = _GeminiFold()
    for position, response in enumerate(events):
        for candidate in response.candidates or []:
            if candidate.index not in (None, 0):
                continue
            for part in (candidate.content.parts if candidate.content else None) or []:
                fold.part(position, part)
    return fold.calls


# -- the client-library APIs ----------------------------------------------------------------------


def _ollama_usage(events: Sequence[Any]) -> RecordedUsage | None:
    done = next((event for event in reversed(events) if _get(event, "done") is True), None)
    prompt, completion = _count(_get(done, "prompt_eval_count")), _count(_get(done, "eval_count"))
    if prompt is None and completion is None:
        return None
    return RecordedUsage(
        frozenset({prompt or 0}), frozenset({completion or 0}), None, "the done line's prompt_eval_count / eval_count"
    )


def _converse_usage(events: Sequence[Any]) -> RecordedUsage | None:
    usage = next((_get(_get(e, "metadata"), "usage") for e in reversed(events) if _get(e, "metadata")), None)
    if usage is None:
        return None
    prompt = _count(_get(usage, "inputTokens")) or 0
    cached = (_count(_get(usage, "cacheReadInputTokens")) or 0) + (_count(_get(usage, "cacheWriteInputTokens")) or 0)
    return RecordedUsage(
        frozenset({prompt, prompt + cached}),
        frozenset({_count(_get(usage, "outputTokens")) or 0}),
        _count(_get(usage, "totalTokens")),
        "the metadata event's usage",
    )


def _cohere_usage(events: Sequence[Any]) -> RecordedUsage | None:
    end = next((event for event in reversed(events) if _get(event, "type") == "message-end"), None)
    usage = _get(_get(end, "delta"), "usage")
    readings = [_get(usage, group) for group in ("tokens", "billed_units")]
    prompts = {_count(_get(r, "input_tokens")) for r in readings if r is not None} - {None}
    completions = {_count(_get(r, "output_tokens")) for r in readings if r is not None} - {None}
    if not prompts and not completions:
        return None
    return RecordedUsage(
        frozenset(p for p in prompts if p is not None) or frozenset({0}),
        frozenset(c for c in completions if c is not None) or frozenset({0}),
        None,
        "message-end usage (tokens, or billed_units)",
    )


def _invoke_events(events: Sequence[Any]) -> list[Any]:
    """The Anthropic event in each ``chunk`` (``None`` where an event carries none), position for position."""
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    decoded: list[Any] = []
    for event in events:
        data = _get(_get(event, "chunk"), "bytes")
        payload = json.loads(data) if isinstance(data, (bytes, str)) else None
        usable = isinstance(payload, Mapping) and payload.get("type") != "ping"
        decoded.append(construct_type(type_=RawMessageStreamEvent, value=payload) if usable else None)
    return decoded


def _invoke_usage(events: Sequence[Any]) -> RecordedUsage | None:
    return _anthropic_usage([event for event in _invoke_events(events) if event is not None])


def _invoke_calls(events: Sequence[Any]) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    return _anthropic_calls(_invoke_events(events))


class _RunningCalls:
    """Each call's running argument text after every event (for folds keyed by a stream index)."""

    def __init__(self) -> None:
        self.names: dict[Any, str | None] = {}
        self.texts: dict[Any, str] = {}
        self.snapshots: list[list[str]] = []

    def open(self, key: Any, name: Any, first: Any = "") -> None:
        self.names[key] = name if isinstance(name, str) else None
        self.texts[key] = first if isinstance(first, str) else ""

    def extend(self, key: Any, fragment: Any) -> None:
        if key in self.texts and isinstance(fragment, str):
            self.texts[key] += fragment

    def snapshot(self) -> None:
        self.snapshots.append(list(self.texts.values()))

    def result(self) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
        return list(self.names.values()), _progress(self.snapshots), [None] * len(self.names)


def _converse_calls(events: Sequence[Any]) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    running = _RunningCalls()
    for event in events:
        start, delta = _get(event, "contentBlockStart"), _get(event, "contentBlockDelta")
        tool = _get(_get(start, "start"), "toolUse")
        if tool is not None and _get(tool, "type") != "server_tool_use":
            running.open(_get(start, "contentBlockIndex"), _get(tool, "name"))
        if delta is not None:
            running.extend(_get(delta, "contentBlockIndex"), _get(_get(_get(delta, "delta"), "toolUse"), "input"))
        running.snapshot()
    return running.result()


def _cohere_calls(events: Sequence[Any]) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    running = _RunningCalls()
    for event in events:
        kind, index = _get(event, "type"), _get(event, "index")
        call = _get(_get(_get(event, "delta"), "message"), "tool_calls")
        function = _get(call, "function")
        if kind == "tool-call-start":
            running.open(index, _get(function, "name"), _get(function, "arguments"))
        elif kind == "tool-call-delta":
            running.extend(index, _get(function, "arguments"))
        running.snapshot()
    return running.result()


def _ollama_calls(events: Sequence[Any]) -> tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]:
    running = _RunningCalls()
    for event in events:
        for call in _get(_get(event, "message"), "tool_calls") or ():
            function = _get(call, "function")
            arguments = _get(function, "arguments")
            text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}), ensure_ascii=False)
            running.open(len(running.names), _get(function, "name"), text)
        running.snapshot()
    return running.result()


_Reader = Callable[[Sequence[Any]], tuple[list[str | None], list[list[tuple[int, str]]], list[str | None]]]
_CALL_READERS: dict[str, _Reader] = {
    "openai-chat": _chat_calls,
    "openai-responses": _responses_calls,
    "anthropic": _anthropic_calls,
    "ollama": _ollama_calls,
    "bedrock-converse": _converse_calls,
    "bedrock-invoke": _invoke_calls,
    "cohere-v2": _cohere_calls,
}
_USAGE_READERS: dict[str, Callable[[Sequence[Any]], RecordedUsage | None]] = {
    "openai-chat": _chat_usage,
    "openai-responses": _responses_usage,
    "anthropic": _anthropic_usage,
    "gemini": _gemini_usage,
    "ollama": _ollama_usage,
    "bedrock-converse": _converse_usage,
    "bedrock-invoke": _invoke_usage,
    "cohere-v2": _cohere_usage,
}


def _adds_up(text: str, want_arguments: dict[str, Any] | None, want_raw: str) -> bool:
    if want_arguments is None:
        return text == want_raw
    return decode_expected_arguments(text) == want_arguments


def _read_calls(api: str, events: Sequence[Any], expected: Outcome, recording: Recording) -> None:
    want_names = [call.name for call in expected.tool_calls]
    if api == "gemini":
        folded = _gemini_calls(events)
        names = [call.name for call in folded]
        if names != want_names or any(
            call.call_id and want.call_id and call.call_id != want.call_id
            for call, want in zip(folded, expected.tool_calls, strict=True)
        ):
            recording.why["calls"] = (
                f"the recording's function-call parts give calls {names}, the expectation {want_names}"
            )
            return
        recording.calls = [
            RecordedCall(call.name, None, list(call.value_events), list(call.signatures)) for call in folded
        ]
        return
    names, progress, item_ids = _CALL_READERS[api](events)
    if len(names) != len(want_names):
        recording.why["calls"] = (
            f"the SDK's accumulator folds {len(names)} calls ({names}), the expectation has {len(want_names)}"
        )
        return
    recording.calls = []
    for position, want in enumerate(expected.tool_calls):
        steps = progress[position] if position < len(progress) else []
        final = steps[-1][1] if steps else ""
        # Trusted only when the SDK's running text adds up to the expected arguments: not for
        # snapshots sent as deltas, object arguments, or arguments that come only in a .done event.
        trusted = _adds_up(final, want.arguments, want.raw_arguments)
        item_id = item_ids[position] if names[position] == want.name else None
        recording.calls.append(RecordedCall(want.name, steps if trusted else None, item_id=item_id))


def read_recording(api: str, sse: bytes, expected: Outcome) -> Recording:
    """Read ``sse`` through the ``api`` SDK and return what it records beyond ``expected``.

    An SDK error mid-stream (an in-band error event) ends the reading: what arrived before counts.
    The result depends on nothing else, so it is cached (a suite run reads each recording once per
    converter; the OpenAI Chat accumulator re-serialises its snapshot on every chunk). Treat it as
    read-only.
    """
    return _read_cached(api, sse, json.dumps(expected.to_json(), sort_keys=True))


@functools.lru_cache(maxsize=512)
def _read_cached(api: str, sse: bytes, expected_json: str) -> Recording:
    document = json.loads(expected_json)
    expected = Outcome(api)
    for call in document["tool_calls"]:
        expected.tool_calls.append(
            ExpectedToolCall(call["name"], call["call_id"], call["arguments"], call["raw_arguments"])
        )
    return _read(api, sse, expected)


def _read(api: str, sse: bytes, expected: Outcome) -> Recording:
    recording = Recording(api)
    events: list[Any] = []
    with warnings.catch_warnings():
        # The OpenAI accumulator warns when it serialises object arguments (a dialect it mishandles).
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
        try:
            for event in iter_sdk_events(api, [sse]):
                events.append(event)
        except Exception:  # noqa: BLE001 - each SDK raises its own in-band error classes; what came before is the record
            pass
        recording.event_kinds = [_kind(event) for event in events]
        try:
            recording.usage = _USAGE_READERS[api](events)
            if recording.usage is None:
                recording.why["usage"] = "the recording carries no usage"
        except Exception as error:  # noqa: BLE001 - an SDK accumulator that cannot fold this dialect: no fact
            recording.why["usage"] = f"the {api} SDK could not read the usage: {type(error).__name__}: {error}"
        try:
            _read_calls(api, events, expected, recording)
        except Exception as error:  # noqa: BLE001 - an SDK accumulator that cannot fold this stream: no fact
            recording.calls = None
            recording.why["calls"] = (
                f"the {api} SDK's accumulator cannot fold this stream: {type(error).__name__}: {error}"
            )
    return recording


def describe_text(text: str, limit: int = 40) -> str:
    """``text`` for a message: its length and its last ``limit`` characters."""
    tail = text[-limit:]
    return f"{len(text)} chars, ending {json.dumps(tail, ensure_ascii=False)}"
