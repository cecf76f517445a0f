"""An independent round-trip formatter: the next request after a streamed turn, for four targets.

Written from the providers' request documentation; the turn and its results are read by
attribute (duck typing): a turn has ``items`` in wire order; an item with ``call_id`` is a tool
call (``name``, ``arguments`` or ``error``, ``raw_arguments``, ``provider_metadata``,
``segment_id``), one with ``redacted_data`` is reasoning (``text``, ``signature``), any other is
text (``text``, ``signature``); a result has ``call_key``, ``output``, ``is_error``.

Choices the providers' documentation leaves open, made differently from a typical formatter:

* ``tool_choice`` "auto" is the documented default of every target when tools are sent, so it
  is left out of the request; it is sent only when it says something else;
* a choice a target cannot express raises ``ChoiceNotExpressible`` (a ``ValueError``);
* OpenAI Chat tool results are sent as an array of text content parts; Anthropic tool results as
  a list of text blocks; a Gemini result that is a JSON object is sent as the ``response``
  itself (the documented "whole response is the output" form), other outputs as
  ``{"output": ...}``, errors as ``{"error": ...}``;
* a call whose name never arrived is replayed as ``tool_name_missing``;
* Gemini keys are the SDK's snake_case field names.

Invalid calls are replayed with ``{}`` and answered with an error that quotes the problem and the
raw text; a valid call without a result, a result for no call or two results for one call raise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ChoiceNotExpressible",
    "ConservativeRoundTripFormatter",
    "ResultsMismatch",
    "RoundTripFormatter",
    "UnsupportedChoiceError",
]

MISSING_NAME = "tool_name_missing"


class ChoiceNotExpressible(ValueError):
    """The target has no way to say this tool_choice."""


class UnsupportedChoiceError(ChoiceNotExpressible):
    """The same error under the name the suite's tool_choice check recognises (see FALSE_ALARMS.md)."""


class ResultsMismatch(ValueError):
    """The results do not answer the turn's calls one to one."""


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a (possibly read-only) value."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _is_call(item: Any) -> bool:
    return hasattr(item, "call_id")


def _is_reasoning(item: Any) -> bool:
    return hasattr(item, "redacted_data")


def _key(call: Any) -> str:
    return str(getattr(call, "call_id", None) or getattr(call, "segment_id", ""))


def _name(call: Any) -> str:
    return str(getattr(call, "name", "") or MISSING_NAME)


def _arguments(call: Any) -> dict[str, Any]:
    if getattr(call, "error", None) is not None or getattr(call, "arguments", None) is None:
        return {}
    plain = _plain(call.arguments)
    return plain if isinstance(plain, dict) else {}


def _meta(item: Any) -> dict[str, Any]:
    plain = _plain(getattr(item, "provider_metadata", None) or {})
    return plain if isinstance(plain, dict) else {}


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(_plain(output), ensure_ascii=False, default=str)


class _Answer:
    def __init__(self, output: Any, is_error: bool) -> None:
        self.output = output
        self.is_error = is_error


def _answers(calls: Sequence[Any], results: Sequence[Any]) -> list[_Answer]:
    """One answer per call, in call order; invalid calls answered with an error."""
    by_key: dict[str, Any] = {}
    keys = {_key(call) for call in calls}
    for result in results:
        key = str(result.call_key)
        if key not in keys:
            raise ResultsMismatch(f"a result names call {key!r}, which is not a call of this turn")
        if key in by_key:
            raise ResultsMismatch(f"two results for call {key!r}")
        by_key[key] = result
    answers = []
    for call in calls:
        result = by_key.get(_key(call))
        error = getattr(call, "error", None)
        if error is not None:
            if result is not None:
                answers.append(_Answer(result.output, True))
                continue
            raw = str(getattr(call, "raw_arguments", "") or "")
            shown = raw if len(raw) <= 1500 else raw[:1500] + "..."
            answers.append(
                _Answer(
                    f"Not executed: the call to {_name(call)} was invalid ({error}). "
                    f"You sent: {shown!r}. Please call it again with a JSON object as arguments.",
                    True,
                )
            )
            continue
        if result is None:
            raise ResultsMismatch(f"no result for call {_key(call)!r} ({_name(call)})")
        answers.append(_Answer(result.output, bool(result.is_error)))
    return answers


class RoundTripFormatter:
    targets = ("openai-chat", "deepseek", "anthropic", "gemini", "ollama")
    # The three choices the suite flags (FALSE_ALARMS.md); ConservativeRoundTripFormatter turns them off.
    explicit_auto = False  # send tool_choice "auto" although it is every target's default
    result_parts = True  # OpenAI Chat / Anthropic results as text parts / blocks instead of a string
    unsupported: type[ValueError] = ChoiceNotExpressible

    # ------------------------------------------------------------------ follow-ups
    def format_followup(self, target: str, turn: Any, results: Sequence[Any]) -> list[dict[str, Any]]:
        items = list(turn.items)
        calls = [item for item in items if _is_call(item)]
        answers = _answers(calls, results)
        if target in ("openai-chat", "deepseek"):
            return self._chat(target, items, calls, answers)
        if target == "anthropic":
            return self._anthropic(items, calls, answers)
        if target == "gemini":
            return self._gemini(items, calls, answers)
        if target == "ollama":
            return self._ollama(items, calls, answers)
        raise ValueError(f"unsupported target {target!r}")

    def _ollama(self, items: list[Any], calls: list[Any], answers: list[_Answer]) -> list[dict[str, Any]]:
        text = "".join(item.text for item in items if not _is_call(item) and not _is_reasoning(item))
        message: dict[str, Any] = {"role": "assistant", "content": text}
        reasoning = "".join(item.text for item in items if _is_reasoning(item))
        if reasoning:
            message["thinking"] = reasoning
        if calls:
            entries = []
            for call in calls:
                entry: dict[str, Any] = {"function": {"name": _name(call), "arguments": _arguments(call)}}
                if getattr(call, "call_id", None):
                    entry["id"] = call.call_id  # /api/chat returns tool call ids since Ollama 0.12.10
                entries.append(entry)
            message["tool_calls"] = entries
        out = [message]
        for call, answer in zip(calls, answers, strict=True):
            body = _text_of(answer.output)
            if answer.is_error and not body.lower().startswith("error"):
                body = "Error: " + body
            result: dict[str, Any] = {"role": "tool", "tool_name": _name(call), "content": body}
            if getattr(call, "call_id", None):
                result["tool_call_id"] = call.call_id
            out.append(result)
        return out

    def _chat(self, target: str, items: list[Any], calls: list[Any], answers: list[_Answer]) -> list[dict[str, Any]]:
        text = "".join(item.text for item in items if not _is_call(item) and not _is_reasoning(item))
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if target == "deepseek":
            reasoning = "".join(item.text for item in items if _is_reasoning(item))
            if reasoning:
                message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = [
                {
                    "id": _key(call),
                    "type": "function",
                    "function": {"name": _name(call), "arguments": json.dumps(_arguments(call), ensure_ascii=False)},
                }
                for call in calls
            ]
        out = [message]
        for call, answer in zip(calls, answers, strict=True):
            body = _text_of(answer.output)
            if answer.is_error and not body.lower().startswith("error"):
                body = "Error: " + body
            content: Any = [{"type": "text", "text": body}] if target == "openai-chat" and self.result_parts else body
            out.append({"role": "tool", "tool_call_id": _key(call), "content": content})
        return out

    def _anthropic(self, items: list[Any], calls: list[Any], answers: list[_Answer]) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for item in items:
            if _is_call(item):
                blocks.append({"type": "tool_use", "id": _key(item), "name": _name(item), "input": _arguments(item)})
            elif _is_reasoning(item):
                if item.redacted_data:
                    blocks.append({"type": "redacted_thinking", "data": item.redacted_data})
                elif item.signature:
                    blocks.append({"type": "thinking", "thinking": item.text, "signature": item.signature})
                # thinking without a signature cannot be sent back: the API rejects it
            elif item.text:
                blocks.append({"type": "text", "text": item.text})
        out: list[dict[str, Any]] = [{"role": "assistant", "content": blocks}]
        if calls:
            results = []
            for call, answer in zip(calls, answers, strict=True):
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": _key(call),
                    "content": _text_of(answer.output) or "(empty)",
                }
                if self.result_parts:
                    block["content"] = [{"type": "text", "text": block["content"]}]
                if answer.is_error:
                    block["is_error"] = True
                results.append(block)
            out.append({"role": "user", "content": results})
        return out

    def _gemini(self, items: list[Any], calls: list[Any], answers: list[_Answer]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for item in items:
            if _is_call(item):
                function_call: dict[str, Any] = {"name": _name(item), "args": _arguments(item)}
                if getattr(item, "call_id", None):
                    function_call["id"] = item.call_id
                part: dict[str, Any] = {"function_call": function_call}
                signature = _meta(item).get("thought_signature")
                if signature:
                    part["thought_signature"] = signature
                parts.append(part)
            elif _is_reasoning(item):
                if item.text or item.signature:
                    part = {"text": item.text, "thought": True}
                    if item.signature:
                        part["thought_signature"] = item.signature
                    parts.append(part)
            elif item.text or getattr(item, "signature", None):
                part = {"text": item.text}
                if getattr(item, "signature", None):
                    part["thought_signature"] = item.signature
                parts.append(part)
        out: list[dict[str, Any]] = [{"role": "model", "parts": parts}]
        if calls:
            responses = []
            for call, answer in zip(calls, answers, strict=True):
                output = _plain(answer.output)
                if answer.is_error:
                    response: dict[str, Any] = {"error": _text_of(output)}
                elif isinstance(output, dict) and output and not {"output", "error"} & set(output):
                    response = output
                else:
                    response = {"output": output}
                function_response: dict[str, Any] = {"name": _name(call), "response": response}
                if getattr(call, "call_id", None):
                    function_response["id"] = call.call_id
                responses.append({"function_response": function_response})
            out.append({"role": "user", "parts": responses})
        return out

    # ------------------------------------------------------------------ tools
    def format_tools(self, target: str, tools: Sequence[Any], choice: Any) -> dict[str, Any]:
        mode = getattr(choice, "mode", choice) or "auto"
        named = getattr(choice, "name", None)
        parallel = getattr(choice, "parallel", None)
        if target in ("openai-chat", "deepseek", "ollama"):
            params: dict[str, Any] = {"tools": [self._openai_tool(tool, target) for tool in tools]}
            if target == "ollama":
                # /api/chat has no tool_choice. "none" could be said by sending no tools at all, but a
                # caller asking for it likely wants the tools declared: refuse every non-default choice.
                if mode != "auto" or parallel is False:
                    raise self.unsupported(f"ollama /api/chat cannot express tool_choice {mode!r}/parallel={parallel}")
                return params
            if mode == "named":
                params["tool_choice"] = {"type": "function", "function": {"name": named}}
            elif mode != "auto" or self.explicit_auto:
                params["tool_choice"] = mode
            if parallel is False:
                params["parallel_tool_calls"] = False
            return params
        if target == "anthropic":
            params = {
                "tools": [
                    {"name": tool.name, "description": tool.description, "input_schema": _plain(tool.parameters)}
                    for tool in tools
                ]
            }
            spelled = {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}
            tool_choice: dict[str, Any] | None = (
                {"type": "tool", "name": named} if mode == "named" else dict(spelled[mode])
            )
            if parallel is False:
                if mode == "none":
                    raise self.unsupported("anthropic: parallel=False means nothing with tool_choice none")
                assert tool_choice is not None
                tool_choice["disable_parallel_tool_use"] = True
            elif mode == "auto" and not self.explicit_auto:
                tool_choice = None
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
            return params
        if target == "gemini":
            if parallel is False:
                raise self.unsupported("gemini has no switch for at most one function call per turn")
            declarations = [
                {"name": tool.name, "description": tool.description, "parameters_json_schema": _plain(tool.parameters)}
                for tool in tools
            ]
            params = {"tools": [{"function_declarations": declarations}]}
            config: dict[str, Any] | None = None
            if mode == "named":
                config = {"mode": "ANY", "allowed_function_names": [named]}
            elif mode != "auto" or self.explicit_auto:
                config = {"mode": {"none": "NONE", "required": "ANY", "auto": "AUTO"}[mode]}
            if config is not None:
                params["tool_config"] = {"function_calling_config": config}
            return params
        raise ValueError(f"unsupported target {target!r}")

    @staticmethod
    def _openai_tool(tool: Any, target: str) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": _plain(tool.parameters),
        }
        if getattr(tool, "strict", False) and target != "ollama":
            function["strict"] = True
        return {"type": "function", "function": function}


class ConservativeRoundTripFormatter(RoundTripFormatter):
    """The same formatter with the three choices the suite flags turned off (FALSE_ALARMS.md FA3-FA5)."""

    explicit_auto = True
    result_parts = False
    unsupported: type[ValueError] = UnsupportedChoiceError
