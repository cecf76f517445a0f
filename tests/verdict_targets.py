"""Targets for the verdict tests (``tests/test_verdicts.py``), importable as ``tests.verdict_targets:NAME``.

Broken ones reproduce the false passes the suite had (each was reported CONFORMANT); correct ones
are written from scratch, importing nothing from ``reference_impl``, and must get no false alarm.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.converters import converter_for

# -- broken handlers: each was CONFORMANT from the CLI before the verdict rework ------------------------


class DropReservedArgumentKeys(ApiToolCallStreamingResponseHandler):
    """Drops argument keys a framework reserves for itself (``self``, ``kwargs``...) before invoking.

    No built-in scenario has such keys: only the generated streams produce them.
    """

    _RESERVED = frozenset({"self", "kwargs", "settings"})

    def _end_event(self, state: Any) -> Any:
        event = super()._end_event(state)
        arguments = event.metadata.get("arguments")
        if isinstance(arguments, dict) and self._RESERVED & set(arguments):
            metadata = dict(event.metadata)
            metadata["arguments"] = {k: v for k, v in arguments.items() if k not in self._RESERVED}
            return type(event).end(event.segment_id, event.segment_type, **metadata)
        return event


def make_drop_reserved(**callbacks: Any) -> DropReservedArgumentKeys:
    return DropReservedArgumentKeys(**callbacks)


class StreamFirstCallOnly(ApiToolCallStreamingResponseHandler):
    """Streams the first call's arguments, buffers every later call's until END (C07 for all but one)."""

    def _emit(self, event: Any) -> None:
        calls = getattr(self, "_calls", [])
        first = calls[0].segment_id if calls else None
        if event.event_type.name == "CONTENT" and event.segment_type.name == "TOOL_CALL" and event.segment_id != first:
            self._held = getattr(self, "_held", {})
            self._held.setdefault(event.segment_id, []).append(event)
            return
        if event.event_type.name == "END":
            for held in getattr(self, "_held", {}).pop(event.segment_id, []):
                super()._emit(held)
        super()._emit(event)


class RaiseOnSecondId(ApiToolCallStreamingResponseHandler):
    """Raises from feed() when a second id arrives on an occupied index (seed 001's JSON.parse, in
    effect): those runs cannot be judged by the call checks, and the report must say so."""

    def _apply_delta(self, delta: Any) -> None:
        state = self._tools.get(delta.index)
        if state is not None and delta.call_id and state.call_id and delta.call_id != state.call_id:
            raise ValueError("two ids on one index")
        super()._apply_delta(delta)


class ListIndexedCalls(ApiToolCallStreamingResponseHandler):
    """Keeps calls in a list indexed by ``delta.index``: sparse or non-zero-based indices break it (A03)."""

    def _apply_delta(self, delta: Any) -> None:
        if delta.index > len(self._calls):
            raise IndexError(f"list index {delta.index} out of range")
        super()._apply_delta(delta)


def no_callbacks_handler() -> ApiToolCallStreamingResponseHandler:
    """A correct handler whose factory takes no callbacks: the callback checks cannot apply."""
    return ApiToolCallStreamingResponseHandler()


def converter_factory(api: str, **options: Any) -> Any:
    """A converter factory written as documented: it takes the wire API name."""
    if api != "openai-chat":
        raise ValueError(f"this factory converts openai-chat only, got {api!r}")
    return converter_for(api, **options)


def raising_factory(**_callbacks: Any) -> Any:
    raise RuntimeError("cannot connect to the model registry")


def not_a_handler(**_callbacks: Any) -> Any:
    return {"feed": "no"}


class FeedReturnsNone(ApiToolCallStreamingResponseHandler):
    def feed(self, chunk: Any) -> Any:  # type: ignore[override]
        super().feed(chunk)
        return None


class HangsOnReasoning(ApiToolCallStreamingResponseHandler):
    def feed(self, chunk: Any) -> Any:
        if chunk.reasoning:
            while True:
                time.sleep(0.01)
        return super().feed(chunk)


class HangsOnFirstFeed(ApiToolCallStreamingResponseHandler):
    """Hangs the moment it is fed anything: only a stream without chunks gets through."""

    def feed(self, chunk: Any) -> Any:
        while True:
            time.sleep(0.01)


# -- correct targets written from scratch (nothing from reference_impl) -------------------------------


@dataclass
class _Event:
    event_type: str
    segment_id: str
    segment_type: str | None
    payload: dict[str, Any]


class TextOnlyHandler:
    """A pass-through handler: text and reasoning as segments, tool calls ignored (declare --no-tool-calls)."""

    def __init__(self, on_segment_event: Any = None, on_tool_invocation: Any = None) -> None:
        self._on_event = on_segment_event
        self.reset()

    def reset(self) -> None:
        self._events: list[_Event] = []
        self._open: tuple[str, str] | None = None  # (segment id, kind)
        self._done = False

    def _emit(self, event: _Event, batch: list[_Event]) -> None:
        self._events.append(event)
        batch.append(event)
        if self._on_event is not None:
            with contextlib.suppress(Exception):  # a listener's failure must not break the stream
                self._on_event(event)

    def _text(self, kind: str, text: str, batch: list[_Event]) -> None:
        if self._open is not None and self._open[1] != kind:
            self._emit(_Event("SEGMENT_END", self._open[0], None, {"metadata": {}}), batch)
            self._open = None
        if self._open is None:
            self._open = (uuid.uuid4().hex, kind)
            self._emit(_Event("SEGMENT_START", self._open[0], kind, {"metadata": {}}), batch)
        self._emit(_Event("SEGMENT_CONTENT", self._open[0], None, {"delta": text}), batch)

    def feed(self, chunk: Any) -> list[_Event]:
        if self._done:
            raise RuntimeError("finalized")
        batch: list[_Event] = []
        if chunk.reasoning:
            self._text("reasoning", chunk.reasoning, batch)
        if chunk.content:
            self._text("text", chunk.content, batch)
        if chunk.is_complete:
            batch += self.finalize()
        return batch

    def finalize(self) -> list[_Event]:
        if self._done:
            return []
        self._done = True
        batch: list[_Event] = []
        if self._open is not None:
            self._emit(_Event("SEGMENT_END", self._open[0], None, {"metadata": {}}), batch)
            self._open = None
        return batch

    def get_all_events(self) -> list[_Event]:
        return list(self._events)

    def get_all_invocations(self) -> list[Any]:
        return []


@dataclass
class _Call:
    call_id: str | None = None
    name: str = ""
    raw: list[str] = field(default_factory=list)


class FinalResultAccumulator:
    """A final-result accumulator written from scratch: ``add(chunk)``, then ``result()``."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._error: str | None = None

    def add(self, chunk: Any) -> None:
        self._reasoning.append(chunk.reasoning or "")
        self._text.append(chunk.content or "")
        for delta in chunk.tool_calls or ():
            call = self._by_index.get(delta.index)
            if call is None or (delta.call_id and call.call_id and delta.call_id != call.call_id):
                call = self._by_index[delta.index] = _Call()
                self._calls.append(call)
            if delta.call_id and not call.call_id:
                call.call_id = delta.call_id
            if delta.name and delta.name != call.name:
                call.name += delta.name
            if delta.arguments_delta:
                call.raw.append(delta.arguments_delta)
        if chunk.error is not None:
            self._error = f"{chunk.error.kind}: {chunk.error.message}"

    def result(self) -> dict[str, Any]:
        calls = []
        for call in self._calls:
            raw = "".join(call.raw)
            entry: dict[str, Any] = {"call_id": call.call_id, "name": call.name or None, "raw_arguments": raw}
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except ValueError as error:
                arguments, entry["error"] = None, f"invalid JSON: {error}"
            if self._error:
                entry["error"] = f"stream ended abnormally ({self._error})"
            elif not call.name:
                entry["error"] = "no tool name"
            elif arguments is not None and not isinstance(arguments, dict):
                entry["error"] = "arguments are not an object"
            if "error" not in entry:
                entry["arguments"] = arguments
            calls.append(entry)
        return {"tool_calls": calls, "text": "".join(self._text), "reasoning": "".join(self._reasoning)}


# -- wrappers around the from-scratch AltApiHandler (tests/alternatives, nothing from reference_impl) ----
# Used by tests/test_verdict_pins.py. AltApiHandler alone is conformant; each wrapper breaks one thing.


class _WrappedAltHandler:
    """A correct from-scratch handler (``AltApiHandler``) behind a hook that may rewrite each chunk."""

    def __init__(self, on_segment_event: Any = None, on_tool_invocation: Any = None) -> None:
        from tests.alternatives.api_handler import AltApiHandler

        self._inner = AltApiHandler(on_segment_event=on_segment_event, on_tool_invocation=on_tool_invocation)
        self._reset_hook()

    def _reset_hook(self) -> None:
        pass

    def _rewrite(self, chunk: Any) -> Any:
        return chunk

    def feed(self, chunk: Any) -> Any:
        return self._inner.feed(self._rewrite(chunk))

    def finalize(self) -> Any:
        return self._inner.finalize()

    def get_all_events(self) -> Any:
        return self._inner.get_all_events()

    def get_all_invocations(self) -> Any:
        return self._inner.get_all_invocations()

    def reset(self) -> None:
        self._inner.reset()
        self._reset_hook()


def _keep_deltas(chunk: Any, keep: Any) -> Any:
    deltas = list(chunk.tool_calls or ())
    kept = [delta for delta in deltas if keep(delta)]
    return chunk if len(kept) == len(deltas) else replace(chunk, tool_calls=kept or None)


class DropThirdParallelCall(_WrappedAltHandler):
    """The issue's own example: every delta of the third call (by first appearance on the wire) is
    silently dropped; the first two calls, text and reasoning come out correctly."""

    def _reset_hook(self) -> None:
        self._indices: list[Any] = []

    def _rewrite(self, chunk: Any) -> Any:
        for delta in chunk.tool_calls or ():
            if delta.index not in self._indices:
                self._indices.append(delta.index)
        if len(self._indices) < 3:
            return chunk
        third = self._indices[2]
        return _keep_deltas(chunk, lambda delta: delta.index != third)


def make_drop_third_call(**callbacks: Any) -> DropThirdParallelCall:
    return DropThirdParallelCall(**callbacks)


class LosesCallAfterInterruption(_WrappedAltHandler):
    """Drops every later delta of a call once text or reasoning arrived while it was open (a framework
    that closes the call when text comes): breaks only on text/reasoning between argument deltas."""

    def _reset_hook(self) -> None:
        self._seen: set[Any] = set()
        self._cut: set[Any] = set()

    def _rewrite(self, chunk: Any) -> Any:
        if chunk.content or chunk.reasoning:  # within a chunk, text comes before its tool deltas (R4)
            self._cut |= self._seen  # calls opened in earlier chunks were interrupted
        self._seen |= {delta.index for delta in chunk.tool_calls or ()}
        return _keep_deltas(chunk, lambda delta: delta.index not in self._cut)


class ProviderIdKept(_WrappedAltHandler):
    """AltApiHandler unchanged: the provider id is the segment id when known at START and always the
    invocation id; a valid END carries no call_id. The control for ``SegmentIdOnly``."""


class SegmentIdOnly(_WrappedAltHandler):
    """AltApiHandler (provider id as segment id when known at START, valid END without call_id) whose
    invocations get random ids: the segment id is then the only place a valid call keeps the
    provider's id, and a call STARTed before its id arrived loses it (R9)."""

    def __init__(self, on_segment_event: Any = None, on_tool_invocation: Any = None) -> None:
        self._random_ids: dict[int, Any] = {}
        forward = None
        if on_tool_invocation is not None:

            def forward(invocation: Any) -> Any:
                return on_tool_invocation(self._renamed(invocation))

        super().__init__(on_segment_event=on_segment_event, on_tool_invocation=forward)

    def _reset_hook(self) -> None:
        self._random_ids = {}

    def _renamed(self, invocation: Any) -> Any:
        # keyed by identity: the handler keeps each invocation object alive, callback and list share it
        if id(invocation) not in self._random_ids:
            self._random_ids[id(invocation)] = (invocation, replace(invocation, id="inv_" + uuid.uuid4().hex))
        return self._random_ids[id(invocation)][1]

    def get_all_invocations(self) -> Any:
        return [self._renamed(invocation) for invocation in self._inner.get_all_invocations()]


class DropsTheThirdCallAccumulator(FinalResultAccumulator):
    """The from-scratch accumulator, losing the third call of a turn (the issue's example, as a result)."""

    def result(self) -> dict[str, Any]:
        result = super().result()
        del result["tool_calls"][2:3]
        return result
