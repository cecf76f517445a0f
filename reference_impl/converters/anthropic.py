"""Anthropic Messages raw stream events -> ``ChunkResponse``.

Input: the events of ``client.messages.create(stream=True)`` or of the ``client.messages.stream()``
helper (sync or async), or plain dicts. The helper's own events (``text``, ``thinking``,
``signature``, ``input_json``, ``citation``) restate the raw ``content_block_delta`` it also
yields and are ignored; its parsed ``content_block_stop`` / ``message_stop`` are handled as the
raw ones.

Tool calls are ``tool_use`` content blocks. ``content_block_start`` registers the block index in
the ``ToolCallTracker`` (block indexes count text and thinking blocks too, so the first tool is
often block 1: taxonomy A03) and emits the call id (``toolu_...``) and name; each
``input_json_delta.partial_json`` is an argument fragment, forwarded verbatim (the first one is
often ``""`` and produces nothing); ``content_block_stop`` completes the call. A ``tool_use``
block whose ``input`` is already filled at the start and gets no deltas (possible from proxies)
emits that input once, serialised, at its stop, as the SDK's own accumulator would keep it.

Provider-executed tools are not client calls (A19): ``server_tool_use`` / ``mcp_tool_use`` blocks
go to ``server_tool_calls`` (with their streamed input) and ``*_tool_result`` blocks to
``server_tool_results``; their deltas never reach the handler.

Text: ``text_delta``; reasoning: ``thinking_delta`` (``redacted_thinking`` has no text). Usage is
the last cumulative snapshot (``message_start`` then each ``message_delta``; ``output_tokens`` in
``message_delta`` is cumulative, never summed: F05); prompt tokens include cache reads and writes.
``message_stop`` is the terminal event: finish_reason is ``message_delta.stop_reason``;
``max_tokens`` and ``model_context_window_exceeded`` are ``truncated``, ``refusal`` is
``provider_error``. If the stream ends after ``message_delta`` but before ``message_stop`` the
message is still complete (its stop reason is known); without a stop reason it is ``incomplete``.
``event: error`` makes the SDK raise ``APIStatusError`` (see ``fail()``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    describe_error,
    get_field,
    text_or_none,
)
from reference_impl.tracker import ToolCallTracker, TrackedCall, TrackerError
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

_MESSAGE_EVENTS = frozenset({"message_start", "message_delta", "message_stop", "error"})

__all__ = ["AnthropicConverter"]

_SERVER_CALL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
_HELPER_EVENTS = frozenset({"text", "thinking", "signature", "input_json", "citation"})
_QUIET_DELTAS = frozenset({"signature_delta", "citations_delta"})
_QUIET_BLOCKS = frozenset({"redacted_thinking"})


@dataclass(slots=True)
class _ServerBlock:
    record: dict[str, Any]
    input_parts: list[str] = field(default_factory=list)


class AnthropicConverter(StreamConverter):
    """``RawMessageStreamEvent`` stream (or the ``messages.stream()`` helper's events) -> ``ChunkResponse``."""

    api: ClassVar[str] = "anthropic"
    _sdk_errors = ("anthropic", ("APIError",), ("APIConnectionError",))
    TRUNCATION_REASONS: ClassVar[frozenset[str]] = frozenset({"max_tokens", "model_context_window_exceeded"})
    ERROR_REASONS: ClassVar[frozenset[str]] = frozenset({"refusal"})

    def __init__(self) -> None:
        super().__init__()
        self.tracker = ToolCallTracker()
        self._server_blocks: dict[int, _ServerBlock] = {}
        self._start_inputs: dict[int, Any] = {}
        self._streamed_input: set[int] = set()
        self._usage_fields: dict[str, int] = {}
        self._stop_reason: str | None = None

    # -- dispatch --------------------------------------------------------------------------------

    def _convert(self, event: Any) -> list[ChunkResponse]:
        kind = get_field(event, "type")
        pieces = ChunkAssembler()
        if kind == "content_block_delta":
            self._block_delta(get_field(event, "index"), get_field(event, "delta"), pieces)
        elif kind == "content_block_start":
            self._block_start(get_field(event, "index"), get_field(event, "content_block"), pieces)
        elif kind == "content_block_stop":
            self._block_stop(get_field(event, "index"), pieces)
        elif kind in _MESSAGE_EVENTS:
            return self._message_event(kind, event, pieces)
        elif kind == "ping":
            pass
        elif kind in _HELPER_EVENTS:
            self.ignored[f"helper event {kind}"] += 1
        else:
            self._unknown(f"event {kind!r}")
        return pieces.build()

    def _message_event(self, kind: str, event: Any, pieces: ChunkAssembler) -> list[ChunkResponse]:
        """``message_start`` / ``message_delta`` (usage, stop reason), ``message_stop`` and ``error``."""
        if kind == "message_start":
            return pieces.build(usage=self._update_usage(get_field(get_field(event, "message"), "usage")))
        if kind == "message_delta":
            reason = text_or_none(get_field(get_field(event, "delta"), "stop_reason"))
            if reason is not None:
                self._stop_reason = reason
            return pieces.build(usage=self._update_usage(get_field(event, "usage")))
        if kind == "message_stop":
            return self._end(pieces)
        # "error": only reachable with dicts (the SDK raises APIStatusError for ``event: error``).
        error = StreamError("provider_error", describe_error(get_field(event, "error") or event))
        return self._terminal(pieces, finish_reason=self._stop_reason, error=error)

    # -- blocks ----------------------------------------------------------------------------------

    def _block_start(self, index: Any, block: Any, pieces: ChunkAssembler) -> None:
        block_type = get_field(block, "type")
        if not isinstance(index, int) or isinstance(index, bool):
            self._problem(f"content_block_start without an integer index ({index!r}); block skipped")
            return
        if block_type == "tool_use":
            try:
                call = self.tracker.start_call(
                    index, call_id=text_or_none(get_field(block, "id")), name=text_or_none(get_field(block, "name"))
                )
            except TrackerError as error:
                self._problem(f"tool_use block {index} skipped: {error}")
                return
            start_input = get_field(block, "input")
            if start_input:
                self._start_inputs[index] = start_input
            pieces.tool(ToolCallDelta(call.index, call.call_id, call.name))
        elif block_type == "text":
            pieces.content(text_or_none(get_field(block, "text")))
        elif block_type == "thinking":
            pieces.reasoning(text_or_none(get_field(block, "thinking")))
        elif isinstance(block_type, str) and (block_type in _SERVER_CALL_BLOCKS or block_type.endswith("_tool_result")):
            record = {
                "index": index,
                "type": block_type,
                "id": get_field(block, "id") or get_field(block, "tool_use_id"),
                "name": get_field(block, "name"),
            }
            if block_type in _SERVER_CALL_BLOCKS:
                self.server_tool_calls.append(record)
            else:
                self.server_tool_results.append(record)
            self._server_blocks[index] = _ServerBlock(record)
        elif block_type in _QUIET_BLOCKS:
            pass
        else:
            self._unknown(f"content block {block_type!r}")

    def _block_delta(self, index: Any, delta: Any, pieces: ChunkAssembler) -> None:
        delta_type = get_field(delta, "type")
        if delta_type == "input_json_delta":
            fragment = get_field(delta, "partial_json")
            self._input_json(index, fragment if isinstance(fragment, str) else "", pieces)
        elif delta_type == "text_delta":
            pieces.content(text_or_none(get_field(delta, "text")))
        elif delta_type == "thinking_delta":
            pieces.reasoning(text_or_none(get_field(delta, "thinking")))
        elif delta_type in _QUIET_DELTAS:
            pass
        else:
            self._unknown(f"delta {delta_type!r}")

    def _input_json(self, index: Any, fragment: str, pieces: ChunkAssembler) -> None:
        server = self._server_blocks.get(index) if isinstance(index, int) else None
        if server is not None:
            if fragment:
                server.input_parts.append(fragment)
            self.ignored["server tool input_json_delta"] += 1
            return
        call = self._open_call(index)
        if call is None:
            return
        try:
            self.tracker.append_arguments(index, fragment)
        except TrackerError as error:
            self._problem(f"input_json_delta dropped: {error}")
            return
        if fragment:
            self._streamed_input.add(index)
            pieces.tool(ToolCallDelta(call.index, arguments_delta=fragment))

    def _open_call(self, index: Any) -> TrackedCall | None:
        if not isinstance(index, int) or isinstance(index, bool):
            self._problem(f"input_json_delta without an integer index ({index!r}); dropped")
            return None
        call = self.tracker.lookup(index)
        if call is None:
            self._problem(f"input_json_delta for block {index} before its content_block_start; started a nameless call")
            call = self.tracker.start_call(index)
        return call

    def _block_stop(self, index: Any, pieces: ChunkAssembler) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            return
        server = self._server_blocks.pop(index, None)
        if server is not None:
            if server.input_parts:
                server.record["input"] = "".join(server.input_parts)
            return
        call = self.tracker.lookup(index)
        if call is None or call.completed:
            return
        self.tracker.complete_call(index)
        start_input = self._start_inputs.pop(index, None)
        if start_input and index not in self._streamed_input:
            pieces.tool(ToolCallDelta(call.index, arguments_delta=json.dumps(start_input, ensure_ascii=False)))

    # -- usage and the end -----------------------------------------------------------------------

    def _update_usage(self, usage: Any) -> TokenUsage | None:
        if usage is None:
            return None
        changed = False
        for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            value = as_count(get_field(usage, name))
            if value is not None:
                self._usage_fields[name] = value
                changed = True
        if not changed:
            return None
        fields = self._usage_fields
        prompt = (
            fields.get("input_tokens", 0)
            + fields.get("cache_creation_input_tokens", 0)
            + fields.get("cache_read_input_tokens", 0)
        )
        self._usage = TokenUsage(prompt, fields.get("output_tokens", 0))
        return self._usage

    def _end(self, pieces: ChunkAssembler) -> list[ChunkResponse]:
        reason = self._stop_reason
        error = None
        if reason in self.TRUNCATION_REASONS:
            error = StreamError("truncated", f"stop_reason={reason!r}: the output hit the token limit")
        elif reason in self.ERROR_REASONS:
            error = StreamError("provider_error", f"stop_reason={reason!r}")
        return self._terminal(pieces, finish_reason=reason, error=error)

    def _finish_reason_so_far(self) -> str | None:
        return self._stop_reason

    def _finish(self) -> list[ChunkResponse]:
        if self._stop_reason is not None:
            return self._end(ChunkAssembler())
        return self._incomplete(ChunkAssembler(), "message_delta.stop_reason or message_stop")
