"""An independent OpenAI Chat Completions stream converter (OpenAI and OpenAI-compatible servers).

Written from the converter contract (``reference_impl/converters/__init__.py`` docstring) with
its own chunk types: ``convert(event)`` takes a ``ChatCompletionChunk`` (or a plain dict with the
wire's field names) and returns our ``Chunk`` objects; ``finish()`` and ``fail(exc)`` end the
stream. Choices the contract leaves open:

* one output chunk per SDK event that carried something (role-only and empty events give none);
* usage is reported once, on the terminal chunk (the last snapshot wins, fields a snapshot
  leaves out are kept), not on the chunk of the event that carried it;
* calls are identified by (wire index, id): a new non-empty id on an index whose call already has
  a different id starts a new call; a delta without an index continues the latest call unless it
  brings a new id; ids are matched byte for byte;
* ``message`` is read only when a choice has no ``delta``;
* a restated name (equal to the name so far) is dropped, other fragments are forwarded;
  object arguments are serialised once; ``cumulative_arguments=True`` turns snapshots into
  deltas (a snapshot that does not extend the previous one is forwarded whole and recorded in
  ``problems``);
* ``finish_reason`` ``length`` is ``truncated``, ``content_filter`` is ``provider_error``, no
  finish reason at all is ``incomplete``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallDelta", "Chunk", "OpenAIChatStreamConverter", "StreamErr", "Usage", "make_converter"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int | None = None


@dataclass(frozen=True)
class StreamErr:
    kind: str  # truncated / provider_error / incomplete
    message: str


@dataclass(frozen=True)
class CallDelta:
    index: int
    call_id: str | None = None
    name: str | None = None
    arguments_delta: str | None = None
    provider_metadata: Mapping[str, Any] | None = None


@dataclass
class Chunk:
    content: str = ""
    reasoning: str | None = None
    tool_calls: list[CallDelta] | None = None
    is_complete: bool = False
    finish_reason: str | None = None
    error: StreamErr | None = None
    usage: Usage | None = None


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Call:
    number: int
    wire_index: int | None
    call_id: str | None = None
    name: str = ""
    arguments: str = ""  # what was forwarded (or, for cumulative servers, the last snapshot)


@dataclass
class OpenAIChatStreamConverter:
    cumulative_arguments: bool = False
    problems: list[str] = field(default_factory=list)
    unknown_events: dict[str, int] = field(default_factory=dict)
    _calls: list[_Call] = field(default_factory=list)
    _by_index: dict[int, _Call] = field(default_factory=dict)
    _finish_reason: str | None = None
    _usage: Usage | None = None
    _done: bool = False

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        import openai

        return (openai.APIError,)

    # ------------------------------------------------------------------ events
    def convert(self, event: Any) -> list[Chunk]:
        if self._done:
            return []
        self._read_usage(_get(event, "usage"))
        choices = _get(event, "choices") or []
        chunk = Chunk()
        deltas: list[CallDelta] = []
        for choice in choices:
            if (_get(choice, "index") or 0) != 0:
                self.unknown_events["choice_index_not_0"] = self.unknown_events.get("choice_index_not_0", 0) + 1
                continue
            delta = _get(choice, "delta")
            if delta is None:
                delta = _get(choice, "message")
            if delta is not None:
                reasoning = _get(delta, "reasoning_content") or _get(delta, "reasoning")
                if isinstance(reasoning, str) and reasoning:
                    chunk.reasoning = (chunk.reasoning or "") + reasoning
                content = _get(delta, "content")
                if isinstance(content, str) and content:
                    chunk.content += content
                for entry in _get(delta, "tool_calls") or []:
                    out = self._tool_entry(entry)
                    if out is not None:
                        deltas.append(out)
            finish = _get(choice, "finish_reason")
            if isinstance(finish, str) and finish:
                self._finish_reason = finish
        if deltas:
            chunk.tool_calls = deltas
        if chunk.content or chunk.reasoning or chunk.tool_calls:
            return [chunk]
        return []

    def _call_for(self, wire_index: int | None, call_id: str | None) -> _Call:
        latest = self._calls[-1] if self._calls else None
        current = self._by_index.get(wire_index) if wire_index is not None else latest
        if current is not None and (not call_id or current.call_id in (None, call_id)):
            return current
        call = _Call(len(self._calls), wire_index)
        self._calls.append(call)
        if wire_index is not None:
            self._by_index[wire_index] = call
        return call

    def _tool_entry(self, entry: Any) -> CallDelta | None:
        raw_id = _get(entry, "id")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        call = self._call_for(_int(_get(entry, "index")), call_id)
        new_id: str | None = None
        if call_id and call.call_id is None:
            call.call_id = new_id = call_id
        function = _get(entry, "function")
        raw_name = _get(function, "name")
        name: str | None = None
        if isinstance(raw_name, str) and raw_name and raw_name != call.name:
            call.name += raw_name
            name = raw_name
        text = self._argument_text(call, _get(function, "arguments"))
        if new_id is None and name is None and not text:
            return None
        return CallDelta(call.number, new_id, name, text or None)

    def _argument_text(self, call: _Call, value: Any) -> str:
        if value is None or value == "":
            return ""
        if not isinstance(value, str):
            text = json.dumps(value, ensure_ascii=False)
            call.arguments += text
            return text
        if not self.cumulative_arguments:
            call.arguments += value
            return value
        previous = call.arguments
        call.arguments = value
        if value.startswith(previous):
            return value[len(previous) :]
        self.problems.append(f"call {call.number}: argument snapshot does not extend the previous one")
        return value

    def _read_usage(self, usage: Any) -> None:
        if usage is None:
            return
        old = self._usage or Usage()
        prompt = _int(_get(usage, "prompt_tokens"))
        completion = _int(_get(usage, "completion_tokens"))
        total = _int(_get(usage, "total_tokens"))
        self._usage = Usage(
            prompt if prompt is not None else old.prompt_tokens,
            completion if completion is not None else old.completion_tokens,
            total if total is not None else old.total_tokens,
        )

    # ------------------------------------------------------------------ end of stream
    def finish(self) -> list[Chunk]:
        if self._done:
            return []
        reason = self._finish_reason
        error: StreamErr | None = None
        if reason is None:
            error = StreamErr("incomplete", "the stream ended without a finish_reason")
        elif reason == "length":
            error = StreamErr("truncated", "finish_reason=length")
        elif reason == "content_filter":
            error = StreamErr("provider_error", "finish_reason=content_filter")
        return [self._terminal(error)]

    def fail(self, exc: BaseException) -> list[Chunk]:
        if self._done:
            return []
        import openai

        kind = "incomplete" if isinstance(exc, openai.APIConnectionError) else "provider_error"
        return [self._terminal(StreamErr(kind, f"{type(exc).__name__}: {exc}"))]

    def _terminal(self, error: StreamErr | None) -> Chunk:
        self._done = True
        return Chunk(is_complete=True, finish_reason=self._finish_reason, error=error, usage=self._usage)


def make_converter(api: str = "openai-chat", **options: Any) -> OpenAIChatStreamConverter:
    if api != "openai-chat":
        raise ValueError(f"this converter reads openai-chat streams only, not {api!r}")
    unknown = set(options) - {"cumulative_arguments"}
    if unknown:
        raise TypeError(f"unknown converter options {sorted(unknown)}")
    return OpenAIChatStreamConverter(cumulative_arguments=bool(options.get("cumulative_arguments", False)))
