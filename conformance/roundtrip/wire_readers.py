"""Read a captured request back per provider: the calls, results and blocks of the follow-up, as a ``WireView``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# A field the request does not carry at all (distinct from one sent as null).
ABSENT: Any = object()

__all__ = ["ABSENT", "HISTORY_KEY", "WireBlock", "WireCall", "WireResult", "WireView", "role_of", "wire_view"]


@dataclass
class WireCall:
    id: Any
    name: Any
    arguments: Any
    raw: dict[str, Any]
    signature: Any = None
    item_id: Any = ABSENT


@dataclass
class WireResult:
    id: Any
    name: Any
    content: Any
    is_error: Any
    raw: dict[str, Any]


@dataclass
class WireBlock:
    kind: str  # "text" | "reasoning" | "redacted" | "call"
    raw: dict[str, Any]
    text: Any = None
    signature: Any = None
    key: Any = None  # reasoning: the Responses item id / redacted data; call: its id


@dataclass
class WireView:
    """The follow-up part of a captured request, read back per target."""

    target: str
    entries: list[Any]
    assistant: dict[str, Any] | None = None
    blocks: list[WireBlock] = field(default_factory=list)
    calls: list[WireCall] = field(default_factory=list)
    results: list[WireResult] = field(default_factory=list)
    structure: list[str] = field(default_factory=list)
    adjacency: list[str] = field(default_factory=list)


_TEXT_PART_TYPES = ("text", "input_text", "output_text")


def text_of_parts(content: Any) -> Any:
    """A tool result's content as the one string it means, when it is a list of text parts only.

    OpenAI Chat (``{"type": "text"}`` parts), Responses (``input_text``) and Anthropic (text
    blocks) accept a result either as a string or as such a list; both carry the same output.
    Anything else (an image part, a string, a mapping) is returned as it is.
    """
    if not isinstance(content, list) or not content:
        return content
    if not all(isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES for part in content):
        return content
    texts = [part.get("text") for part in content]
    return "".join(texts) if all(isinstance(text, str) for text in texts) else content


def role_of(entry: Any) -> Any:
    return entry.get("role") if isinstance(entry, dict) else None


HISTORY_KEY = {"openai-responses": "input", "gemini": "contents"}


def wire_view(target: str, request: Mapping[str, Any], prefix: int) -> WireView:
    """Read the assistant turn and the results out of a captured request (``prefix``: entries before them)."""
    entries = list(request.get(HISTORY_KEY.get(target, "messages")) or [])[prefix:]
    view = WireView(target, entries)
    if not entries:
        view.structure.append("the formatter returned nothing: the assistant turn is missing")
        return view
    if target in ("openai-chat", "deepseek", "ollama"):
        _read_chat(view)
    elif target == "openai-responses":
        _read_responses(view)
    elif target == "anthropic":
        _read_anthropic(view)
    else:
        _read_gemini(view)
    return view


def _read_chat(view: WireView) -> None:
    first = view.entries[0]
    if role_of(first) != "assistant":
        view.structure.append(f"the follow-up must start with the assistant message, got role {role_of(first)!r}")
        return
    view.assistant = first
    reasoning = first.get("reasoning_content", first.get("thinking"))
    if reasoning is not None:
        view.blocks.append(WireBlock("reasoning", first, text=reasoning))
    if first.get("content") not in (None, ""):
        view.blocks.append(WireBlock("text", first, text=first.get("content")))
    for entry in first.get("tool_calls") or []:
        function = entry.get("function") if isinstance(entry, dict) else None
        function = function if isinstance(function, dict) else {}
        call = WireCall(entry.get("id"), function.get("name"), function.get("arguments", ABSENT), entry)
        view.calls.append(call)
        view.blocks.append(WireBlock("call", entry, key=call.id))
    position = 1
    while position < len(view.entries) and role_of(view.entries[position]) == "tool":
        entry = view.entries[position]
        view.results.append(
            WireResult(
                entry.get("tool_call_id"),
                entry.get("tool_name", entry.get("name")),
                text_of_parts(entry.get("content")),
                None,
                entry,
            )
        )
        position += 1
    for later in view.entries[position:]:
        if role_of(later) == "tool":
            view.adjacency.append("a role 'tool' message comes after a non-tool message: results are not contiguous")
            break
        view.adjacency.append(f"a {role_of(later)!r} message sits among or after the tool results")
        break


def _read_responses(view: WireView) -> None:
    seen_output = False
    for entry in view.entries:
        if not isinstance(entry, dict):
            view.structure.append(f"an input item is not an object: {entry!r}")
            continue
        kind = entry.get("type") or ("message" if "role" in entry else None)
        if kind == "function_call_output":
            seen_output = True
            view.results.append(WireResult(entry.get("call_id"), None, text_of_parts(entry.get("output")), None, entry))
            continue
        if seen_output:
            view.adjacency.append(f"a {kind!r} item comes after a function_call_output: outputs must come last")
        if kind == "function_call":
            call = WireCall(entry.get("call_id"), entry.get("name"), entry.get("arguments", ABSENT), entry)
            call.item_id = entry.get("id", ABSENT)
            view.calls.append(call)
            view.blocks.append(WireBlock("call", entry, key=call.id))
        elif kind == "reasoning":
            summary = entry.get("summary") or []
            text = "".join(part.get("text", "") for part in summary if isinstance(part, dict))
            view.blocks.append(WireBlock("reasoning", entry, text=text, key=entry.get("id")))
        elif kind == "message":
            if entry.get("role") != "assistant":
                view.structure.append(f"a {entry.get('role')!r} message inside the assistant turn")
            content = entry.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            view.blocks.append(WireBlock("text", entry, text=content))
        else:
            view.structure.append(f"an unexpected input item type {kind!r}")


def _read_anthropic(view: WireView) -> None:
    first = view.entries[0]
    if role_of(first) != "assistant":
        view.structure.append(f"the follow-up must start with the assistant message, got role {role_of(first)!r}")
        return
    view.assistant = first
    content = first.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking":
            view.blocks.append(
                WireBlock("reasoning", block, text=block.get("thinking"), signature=block.get("signature"))
            )
        elif kind == "redacted_thinking":
            view.blocks.append(WireBlock("redacted", block, key=block.get("data")))
        elif kind == "text":
            view.blocks.append(WireBlock("text", block, text=block.get("text")))
        elif kind == "tool_use":
            call = WireCall(block.get("id"), block.get("name"), block.get("input", ABSENT), block)
            view.calls.append(call)
            view.blocks.append(WireBlock("call", block, key=call.id))
        else:
            view.blocks.append(WireBlock(str(kind), block))
    for position, message in enumerate(view.entries[1:], start=1):
        content = message.get("content") if isinstance(message, dict) else None
        parts = content if isinstance(content, list) else []
        tool_results = [part for part in parts if isinstance(part, dict) and part.get("type") == "tool_result"]
        if not tool_results:
            continue
        if position != 1 or role_of(message) != "user":
            view.adjacency.append(
                f"tool_result blocks in message #{position} ({role_of(message)!r}): all results belong in the one user "
                "message right after the assistant turn"
            )
            continue
        leading = 0
        while leading < len(parts) and isinstance(parts[leading], dict) and parts[leading].get("type") == "tool_result":
            leading += 1
        if leading != len(tool_results):
            view.adjacency.append("the user message has other content before or between its tool_result blocks")
        for part in tool_results:
            view.results.append(
                WireResult(
                    part.get("tool_use_id"), None, text_of_parts(part.get("content")), part.get("is_error", False), part
                )
            )


def _read_gemini(view: WireView) -> None:
    first = view.entries[0]
    if role_of(first) != "model":
        view.structure.append(f"the follow-up must start with the model content, got role {role_of(first)!r}")
        return
    view.assistant = first
    for part in first.get("parts") or []:
        signature = part.get("thoughtSignature", part.get("thought_signature"))
        call_value = part.get("functionCall", part.get("function_call"))
        if call_value is not None:
            call = WireCall(call_value.get("id"), call_value.get("name"), call_value.get("args", ABSENT), part)
            call.signature = signature
            view.calls.append(call)
            view.blocks.append(WireBlock("call", part, signature=signature, key=call.name))
        elif "text" in part:
            kind = "reasoning" if part.get("thought") else "text"
            view.blocks.append(WireBlock(kind, part, text=part.get("text"), signature=signature))
        else:
            view.blocks.append(WireBlock("other", part, signature=signature))
    for position, content in enumerate(view.entries[1:], start=1):
        parts = content.get("parts") or [] if isinstance(content, dict) else []
        responses = [p for p in parts if isinstance(p, dict) and ("functionResponse" in p or "function_response" in p)]
        if not responses:
            continue
        if position != 1:
            view.adjacency.append(
                f"functionResponse parts in content #{position}: Gemini needs all responses in the one content right "
                "after the model turn (as many as there were calls)"
            )
            continue
        if len(responses) != len(parts):
            view.adjacency.append("the response content mixes functionResponse parts with other parts")
        for part in responses:
            value = part.get("functionResponse", part.get("function_response")) or {}
            response = value.get("response")
            is_error = isinstance(response, dict) and "error" in response
            view.results.append(WireResult(value.get("id"), value.get("name"), response, is_error, part))
