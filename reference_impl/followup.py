"""The turn after the stream: a finished turn plus tool results -> the next request's messages (taxonomy G).

A ``FinishedTurn`` (``reference_impl.turn``) is what the model said, in wire order: ``TextItem``,
``ReasoningItem`` (with its signatures) and ``ToolCallItem`` (a valid invocation, or an error END
with its raw text). ``ToolResult`` answers one call, keyed by ``ToolCallItem.key`` (the provider's
call id, else the handler's segment id: the same value the handler's ``ToolInvocation.id`` has).

``format_followup(target, turn, results)`` returns the history entries to append after the
request that produced ``turn``: the assistant turn, then the results. Rules, per target:

* ``openai-chat`` / ``deepseek`` / ``ollama`` / ``cohere-v2``: one assistant message with
  ``tool_calls`` (ids byte-exact; ``arguments`` a JSON *string* for OpenAI and Cohere, an *object*
  for Ollama's native ``/api/chat``; ``content`` ``null`` on a tool-only OpenAI turn, never
  ``""``), then one ``role: "tool"`` message per call in call order (``tool_call_id``; Ollama:
  ``tool_name``, plus ``tool_call_id`` when the call had an id; Ollama reads unknown fields as
  absent). ``deepseek`` adds the turn's full ``reasoning_content`` (G09); Ollama gets it as
  ``thinking``; Cohere as the assistant message's ``tool_plan``.
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
* ``bedrock-converse``: the same shape in Converse's content blocks: ``reasoningContent``
  (``reasoningText`` with its ``signature``, or ``redactedContent``), ``text``, ``toolUse``
  (``toolUseId``, ``name``, ``input`` an object), then ONE user message of ``toolResult`` blocks in
  call order (``content`` ``[{"text": ...}]`` or ``[{"json": ...}]``, ``status`` ``success`` or
  ``error``).
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
import binascii
import collections
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reference_impl.frozen import freeze, thaw
from reference_impl.tools import TOOL_TARGETS, ToolChoice, ToolDefinition, tool_params
from reference_impl.turn import (
    UNNAMED_TOOL,
    FinishedTurn,
    ReasoningItem,
    TextItem,
    ToolCallItem,
    TurnItem,
    TurnRecorder,
)
from reference_impl.types import ToolInvocation

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

# The wire API (SDK or client library) each target is sent with: what the turn streamed from.
WIRE_API: Mapping[str, str | None] = {
    "openai-chat": "openai-chat",
    "deepseek": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "bedrock-converse": "bedrock-converse",
    "cohere-v2": "cohere-v2",
}

# How much of an invalid call's raw argument text the error result quotes.
_RAW_QUOTE_LIMIT = 2000


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


# -- formatting -----------------------------------------------------------------------------------

Paired = list[tuple[ToolCallItem, ToolResult]]


def _check_target(target: str) -> None:
    if target not in FOLLOWUP_TARGETS:
        raise ValueError(f"unknown follow-up target {target!r}; expected one of {', '.join(FOLLOWUP_TARGETS)}")


def user_message(target: str, text: str) -> dict[str, Any]:
    """A plain user message in ``target``'s history format."""
    _check_target(target)
    if target == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    if target == "bedrock-converse":
        return {"role": "user", "content": [{"text": text}]}
    return {"role": "user", "content": text}


def _arguments(call: ToolCallItem) -> dict[str, Any]:
    # An invalid call is replayed with {}: valid JSON that claims nothing (never its raw text: G04).
    value: dict[str, Any] = thaw(call.arguments) if call.arguments is not None else {}
    return value


def _arguments_text(call: ToolCallItem) -> str:
    return json.dumps(_arguments(call), ensure_ascii=False)


def _chat_call(target: str, call: ToolCallItem) -> dict[str, Any]:
    if target == "ollama":
        entry: dict[str, Any] = {"function": {"name": call.replay_name, "arguments": _arguments(call)}}
        if call.call_id:
            entry["id"] = call.call_id
        return entry
    return {
        "id": call.key,
        "type": "function",
        "function": {"name": call.replay_name, "arguments": _arguments_text(call)},
    }


def _chat_result(target: str, call: ToolCallItem, result: ToolResult) -> dict[str, Any]:
    if target != "ollama":
        return {"role": "tool", "tool_call_id": call.key, "content": result_text(result.output)}
    reply: dict[str, Any] = {"role": "tool", "content": result_text(result.output), "tool_name": call.replay_name}
    if call.call_id:
        reply["tool_call_id"] = call.call_id
    return reply


# Where each chat-like target puts the turn's reasoning, and what an assistant message without text holds.
_REASONING_FIELD = {"deepseek": "reasoning_content", "ollama": "thinking", "cohere-v2": "tool_plan"}
_NO_TEXT: dict[str, Any] = {"openai-chat": None, "deepseek": None, "ollama": ""}


def _chat_like(target: str, turn: FinishedTurn, paired: Paired) -> list[dict[str, Any]]:
    text, reasoning = turn.text, turn.reasoning
    message: dict[str, Any] = {"role": "assistant"}
    # OpenAI-compatible servers disagree on "" (G05): null is the value every one of them accepts.
    # Ollama's native API reads content as a plain string, so it gets ""; Cohere none at all.
    if text or target in _NO_TEXT:
        message["content"] = text or _NO_TEXT[target]
    if reasoning and target in _REASONING_FIELD:
        message[_REASONING_FIELD[target]] = reasoning
    calls = [_chat_call(target, call) for call, _result in paired]
    if calls:
        message["tool_calls"] = calls
    elif not text and not reasoning:
        return []
    return [message, *(_chat_result(target, call, result) for call, result in paired)]


def _responses_reasoning(item: ReasoningItem) -> dict[str, Any] | None:
    item_id = item.provider_metadata.get("item_id")
    if not item_id:
        logger.warning("a Responses reasoning item without its rs_ id cannot be replayed; left out")
        return None
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
    return entry


def _responses_call(item: ToolCallItem, with_item_ids: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "function_call",
        "call_id": item.key,
        "name": item.replay_name,
        "arguments": _arguments_text(item),
    }
    item_id = item.provider_metadata.get("item_id")
    if with_item_ids and isinstance(item_id, str) and item_id:
        entry["id"] = item_id
    return entry


def _responses(turn: FinishedTurn, paired: Paired, include_item_ids: bool) -> list[dict[str, Any]]:
    reasoning_items = [item for item in turn.items if isinstance(item, ReasoningItem)]
    with_item_ids = include_item_ids and all(item.provider_metadata.get("item_id") for item in reasoning_items)
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
        entry = _responses_reasoning(item) if isinstance(item, ReasoningItem) else _responses_call(item, with_item_ids)
        if entry is not None:
            entries.append(entry)
    flush_text()
    for call, result in paired:
        entries.append({"type": "function_call_output", "call_id": call.key, "output": result_text(result.output)})
    return entries


def _anthropic_block(item: TurnItem) -> dict[str, Any] | None:
    if isinstance(item, ReasoningItem):
        if item.redacted_data:
            return {"type": "redacted_thinking", "data": item.redacted_data}
        if item.signature:
            return {"type": "thinking", "thinking": item.text, "signature": item.signature}
        if item.text:
            logger.warning("an Anthropic thinking block without its signature cannot be replayed; left out")
        return None
    if isinstance(item, TextItem):
        return {"type": "text", "text": item.text} if item.text else None  # no empty text blocks (G05)
    return {"type": "tool_use", "id": item.key, "name": item.replay_name, "input": _arguments(item)}


def _anthropic_result(call: ToolCallItem, result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.key, "content": result_text(result.output)}
    if result.is_error:
        block["is_error"] = True
    return block


def _converse_block(item: TurnItem) -> dict[str, Any] | None:
    if isinstance(item, ReasoningItem):
        if item.redacted_data:
            return {"reasoningContent": {"redactedContent": _redacted_bytes(item.redacted_data)}}
        if item.signature:
            return {"reasoningContent": {"reasoningText": {"text": item.text, "signature": item.signature}}}
        if item.text:
            logger.warning("a Bedrock reasoning block without its signature cannot be replayed; left out")
        return None
    if isinstance(item, TextItem):
        return {"text": item.text} if item.text else None  # Bedrock rejects blank text blocks (G05)
    return {"toolUse": {"toolUseId": item.key, "name": item.replay_name, "input": _arguments(item)}}


def _redacted_bytes(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data.encode("utf-8")


def _converse_result(call: ToolCallItem, result: ToolResult) -> dict[str, Any]:
    output = thaw(result.output)
    content = [{"text": output}] if isinstance(output, str) else [{"json": output}]
    status = "error" if result.is_error else "success"
    return {"toolResult": {"toolUseId": call.key, "content": content, "status": status}}


_Block = Callable[[TurnItem], dict[str, Any] | None]
_Result = Callable[[ToolCallItem, ToolResult], dict[str, Any]]


def _blocks_then_results(turn: FinishedTurn, paired: Paired, block: _Block, result: _Result) -> list[dict[str, Any]]:
    """One assistant message of content blocks in wire order, then ONE user message of results in call order."""
    blocks = [entry for entry in map(block, turn.items) if entry is not None]
    if not blocks:
        return []
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": blocks}]
    if paired:
        messages.append({"role": "user", "content": [result(call, outcome) for call, outcome in paired]})
    return messages


def _gemini_part(item: TurnItem) -> dict[str, Any] | None:
    if isinstance(item, ToolCallItem):
        call: dict[str, Any] = {"name": item.replay_name, "args": _arguments(item)}
        if item.call_id:
            call["id"] = item.call_id
        part: dict[str, Any] = {"functionCall": call}
        signature = item.provider_metadata.get("thought_signature")
        if signature:
            part["thoughtSignature"] = signature  # exactly this call's own: G07
        return part
    if not item.text and not item.signature:
        return None
    part = {"text": item.text}
    if isinstance(item, ReasoningItem):
        part["thought"] = True
    if item.signature:
        part["thoughtSignature"] = item.signature
    return part


def _gemini_response(call: ToolCallItem, result: ToolResult) -> dict[str, Any]:
    key = "error" if result.is_error else "output"
    response: dict[str, Any] = {"name": call.replay_name, "response": {key: thaw(result.output)}}
    if call.call_id:
        response["id"] = call.call_id
    return {"functionResponse": response}


def _gemini(turn: FinishedTurn, paired: Paired) -> list[dict[str, Any]]:
    parts = [part for part in map(_gemini_part, turn.items) if part is not None]
    if not parts:
        return []
    contents: list[dict[str, Any]] = [{"role": "model", "parts": parts}]
    if paired:
        # All responses in one Content, as many as there were calls (G06).
        contents.append({"role": "user", "parts": [_gemini_response(call, result) for call, result in paired]})
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
    if target == "openai-responses":
        return _responses(turn, paired, include_item_ids)
    if target == "anthropic":
        return _blocks_then_results(turn, paired, _anthropic_block, _anthropic_result)
    if target == "bedrock-converse":
        return _blocks_then_results(turn, paired, _converse_block, _converse_result)
    if target == "gemini":
        return _gemini(turn, paired)
    return _chat_like(target, turn, paired)


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
