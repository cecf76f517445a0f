"""A finished turn: what the model said in one streamed turn, in wire order, and how to record it.

``FinishedTurn`` holds ``TextItem``, ``ReasoningItem`` (with its signatures) and ``ToolCallItem``
(a valid invocation, or an error END with its raw text), in the order the stream sent them.
Build one with ``TurnRecorder`` (drives the reference converter and handler over the SDK stream
and keeps what the next request needs that the handler's events do not carry: thinking
signatures, redacted thinking, Gemini part signatures, Responses reasoning items, Bedrock
Converse reasoning signatures and redacted reasoning) or ``FinishedTurn.from_events`` (from any
handler's ``SegmentEvent`` log; no signatures). ``reference_impl.followup`` turns a finished turn
and its tool results into the next request.
"""

from __future__ import annotations

import base64
import collections
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reference_impl.converters import converter_for
from reference_impl.converters.base import StreamConverter, get_field
from reference_impl.frozen import FrozenDict, freeze
from reference_impl.handlers import ApiToolCallStreamingResponseHandler, StreamingResponseHandler
from reference_impl.types import (
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    ToolCallDelta,
    ToolInvocation,
)

__all__ = [
    "UNNAMED_TOOL",
    "FinishedTurn",
    "ReasoningItem",
    "TextItem",
    "ToolCallItem",
    "TurnItem",
    "TurnRecorder",
]

# The name replayed for a call whose name never arrived (an error END with tool_name None).
UNNAMED_TOOL = "unnamed_tool_call"


# -- the finished turn ----------------------------------------------------------------------------


def _frozen_mapping(owner: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return FrozenDict()
    if not isinstance(value, Mapping):
        raise TypeError(f"{owner} must be a mapping, got {type(value).__name__}")
    frozen: Mapping[str, Any] = freeze(dict(value))
    return frozen


@dataclass(frozen=True)
class TextItem:
    """Text the model wrote. ``signature``: a Gemini ``thoughtSignature`` carried by a text part."""

    text: str
    signature: str | None = None


@dataclass(frozen=True)
class ReasoningItem:
    """Reasoning, as one provider block: an Anthropic ``thinking`` / ``redacted_thinking`` block, a
    Responses ``reasoning`` item, Gemini ``thought`` parts, or OpenAI-compatible ``reasoning_content``.

    ``signature``: the Anthropic thinking signature (the concatenation of every ``signature_delta``)
    or a Gemini thought part's ``thoughtSignature``. ``redacted_data``: an Anthropic
    ``redacted_thinking`` block's opaque data. ``provider_metadata``: Responses ``item_id``
    (``rs_...``), ``summary`` (list of texts) and ``encrypted_content``.
    """

    text: str = ""
    signature: str | None = None
    redacted_data: str | None = None
    provider_metadata: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "provider_metadata", _frozen_mapping("ReasoningItem.provider_metadata", self.provider_metadata)
        )


@dataclass(frozen=True)
class ToolCallItem:
    """One tool call of the turn: valid (``arguments`` is the parsed object) or invalid (``error`` set).

    ``call_id`` is the provider's id exactly as streamed (``None`` when the provider sent none, as
    the Gemini API usually does); ``segment_id`` is the handler's own id, used only to pair results
    with calls that have no provider id and never sent to a provider in place of a real id.
    ``provider_metadata`` holds what the next request must echo: Gemini ``thought_signature``,
    Responses ``item_id`` (the ``fc_...`` output item id, which is *not* the call id).
    """

    name: str
    call_id: str | None
    arguments: Mapping[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None
    provider_metadata: Mapping[str, Any] = field(default_factory=FrozenDict)
    segment_id: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"ToolCallItem.name must be a str, got {type(self.name).__name__}")
        if (self.arguments is None) == (self.error is None):
            raise ValueError(
                "a ToolCallItem has either parsed arguments (a valid call) or an error (an invalid call), not both"
            )
        if self.arguments is not None:
            object.__setattr__(self, "arguments", _frozen_mapping("ToolCallItem.arguments", self.arguments))
        if not self.name and self.error is None:
            raise ValueError("a valid ToolCallItem needs a tool name")
        if not self.call_id and not self.segment_id:
            raise ValueError("a ToolCallItem needs a call_id (the provider's) or a segment_id (the handler's)")
        object.__setattr__(
            self, "provider_metadata", _frozen_mapping("ToolCallItem.provider_metadata", self.provider_metadata)
        )

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def key(self) -> str:
        """What a ``ToolResult`` names this call by: the provider id, else the segment id."""
        return self.call_id or self.segment_id

    @property
    def replay_name(self) -> str:
        return self.name or UNNAMED_TOOL

    def invocation(self) -> ToolInvocation:
        """The executable invocation of a valid call (its id is ``key``)."""
        if self.arguments is None:
            raise ValueError(f"call {self.key!r} ({self.name}) is invalid and has no invocation: {self.error}")
        return ToolInvocation(self.key, self.name, self.arguments)


TurnItem = TextItem | ReasoningItem | ToolCallItem


@dataclass(frozen=True)
class FinishedTurn:
    """Everything the model said in one streamed turn, in wire order."""

    items: tuple[TurnItem, ...]
    api: str | None = None
    finish_reason: str | None = None
    error: str | None = None  # the stream ended abnormally: "kind: message"

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        for item in self.items:
            if not isinstance(item, (TextItem, ReasoningItem, ToolCallItem)):
                raise TypeError(f"FinishedTurn.items holds TextItem/ReasoningItem/ToolCallItem, got {item!r}")

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        return [item for item in self.items if isinstance(item, ToolCallItem)]

    @property
    def text(self) -> str:
        return "".join(item.text for item in self.items if isinstance(item, TextItem))

    @property
    def reasoning(self) -> str:
        return "".join(item.text for item in self.items if isinstance(item, ReasoningItem))

    @classmethod
    def from_events(
        cls,
        events: Iterable[SegmentEvent],
        *,
        api: str | None = None,
        finish_reason: str | None = None,
        error: str | None = None,
    ) -> FinishedTurn:
        """A turn from a handler's event log: segments in START order, tool calls from their ENDs.

        Signatures of reasoning and text (Anthropic thinking, Gemini text parts) are not in the
        event contract, so they are absent here; use ``TurnRecorder`` to keep them. Tool-call
        provider metadata (Gemini call signatures, Responses item ids) is in END metadata and kept.
        """
        order: list[str] = []
        kinds: dict[str, SegmentType] = {}
        deltas: dict[str, list[str]] = collections.defaultdict(list)
        ends: dict[str, Mapping[str, Any]] = {}
        starts: dict[str, Mapping[str, Any]] = {}
        for event in events:
            if event.event_type is SegmentEventType.START:
                if event.segment_id not in kinds:
                    order.append(event.segment_id)
                    kinds[event.segment_id] = event.segment_type
                    starts[event.segment_id] = event.metadata
            elif event.event_type is SegmentEventType.CONTENT:
                deltas[event.segment_id].append(event.delta)
            else:
                ends[event.segment_id] = event.metadata
        items: list[TurnItem] = []
        for segment_id in order:
            text = "".join(deltas[segment_id])
            kind = kinds[segment_id]
            if kind is SegmentType.TEXT:
                items.append(TextItem(text))
            elif kind is SegmentType.REASONING:
                items.append(ReasoningItem(text))
            else:
                metadata = ends.get(segment_id)
                if metadata is None:
                    metadata = {**starts[segment_id], "error": "the tool call never ended", "raw_arguments": text}
                items.append(_call_from_end(segment_id, metadata, text, starts[segment_id]))
        return cls(tuple(items), api=api, finish_reason=finish_reason, error=error)


def _call_from_end(
    segment_id: str, metadata: Mapping[str, Any], raw: str, start: Mapping[str, Any] | None = None
) -> ToolCallItem:
    start = start or {}
    name = metadata.get("tool_name") or start.get("tool_name") or ""
    call_id = metadata.get("call_id") or start.get("call_id") or None
    provider_metadata = metadata.get("provider_metadata") or {}
    if "error" in metadata or "arguments" not in metadata:
        return ToolCallItem(
            name,
            call_id,
            None,
            raw_arguments=str(metadata.get("raw_arguments", raw)),
            error=str(metadata.get("error") or "the call ended without arguments"),
            provider_metadata=provider_metadata,
            segment_id=segment_id,
        )
    return ToolCallItem(
        name,
        call_id,
        metadata["arguments"],
        raw_arguments=raw,
        provider_metadata=provider_metadata,
        segment_id=segment_id,
    )


# -- recording a turn from the stream --------------------------------------------------------------


@dataclass
class _Slot:
    kind: str  # "text" | "reasoning" | "call"
    parts: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    index: int | None = None
    call_id: str | None = None
    name_parts: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "".join(self.name_parts)


class _Skeleton:
    """The turn's items in wire order, as the converter's chunks and the raw events reveal them."""

    def __init__(self, *, text_from_chunks: bool = True) -> None:
        self.slots: list[_Slot] = []
        self._calls: dict[int, _Slot] = {}
        # Positions reserved (in raw wire order) for calls the converter has not reported yet.
        self._markers: list[_Slot] = []
        self.text_from_chunks = text_from_chunks

    def add_text(self, kind: str, text: str) -> None:
        last = self.slots[-1] if self.slots else None
        if last is not None and last.kind == kind and not last.closed:
            last.parts.append(text)
        else:
            self.slots.append(_Slot(kind, [text]))

    def begin(self, kind: str, **fields: Any) -> _Slot:
        slot = _Slot(kind, **fields)
        self.slots.append(slot)
        return slot

    def last(self, kind: str) -> _Slot | None:
        return self.slots[-1] if self.slots and self.slots[-1].kind == kind else None

    def close(self, kind: str) -> None:
        last = self.last(kind)
        if last is not None:
            last.closed = True

    def add_signature(self, kind: str, piece: str) -> None:
        """Append a signature piece to the open item of ``kind`` (``signature_delta``: ``+=``, never ``=``)."""
        last = self.last(kind)
        if last is not None and last.redacted is None:
            last.signature = (last.signature or "") + piece
        else:
            self.begin(kind, signature=piece)

    def mark_call(self) -> None:
        """Reserve the wire position of a call part; the converter's next new call fills it."""
        self._markers.append(self.begin("call"))

    def drop_markers(self) -> None:
        """Forget reserved positions no new call filled (restatements, continuation parts)."""
        for marker in self._markers:
            self.slots.remove(marker)
        self._markers.clear()

    def call(self, delta: ToolCallDelta) -> None:
        slot = self._calls.get(delta.index)
        if slot is None:
            if self._markers:
                slot = self._markers.pop(0)
                slot.index = delta.index
            else:
                slot = self.begin("call", index=delta.index)
            self._calls[delta.index] = slot
        if delta.call_id and slot.call_id is None:
            slot.call_id = delta.call_id
        if delta.name and delta.name != slot.name:
            slot.name_parts.append(delta.name)
        if delta.provider_metadata:
            slot.metadata.update({k: v for k, v in delta.provider_metadata.items() if v not in (None, "")})

    def absorb(self, chunk: ChunkResponse) -> None:
        if self.text_from_chunks:
            if chunk.reasoning:
                self.add_text("reasoning", chunk.reasoning)
            if chunk.content:
                self.add_text("text", chunk.content)
        for delta in chunk.tool_calls or ():
            self.call(delta)


def _gemini_parts(event: Any) -> list[Any]:
    for candidate in get_field(event, "candidates") or ():
        if get_field(candidate, "index") in (None, 0):
            return list(get_field(get_field(candidate, "content"), "parts") or ())
    return []


def _b64(value: Any) -> str | None:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii") if value else None
    return value if isinstance(value, str) and value else None


class TurnRecorder:
    """Drives the reference converter and handler over one SDK stream and builds the ``FinishedTurn``.

    The handler's events carry text, reasoning text and the tool calls' verdicts, but not what
    replay needs beyond them: Anthropic thinking signatures (``signature_delta``, accumulated with
    ``+=``: G08) and ``redacted_thinking`` blocks, block boundaries between consecutive thinking
    blocks, Gemini signatures on text and thought parts, Responses reasoning items (``rs_...`` id,
    summary, ``encrypted_content``). The recorder reads those from the raw SDK events beside the
    converter and lays them out in wire order; each call's verdict comes from the handler's END.

    ``on_segment_event`` / ``on_tool_invocation`` go to the handler: the detection point
    (``ToolEventBus.handler_callbacks`` gives both). Usage::

        recorder = TurnRecorder("anthropic", on_tool_invocation=bus_callback)
        turn = recorder.record(client.messages.create(..., stream=True))
    """

    def __init__(
        self,
        api: str,
        *,
        on_segment_event: Callable[[SegmentEvent], None] | None = None,
        on_tool_invocation: Callable[[ToolInvocation], None] | None = None,
        handler: StreamingResponseHandler | None = None,
        converter: StreamConverter | None = None,
    ) -> None:
        self.api = api
        self.converter = converter if converter is not None else converter_for(api)
        if handler is not None and (on_segment_event is not None or on_tool_invocation is not None):
            raise ValueError("pass the callbacks to your own handler, not to the recorder")
        self.handler: StreamingResponseHandler = handler or ApiToolCallStreamingResponseHandler(
            on_segment_event=on_segment_event, on_tool_invocation=on_tool_invocation
        )
        # Gemini text and thought parts are read from the raw parts, one by one, so a signature stays
        # on the part that carried it; calls still come from the converter, in their wire positions.
        self._skeleton = _Skeleton(text_from_chunks=api != "gemini")
        self._finish_reason: str | None = None
        self._error: str | None = None
        self._finished: FinishedTurn | None = None

    # -- feeding -------------------------------------------------------------------------------

    def observe(self, event: Any) -> list[SegmentEvent]:
        """One SDK stream object: annotate, convert, feed the handler; returns the handler's events."""
        if self._finished is not None:
            raise RuntimeError("TurnRecorder.observe() after finish(); use a new recorder per turn")
        self._before(event)
        emitted = self._feed(self.converter.convert(event))
        self._after(event)
        return emitted

    def fail(self, exc: BaseException) -> list[SegmentEvent]:
        """The SDK raised mid-stream: the converter's error chunk ends the turn (nothing is lost)."""
        return self._feed(self.converter.fail(exc))

    def record(self, stream: Iterable[Any]) -> FinishedTurn:
        """Observe a whole sync SDK stream (the SDK's own API errors end it as a stream error), then finish."""
        iterator = iter(stream)
        errors = self.converter.api_errors
        while True:
            try:
                event = next(iterator)
            except StopIteration:
                break
            except errors as exc:
                self.fail(exc)
                break
            self.observe(event)
        return self.finish()

    def _feed(self, chunks: list[ChunkResponse]) -> list[SegmentEvent]:
        emitted: list[SegmentEvent] = []
        for chunk in chunks:
            self._skeleton.absorb(chunk)
            if chunk.finish_reason is not None:
                self._finish_reason = chunk.finish_reason
            if chunk.error is not None:
                self._error = f"{chunk.error.kind}: {chunk.error.message}"
            if not getattr(self.handler, "is_finalized", False):
                emitted += self.handler.feed(chunk)
        return emitted

    def _before(self, event: Any) -> None:
        if self.api == "anthropic":
            self._anthropic_before(event)
        elif self.api == "openai-responses":
            self._responses_before(event)
        elif self.api == "gemini":
            self._gemini_before(event)

    def _after(self, event: Any) -> None:
        if self.api == "anthropic":
            self._anthropic_after(event)
        elif self.api == "openai-responses":
            if get_field(event, "type") == "response.output_item.done":
                item = get_field(event, "item")
                if get_field(item, "type") == "reasoning":
                    self._reasoning_done(item)
        elif self.api == "gemini":
            self._skeleton.drop_markers()
        elif self.api == "bedrock-converse":
            self._converse_after(event)

    def _anthropic_before(self, event: Any) -> None:
        if get_field(event, "type") != "content_block_start":
            return
        block = get_field(event, "content_block")
        block_type = get_field(block, "type")
        if block_type == "thinking":
            self._skeleton.begin("reasoning", signature=_b64(get_field(block, "signature")))
        elif block_type == "redacted_thinking":
            self._skeleton.begin("reasoning", redacted=get_field(block, "data") or "", closed=True)
        elif block_type == "text":
            self._skeleton.close("reasoning")

    def _anthropic_after(self, event: Any) -> None:
        kind = get_field(event, "type")
        if kind == "content_block_delta":
            delta = get_field(event, "delta")
            if get_field(delta, "type") == "signature_delta":
                signature = get_field(delta, "signature")
                if isinstance(signature, str) and signature:
                    self._skeleton.add_signature("reasoning", signature)
        elif kind == "content_block_stop":
            self._skeleton.close("reasoning")

    def _responses_before(self, event: Any) -> None:
        if get_field(event, "type") != "response.output_item.added":
            return
        item = get_field(event, "item")
        if get_field(item, "type") == "reasoning":
            self._skeleton.begin("reasoning", metadata={"item_id": get_field(item, "id")})
        else:
            self._skeleton.close("reasoning")

    def _gemini_before(self, event: Any) -> None:
        skeleton = self._skeleton
        for part in _gemini_parts(event):
            if get_field(part, "function_call") is not None:
                skeleton.mark_call()
                continue
            text = get_field(part, "text")
            if not isinstance(text, str):
                continue
            part_kind = "reasoning" if get_field(part, "thought") is True else "text"
            signature = _b64(get_field(part, "thought_signature"))
            if signature is not None:
                skeleton.begin(part_kind, parts=[text], signature=signature, closed=True)
            elif text:
                skeleton.add_text(part_kind, text)

    def _converse_after(self, event: Any) -> None:
        """Bedrock ConverseStream: a reasoning block's ``signature`` delta, and its end at ``contentBlockStop``."""
        if not isinstance(event, Mapping):
            return
        delta = get_field(get_field(event.get("contentBlockDelta"), "delta"), "reasoningContent")
        signature = get_field(delta, "signature")
        if isinstance(signature, str) and signature:
            self._skeleton.add_signature("reasoning", signature)
        redacted = _b64(get_field(delta, "redactedContent"))
        if redacted is not None:
            self._skeleton.begin("reasoning", redacted=redacted, closed=True)
        if "contentBlockStop" in event:
            self._skeleton.close("reasoning")

    def _reasoning_done(self, item: Any) -> None:
        item_id = get_field(item, "id")
        slot = next(
            (
                s
                for s in reversed(self._skeleton.slots)
                if s.kind == "reasoning" and s.metadata.get("item_id") == item_id
            ),
            None,
        )
        if slot is None:
            slot = self._skeleton.begin("reasoning", metadata={"item_id": item_id})
        summary = get_field(item, "summary")
        if summary is not None:
            slot.metadata["summary"] = [str(get_field(part, "text") or "") for part in summary]
        encrypted = get_field(item, "encrypted_content")
        if isinstance(encrypted, str) and encrypted:
            slot.metadata["encrypted_content"] = encrypted
        slot.closed = True

    # -- finishing -----------------------------------------------------------------------------

    def finish(self) -> FinishedTurn:
        """End the stream (the converter's ``finish``, the handler's ``finalize``) and build the turn."""
        if self._finished is not None:
            return self._finished
        self._feed(self.converter.finish())
        self.handler.finalize()
        ends = _tool_ends(self.handler.get_all_events())
        items: list[TurnItem] = []
        for slot in self._skeleton.slots:
            if slot.kind == "text":
                items.append(TextItem("".join(slot.parts), slot.signature))
            elif slot.kind == "reasoning":
                items.append(ReasoningItem("".join(slot.parts), slot.signature, slot.redacted, slot.metadata))
            else:
                items.append(self._verdict(slot, ends))
        for segment_id, metadata, raw in ends:  # ENDs no wire call explains (a handler of the user's)
            items.append(_call_from_end(segment_id, metadata, raw))
        self._finished = FinishedTurn(tuple(items), api=self.api, finish_reason=self._finish_reason, error=self._error)
        return self._finished

    @staticmethod
    def _verdict(slot: _Slot, ends: list[tuple[str, Mapping[str, Any], str]]) -> ToolCallItem:
        def pick(predicate: Callable[[Mapping[str, Any]], bool]) -> tuple[str, Mapping[str, Any], str] | None:
            for position, end in enumerate(ends):
                if predicate(end[1]):
                    return ends.pop(position)
            return None

        match = None
        if slot.call_id:
            match = pick(lambda m: m.get("call_id") == slot.call_id)
        if match is None:
            match = pick(
                lambda m: (m.get("tool_name") or "") == slot.name and (not m.get("call_id") or not slot.call_id)
            )
        if match is None and ends:
            match = ends.pop(0)
        if match is None:
            return ToolCallItem(
                slot.name,
                slot.call_id,
                None,
                error="the handler ended no tool call for this streamed call",
                provider_metadata=slot.metadata,
                segment_id=f"unmatched-call-{slot.index}",
            )
        segment_id, metadata, raw = match
        return _call_from_end(segment_id, metadata, raw)


def _tool_ends(events: Iterable[SegmentEvent]) -> list[tuple[str, Mapping[str, Any], str]]:
    raw: dict[str, list[str]] = collections.defaultdict(list)
    ends: list[tuple[str, Mapping[str, Any], str]] = []
    for event in events:
        if event.segment_type is not SegmentType.TOOL_CALL:
            continue
        if event.event_type is SegmentEventType.CONTENT:
            raw[event.segment_id].append(event.delta)
        elif event.event_type is SegmentEventType.END:
            ends.append((event.segment_id, event.metadata, "".join(raw[event.segment_id])))
    return ends
