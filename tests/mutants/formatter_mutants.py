"""Deliberately broken round-trip formatters: one realistic G-class bug each (taxonomy section G).

Each mutant is the reference formatter (``reference_impl.followup.ReferenceFormatter``) with one
bug planted, as small as possible, so a catch proves the round-trip checks see *that* bug.
``FORMATTER_MUTANTS`` lists name, taxonomy classes, the check ids meant to catch it, the targets
where the bug exists, and a factory; ``ALTERNATIVE_FORMATTERS`` are correct formatters that make
different (documented, valid) choices and must pass.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reference_impl.followup import (
    FinishedTurn,
    ReasoningItem,
    ReferenceFormatter,
    TextItem,
    ToolCallItem,
    ToolResult,
    format_followup,
    invalid_call_message,
    result_text,
)
from reference_impl.tools import ToolChoice, ToolDefinition, tool_params

Messages = list[dict[str, Any]]
Transform = Callable[[str, FinishedTurn, Sequence[ToolResult], Messages], Messages]


@dataclass(frozen=True)
class FormatterMutant:
    name: str
    taxonomy: tuple[str, ...]
    caught_by: frozenset[str]
    targets: tuple[str, ...]
    factory: Callable[[], Any]
    description: str


class PostProcessed(ReferenceFormatter):
    """The reference formatter, with its output (and optionally its input) rewritten."""

    def __init__(
        self,
        transform: Transform | None = None,
        *,
        before: Callable[[str, FinishedTurn, Sequence[ToolResult]], tuple[FinishedTurn, Sequence[ToolResult]]]
        | None = None,
        tools: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
        choice: Callable[[str, ToolChoice | str | None, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self._transform = transform
        self._before = before
        self._tools_transform = tools
        self._choice_transform = choice

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
        if self._before is not None:
            turn, results = self._before(target, turn, results)
        messages = copy.deepcopy(format_followup(target, turn, results))
        if self._transform is not None:
            messages = self._transform(target, turn, results, messages)
        return messages

    def format_tools(
        self, target: str, tools: Sequence[ToolDefinition], choice: ToolChoice | str | None = "auto"
    ) -> dict[str, Any]:
        params = copy.deepcopy(tool_params(target, tools, choice))
        if self._tools_transform is not None:
            params = self._tools_transform(target, params)
        if self._choice_transform is not None:
            params = self._choice_transform(target, choice, params)
        return params


# -- helpers that find the pieces of a formatted follow-up ---------------------------------------


_CHAT = ("openai-chat", "deepseek", "ollama", "cohere-v2")


def _call_entries(target: str, messages: Messages) -> list[dict[str, Any]]:
    """The dicts that hold each call's id/name/arguments, in order."""
    if target in _CHAT:
        return list(messages[0].get("tool_calls") or []) if messages else []
    if target == "bedrock-converse":
        return [b["toolUse"] for b in messages[0]["content"] if "toolUse" in b] if messages else []
    if target == "openai-responses":
        return [m for m in messages if m.get("type") == "function_call"]
    if target == "anthropic":
        return [b for b in messages[0]["content"] if b.get("type") == "tool_use"] if messages else []
    return [p["functionCall"] for p in messages[0]["parts"] if "functionCall" in p] if messages else []


def _result_entries(target: str, messages: Messages) -> list[dict[str, Any]]:
    if target in _CHAT:
        return [m for m in messages if m.get("role") == "tool"]
    if target == "bedrock-converse":
        return [b["toolResult"] for m in messages[1:] for b in m["content"] if "toolResult" in b]
    if target == "openai-responses":
        return [m for m in messages if m.get("type") == "function_call_output"]
    if target == "anthropic":
        return [b for m in messages[1:] for b in m["content"] if b.get("type") == "tool_result"]
    return [p["functionResponse"] for c in messages[1:] for p in c["parts"] if "functionResponse" in p]


_ID_FIELD = {"anthropic": "tool_use_id", "openai-responses": "call_id", "gemini": "id", "bedrock-converse": "toolUseId"}
_CALL_ID_FIELD = {"openai-responses": "call_id", "bedrock-converse": "toolUseId"}


def _set_call_id(target: str, entry: dict[str, Any], value: str) -> None:
    entry[_CALL_ID_FIELD.get(target, "id")] = value


def _set_result_id(target: str, entry: dict[str, Any], value: str) -> None:
    entry[_ID_FIELD.get(target, "tool_call_id")] = value


def _args_key(target: str) -> str:
    return {"anthropic": "input", "gemini": "args", "bedrock-converse": "input"}.get(target, "arguments")


def _args_holder(target: str, entry: dict[str, Any]) -> dict[str, Any]:
    return entry["function"] if target in _CHAT else entry


# -- G01 / G11: ids ------------------------------------------------------------------------------


def _segment_id_results(
    target: str, turn: FinishedTurn, _results: Sequence[ToolResult], messages: Messages
) -> Messages:
    for call, entry in zip(turn.tool_calls, _result_entries(target, messages), strict=False):
        _set_result_id(target, entry, call.segment_id)
    return messages


def _synthetic_ids(target: str, turn: FinishedTurn, _results: Sequence[ToolResult], messages: Messages) -> Messages:
    for call, entry in zip(turn.tool_calls, _call_entries(target, messages), strict=False):
        _set_call_id(target, entry, call.segment_id)
    for call, entry in zip(turn.tool_calls, _result_entries(target, messages), strict=False):
        _set_result_id(target, entry, call.segment_id)
    return messages


def _sanitize(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", value)[:40]


def _sanitized_ids(target: str, _turn: FinishedTurn, _results: Sequence[ToolResult], messages: Messages) -> Messages:
    for entry in _call_entries(target, messages):
        key = _CALL_ID_FIELD.get(target, "id")
        if entry.get(key):
            entry[key] = _sanitize(entry[key])
    for entry in _result_entries(target, messages):
        key = _ID_FIELD.get(target, "tool_call_id")
        if entry.get(key):
            entry[key] = _sanitize(entry[key])
    return messages


# -- G02: Responses item ids -----------------------------------------------------------------------


def _item_id_is_call_id(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for entry in _call_entries(target, messages):
        entry["id"] = entry["call_id"]
    return messages


def _call_id_from_item_id(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    item_ids = {call.key: call.provider_metadata.get("item_id") for call in turn.tool_calls}
    for entry in [*_call_entries(target, messages), *_result_entries(target, messages)]:
        item_id = item_ids.get(entry["call_id"])
        if item_id:
            entry["call_id"] = item_id
    return messages


# -- G03 / G04: arguments ----------------------------------------------------------------------------


def _always_stringify(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for entry in _call_entries(target, messages):
        holder = _args_holder(target, entry)
        key = _args_key(target)
        if not isinstance(holder[key], str):
            holder[key] = json.dumps(holder[key])
    return messages


def _never_stringify(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for entry in _call_entries(target, messages):
        holder = _args_holder(target, entry)
        if isinstance(holder["arguments"], str):
            holder["arguments"] = json.loads(holder["arguments"])
    return messages


def _raw_args_replay(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for call, entry in zip(turn.tool_calls, _call_entries(target, messages), strict=False):
        if not call.valid:
            _args_holder(target, entry)[_args_key(target)] = call.raw_arguments
    return messages


def _drop_invalid(
    _target: str, turn: FinishedTurn, results: Sequence[ToolResult]
) -> tuple[FinishedTurn, Sequence[ToolResult]]:
    dropped = {call.key for call in turn.tool_calls if not call.valid}
    items = tuple(item for item in turn.items if not (isinstance(item, ToolCallItem) and not item.valid))
    return FinishedTurn(items, turn.api, turn.finish_reason, turn.error), [
        r for r in results if r.call_key not in dropped
    ]


def _invalid_as_success(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for call, entry in zip(turn.tool_calls, _result_entries(target, messages), strict=False):
        if call.valid:
            continue
        if target == "anthropic":
            entry.pop("is_error", None)
        elif target == "bedrock-converse":
            entry["status"] = "success"
        elif target == "gemini":
            entry["response"] = {"output": entry["response"].get("error")}
    return messages


class _NoSynthesisedErrors(ReferenceFormatter):
    """Answers only what it was given: invalid calls without a result stay unanswered."""

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
        given = {result.call_key for result in results}
        messages = copy.deepcopy(format_followup(target, turn, results))
        unanswered = {call.key for call in turn.tool_calls if call.key not in given}
        if target in _CHAT:
            keep = [m for m in messages if m.get("role") != "tool" or m.get("tool_call_id") not in unanswered]
            if target == "ollama":
                texts = {invalid_call_message(c) for c in turn.tool_calls if c.key in unanswered}
                keep = [m for m in keep if m.get("content") not in texts]
            return keep
        if target == "openai-responses":
            return [m for m in messages if m.get("type") != "function_call_output" or m["call_id"] not in unanswered]
        if target == "anthropic" and len(messages) > 1:
            messages[1]["content"] = [b for b in messages[1]["content"] if b["tool_use_id"] not in unanswered]
            return messages
        if target == "bedrock-converse" and len(messages) > 1:
            kept = [b for b in messages[1]["content"] if b["toolResult"]["toolUseId"] not in unanswered]
            messages[1]["content"] = kept
            return messages
        if target == "gemini" and len(messages) > 1:
            names = list(turn.tool_calls)
            parts = messages[1]["parts"]
            messages[1]["parts"] = [p for c, p in zip(names, parts, strict=False) if c.key not in unanswered]
        return messages


# -- G05 / G06: content and results --------------------------------------------------------------------


def _completion_order(target: str, turn: FinishedTurn, results: Sequence[ToolResult], messages: Messages) -> Messages:
    order = {result.call_key: position for position, result in enumerate(results)}
    calls = turn.tool_calls

    def rank(position: int) -> int:
        return order.get(calls[position].key, len(order) + position) if position < len(calls) else 10_000

    if target in (*_CHAT, "openai-responses"):
        is_result = (
            (lambda m: m.get("type") == "function_call_output")
            if target == "openai-responses"
            else (lambda m: m.get("role") == "tool")
        )
        head = [m for m in messages if not is_result(m)]
        tail = [m for m in messages if is_result(m)]
        ordered = [tail[i] for i in sorted(range(len(tail)), key=rank)]
        return head + ordered
    if len(messages) > 1:
        key = "parts" if target == "gemini" else "content"
        entries = messages[1][key]
        messages[1][key] = [entries[i] for i in sorted(range(len(entries)), key=rank)]
    return messages


def _split_results(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if len(messages) < 2:
        return messages
    key = "parts" if target == "gemini" else "content"
    role = messages[1]["role"]
    return [messages[0], *({"role": role, key: [entry]} for entry in messages[1][key])]


def _empty_content(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if not messages or turn.text:
        return messages
    if target in ("openai-chat", "deepseek"):
        messages[0]["content"] = ""
    elif target == "anthropic":
        messages[0]["content"].insert(0, {"type": "text", "text": ""})
    elif target == "bedrock-converse":
        messages[0]["content"].insert(0, {"text": ""})
    elif target == "gemini":
        messages[0]["parts"].insert(0, {"text": ""})
    elif target == "openai-responses":
        messages.insert(0, {"type": "message", "role": "assistant", "content": ""})
    return messages


# -- G07 / G08 / G09 / G10: reasoning and signatures ------------------------------------------------------


def _drop_signature(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if target == "anthropic" and messages:
        for block in messages[0]["content"]:
            block.pop("signature", None)
    elif target == "bedrock-converse" and messages:
        for block in messages[0]["content"]:
            block.get("reasoningContent", {}).get("reasoningText", {}).pop("signature", None)
    elif target == "gemini" and messages:
        for part in messages[0]["parts"]:
            part.pop("thoughtSignature", None)
    return messages


def _signature_on_every_call(target: str, _t: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if target != "gemini" or not messages:
        return messages
    signature = next((p["thoughtSignature"] for p in messages[0]["parts"] if "thoughtSignature" in p), None)
    for part in messages[0]["parts"]:
        if "functionCall" in part and signature:
            part["thoughtSignature"] = signature
    return messages


def _regroup(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if not messages:
        return messages
    if target == "anthropic":
        rank = {"thinking": 0, "redacted_thinking": 0, "text": 1, "tool_use": 2}
        messages[0]["content"].sort(key=lambda block: rank.get(block.get("type"), 3))
    elif target == "bedrock-converse":
        order = {"reasoningContent": 0, "text": 1, "toolUse": 2}
        messages[0]["content"].sort(key=lambda block: order.get(next(iter(block)), 3))
    elif target == "gemini":
        messages[0]["parts"].sort(key=lambda part: 0 if part.get("thought") else (2 if "functionCall" in part else 1))
    elif target == "openai-responses":
        head = [m for m in messages if m.get("type") == "reasoning"]
        rest = [m for m in messages if m.get("type") != "reasoning"]
        return head + rest
    return messages


def _drop_reasoning(target: str, _turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    if not messages:
        return messages
    if target == "anthropic":
        messages[0]["content"] = [
            b for b in messages[0]["content"] if b["type"] not in ("thinking", "redacted_thinking")
        ]
    elif target == "bedrock-converse":
        messages[0]["content"] = [b for b in messages[0]["content"] if "reasoningContent" not in b]
    elif target == "gemini":
        messages[0]["parts"] = [p for p in messages[0]["parts"] if not p.get("thought")]
    elif target == "openai-responses":
        return [m for m in messages if m.get("type") != "reasoning"]
    elif target in ("deepseek", "ollama"):
        messages[0].pop("reasoning_content", None)
        messages[0].pop("thinking", None)
    return messages


def _reasoning_slice(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    """reasoning_content holds only the reasoning that came after the last text/tool output (G09)."""
    if target != "deepseek" or not messages or "reasoning_content" not in messages[0]:
        return messages
    tail = ""
    for item in turn.items:
        if isinstance(item, ReasoningItem):
            tail += item.text
        elif isinstance(item, (TextItem, ToolCallItem)):
            tail = ""
    messages[0]["reasoning_content"] = tail
    return messages


def _stream_fields(target: str, turn: FinishedTurn, _r: Sequence[ToolResult], messages: Messages) -> Messages:
    for position, (call, entry) in enumerate(zip(turn.tool_calls, _call_entries(target, messages), strict=False)):
        if target == "anthropic":
            entry["index"] = position
            entry["partial_json"] = call.raw_arguments
        elif target in ("openai-chat", "deepseek", "cohere-v2"):
            entry["index"] = position
        elif target == "bedrock-converse":
            entry["contentBlockIndex"] = position
        elif target == "openai-responses":
            entry["output_index"] = position
        elif target == "gemini":
            entry["partialArgs"] = []
        elif target == "ollama":
            entry["type"] = "function"
    return messages


# -- G12 and tool_choice -------------------------------------------------------------------------------


def _sanitized_names(target: str, params: dict[str, Any]) -> dict[str, Any]:
    for tool in params.get("tools", params.get("toolConfig", {}).get("tools", [])):
        holders = tool.get("functionDeclarations") or [tool.get("function", tool.get("toolSpec", tool))]
        for holder in holders:
            holder["name"] = holder["name"].replace("-", "_")
    return params


def _strict_omitted(target: str, params: dict[str, Any]) -> dict[str, Any]:
    if target == "openai-responses":
        for tool in params.get("tools", []):
            tool.pop("strict", None)
    return params


def _guessed_choice(target: str, choice: ToolChoice | str | None, params: dict[str, Any]) -> dict[str, Any]:
    chosen = ToolChoice.coerce(choice)
    if target == "anthropic" and chosen.mode == "required":
        params["tool_choice"] = {"type": "required"}
    if target == "gemini" and chosen.mode == "named":
        params["tool_config"] = {"functionCallingConfig": {"mode": "ANY"}}
    return params


class _OllamaChoiceIgnored(ReferenceFormatter):
    """Sends nothing for a tool_choice Ollama cannot express, instead of raising."""

    def format_tools(
        self, target: str, tools: Sequence[ToolDefinition], choice: ToolChoice | str | None = "auto"
    ) -> dict[str, Any]:
        if target == "ollama":
            return tool_params(target, tools, "auto")
        if target == "gemini" and ToolChoice.coerce(choice).parallel is False:
            return tool_params(target, tools, "auto")
        return tool_params(target, tools, choice)


ALL = ("openai-chat", "deepseek", "openai-responses", "anthropic", "gemini", "ollama", "bedrock-converse", "cohere-v2")
OPENAI_STYLE = ("openai-chat", "deepseek", "openai-responses", "cohere-v2")  # arguments as a JSON string
OBJECT_STYLE = ("anthropic", "gemini", "ollama", "bedrock-converse")


def _m(
    name: str,
    taxonomy: tuple[str, ...],
    caught_by: set[str],
    targets: tuple[str, ...],
    factory: Callable[[], Any],
    description: str,
) -> FormatterMutant:
    return FormatterMutant(name, taxonomy, frozenset(caught_by), targets, factory, description)


FORMATTER_MUTANTS: tuple[FormatterMutant, ...] = (
    _m(
        "SEGMENT_ID_AS_TOOL_CALL_ID",
        ("G01",),
        {"tool_result_ids_match_calls"},
        ALL,
        lambda: PostProcessed(_segment_id_results),
        "results echo the handler's segment id instead of the provider call id",
    ),
    _m(
        "SYNTHETIC_IDS",
        ("G01", "B04"),
        {"provider_ids_byte_exact"},
        ("openai-chat", "deepseek", "openai-responses", "anthropic", "bedrock-converse", "cohere-v2"),
        lambda: PostProcessed(_synthetic_ids),
        "calls and results consistently use the segment id, never the provider's",
    ),
    _m(
        "SANITIZED_IDS",
        ("G11",),
        {"provider_ids_byte_exact"},
        ALL,
        lambda: PostProcessed(_sanitized_ids),
        "ids pass through re.sub('[^A-Za-z0-9_-]', '_', id)[:40]",
    ),
    _m(
        "ITEM_ID_AS_CALL_ID",
        ("G02",),
        {"responses_item_ids_valid"},
        ("openai-responses",),
        lambda: PostProcessed(_item_id_is_call_id),
        "Responses function_call items get id = call_id (call_...)",
    ),
    _m(
        "CALL_ID_FROM_ITEM_ID",
        ("G02", "A13"),
        {"provider_ids_byte_exact"},
        ("openai-responses",),
        lambda: PostProcessed(_call_id_from_item_id),
        "Responses calls and outputs are keyed by the fc_ item id instead of call_id",
    ),
    _m(
        "ALWAYS_STRINGIFY_ARGS",
        ("G03",),
        {"arguments_type_per_provider"},
        OBJECT_STYLE,
        lambda: PostProcessed(_always_stringify),
        "arguments are json.dumps'ed for every target, Anthropic/Gemini/Ollama included",
    ),
    _m(
        "NEVER_STRINGIFY_ARGS",
        ("G03",),
        {"arguments_type_per_provider"},
        OPENAI_STYLE,
        lambda: PostProcessed(_never_stringify),
        "arguments are sent as objects to OpenAI-style targets",
    ),
    _m(
        "RAW_ARGS_REPLAY",
        ("G04",),
        {"arguments_valid_json_objects", "arguments_type_per_provider"},
        ALL,
        lambda: PostProcessed(_raw_args_replay),
        "an invalid call is replayed with its raw (invalid) argument text",
    ),
    _m(
        "DROP_INVALID_CALL",
        ("G04", "G06"),
        {"calls_replayed_in_order", "results_answer_every_call"},
        ALL,
        lambda: PostProcessed(before=_drop_invalid),
        "calls whose END carried an error are left out of the follow-up",
    ),
    _m(
        "INVALID_CALL_AS_SUCCESS",
        ("G04",),
        {"results_answer_every_call"},
        ("anthropic", "gemini", "bedrock-converse"),
        lambda: PostProcessed(_invalid_as_success),
        "an invalid call's error result is not marked as an error (no is_error / 'output' instead of 'error')",
    ),
    _m(
        "MISSING_ERROR_RESULT",
        ("G04", "G06"),
        {"results_answer_every_call"},
        ALL,
        _NoSynthesisedErrors,
        "invalid calls the agent did not answer stay unanswered",
    ),
    _m(
        "COMPLETION_ORDER_RESULTS",
        ("G06",),
        {"results_adjacent_in_call_order"},
        ALL,
        lambda: PostProcessed(_completion_order),
        "results are sent in the order the tools finished",
    ),
    _m(
        "SPLIT_RESULTS",
        ("G06",),
        {"results_adjacent_in_call_order"},
        ("anthropic", "gemini", "bedrock-converse"),
        lambda: PostProcessed(_split_results),
        "one user message (Anthropic) / one Content (Gemini) per result",
    ),
    _m(
        "EMPTY_CONTENT_STRING",
        ("G05",),
        {"no_empty_text"},
        ("openai-chat", "deepseek", "anthropic", "gemini", "openai-responses", "bedrock-converse"),
        lambda: PostProcessed(_empty_content),
        "a tool-only turn gets content '' / an empty text block or part",
    ),
    _m(
        "DROP_SIGNATURE",
        ("G07", "G08"),
        {"signatures_preserved"},
        ("anthropic", "gemini", "bedrock-converse"),
        lambda: PostProcessed(_drop_signature),
        "thinking signatures and thought signatures are not replayed",
    ),
    _m(
        "SIGNATURE_ON_EVERY_CALL",
        ("G07",),
        {"signatures_preserved"},
        ("gemini",),
        lambda: PostProcessed(_signature_on_every_call),
        "the first call's thought signature is copied onto every parallel call",
    ),
    _m(
        "REGROUP_THINKING",
        ("G08",),
        {"block_order_preserved"},
        ("anthropic", "gemini", "openai-responses", "bedrock-converse"),
        lambda: PostProcessed(_regroup),
        "reasoning first, then text, then calls, instead of the streamed order",
    ),
    _m(
        "DROP_REASONING",
        ("G09", "G08"),
        {"reasoning_passed_back", "signatures_preserved"},
        ("anthropic", "gemini", "openai-responses", "deepseek", "bedrock-converse"),
        lambda: PostProcessed(_drop_reasoning),
        "thinking blocks / thought parts / rs_ items / reasoning_content are not sent back",
    ),
    _m(
        "REASONING_SLICE",
        ("G09",),
        {"reasoning_passed_back"},
        ("deepseek",),
        lambda: PostProcessed(_reasoning_slice),
        "reasoning_content holds only the reasoning after the last text or call",
    ),
    _m(
        "STREAMING_FIELDS_LEAK",
        ("G10",),
        {"no_streaming_artifacts", "sdk_accepts_followup"},
        ALL,
        lambda: PostProcessed(_stream_fields),
        "accumulated stream fields (index, partial_json, output_index, partialArgs) are replayed",
    ),
    _m(
        "SANITIZED_TOOL_NAMES",
        ("G12",),
        {"tool_schemas_accepted"},
        ALL,
        lambda: PostProcessed(tools=_sanitized_names),
        "tool names are sanitised ('-' -> '_'): get-time collides with get_time",
    ),
    _m(
        "RESPONSES_STRICT_OMITTED",
        ("G12",),
        {"tool_schemas_accepted"},
        ("openai-responses",),
        lambda: PostProcessed(tools=_strict_omitted),
        "Responses tools without strict: false (the API then defaults to strict)",
    ),
    _m(
        "GUESSED_TOOL_CHOICE",
        (),
        {"tool_choice_mapped"},
        ("anthropic", "gemini"),
        lambda: PostProcessed(choice=_guessed_choice),
        "Anthropic 'required' sent as {'type': 'required'}; Gemini named choice without allowedFunctionNames",
    ),
    _m(
        "UNSUPPORTED_CHOICE_IGNORED",
        (),
        {"tool_choice_mapped"},
        ("ollama", "gemini"),
        _OllamaChoiceIgnored,
        "a tool_choice the provider cannot express is silently dropped instead of raising",
    ),
)


# -- correct alternatives (must pass) ---------------------------------------------------------------


class _WrapRawArguments(ReferenceFormatter):
    """Replays an invalid call's raw text wrapped in an object instead of {} (the other documented choice)."""

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
        messages = copy.deepcopy(format_followup(target, turn, results))
        for call, entry in zip(turn.tool_calls, _call_entries(target, messages), strict=False):
            if call.valid:
                continue
            wrapped = {"_invalid_arguments": call.raw_arguments}
            holder = _args_holder(target, entry)
            key = _args_key(target)
            holder[key] = json.dumps(wrapped) if isinstance(holder[key], str) else wrapped
        return messages


class _NoItemIds(ReferenceFormatter):
    """Responses without fc_ item ids (stateless replay)."""

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
        return format_followup(target, turn, results, include_item_ids=False)


def _bare_function(target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
    """The protocol as a plain function (no format_tools: the tool checks are skipped)."""
    return format_followup(target, turn, results)


class _ResultTextAsJson(ReferenceFormatter):
    """Wraps every string result as a JSON object for OpenAI-style targets: content is the tool's output as JSON."""

    def format_followup(self, target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> Messages:
        messages = copy.deepcopy(format_followup(target, turn, results))
        if target in ("openai-chat", "deepseek"):
            by_key = {r.call_key: r for r in results}
            for call, entry in zip(turn.tool_calls, _result_entries(target, messages), strict=False):
                given = by_key.get(call.key)
                if given is not None and not given.is_error and not isinstance(given.output, str):
                    entry["content"] = json.dumps(json.loads(result_text(given.output)), indent=1)
        return messages


ALTERNATIVE_FORMATTERS: dict[str, Callable[[], Any]] = {
    "reference": ReferenceFormatter,
    "wrap_raw_arguments": _WrapRawArguments,
    "responses_without_item_ids": _NoItemIds,
    "bare_function": lambda: _bare_function,
    "result_json_reformatted": _ResultTextAsJson,
}


def completion_order_results() -> Any:
    """The COMPLETION_ORDER_RESULTS mutant as a zero-argument factory, for ``run --formatter`` (MODULE:FACTORY)."""
    return next(m for m in FORMATTER_MUTANTS if m.name == "COMPLETION_ORDER_RESULTS").factory()
