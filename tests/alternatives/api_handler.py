"""An independent provider-native tool-call handler, written from the contract (docs/checks.md R1-R15).

Choices that differ from a typical implementation, all left open by the contract:

* segment ids: the provider's call id when it is known at START (and not already used by another
  segment of this stream), otherwise a random id; text and reasoning segments get random ids;
* ``segment_type`` only on START events, and our own name for tool segments (``function_call``);
  reasoning segments are ``thinking``;
* event data only through ``to_dict()`` (no ``payload`` attribute);
* START metadata is ``{"tool_name"}`` only; a valid END carries ``{"tool_name", "arguments"}``
  and no call id (the provider id lives on the invocation); an error END carries the call id,
  since an invalid call has no invocation to carry it;
* a second, different provider id on an occupied index flags the index as a protocol error:
  the call on it ends with an error and nothing more on that index is read
  (``second_id_policy="reject_second"`` instead lets the call holding the index stand and ends
  everything from the second id on as its own error segment: FALSE_ALARMS.md, FA2);
* ``is_complete`` does not end anything: segments end in ``finalize()`` only;
* START comes once the name is known and arguments began (or a later call appeared); when
  arguments came before the name, a name fragment arriving after START still extends the name
  (START's ``tool_name`` is then a prefix, END's the whole name). ``whole_name_start=True``
  instead waits until the name can no longer grow, so START always names the whole tool;
* an abnormal end (``chunk.error``) is remembered, and at ``finalize()`` every call ends with an
  error carrying ``{"abnormal_end": kind}``; provider metadata goes to END metadata under
  ``"provider"``; ``reasoning_segment_type`` names reasoning segments (default ``thinking``);
* ``json_numbers="double"`` reads argument numbers as JavaScript's ``JSON.parse`` does: every
  number an IEEE double (``9007199254740993`` becomes ``9007199254740992.0``), a choice of the
  language the target declares (``Capabilities(json_numbers="double")``);
* ``args_hold_back=N`` holds argument text back to the last JSON token boundary, releasing it
  all once more than ``N`` characters wait (a bounded hold-back the target declares with
  ``Capabilities(args_lag=N)``); ``args_hold_back=None`` holds every argument character until
  END (buffering: no bound to declare).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.alternatives.events import (
    ContentEvent,
    EndEvent,
    Event,
    EventSink,
    HandlerClosedError,
    Invocation,
    StartEvent,
    new_id,
)

__all__ = [
    "HELD_ARGUMENT_CHARS",
    "AltApiHandler",
    "make_buffered_arguments_handler",
    "make_double_numbers_handler",
    "make_handler",
    "make_held_arguments_handler",
    "parse_arguments",
]

logger = logging.getLogger(__name__)

TOOL = "function_call"
# Where a JSON token may end: argument text held back (args_hold_back) is released up to the last one.
_TOKEN_BOUNDARIES = frozenset(',:{}[]"')
TEXT = "text"
THINKING = "thinking"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_arguments(raw: str, *, json_numbers: str = "exact") -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) for one complete JSON object (empty text is {}), else (None, why).

    ``json_numbers="double"``: every number is read as a float, as ``JSON.parse`` reads it.
    """
    if not raw.strip():
        return {}, None
    try:
        parse_int = float if json_numbers == "double" else int
        value = json.loads(raw, parse_constant=_reject_constant, parse_int=parse_int)
    except json.JSONDecodeError as error:
        return None, f"arguments are not valid JSON: {error.msg} at offset {error.pos}"
    except ValueError as error:
        return None, f"arguments are not valid JSON: {error}"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


@dataclass
class _Call:
    key: object
    provider_id: str | None = None
    name: str = ""
    raw: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    segment_id: str | None = None
    name_final: bool = False
    args_begun: bool = False
    conflict: str | None = None
    provider: dict[str, Any] = field(default_factory=dict)
    pending: str = ""  # argument text received after START but not yet emitted (args_hold_back)


class AltApiHandler:
    """feed(chunk) -> events; finalize(); get_all_events(); get_all_invocations(); reset()."""

    def __init__(
        self,
        on_segment_event: Callable[[Event], object] | None = None,
        on_tool_invocation: Callable[[Invocation], object] | None = None,
        *,
        whole_name_start: bool = False,
        second_id_policy: str = "flag_index",
        reasoning_segment_type: str = THINKING,
        json_numbers: str = "exact",
        args_hold_back: int | None = 0,
    ) -> None:
        if second_id_policy not in ("flag_index", "reject_second"):
            raise ValueError(f"unknown second_id_policy {second_id_policy!r}")
        self._json_numbers = json_numbers
        self._args_hold_back = args_hold_back
        self._whole_name_start = whole_name_start
        self._second_id_policy = second_id_policy
        self._reasoning_type = reasoning_segment_type
        self._sink = EventSink(on_segment_event, on_tool_invocation)
        self._reset_state()

    def _reset_state(self) -> None:
        self._sink.clear()
        self._calls: dict[object, _Call] = {}
        self._order: list[_Call] = []
        self._text_id: str | None = None
        self._thinking_id: str | None = None
        self._used_ids: set[str] = set()
        self._abnormal: tuple[str, str] | None = None
        self._closed = False

    # ----------------------------------------------------------------- public API
    def feed(self, chunk: Any) -> list[Event]:
        if self._closed:
            raise HandlerClosedError("this handler was finalized; call reset() to reuse it")
        try:
            self._feed(chunk)
        except Exception:  # R15: malformed input never escapes feed()
            logger.exception("malformed chunk ignored: %r", chunk)
        return self._sink.take()

    def finalize(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        try:
            self._finish()
        except Exception:
            logger.exception("error while finalizing")
        return self._sink.take()

    def get_all_events(self) -> list[Event]:
        return list(self._sink.events)

    def get_all_invocations(self) -> list[Invocation]:
        return list(self._sink.invocations)

    def reset(self) -> None:
        self._reset_state()

    # ----------------------------------------------------------------- text
    def _end_text(self) -> None:
        if self._text_id is not None:
            self._sink.emit(EndEvent(self._text_id))
            self._text_id = None

    def _end_thinking(self) -> None:
        if self._thinking_id is not None:
            self._sink.emit(EndEvent(self._thinking_id))
            self._thinking_id = None

    def _text(self, text: str) -> None:
        self._end_thinking()
        if self._text_id is None:
            self._text_id = new_id()
            self._sink.emit(StartEvent(self._text_id, TEXT))
        self._sink.emit(ContentEvent(self._text_id, text))

    def _thinking(self, text: str) -> None:
        self._end_text()
        if self._thinking_id is None:
            self._thinking_id = new_id()
            self._sink.emit(StartEvent(self._thinking_id, self._reasoning_type))
        self._sink.emit(ContentEvent(self._thinking_id, text))

    # ----------------------------------------------------------------- chunks
    def _feed(self, chunk: Any) -> None:
        reasoning = getattr(chunk, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            self._thinking(reasoning)
        content = getattr(chunk, "content", None)
        if isinstance(content, str) and content:
            self._text(content)
        for delta in getattr(chunk, "tool_calls", None) or ():
            self._tool_delta(delta)
        error = getattr(chunk, "error", None)
        if error is not None and self._abnormal is None:
            self._abnormal = (str(getattr(error, "kind", "provider_error")), str(getattr(error, "message", "")))

    def _new_call(self, key: object) -> _Call:
        # A later call appeared: earlier names can no longer grow (a nameless call stays nameless
        # and starts now, without a tool name, so that starts keep wire order).
        for earlier in self._order:
            earlier.name_final = True
        call = _Call(key)
        self._calls[key] = call
        self._order.append(call)
        return call

    def _tool_delta(self, delta: Any) -> None:
        self._end_text()
        self._end_thinking()
        key = getattr(delta, "index", None)
        try:
            hash(key)
        except TypeError:
            key = repr(key)
        call = self._calls.get(key) or self._new_call(key)
        if call.conflict is not None and self._second_id_policy == "flag_index":
            return
        call_id = getattr(delta, "call_id", None)
        if isinstance(call_id, str) and call_id:
            if call.provider_id is None:
                call.provider_id = call_id
            elif call_id != call.provider_id:
                if self._second_id_policy == "flag_index":
                    call.conflict = (
                        f"protocol error: index {key!r} carried call id {call.provider_id!r}, then {call_id!r}; "
                        "nothing on this index is run"
                    )
                    return
                # reject_second: the call that holds the index stands; the newcomer is an error.
                first = call.provider_id
                call = self._new_call(key)
                call.provider_id = call_id
                call.conflict = (
                    f"protocol error: call id {call_id!r} arrived on index {key!r}, which call {first!r} "
                    "occupies; this call is not run"
                )
        name = getattr(delta, "name", None)
        if isinstance(name, str) and name and name != call.name:
            if not call.name_final:
                call.name += name
            else:
                logger.warning("name %r for started call %r ignored", name, call.name)
        metadata = getattr(delta, "provider_metadata", None)
        if metadata:
            try:
                call.provider.update(dict(metadata))
            except (TypeError, ValueError):
                logger.warning("unreadable provider_metadata %r ignored", metadata)
        fragment = getattr(delta, "arguments_delta", None)
        if isinstance(fragment, str) and fragment:
            call.args_begun = True
            if call.name:  # arguments after (part of) the name: the name can no longer grow
                call.name_final = True
            call.raw.append(fragment)
            if call.segment_id is None:
                call.held.append(fragment)
            else:
                self._arguments(call, fragment)
        self._start_ready(finishing=False)

    # ----------------------------------------------------------------- tool segments
    def _start(self, call: _Call) -> None:
        segment_id = call.provider_id
        if segment_id is None or segment_id in self._used_ids:
            segment_id = new_id()
        self._used_ids.add(segment_id)
        call.segment_id = segment_id
        self._sink.emit(StartEvent(segment_id, TOOL, {"tool_name": call.name or None}))
        for fragment in call.held:
            self._arguments(call, fragment)
        call.held = []

    def _arguments(self, call: _Call, fragment: str) -> None:
        """CONTENT for an argument fragment of a started call, held back as ``args_hold_back`` says."""
        assert call.segment_id is not None
        if self._args_hold_back == 0:
            self._sink.emit(ContentEvent(call.segment_id, fragment))
            return
        call.pending += fragment
        if self._args_hold_back is None:
            return  # everything waits for END
        cut = max((i for i, ch in enumerate(call.pending) if ch in _TOKEN_BOUNDARIES), default=-1) + 1
        if len(call.pending) - cut > self._args_hold_back:
            cut = len(call.pending)  # a long token (a file's content): release it rather than wait more
        if cut:
            self._sink.emit(ContentEvent(call.segment_id, call.pending[:cut]))
            call.pending = call.pending[cut:]

    def _start_ready(self, finishing: bool) -> None:
        """Start calls in wire order, each once its name can no longer grow (R6, R10)."""
        for call in self._order:
            if call.segment_id is not None:
                continue
            if self._whole_name_start:
                ready = finishing or call.name_final
            else:
                ready = finishing or call.name_final or bool(call.name and call.args_begun)
            if not ready:
                return  # later calls wait: starts stay in wire order
            self._start(call)

    def _parse(self, raw: str) -> tuple[dict[str, Any] | None, str | None]:
        return parse_arguments(raw, json_numbers=self._json_numbers)

    def _end_call(self, call: _Call) -> None:
        assert call.segment_id is not None
        if call.pending:
            self._sink.emit(ContentEvent(call.segment_id, call.pending))
            call.pending = ""
        raw = "".join(call.raw)
        meta: dict[str, Any] = {"tool_name": call.name or None}
        if call.provider:
            meta["provider"] = dict(call.provider)
        error: str | None
        arguments: dict[str, Any] | None = None
        if call.conflict is not None:
            error = call.conflict
        elif not call.name:
            error = "the provider never sent this call's tool name"
        elif self._abnormal is not None:
            kind, message = self._abnormal
            error = f"the stream ended abnormally ({kind}: {message}); the call is not run"
            meta["abnormal_end"] = kind
        else:
            arguments, error = self._parse(raw)
        if error is not None or arguments is None:
            meta["error"] = error
            meta["raw_arguments"] = raw
            if call.provider_id is not None:
                meta["call_id"] = call.provider_id
            self._sink.emit(EndEvent(call.segment_id, meta))
            return
        meta["arguments"] = arguments
        self._sink.emit(EndEvent(call.segment_id, meta))
        self._sink.invoke(Invocation(call.provider_id or call.segment_id, call.name, arguments))

    def _finish(self) -> None:
        self._end_thinking()
        self._end_text()
        self._start_ready(finishing=True)
        for call in self._order:
            self._end_call(call)


def make_handler(**callbacks: Any) -> AltApiHandler:
    return AltApiHandler(**callbacks)


def make_whole_name_handler(**callbacks: Any) -> AltApiHandler:
    """The variant whose START always carries the whole name (see FALSE_ALARMS.md, FA1)."""
    return AltApiHandler(**callbacks, whole_name_start=True)


def make_double_numbers_handler(**callbacks: Any) -> AltApiHandler:
    """Reads argument numbers as JavaScript's JSON.parse does (IEEE doubles); declares json_numbers=double."""
    return AltApiHandler(**callbacks, json_numbers="double")


# The bound the token-boundary variant keeps: more than the suite's default of 16 characters.
HELD_ARGUMENT_CHARS = 40


def make_held_arguments_handler(**callbacks: Any) -> AltApiHandler:
    """Holds argument text back to JSON token boundaries, at most 40 characters; declares args_lag=40."""
    return AltApiHandler(**callbacks, args_hold_back=HELD_ARGUMENT_CHARS)


def make_buffered_arguments_handler(**callbacks: Any) -> AltApiHandler:
    """Holds every argument character until END: buffering, which no declared bound excuses."""
    return AltApiHandler(**callbacks, args_hold_back=None)
