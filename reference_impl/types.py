"""Contract types shared by converters, handlers and the conformance suite.

These follow seed 000 (sections 4.1, 4.2 and 3.2) with two deliberate corrections: inputs are
validated on construction (a bad index is a ``TypeError``/``ValueError`` at the converter, not a
``KeyError`` three layers later), and everything a handler emits is immutable.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reference_impl.frozen import FrozenDict, freeze, thaw

__all__ = [
    "ChunkResponse",
    "SegmentEvent",
    "SegmentEventType",
    "SegmentType",
    "StreamError",
    "TokenUsage",
    "ToolCallDelta",
    "ToolInvocation",
]


def _require_optional_str(owner: str, field_name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{owner}.{field_name} must be a str or None, got {type(value).__name__}: {value!r}")


@dataclass(slots=True)
class ToolCallDelta:
    """One provider-agnostic fragment of a streamed tool call (seed 000 section 4.1).

    ``index`` identifies the call among parallel calls (dense and 0-based when produced by the
    reference converters). ``call_id`` and ``name`` may arrive on any fragment, not only the first:
    providers send them late, restate them, or send ``""`` on continuations. ``arguments_delta`` is
    a piece of the JSON argument text; the pieces concatenate to the full argument string.

    ``provider_metadata`` (keyword-only, beyond the seed) carries per-call provider data that the
    next request must echo, such as a Gemini ``thought_signature`` or a Responses ``item_id``;
    the handler merges it into the call's END metadata. The seed's delta has no slot for it
    (taxonomy G07), so round trips would otherwise lose it.
    """

    index: int
    call_id: str | None = None
    name: str | None = None
    arguments_delta: str | None = None
    provider_metadata: Mapping[str, Any] | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        # bool is an int subclass; True as an index is always a bug upstream.
        if isinstance(self.index, bool) or not isinstance(self.index, int):
            raise TypeError(
                f"ToolCallDelta.index must be a non-negative int, got {type(self.index).__name__}: {self.index!r}"
            )
        if self.index < 0:
            raise ValueError(f"ToolCallDelta.index must be a non-negative int, got {self.index}")
        _require_optional_str("ToolCallDelta", "call_id", self.call_id)
        _require_optional_str("ToolCallDelta", "name", self.name)
        _require_optional_str("ToolCallDelta", "arguments_delta", self.arguments_delta)
        if self.provider_metadata is not None and not isinstance(self.provider_metadata, Mapping):
            raise TypeError(
                "ToolCallDelta.provider_metadata must be a mapping or None, "
                f"got {type(self.provider_metadata).__name__}"
            )


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token accounting reported by the provider (the last cumulative snapshot wins)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TokenUsage.{name} must be a non-negative int, got {value!r}")
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", self.prompt_tokens + self.completion_tokens)


@dataclass(frozen=True, slots=True)
class StreamError:
    """Why a stream ended abnormally: truncation, an in-band error event, or a missing terminal event.

    ``kind`` is one of ``"truncated"`` (max tokens / length), ``"provider_error"`` (an error event or
    object inside a 200 stream), ``"incomplete"`` (the stream stopped without its terminal event).
    """

    kind: str
    message: str

    def __post_init__(self) -> None:
        if self.kind not in {"truncated", "provider_error", "incomplete"}:
            raise ValueError(
                f"StreamError.kind must be 'truncated', 'provider_error' or 'incomplete', got {self.kind!r}"
            )


@dataclass(slots=True)
class ChunkResponse:
    """Transport container for one streamed chunk (seed 000 section 4.2).

    Fields beyond the seed, all optional and defaulting to None: ``finish_reason`` (the provider's
    raw stop reason, when this chunk carried one) and ``error`` (a ``StreamError`` when the stream
    ended abnormally; the handler then turns still-open tool calls into error ENDs).
    """

    content: str = ""
    reasoning: str | None = None
    is_complete: bool = False
    usage: TokenUsage | None = None
    image_urls: list[str] = field(default_factory=list)
    audio_urls: list[str] = field(default_factory=list)
    video_urls: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallDelta] | None = None
    finish_reason: str | None = None
    error: StreamError | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise TypeError(f"ChunkResponse.content must be a str (use '' for none), got {type(self.content).__name__}")
        _require_optional_str("ChunkResponse", "reasoning", self.reasoning)
        _require_optional_str("ChunkResponse", "finish_reason", self.finish_reason)
        if not isinstance(self.is_complete, bool):
            raise TypeError(f"ChunkResponse.is_complete must be a bool, got {self.is_complete!r}")
        if self.tool_calls is not None:
            if not isinstance(self.tool_calls, (list, tuple)):
                raise TypeError(
                    f"ChunkResponse.tool_calls must be a list of ToolCallDelta or None, "
                    f"got {type(self.tool_calls).__name__}"
                )
            for position, delta in enumerate(self.tool_calls):
                if not isinstance(delta, ToolCallDelta):
                    raise TypeError(
                        f"ChunkResponse.tool_calls[{position}] must be a ToolCallDelta, "
                        f"got {type(delta).__name__}: {delta!r}"
                    )
        if self.usage is not None and not isinstance(self.usage, TokenUsage):
            raise TypeError(f"ChunkResponse.usage must be a TokenUsage or None, got {type(self.usage).__name__}")
        if self.error is not None and not isinstance(self.error, StreamError):
            raise TypeError(f"ChunkResponse.error must be a StreamError or None, got {type(self.error).__name__}")


class SegmentEventType(enum.Enum):
    """Lifecycle step of a segment: one START, any number of CONTENT, one END."""

    START = "SEGMENT_START"
    CONTENT = "SEGMENT_CONTENT"
    END = "SEGMENT_END"


class SegmentType(enum.Enum):
    """What a segment holds."""

    TEXT = "text"
    TOOL_CALL = "tool_call"
    REASONING = "reasoning"


@dataclass(frozen=True, slots=True)
class SegmentEvent:
    """One step in the life of a segment.

    ``payload`` is ``{"metadata": {...}}`` for START and END and ``{"delta": str}`` for CONTENT.
    Tool-call START metadata: ``{"tool_name", "call_id"}``. A successful tool-call END:
    ``{"tool_name", "call_id", "arguments": dict}``; a failed one: ``{"tool_name", "call_id",
    "error": str, "raw_arguments": str}`` and no ``arguments`` key. The payload is read-only.
    """

    event_type: SegmentEventType
    segment_id: str
    segment_type: SegmentType
    payload: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.event_type, SegmentEventType):
            raise TypeError(f"SegmentEvent.event_type must be a SegmentEventType, got {self.event_type!r}")
        if not isinstance(self.segment_type, SegmentType):
            raise TypeError(f"SegmentEvent.segment_type must be a SegmentType, got {self.segment_type!r}")
        if not isinstance(self.segment_id, str) or not self.segment_id:
            raise ValueError(f"SegmentEvent.segment_id must be a non-empty str, got {self.segment_id!r}")
        object.__setattr__(self, "payload", freeze(dict(_get_payload(self))))

    @classmethod
    def start(cls, segment_id: str, segment_type: SegmentType, **metadata: Any) -> SegmentEvent:
        """A START event carrying ``metadata``."""
        return cls(SegmentEventType.START, segment_id, segment_type, {"metadata": metadata})

    @classmethod
    def content(cls, segment_id: str, segment_type: SegmentType, delta: str) -> SegmentEvent:
        """A CONTENT event carrying one ``delta`` of text or argument JSON."""
        payload: object = delta
        if type(delta) is not str:
            if not isinstance(delta, str):
                raise TypeError(f"SegmentEvent.content delta must be a str, got {type(delta).__name__}")
            payload = FrozenDict(delta=delta)  # a str subclass is kept as is, in a real payload
        # The hot path: built through the slots, with the payload stored as the bare delta
        # (``_LazyContentPayload``): one small object per CONTENT event.
        event = _new_object(cls)
        _set_event_type(event, _CONTENT)
        _set_segment_id(event, segment_id)
        _set_segment_type(event, segment_type)
        _set_payload(event, payload)
        return event

    @classmethod
    def end(cls, segment_id: str, segment_type: SegmentType, **metadata: Any) -> SegmentEvent:
        """An END event carrying ``metadata``."""
        return cls(SegmentEventType.END, segment_id, segment_type, {"metadata": metadata})

    @property
    def metadata(self) -> Mapping[str, Any]:
        """START/END metadata (empty for CONTENT)."""
        raw = _get_payload(self)
        if type(raw) is str:
            return FrozenDict()
        metadata: Mapping[str, Any] = raw.get("metadata", FrozenDict())
        return metadata

    @property
    def delta(self) -> str:
        """The CONTENT delta ('' for START/END)."""
        raw = _get_payload(self)
        if type(raw) is str:
            return raw
        delta: str = raw.get("delta", "")
        return delta

    def to_dict(self) -> dict[str, Any]:
        """A plain, mutable, JSON-serialisable copy."""
        return {
            "event_type": self.event_type.value,
            "segment_id": self.segment_id,
            "segment_type": self.segment_type.value,
            "payload": thaw(self.payload),
        }


class _LazyContentPayload:
    """``SegmentEvent.payload``: a CONTENT event built by ``SegmentEvent.content`` stores its bare delta.

    Streams are mostly CONTENT events, and a handler keeps every event for ``get_all_events()``.
    A ``FrozenDict`` per delta doubled the objects that CPython's garbage collector walks on each
    full collection and took 184 of the 248 bytes each kept event cost. The slot holds the delta
    ``str`` instead, and reading ``payload`` builds the read-only ``{"delta": ...}``; every
    other payload (START, END, CONTENT built by the constructor) is stored frozen and returned as
    is. Equality, ``repr``, pickling and ``to_dict()`` all read through this descriptor.
    """

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, event: object, owner: type | None = None) -> Any:
        if event is None:
            return self
        raw = self._slot.__get__(event, owner)
        if type(raw) is str:
            return FrozenDict(delta=raw)
        return raw

    def __set__(self, event: object, value: Any) -> None:
        self._slot.__set__(event, value)

    def __delete__(self, event: object) -> None:
        self._slot.__delete__(event)


# Read once: the per-delta path (``SegmentEvent.content``) sets the slots directly, and an enum
# member lookup on its class costs about 0.1 us.
_CONTENT = SegmentEventType.CONTENT
_new_object = object.__new__
_set_event_type = SegmentEvent.__dict__["event_type"].__set__
_set_segment_id = SegmentEvent.__dict__["segment_id"].__set__
_set_segment_type = SegmentEvent.__dict__["segment_type"].__set__
_set_payload = SegmentEvent.__dict__["payload"].__set__
_get_payload = SegmentEvent.__dict__["payload"].__get__
setattr(SegmentEvent, "payload", _LazyContentPayload(SegmentEvent.__dict__["payload"]))  # noqa: B010


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """A complete, valid tool call ready for execution. ``arguments`` is a read-only dict."""

    id: str
    name: str
    arguments: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"ToolInvocation.id must be a non-empty str, got {self.id!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ToolInvocation.name must be a non-empty str, got {self.name!r}")
        if not isinstance(self.arguments, Mapping):
            raise TypeError(f"ToolInvocation.arguments must be a JSON object, got {type(self.arguments).__name__}")
        object.__setattr__(self, "arguments", freeze(dict(self.arguments)))

    def to_dict(self) -> dict[str, Any]:
        """A plain, mutable, JSON-serialisable copy."""
        return {"id": self.id, "name": self.name, "arguments": thaw(self.arguments)}
