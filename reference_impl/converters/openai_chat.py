"""OpenAI Chat Completions (``ChatCompletionChunk``) and every OpenAI-compatible dialect -> ``ChunkResponse``.

Input: the objects of ``client.chat.completions.create(stream=True)`` (sync or async), the
``ChunkEvent`` of the ``chat.completions.stream()`` helper (its other helper events repeat what
the chunks carry and are ignored), or the same payloads as plain dicts.

Which call a ``tool_calls[]`` entry belongs to (taxonomy A01-A07, A21, B01-B05):

* with an ``index`` (``"0"`` is read as 0): the call currently on that wire index; a *different*
  non-empty ``id`` on an occupied index starts a new call (every call on index 0 with changing
  ids, B01/A02); an id on a call that had none is adopted (id only on a later chunk, B04);
* without an ``index``: the call with that ``id`` if one is known; otherwise the current (most
  recently touched) call, unless the entry names a different tool after that call's arguments
  began, or brings an id while the current call already has another one: then it is a new call.
  A same-name call with neither index nor id is indistinguishable from a continuation (documented
  limit; no recording shows it);
* ``""``, ``null``, whitespace and the strings ``"null"``/``"None"`` are "not sent" for ids and
  names; a name equal to the whole name so far is a restatement and is not forwarded; any other
  name fragment is forwarded (fragmented names, A07), so each name is sent exactly once.

Arguments are forwarded verbatim (never re-serialised); an object-typed ``arguments`` (some
servers send a dict) is serialised once with ``json.dumps``. ``cumulative_arguments=True`` is for
servers known to resend the whole argument text so far on every chunk: each snapshot is turned
into the suffix it adds, and a snapshot that does not extend the previous one raises
``ArgumentSnapshotError`` (the server is not cumulative; guessing would corrupt the call).

Reasoning: ``delta.reasoning_content`` (DeepSeek, xAI, vLLM) or else ``delta.reasoning``
(OpenRouter, Groq). ``delta.refusal`` is forwarded as ``content`` (it is the text the user sees).
Only choice 0 is converted. ``finish_reason`` is not the end of the stream (usage chunks,
OpenRouter's repeated finish chunk and in-band errors follow it), so the terminal chunk is
emitted by ``finish()``: ``finish_reason`` as sent, ``truncated`` for ``length``,
``provider_error`` for ``content_filter``/``error``, ``incomplete`` when no finish_reason came.
A chunk with a top-level ``error`` object (possible when chunks do not come from the SDK, which
raises ``openai.APIError`` for it) ends the stream with ``provider_error``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    clean_id,
    clean_name,
    describe_error,
    get_field,
    text_or_none,
)
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["ArgumentSnapshotError", "OpenAIChatConverter"]

# Events of the ``chat.completions.stream()`` helper that restate what its ``chunk`` events carry.
_HELPER_EVENT_PREFIXES = ("content.", "refusal.", "tool_calls.", "logprobs.", "function_call.")


class ArgumentSnapshotError(ValueError):
    """``cumulative_arguments=True``, but an arguments snapshot does not extend the previous one."""


@dataclass(slots=True)
class _Call:
    index: int
    call_id: str | None = None
    name_parts: list[str] = field(default_factory=list)
    name: str | None = None
    announced: bool = False
    has_arguments: bool = False
    snapshot: str = ""  # cumulative mode: the last arguments snapshot


def _wire_index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


class OpenAIChatConverter(StreamConverter):
    """``ChatCompletionChunk`` stream -> ``ChunkResponse`` (OpenAI and OpenAI-compatible servers)."""

    api: ClassVar[str] = "openai-chat"
    _sdk_errors = ("openai", ("APIError",), ("APIConnectionError",))
    TRUNCATION_REASONS: ClassVar[frozenset[str]] = frozenset({"length"})
    ERROR_REASONS: ClassVar[frozenset[str]] = frozenset({"content_filter", "error"})

    def __init__(self, *, cumulative_arguments: bool = False) -> None:
        super().__init__()
        self.cumulative_arguments = cumulative_arguments
        self._calls: list[_Call] = []
        self._by_wire_index: dict[int, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._current: _Call | None = None
        self._legacy_call: _Call | None = None
        self._finish_reason: str | None = None

    # -- events ----------------------------------------------------------------------------------

    def _convert(self, event: Any) -> list[ChunkResponse]:
        kind = get_field(event, "type")
        if isinstance(kind, str):
            if kind == "chunk" and get_field(event, "chunk") is not None:
                return self._chunk(get_field(event, "chunk"))
            if kind.startswith(_HELPER_EVENT_PREFIXES):
                self.ignored[f"helper event {kind}"] += 1
                return []
        return self._chunk(event)

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        choices = get_field(chunk, "choices") or ()
        for choice in choices:
            choice_index = get_field(choice, "index")
            if choice_index not in (None, 0):
                self.ignored["choice other than 0"] += 1
                continue
            delta = get_field(choice, "delta")
            if delta is not None:
                self._delta(delta, pieces)
            elif get_field(choice, "message") is not None:
                # Some servers send both ``message`` (a snapshot) and ``delta``: the delta is used.
                # A message without a delta is a snapshot of what deltas already delivered.
                self.ignored["choice with message but no delta"] += 1
            reason = text_or_none(get_field(choice, "finish_reason"))
            if reason is not None:
                self._finish_reason = reason
        usage = self._usage_of(chunk)
        if usage is not None:
            self._usage = usage
        error = get_field(chunk, "error")
        if error:
            return self._terminal(
                pieces, finish_reason=self._finish_reason, error=StreamError("provider_error", describe_error(error))
            )
        return pieces.build(usage=usage)

    def _delta(self, delta: Any, pieces: ChunkAssembler) -> None:
        pieces.reasoning(
            text_or_none(get_field(delta, "reasoning_content")) or text_or_none(get_field(delta, "reasoning"))
        )
        pieces.content(text_or_none(get_field(delta, "content")))
        pieces.content(text_or_none(get_field(delta, "refusal")))
        for entry in get_field(delta, "tool_calls") or ():
            function = get_field(entry, "function")
            if function is None:
                self._unknown(f"tool_calls entry type {get_field(entry, 'type')!r}")
                continue
            call_id = clean_id(get_field(entry, "id"))
            name = clean_name(get_field(function, "name"))
            call = self._resolve(_wire_index(get_field(entry, "index")), call_id, name)
            pieces.tool(self._delta_for(call, call_id, name, get_field(function, "arguments")))
        legacy = get_field(delta, "function_call")
        if legacy is not None:
            # The deprecated ``functions`` API: one call per message, no id, no index.
            name = clean_name(get_field(legacy, "name"))
            if self._legacy_call is None:
                self._legacy_call = self._new_call()
            pieces.tool(self._delta_for(self._legacy_call, None, name, get_field(legacy, "arguments")))

    # -- call resolution -------------------------------------------------------------------------

    def _new_call(self) -> _Call:
        call = _Call(index=len(self._calls))
        self._calls.append(call)
        return call

    def _resolve(self, wire_index: int | None, call_id: str | None, name: str | None) -> _Call:
        if wire_index is not None:
            call = self._by_wire_index.get(wire_index)
            if call is None or (call_id is not None and call.call_id is not None and call_id != call.call_id):
                call = self._new_call()
                self._by_wire_index[wire_index] = call
        else:
            call = self._by_id.get(call_id) if call_id is not None else None
            if call is None:
                current = self._current
                if (
                    current is None
                    or (call_id is not None and current.call_id is not None)
                    or (name is not None and current.has_arguments and name != current.name)
                ):
                    call = self._new_call()
                else:
                    call = current
        self._current = call
        return call

    def _delta_for(self, call: _Call, call_id: str | None, name: str | None, arguments: Any) -> ToolCallDelta | None:
        new_id = None
        if call_id is not None and call.call_id is None:
            call.call_id = new_id = call_id
            self._by_id.setdefault(call_id, call)
        new_name = None
        if name is not None and name != call.name:
            call.name_parts.append(name)
            call.name = "".join(call.name_parts)
            new_name = name
        fragment = self._fragment(call, arguments)
        if fragment:
            call.has_arguments = True
        if call.announced and new_id is None and new_name is None and not fragment:
            return None
        call.announced = True
        return ToolCallDelta(call.index, new_id, new_name, fragment or None)

    def _fragment(self, call: _Call, raw: Any) -> str | None:
        if raw is None:
            return None
        # Object-typed arguments (taxonomy A11) are serialised once, never str()-ed.
        arguments: str = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        if not self.cumulative_arguments or not arguments:
            return arguments
        previous = call.snapshot
        if not arguments.startswith(previous):
            raise ArgumentSnapshotError(
                f"tool call #{call.index} ({call.name or 'unnamed'}): cumulative_arguments=True, but the snapshot "
                f"{arguments[:60]!r} does not extend the previous snapshot {previous[:60]!r}; this server sends "
                "incremental argument deltas, so use OpenAIChatConverter() without cumulative_arguments"
            )
        call.snapshot = arguments
        return arguments[len(previous) :]

    # -- usage and the end -----------------------------------------------------------------------

    def _usage_of(self, chunk: Any) -> TokenUsage | None:
        usage = get_field(chunk, "usage")
        if usage is None:
            # Older Groq responses carry usage only inside ``x_groq``.
            usage = get_field(get_field(chunk, "x_groq"), "usage")
        if usage is None:
            return None
        prompt = as_count(get_field(usage, "prompt_tokens"))
        completion = as_count(get_field(usage, "completion_tokens"))
        if prompt is None and completion is None:
            return None
        return TokenUsage(prompt or 0, completion or 0, as_count(get_field(usage, "total_tokens")))

    def _finish_reason_so_far(self) -> str | None:
        return self._finish_reason

    def _finish(self) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        reason = self._finish_reason
        if reason is None:
            return self._incomplete(pieces, "a finish_reason")
        error = None
        if reason in self.TRUNCATION_REASONS:
            error = StreamError("truncated", f"finish_reason={reason!r}: the output hit the token limit")
        elif reason in self.ERROR_REASONS:
            error = StreamError("provider_error", f"finish_reason={reason!r}")
        return self._terminal(pieces, finish_reason=reason, error=error)
