"""Correct handlers that differ from the reference: the suite must not flag any of them.

Each makes a choice the contract leaves open, so a failure here is a false alarm in the suite.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from reference_impl import ApiToolCallStreamingResponseHandler, SegmentEvent, SegmentType


class SequentialIds(ApiToolCallStreamingResponseHandler):
    """Another id scheme: plain process-wide counters instead of namespaced ids."""

    _counter = itertools.count(1)

    def _new_segment_id(self) -> str:
        return f"segment{next(self._counter)}"


class TokenBoundaryArguments(ApiToolCallStreamingResponseHandler):
    """Holds argument text back to the last JSON token boundary it has seen, then releases it.

    Arguments still stream (nothing waits for the end), only cut at token boundaries; a long
    string literal (a file's content) is released once more than a few characters wait, never
    inside an escape sequence, so the hold-back stays bounded (R14).
    """

    _BOUNDARIES = frozenset(',:{}[]"')
    _MAX_WAITING = 8

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._pending: dict[str, str] = {}

    def _emit(self, event: SegmentEvent) -> None:
        if event.segment_type is SegmentType.TOOL_CALL and event.event_type.name == "CONTENT":
            pending = self._pending.get(event.segment_id, "") + event.delta
            cut = max((i for i, ch in enumerate(pending) if ch in self._BOUNDARIES), default=-1) + 1
            if len(pending) - cut > self._MAX_WAITING:
                cut = len(pending) - _open_escape_length(pending)
            if cut:
                super()._emit(SegmentEvent.content(event.segment_id, SegmentType.TOOL_CALL, pending[:cut]))
            self._pending[event.segment_id] = pending[cut:]
            return
        if event.segment_type is SegmentType.TOOL_CALL and event.event_type.name == "END":
            rest = self._pending.pop(event.segment_id, "")
            if rest:
                super()._emit(SegmentEvent.content(event.segment_id, SegmentType.TOOL_CALL, rest))
        super()._emit(event)


class WideTokenBoundaryArguments(TokenBoundaryArguments):
    """The same design with a wider bound: up to 40 characters of a token wait before release.

    Correct only with the bound declared (``Capabilities(args_lag=40)``, ``--args-lag 40``,
    ``args_lag`` in a bridge hello): above the default of 16 the suite cannot tell it from
    buffering. Not in ``ALTERNATIVES``, which run with the default capabilities.
    """

    _MAX_WAITING = 40


def _open_escape_length(text: str) -> int:
    """How many trailing characters may still be an unfinished escape (a backslash, or a short \\u)."""
    start = text.rfind("\\", max(0, len(text) - 6))
    if start < 0:
        return 0
    rest = text[start + 1 :]
    return len(text) - start if not rest or (rest[0] == "u" and len(rest) < 5) else 0


class PlainDictEvents:
    """A wrapper whose events are plain objects with string event types and dict payloads.

    Proves duck typing: nothing of ``reference_impl.types`` reaches the suite.
    """

    class _Event:
        def __init__(self, event: SegmentEvent) -> None:
            self.event_type = event.event_type.value  # a plain string
            self.segment_id = event.segment_id
            self.segment_type = event.segment_type.value
            self._payload = json.loads(json.dumps(event.to_dict()["payload"]))

        def to_dict(self) -> dict[str, Any]:
            return {"payload": self._payload}

        payload = None  # forces the suite onto to_dict()

    def __init__(self, on_segment_event: Any = None, on_tool_invocation: Any = None) -> None:
        wrap = (lambda event: on_segment_event(self._Event(event))) if on_segment_event else None
        self._inner = ApiToolCallStreamingResponseHandler(on_segment_event=wrap, on_tool_invocation=on_tool_invocation)

    def feed(self, chunk: Any) -> list[Any]:
        return [self._Event(e) for e in self._inner.feed(chunk)]

    def finalize(self) -> list[Any]:
        return [self._Event(e) for e in self._inner.finalize()]

    def get_all_events(self) -> list[Any]:
        return [self._Event(e) for e in self._inner.get_all_events()]

    def get_all_invocations(self) -> list[Any]:
        return self._inner.get_all_invocations()

    def reset(self) -> None:
        self._inner.reset()


ALTERNATIVES = {
    "sequential_ids": SequentialIds,
    "token_boundary_arguments": TokenBoundaryArguments,
    "plain_dict_events": PlainDictEvents,
}
