"""The turn after the stream: a finished turn plus tool results -> the next request's messages (taxonomy G).

A ``FinishedTurn`` is what the model said, in wire order: ``TextItem``, ``ReasoningItem`` (with
its signatures) and ``ToolCallItem`` (a valid invocation, or an error END with its raw text). Build
one with ``TurnRecorder`` (drives the reference converter and handler over the SDK stream and keeps
what replay needs that the handler's events do not carry) or ``FinishedTurn.from_events`` (from
any handler's ``SegmentEvent`` log; no signatures). ``ToolResult`` answers one call, keyed by
``ToolCallItem.key`` (the provider's call id, else the handler's segment id: the same value the
handler's ``ToolInvocation.id`` has).

``format_followup(target, turn, results)`` returns the history entries to append after the
request that produced ``turn``: the assistant turn, then the results. Rules, per target:

* ``openai-chat`` / ``deepseek`` / ``ollama``: one assistant message with ``tool_calls`` (ids
  byte-exact; ``arguments`` a JSON *string* for OpenAI, an *object* for Ollama's native
  ``/api/chat``; ``content`` ``null`` on a tool-only OpenAI turn, never ``""``), then one ``role:
  "tool"`` message per call in call order (``tool_call_id``; Ollama: ``tool_name``, plus
  ``tool_call_id`` when the call had an id; Ollama reads unknown fields as absent).
  ``deepseek`` adds the turn's full ``reasoning_content`` (G09); Ollama gets it as ``thinking``.
* ``openai-responses``: the turn's items in wire order (``reasoning`` items that have their
  ``rs_...`` id, an assistant message, ``function_call`` items keyed by ``call_id``, arguments a
  string), then one ``function_call_output`` per call in call order. A ``function_call`` carries
  its original ``fc_...`` item id only if every reasoning item of the turn is replayed with its id
  (the API rejects an ``fc_`` item whose reasoning item is missing); otherwise no ``id`` at all.
  Never ``id = call_id`` (G02).
* ``anthropic``: one assistant message whose blocks keep the streamed order (``thinking`` with its
  signature, ``redacted_thinking``, ``text``, ``tool_use`` with ``input`` an *object*; never an
  empty text block), then ONE user message of ``tool_result`` blocks in call order, ``is_error``
  on errors. Thinking without a signature cannot be replayed (the API rejects it) and is left out,
  with a warning.
* ``gemini``: one ``model`` content whose parts keep wire order (thought and text parts with their
  ``thoughtSignature``; ``functionCall`` parts with ``args`` an object and exactly their own
  signature: only the first of parallel calls has one, none is fabricated), then ONE ``user``
  content with one ``functionResponse`` per call (``name``, ``id`` when the call had one,
  ``response`` ``{"output": ...}`` or ``{"error": ...}``).

Invalid calls (error ENDs) are never dropped and never replayed with their invalid text: each is
replayed with ``{}`` as its arguments (the one valid value that claims nothing) and answered with
an error result that quotes the parse error and the raw text, so the model sees its mistake and
can retry. Callers may pass that error result themselves; when they do not, it is synthesised. A
valid call without a result is an error (``MissingToolResultError``): a follow-up missing a result
is rejected by every provider. A result whose key matches no call is an error too (G01).
"""

from __future__ import annotations

import base64
import collections
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reference_impl.converters import converter_for
from reference_impl.converters.base import StreamConverter, get_field
from reference_impl.frozen import FrozenDict, freeze, thaw
from reference_impl.handlers import ApiToolCallStreamingResponseHandler, StreamingResponseHandler
from reference_impl.tools import TOOL_TARGETS, ToolChoice, ToolDefinition, tool_params
from reference_impl.types import (
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    ToolCallDelta,
    ToolInvocation,
)

__all__ = [
    "FOLLOWUP_TARGETS",
    "UNNAMED_TOOL",
    "WIRE_API",
    "DuplicateToolResultError",
    "FinishedTurn",
    "FollowupError",
    "MissingToolResultError",
    "ReasoningItem",
    "ReferenceFormatter",
    "TextItem",
    "ToolCallItem",
    "ToolResult",
    "TurnItem",
    "TurnRecorder",
    "UnknownToolResultError",
    "format_followup",
    "invalid_call_message",
    "pair_results",
    "result_text",
    "user_message",
]

logger = logging.getLogger("reference_impl.followup")

FOLLOWUP_TARGETS = TOOL_TARGETS

# The SDK wire API each target is sent with (Ollama's native /api/chat has no SDK in this project).
WIRE_API: Mapping[str, str | None] = {
    "openai-chat": "openai-chat",
    "deepseek": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": None,
}

# The name replayed for a call whose name never arrived (an error END with tool_name None).
UNNAMED_TOOL = "unnamed_tool_call"

# How much of an invalid call's raw argument text the error result quotes.
_RAW_QUOTE_LIMIT = 2000


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


# -- results --------------------------------------------------------------------------------------


class FollowupError(ValueError):
    """The turn and the results cannot form a valid follow-up request."""


class MissingToolResultError(FollowupError):
    """A valid call has no result: every provider rejects a follow-up that leaves a call unanswered."""


class UnknownToolResultError(FollowupError):
    """A result names no call of the turn (a synthetic or wrong id: taxonomy G01)."""


class DuplicateToolResultError(FollowupError):
    """More results than calls for one key."""


@dataclass(frozen=True)
class ToolResult:
    """The answer to one call. ``output``: a str or any JSON value; ``is_error``: the tool failed or was refused."""

    call_key: str
    output: Any
    is_error: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.call_key, str) or not self.call_key:
            raise ValueError(f"ToolResult.call_key must be the call's key (a non-empty str), got {self.call_key!r}")
        if not isinstance(self.is_error, bool):
            raise TypeError("ToolResult.is_error must be a bool")
        object.__setattr__(self, "output", freeze(self.output))

    @classmethod
    def ok(cls, call: ToolCallItem | ToolInvocation | str, output: Any) -> ToolResult:
        return cls(_key_of(call), output)

    @classmethod
    def failure(cls, call: ToolCallItem | ToolInvocation | str, message: str) -> ToolResult:
        return cls(_key_of(call), message, is_error=True)


def _key_of(call: ToolCallItem | ToolInvocation | str) -> str:
    if isinstance(call, ToolCallItem):
        return call.key
    if isinstance(call, ToolInvocation):
        return call.id
    return call


def result_text(output: Any) -> str:
    """A result's output as the text OpenAI, Anthropic and Ollama carry: str as is, anything else as JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(thaw(output), ensure_ascii=False, default=str)


def invalid_call_message(call: ToolCallItem) -> str:
    """The error result an invalid call is answered with: what went wrong and what the model sent."""
    raw = call.raw_arguments
    quoted = raw if len(raw) <= _RAW_QUOTE_LIMIT else raw[:_RAW_QUOTE_LIMIT] + f"... ({len(raw)} characters)"
    return (
        f"Error: the call to {call.replay_name!r} was not executed: {call.error}. "
        f"Arguments received: {quoted!r}. Send the call again with a complete JSON object as its arguments."
    )


def pair_results(turn: FinishedTurn, results: Iterable[ToolResult]) -> list[tuple[ToolCallItem, ToolResult]]:
    """One result per call, in call order (never completion order: taxonomy G06).

    Results are matched by ``call_key``; several calls sharing one key (a provider that repeats
    ids) take that key's results in order. Invalid calls without a result get
    ``invalid_call_message``; a valid call without one raises ``MissingToolResultError``; an
    unmatched result raises ``UnknownToolResultError``; a successful result for an invalid call
    raises ``FollowupError`` (an invalid call is never executed).
    """
    queues: dict[str, collections.deque[ToolResult]] = collections.defaultdict(collections.deque)
    for result in results:
        if not isinstance(result, ToolResult):
            raise TypeError(f"results must be ToolResult objects, got {type(result).__name__}")
        queues[result.call_key].append(result)
    calls = turn.tool_calls
    known = {call.key for call in calls}
    unknown = sorted(key for key in queues if key not in known)
    if unknown:
        raise UnknownToolResultError(
            f"results for {unknown} match no call of the turn (calls: {[c.key for c in calls]}); a result must "
            "echo the call's provider id exactly"
        )
    paired: list[tuple[ToolCallItem, ToolResult]] = []
    for call in calls:
        queue = queues.get(call.key)
        given = queue.popleft() if queue else None
        if given is None:
            if call.valid:
                raise MissingToolResultError(
                    f"call {call.key!r} ({call.name}) has no result; every call must be answered"
                )
            result = ToolResult.failure(call, invalid_call_message(call))
        elif not call.valid and not given.is_error:
            raise FollowupError(
                f"call {call.key!r} ({call.replay_name}) was invalid ({call.error}) and was never executed, "
                "yet its result is not an error"
            )
        else:
            result = given
        paired.append((call, result))
    extra = {key: len(queue) for key, queue in queues.items() if queue}
    if extra:
        raise DuplicateToolResultError(f"more results than calls for {sorted(extra)}")
    return paired


# -- formatting -----------------------------------------------------------------------------------


def _check_target(target: str) -> None:
    if target not in FOLLOWUP_TARGETS:
        raise ValueError(f"unknown follow-up target {target!r}; expected one of {', '.join(FOLLOWUP_TARGETS)}")


def user_message(target: str, text: str) -> dict[str, Any]:
    """A plain user message in ``target``'s history format."""
    _check_target(target)
    if target == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    return {"role": "user", "content": text}


def _arguments(call: ToolCallItem) -> dict[str, Any]:
    # An invalid call is replayed with {}: valid JSON that claims nothing (never its raw text: G04).
    value: dict[str, Any] = thaw(call.arguments) if call.arguments is not None else {}
    return value


def _arguments_text(call: ToolCallItem) -> str:
    return json.dumps(_arguments(call), ensure_ascii=False)


def _chat_like(target: str, turn: FinishedTurn, paired: list[tuple[ToolCallItem, ToolResult]]) -> list[dict[str, Any]]:
    text = turn.text
    ollama = target == "ollama"
    message: dict[str, Any] = {"role": "assistant"}
    # OpenAI-compatible servers disagree on "" (G05): null is the value every one of them accepts.
    # Ollama's native API reads content as a plain string, so it gets "".
    message["content"] = text if text else ("" if ollama else None)
    reasoning = turn.reasoning
    if reasoning and target == "deepseek":
        message["reasoning_content"] = reasoning
    if reasoning and ollama:
        message["thinking"] = reasoning
    calls = []
    for call, _result in paired:
        if ollama:
            entry: dict[str, Any] = {"function": {"name": call.replay_name, "arguments": _arguments(call)}}
            if call.call_id:
                entry["id"] = call.call_id
        else:
            entry = {
                "id": call.key,
                "type": "function",
                "function": {"name": call.replay_name, "arguments": _arguments_text(call)},
            }
        calls.append(entry)
    if calls:
        message["tool_calls"] = calls
    elif not text and not reasoning:
        return []
    messages = [message]
    for call, result in paired:
        if ollama:
            reply: dict[str, Any] = {
                "role": "tool",
                "content": result_text(result.output),
                "tool_name": call.replay_name,
            }
            if call.call_id:
                reply["tool_call_id"] = call.call_id
        else:
            reply = {"role": "tool", "tool_call_id": call.key, "content": result_text(result.output)}
        messages.append(reply)
    return messages


def _responses(
    turn: FinishedTurn, paired: list[tuple[ToolCallItem, ToolResult]], include_item_ids: bool
) -> list[dict[str, Any]]:
    reasoning_items = [item for item in turn.items if isinstance(item, ReasoningItem)]
    all_reasoning_replayable = all(item.provider_metadata.get("item_id") for item in reasoning_items)
    with_item_ids = include_item_ids and all_reasoning_replayable
    entries: list[dict[str, Any]] = []
    text_run: list[str] = []

    def flush_text() -> None:
        if text_run and "".join(text_run):
            entries.append({"type": "message", "role": "assistant", "content": "".join(text_run)})
        text_run.clear()

    for item in turn.items:
        if isinstance(item, TextItem):
            text_run.append(item.text)
            continue
        flush_text()
        if isinstance(item, ReasoningItem):
            item_id = item.provider_metadata.get("item_id")
            if not item_id:
                logger.warning("a Responses reasoning item without its rs_ id cannot be replayed; left out")
                continue
            summary = item.provider_metadata.get("summary")
            texts = list(summary) if summary is not None else ([item.text] if item.text else [])
            entry: dict[str, Any] = {
                "type": "reasoning",
                "id": item_id,
                "summary": [{"type": "summary_text", "text": text} for text in texts],
            }
            encrypted = item.provider_metadata.get("encrypted_content")
            if encrypted:
                entry["encrypted_content"] = encrypted
            entries.append(entry)
        else:
            call_entry: dict[str, Any] = {
                "type": "function_call",
                "call_id": item.key,
                "name": item.replay_name,
                "arguments": _arguments_text(item),
            }
            item_id = item.provider_metadata.get("item_id")
            if with_item_ids and isinstance(item_id, str) and item_id:
                call_entry["id"] = item_id
            entries.append(call_entry)
    flush_text()
    for call, result in paired:
        entries.append({"type": "function_call_output", "call_id": call.key, "output": result_text(result.output)})
    return entries


def _anthropic(turn: FinishedTurn, paired: list[tuple[ToolCallItem, ToolResult]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in turn.items:
        if isinstance(item, ReasoningItem):
            if item.redacted_data:
                blocks.append({"type": "redacted_thinking", "data": item.redacted_data})
            elif item.signature:
                blocks.append({"type": "thinking", "thinking": item.text, "signature": item.signature})
            elif item.text:
                logger.warning("an Anthropic thinking block without its signature cannot be replayed; left out")
        elif isinstance(item, TextItem):
            if item.text:  # Anthropic rejects empty text blocks (G05)
                blocks.append({"type": "text", "text": item.text})
        else:
            blocks.append({"type": "tool_use", "id": item.key, "name": item.replay_name, "input": _arguments(item)})
    if not blocks:
        return []
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": blocks}]
    if paired:
        results = []
        for call, result in paired:
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call.key,
                "content": result_text(result.output),
            }
            if result.is_error:
                block["is_error"] = True
            results.append(block)
        messages.append({"role": "user", "content": results})
    return messages


def _gemini(turn: FinishedTurn, paired: list[tuple[ToolCallItem, ToolResult]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for item in turn.items:
        if isinstance(item, (TextItem, ReasoningItem)):
            if not item.text and not item.signature:
                continue
            part: dict[str, Any] = {"text": item.text}
            if isinstance(item, ReasoningItem):
                part["thought"] = True
            if item.signature:
                part["thoughtSignature"] = item.signature
            parts.append(part)
        else:
            call: dict[str, Any] = {"name": item.replay_name, "args": _arguments(item)}
            if item.call_id:
                call["id"] = item.call_id
            call_part: dict[str, Any] = {"functionCall": call}
            signature = item.provider_metadata.get("thought_signature")
            if signature:
                call_part["thoughtSignature"] = signature  # exactly this call's own: G07
            parts.append(call_part)
    if not parts:
        return []
    contents: list[dict[str, Any]] = [{"role": "model", "parts": parts}]
    if paired:
        responses = []
        for call_item, result in paired:
            key = "error" if result.is_error else "output"
            response: dict[str, Any] = {"name": call_item.replay_name, "response": {key: thaw(result.output)}}
            if call_item.call_id:
                response["id"] = call_item.call_id
            responses.append({"functionResponse": response})
        # All responses in one Content, as many as there were calls (G06).
        contents.append({"role": "user", "parts": responses})
    return contents


def format_followup(
    target: str, turn: FinishedTurn, results: Iterable[ToolResult] = (), *, include_item_ids: bool = True
) -> list[dict[str, Any]]:
    """The history entries to append after the request that produced ``turn`` (see the module docstring).

    ``results`` may come in any order (completion order); they are placed in call order. For
    ``openai-responses``, ``include_item_ids=False`` never sends ``fc_...`` item ids.
    """
    _check_target(target)
    if not isinstance(turn, FinishedTurn):
        raise TypeError(f"format_followup needs a FinishedTurn, got {type(turn).__name__}")
    if turn.error is not None and turn.tool_calls:
        logger.warning("formatting a turn that ended abnormally (%s); its calls were never executable", turn.error)
    paired = pair_results(turn, results)
    if target in ("openai-chat", "deepseek", "ollama"):
        return _chat_like(target, turn, paired)
    if target == "openai-responses":
        return _responses(turn, paired, include_item_ids)
    if target == "anthropic":
        return _anthropic(turn, paired)
    return _gemini(turn, paired)


class ReferenceFormatter:
    """The reference implementation of the round-trip formatter protocol (``conformance.roundtrip``).

    ``format_followup(target, turn, results) -> list[dict]`` and ``format_tools(target, tools,
    choice) -> dict`` (the SDK call's tool keyword arguments).
    """

    targets: tuple[str, ...] = FOLLOWUP_TARGETS

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return format_followup(target, turn, results)

    def format_tools(
        self, target: str, tools: Sequence[ToolDefinition], choice: ToolChoice | str | None = "auto"
    ) -> dict[str, Any]:
        return tool_params(target, tools, choice)


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
        kind = get_field(event, "type")
        skeleton = self._skeleton
        if self.api == "anthropic" and kind == "content_block_start":
            block = get_field(event, "content_block")
            block_type = get_field(block, "type")
            if block_type == "thinking":
                skeleton.begin("reasoning", signature=_b64(get_field(block, "signature")))
            elif block_type == "redacted_thinking":
                skeleton.begin("reasoning", redacted=get_field(block, "data") or "", closed=True)
            elif block_type == "text":
                skeleton.close("reasoning")
        elif self.api == "openai-responses" and kind == "response.output_item.added":
            item = get_field(event, "item")
            if get_field(item, "type") == "reasoning":
                skeleton.begin("reasoning", metadata={"item_id": get_field(item, "id")})
            else:
                skeleton.close("reasoning")
        elif self.api == "gemini":
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

    def _after(self, event: Any) -> None:
        kind = get_field(event, "type")
        skeleton = self._skeleton
        if self.api == "anthropic":
            if kind == "content_block_delta":
                delta = get_field(event, "delta")
                if get_field(delta, "type") == "signature_delta":
                    signature = get_field(delta, "signature")
                    if isinstance(signature, str) and signature:
                        skeleton.add_signature("reasoning", signature)
            elif kind == "content_block_stop":
                skeleton.close("reasoning")
        elif self.api == "openai-responses" and kind == "response.output_item.done":
            item = get_field(event, "item")
            if get_field(item, "type") == "reasoning":
                self._reasoning_done(item)
        elif self.api == "gemini":
            skeleton.drop_markers()

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
