"""What a stream says by the library's own reading, for the libraries that have no stream accumulator.

None of google-genai, ollama-python, cohere or boto3 folds a stream into a final message, so the
objects they parsed are folded here by plain rules, written once and stated below, independently
of any converter (the converters are the code under test; these folds are ours too, and say so):

* ``gemini``: every ``functionCall`` part of candidate 0 is one call (``args`` serialised once),
  except a part restating a call whose ``id`` was already seen (the same call sent again);
  ``thought`` text parts are reasoning, other text parts text; ``finishReason`` the finish reason.

* ``ollama``: every ``message.tool_calls`` entry is one whole call (its ``arguments`` object
  serialised once); ``thinking`` is reasoning, ``content`` text; ``done_reason`` the finish reason.
  ollama-python's ``ToolCall`` keeps no ``id``, so calls read this way have none.
* ``bedrock-converse``: a ``contentBlockStart.start.toolUse`` without ``type: server_tool_use``
  opens a call at its ``contentBlockIndex``; ``contentBlockDelta.delta.toolUse.input`` fragments
  of that index are its argument text; ``delta.text`` is text and
  ``delta.reasoningContent.text`` reasoning; ``messageStop.stopReason`` the finish reason.
* ``bedrock-invoke``: each ``chunk``'s ``bytes`` is an Anthropic Messages event, folded by
  Anthropic's own ``accumulate_event``.
* ``cohere-v2``: ``tool-call-start`` opens a call at its ``index`` (``id``, ``function.name``,
  initial ``function.arguments``), ``tool-call-delta`` fragments of that index are appended;
  ``content-*`` text (``thinking`` content is reasoning) and ``tool-plan-delta`` (reasoning);
  ``message-end`` gives the finish reason and, with ``delta.error``, the error.

An event the library failed on ends the reading (``sdk_outcome`` keeps what came before).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.wire.outcome import ExpectedToolCall, Outcome, anthropic_outcome, decode_expected_arguments

__all__ = ["LIBRARY_FOLDS"]


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Calls:
    """Calls keyed by a stream index, in order of first appearance."""

    def __init__(self) -> None:
        self.order: list[Any] = []
        self.heads: dict[Any, tuple[Any, Any]] = {}
        self.parts: dict[Any, list[str]] = {}

    def open(self, key: Any, name: Any, call_id: Any, first: Any = "") -> None:
        if key not in self.heads:
            self.order.append(key)
        self.heads[key] = (name, call_id)
        self.parts[key] = [_text(first)]

    def extend(self, key: Any, fragment: Any) -> None:
        if key in self.parts:
            self.parts[key].append(_text(fragment))

    def into(self, outcome: Outcome) -> Outcome:
        for key in self.order:
            name, call_id = self.heads[key]
            raw = "".join(self.parts[key])
            outcome.tool_calls.append(ExpectedToolCall(name, call_id, decode_expected_arguments(raw), raw))
        return outcome


def _gemini(events: Sequence[Any]) -> Outcome:
    outcome = Outcome("gemini")
    seen_ids: set[str] = set()
    for response in events:
        for candidate in _get(response, "candidates") or ():
            if _get(candidate, "index") not in (None, 0):
                continue
            reason = _get(candidate, "finish_reason")
            if reason is not None:
                outcome.finish_reason = getattr(reason, "value", str(reason))
            for part in _get(_get(candidate, "content"), "parts") or ():
                _gemini_part(outcome, seen_ids, part)
    return outcome


def _gemini_part(outcome: Outcome, seen_ids: set[str], part: Any) -> None:
    call = _get(part, "function_call")
    if call is not None:
        call_id = _get(call, "id")
        if call_id and call_id in seen_ids:
            return  # a restatement of a call already read
        if call_id:
            seen_ids.add(call_id)
        args = _get(call, "args")
        raw = json.dumps(dict(args) if args is not None else {}, ensure_ascii=False)
        outcome.tool_calls.append(ExpectedToolCall(_get(call, "name"), call_id, decode_expected_arguments(raw), raw))
        return
    text = _text(_get(part, "text"))
    if _get(part, "thought"):
        outcome.reasoning += text
    else:
        outcome.text += text


def _ollama(events: Sequence[Any]) -> Outcome:
    outcome = Outcome("ollama")
    for event in events:
        message = _get(event, "message")
        outcome.reasoning += _text(_get(message, "thinking"))
        outcome.text += _text(_get(message, "content"))
        for call in _get(message, "tool_calls") or ():
            function = _get(call, "function")
            arguments = _get(function, "arguments")
            if isinstance(arguments, str):
                raw = arguments
            else:
                raw = json.dumps(dict(arguments) if arguments is not None else {}, ensure_ascii=False)
            outcome.tool_calls.append(
                ExpectedToolCall(_get(function, "name"), _get(call, "id"), decode_expected_arguments(raw), raw)
            )
        if _get(event, "done") is True:
            outcome.finish_reason = _get(event, "done_reason")
    return outcome


def _converse_event(outcome: Outcome, calls: _Calls, kind: str, body: Any) -> None:
    index = _get(body, "contentBlockIndex")
    if kind == "contentBlockStart":
        tool = _get(_get(body, "start"), "toolUse")
        if tool is not None and _get(tool, "type") != "server_tool_use":
            calls.open(index, _get(tool, "name"), _get(tool, "toolUseId"))
    elif kind == "contentBlockDelta":
        delta = _get(body, "delta")
        outcome.text += _text(_get(delta, "text"))
        outcome.reasoning += _text(_get(_get(delta, "reasoningContent"), "text"))
        tool = _get(delta, "toolUse")
        if tool is not None:
            calls.extend(index, _get(tool, "input"))
    elif kind == "messageStop":
        outcome.finish_reason = _get(body, "stopReason")


def _bedrock_converse(events: Sequence[Any]) -> Outcome:
    outcome = Outcome("bedrock-converse")
    calls = _Calls()
    for event in events:
        for kind, body in event.items() if isinstance(event, Mapping) else ():
            _converse_event(outcome, calls, str(kind), body)
    return calls.into(outcome)


def _bedrock_invoke(events: Sequence[Any]) -> Outcome:
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    decoded = []
    for event in events:
        data = _get(_get(event, "chunk"), "bytes")
        if not isinstance(data, (bytes, str)):
            continue
        payload = json.loads(data)
        if isinstance(payload, Mapping) and payload.get("type") != "ping":
            decoded.append(construct_type(type_=RawMessageStreamEvent, value=payload))
    return anthropic_outcome(decoded, api="bedrock-invoke")


def _cohere_event(outcome: Outcome, calls: _Calls, event: Any) -> None:
    kind = _get(event, "type")
    delta = _get(event, "delta")
    message = _get(delta, "message")
    if kind == "tool-call-start":
        call = _get(message, "tool_calls")
        function = _get(call, "function")
        calls.open(_get(event, "index"), _get(function, "name"), _get(call, "id"), _get(function, "arguments"))
    elif kind == "tool-call-delta":
        calls.extend(_get(event, "index"), _get(_get(_get(message, "tool_calls"), "function"), "arguments"))
    elif kind in ("content-start", "content-delta"):
        content = _get(message, "content")
        outcome.text += _text(_get(content, "text"))
        outcome.reasoning += _text(_get(content, "thinking"))
    elif kind == "tool-plan-delta":
        outcome.reasoning += _text(_get(message, "tool_plan"))
    elif kind == "message-end":
        outcome.finish_reason = _get(delta, "finish_reason")
        error = _get(delta, "error")
        outcome.error = error if isinstance(error, str) and error else outcome.error


def _cohere_v2(events: Sequence[Any]) -> Outcome:
    outcome = Outcome("cohere-v2")
    calls = _Calls()
    for event in events:
        _cohere_event(outcome, calls, event)
    return calls.into(outcome)


LIBRARY_FOLDS: dict[str, Callable[[Sequence[Any]], Outcome]] = {
    "gemini": _gemini,
    "ollama": _ollama,
    "bedrock-converse": _bedrock_converse,
    "bedrock-invoke": _bedrock_invoke,
    "cohere-v2": _cohere_v2,
}
