"""Amazon Bedrock streams -> ``ChunkResponse``: ConverseStream, and InvokeModelWithResponseStream for Anthropic models.

Both arrive as a binary AWS event stream (``application/vnd.amazon.eventstream``) that botocore
decodes; boto3 yields each event as a dict keyed by its event type, e.g.
``{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}}``. Those dicts (from
``client.converse_stream(...)["stream"]`` / ``client.invoke_model_with_response_stream(...)["body"]``)
are the input; the same shape written as JSON lines works too.

``bedrock-converse`` (``BedrockConverseConverter``), in wire order:

* ``messageStart`` (``role``); then content blocks by ``contentBlockIndex``, which counts text,
  reasoning and tool blocks alike (mapped to dense indexes through ``ToolCallTracker``).
  Text and reasoning blocks get no ``contentBlockStart``: their ``contentBlockDelta``
  (``delta.text`` -> ``content``, ``delta.reasoningContent.text`` -> ``reasoning``; its
  ``signature`` / ``redactedContent`` carry no text) just start arriving.
* A tool block opens with ``contentBlockStart.start.toolUse {toolUseId, name}`` (the call id and
  name, sent once); ``contentBlockDelta.delta.toolUse.input`` are argument fragments, forwarded
  verbatim (the first is often ``""`` and produces nothing; Nova sends the input whole in one);
  ``contentBlockStop`` completes it.
* Server tools (``start.toolUse.type == "server_tool_use"``, e.g. Nova's code interpreter) and
  their results (``start.toolResult`` blocks, ``delta.toolResult``) run at the provider: they go
  to ``server_tool_calls`` / ``server_tool_results`` and never reach the handler.
* ``messageStop.stopReason``: ``end_turn``, ``tool_use``, ``stop_sequence`` are normal;
  ``max_tokens`` and ``model_context_window_exceeded`` are ``truncated``; ``guardrail_intervened``,
  ``content_filtered``, ``malformed_model_output`` and ``malformed_tool_use`` are ``provider_error``.
* ``metadata.usage`` (``inputTokens`` + ``cacheReadInputTokens`` + ``cacheWriteInputTokens``
  prompt tokens, ``outputTokens``) comes *after* ``messageStop`` on the real service (before it in
  some hand-written fixtures). So the terminal chunk is emitted when both have arrived, or by
  ``finish()`` once the stream ends after ``messageStop`` without ``metadata``; a stream without
  ``messageStop`` is ``incomplete``.

Every payload on the wire carries a random-length padding field ``p``; botocore drops it (and
every other member its service model does not know), so it is never seen here. An unknown event
type is dropped by botocore; an unknown member of a union (``start``, ``delta``) arrives as
``{"SDK_UNKNOWN_MEMBER": {"name": ...}}`` and is counted in ``unknown_events``, as are unknown
event keys in dicts.

In-band errors (``:message-type`` ``exception`` frames: ``modelStreamErrorException``,
``throttlingException``...) make botocore raise ``EventStreamError`` (see ``fail()``); as dict
keys they are a ``provider_error``.

``bedrock-invoke`` (``BedrockInvokeConverter``): every ``chunk`` event's ``bytes`` is one Anthropic
Messages stream event as JSON (botocore has already base64-decoded it); the decoded events go
through ``AnthropicConverter``'s own logic, unchanged (Bedrock adds an
``amazon-bedrock-invocationMetrics`` member to ``message_stop``, which is not needed). Only
Anthropic models are covered: other model families put other JSON in ``chunk``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reference_impl.converters._library_errors import resolve_errors
from reference_impl.converters.anthropic import AnthropicConverter
from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    clean_id,
    clean_name,
    describe_error,
    get_field,
    raw_string,
)
from reference_impl.tracker import ToolCallTracker, TrackedCall, TrackerError
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["BedrockConverseConverter", "BedrockInvokeConverter"]

# The exception events of the ConverseStream and ResponseStream event-stream shapes.
EXCEPTION_EVENTS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
        "modelTimeoutException",
    }
)

# botocore raises EventStreamError (a ClientError) for exception and error frames,
# ResponseParserError for an event its parser rejects (e.g. a union with two members set) and
# eventstream.ParserError for a corrupt frame (checksum, lengths). A connection that breaks
# mid-stream surfaces as urllib3's errors, which botocore's EventStream does not wrap, or as
# botocore's HTTPClientError family (ReadTimeoutError, ResponseStreamingError...).
_API_ERRORS = (
    ("botocore.exceptions", "ClientError"),
    ("botocore.exceptions", "HTTPClientError"),
    ("botocore.parsers", "ResponseParserError"),
    ("botocore.eventstream", "ParserError"),
    ("urllib3.exceptions", "HTTPError"),
)
_CONNECTION_ERRORS = (("botocore.exceptions", "HTTPClientError"), ("urllib3.exceptions", "HTTPError"))

_QUIET_STARTS = frozenset({"image"})
_QUIET_DELTAS = frozenset({"citation", "image"})
_QUIET_REASONING = frozenset({"signature", "redactedContent"})
_UNKNOWN_MEMBER = "SDK_UNKNOWN_MEMBER"


def _int_index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _members(value: Any) -> list[tuple[str, Any]]:
    """The members of a union (``start``, ``delta``) or of an event dict, in order."""
    if isinstance(value, Mapping):
        return [(str(key), member) for key, member in value.items()]
    return []


@dataclass(slots=True)
class _ServerBlock:
    record: dict[str, Any]
    input_parts: list[str] = field(default_factory=list)


class BedrockConverseConverter(StreamConverter):
    """boto3 ``converse_stream(...)["stream"]`` events -> ``ChunkResponse``."""

    api: ClassVar[str] = "bedrock-converse"
    NORMAL_REASONS: ClassVar[frozenset[str]] = frozenset({"end_turn", "tool_use", "stop_sequence"})
    TRUNCATION_REASONS: ClassVar[frozenset[str]] = frozenset({"max_tokens", "model_context_window_exceeded"})

    def __init__(self) -> None:
        super().__init__()
        self.tracker = ToolCallTracker()
        self._server_blocks: dict[int, _ServerBlock] = {}
        self._stop_reason: str | None = None
        self._stopped = False
        self._metadata_seen = False

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        """botocore's stream errors and urllib3's (which botocore's event stream lets through)."""
        return resolve_errors(_API_ERRORS)

    @property
    def connection_errors(self) -> tuple[type[BaseException], ...]:
        """The subset meaning the connection broke (-> ``incomplete``)."""
        return resolve_errors(_CONNECTION_ERRORS)

    def _convert(self, event: Any) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        members = _members(event)
        if not members:
            self._unknown(f"event {type(event).__name__}")
        for kind, body in members:
            if kind == "contentBlockDelta":
                self._delta(_int_index(get_field(body, "contentBlockIndex")), get_field(body, "delta"), pieces)
            elif kind == "contentBlockStart":
                self._start(_int_index(get_field(body, "contentBlockIndex")), get_field(body, "start"), pieces)
            elif kind == "contentBlockStop":
                self._stop(_int_index(get_field(body, "contentBlockIndex")))
            elif kind in ("messageStop", "metadata") or kind in EXCEPTION_EVENTS:
                ended = self._message_event(kind, body, pieces)
                if ended is not None:
                    return ended
            elif kind != "messageStart":
                self._unknown(f"event {kind!r}")
        return pieces.build()

    def _message_event(self, kind: str, body: Any, pieces: ChunkAssembler) -> list[ChunkResponse] | None:
        """``messageStop``, ``metadata`` (either may come last) and exception events; chunks when one ends the turn."""
        if kind == "messageStop":
            self._stopped = True
            self._stop_reason = raw_string(get_field(body, "stopReason"))
            return self._end(pieces) if self._metadata_seen else None
        if kind == "metadata":
            self._metadata_seen = True
            usage = self._usage_of(get_field(body, "usage"))
            if usage is not None:
                self._usage = usage
            return self._end(pieces) if self._stopped else pieces.build(usage=usage)
        # Only reachable with dicts: botocore raises EventStreamError for exception frames.
        error = StreamError("provider_error", f"{kind}: {describe_error(body)}")
        return self._terminal(pieces, finish_reason=self._stop_reason, error=error)

    # -- blocks ----------------------------------------------------------------------------------

    def _start(self, index: int | None, start: Any, pieces: ChunkAssembler) -> None:
        if index is None:
            self._problem("contentBlockStart without an integer contentBlockIndex; block skipped")
            return
        for kind, body in _members(start):
            if kind == "toolUse":
                self._tool_start(index, body, pieces)
            elif kind == "toolResult":
                record = {"index": index, "type": get_field(body, "type") or "toolResult"}
                record.update(id=get_field(body, "toolUseId"), status=get_field(body, "status"))
                self.server_tool_results.append(record)
                self._server_blocks[index] = _ServerBlock(record)
            elif kind in _QUIET_STARTS:
                self.ignored[f"{kind} block"] += 1
            else:
                self._unknown(f"block start {self._member_name(kind, body)!r}")

    def _tool_start(self, index: int, body: Any, pieces: ChunkAssembler) -> None:
        call_id = clean_id(get_field(body, "toolUseId"))
        name = clean_name(get_field(body, "name"))
        tool_type = get_field(body, "type")
        if tool_type == "server_tool_use":
            record = {"index": index, "type": tool_type, "id": call_id, "name": name}
            self.server_tool_calls.append(record)
            self._server_blocks[index] = _ServerBlock(record)
            return
        try:
            call = self.tracker.start_call(index, call_id=call_id, name=name)
        except TrackerError as error:
            self._problem(f"toolUse block {index} skipped: {error}")
            return
        pieces.tool(ToolCallDelta(call.index, call.call_id, call.name))

    def _delta(self, index: int | None, delta: Any, pieces: ChunkAssembler) -> None:
        for kind, body in _members(delta):
            if kind == "text":
                pieces.content(body if isinstance(body, str) else None)
            elif kind == "toolUse":
                fragment = get_field(body, "input")
                self._input(index, fragment if isinstance(fragment, str) else "", pieces)
            elif kind == "reasoningContent":
                for part, value in _members(body):
                    if part == "text":
                        pieces.reasoning(value if isinstance(value, str) else None)
                    elif part not in _QUIET_REASONING:
                        self._unknown(f"reasoningContent {self._member_name(part, value)!r}")
            elif kind == "toolResult":
                self.ignored["server tool result delta"] += 1
            elif kind in _QUIET_DELTAS:
                pass
            else:
                self._unknown(f"delta {self._member_name(kind, body)!r}")

    def _input(self, index: int | None, fragment: str, pieces: ChunkAssembler) -> None:
        if index is None:
            self._problem("toolUse delta without an integer contentBlockIndex; dropped")
            return
        server = self._server_blocks.get(index)
        if server is not None:
            if fragment:
                server.input_parts.append(fragment)
            self.ignored["server tool input delta"] += 1
            return
        call = self._open_call(index)
        try:
            self.tracker.append_arguments(index, fragment)
        except TrackerError as error:
            self._problem(f"toolUse delta dropped: {error}")
            return
        if fragment:
            pieces.tool(ToolCallDelta(call.index, arguments_delta=fragment))

    def _open_call(self, index: int) -> TrackedCall:
        call = self.tracker.lookup(index)
        if call is None:
            self._problem(f"toolUse delta for block {index} before its contentBlockStart; started a nameless call")
            call = self.tracker.start_call(index)
        return call

    def _stop(self, index: int | None) -> None:
        if index is None:
            return
        server = self._server_blocks.pop(index, None)
        if server is not None:
            if server.input_parts:
                server.record["input"] = "".join(server.input_parts)
            return
        call = self.tracker.lookup(index)
        if call is not None and not call.completed:
            self.tracker.complete_call(index)

    @staticmethod
    def _member_name(kind: str, body: Any) -> str:
        """botocore reports an unknown union member as ``SDK_UNKNOWN_MEMBER: {"name": ...}``."""
        if kind == _UNKNOWN_MEMBER:
            return str(get_field(body, "name"))
        return kind

    # -- usage and the end -----------------------------------------------------------------------

    @staticmethod
    def _usage_of(usage: Any) -> TokenUsage | None:
        if usage is None:
            return None
        counts = {
            name: as_count(get_field(usage, name))
            for name in ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
        }
        if counts["inputTokens"] is None and counts["outputTokens"] is None:
            return None
        # Bedrock reports cache reads and writes beside inputTokens, not inside it.
        prompt = sum(counts[name] or 0 for name in ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"))
        return TokenUsage(prompt, counts["outputTokens"] or 0)

    def _end(self, pieces: ChunkAssembler) -> list[ChunkResponse]:
        reason = self._stop_reason
        error = None
        if reason in self.TRUNCATION_REASONS:
            error = StreamError("truncated", f"stopReason={reason!r}: the output hit the token limit")
        elif reason is not None and reason not in self.NORMAL_REASONS:
            error = StreamError("provider_error", f"stopReason={reason!r}")
        return self._terminal(pieces, finish_reason=reason, error=error)

    def _finish_reason_so_far(self) -> str | None:
        return self._stop_reason

    def _finish(self) -> list[ChunkResponse]:
        if self._stopped:
            return self._end(ChunkAssembler())
        return self._incomplete(ChunkAssembler(), "messageStop")


class BedrockInvokeConverter(AnthropicConverter):
    """boto3 ``invoke_model_with_response_stream(...)["body"]`` events of an Anthropic model -> ``ChunkResponse``.

    Each ``{"chunk": {"bytes": ...}}`` is unwrapped and decoded, then handled exactly as
    ``AnthropicConverter`` handles that raw Messages event (this class *is* one, so its counters,
    server-tool lists and problems are the same objects). ``bytes`` is raw bytes from boto3, or the
    wire's base64 text in dicts.
    """

    api: ClassVar[str] = "bedrock-invoke"

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        """botocore's stream errors and urllib3's (which botocore's event stream lets through)."""
        return resolve_errors(_API_ERRORS)

    @property
    def connection_errors(self) -> tuple[type[BaseException], ...]:
        """The subset meaning the connection broke (-> ``incomplete``)."""
        return resolve_errors(_CONNECTION_ERRORS)

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks: list[ChunkResponse] = []
        members = _members(event)
        if not members:
            self._unknown(f"event {type(event).__name__}")
        for kind, body in members:
            if self._complete:
                self.ignored["event after the terminal event"] += 1
            elif kind == "chunk":
                decoded = self._decode(get_field(body, "bytes"))
                if isinstance(decoded, StreamError):
                    chunks += self._terminal(ChunkAssembler(), finish_reason=self._stop_reason, error=decoded)
                else:
                    chunks += super()._convert(decoded)
            elif kind in EXCEPTION_EVENTS:
                # Only reachable with dicts: botocore raises EventStreamError for exception frames.
                error = StreamError("provider_error", f"{kind}: {describe_error(body)}")
                chunks += self._terminal(ChunkAssembler(), finish_reason=self._stop_reason, error=error)
            else:
                self._unknown(f"event {kind!r}")
        return chunks

    @staticmethod
    def _decode(raw: Any) -> Any:
        """The Anthropic event in a chunk, or a ``StreamError`` when the chunk cannot be read."""
        try:
            if isinstance(raw, str):
                raw = base64.b64decode(raw, validate=True)
            if not isinstance(raw, (bytes, bytearray)):
                return StreamError("provider_error", f"a chunk without bytes ({type(raw).__name__})")
            return json.loads(bytes(raw).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as error:
            return StreamError("provider_error", f"a chunk that is not an Anthropic event: {error}")
