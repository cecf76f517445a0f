"""Expected outcomes read by the provider SDKs and client libraries themselves: an independent source.

The suite never derives an expectation from the code under test. For a response body, the SDK
that decodes it also knows how to fold it into a final message: OpenAI's
``ChatCompletionStreamState`` (what ``chat.completions.stream()`` uses), the Responses API's own
final response (what ``responses.stream().get_final_response()`` returns: the terminal event's
``response``; the helper's running snapshot only when the stream has no terminal event), and
Anthropic's ``accumulate_event`` (what ``messages.stream().get_final_message()`` uses).
google-genai, ollama-python, cohere and boto3 have no accumulator: the objects they parsed are
folded by the plain rules in ``conformance.wire.outcome_libraries`` (ours, stated there); Bedrock's
InvokeModel stream, which carries Anthropic events, goes through Anthropic's ``accumulate_event``.
``sdk_outcome`` runs the body through those and reports tool calls, text, reasoning and the
finish reason, and which calls may run (``conformance.wire.may_run``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.wire.apis import WireFormatError
from conformance.wire.may_run import WHY_NOT, call_why_not, derive_may_run
from conformance.wire.sdk import iter_sdk_events

__all__ = [
    "ExpectedToolCall",
    "Outcome",
    "SdkAccumulatorError",
    "anthropic_outcome",
    "decode_expected_arguments",
    "sdk_outcome",
]


class SdkAccumulatorError(RuntimeError):
    """The SDK's accumulator could not fold this body (dialects it does not support, errors)."""


@dataclass(frozen=True)
class ExpectedToolCall:
    """One tool call of an outcome (``replay --json``'s ``tool_calls`` entries, without ``index``).

    ``may_run`` says whether the call may be executed: only when the turn ended normally *and* the
    call has a name and an arguments object. ``why_not`` says why not, in one word of the
    vocabulary of ``conformance.wire.may_run`` (``WHY_NOT``), the first that applies of:

    * ``provider_error``: the provider reported an error inside the stream (an error event, or a
      stop reason that says the turn failed or was withheld: Responses ``failed``, Chat
      ``content_filter``, Anthropic ``refusal``, ...);
    * ``incomplete``: the stream ended without its terminal event (the body stopped before it);
    * ``truncated``: the provider cut the turn at its token limit (Chat and Ollama ``length``,
      Responses ``max_output_tokens``, Anthropic and Bedrock ``max_tokens``, Gemini and Cohere
      ``MAX_TOKENS``, ...), even when the call's arguments happen to parse;
    * ``no_name``: the stream never named the call;
    * ``invalid_arguments``: the argument text is not one JSON object (invalid, truncated text, a
      list or a scalar, several objects).

    Both are derived, never taken from the code under test: ``derive_may_run`` sets ``why_not``
    from the outcome's ``finish_reason`` and ``error``; a call built on its own gets the call-level
    reason (``no_name``, ``invalid_arguments``) or none. ``may_run`` is ``why_not is None``.
    """

    name: str | None
    call_id: str | None
    arguments: dict[str, Any] | None  # None: the call must be rejected (invalid or truncated)
    raw_arguments: str
    # Why the call was rejected, when it was: the handler's END error in a replay; in an
    # expectation, what is wrong with the arguments (never compared as text).
    error: str | None = None
    why_not: str | None = None

    def __post_init__(self) -> None:
        if self.why_not is None:
            # A call without a name or an arguments object cannot run, whatever the stream did.
            object.__setattr__(self, "why_not", call_why_not(self.name, self.arguments))
        elif self.why_not not in WHY_NOT:
            raise ValueError(f"why_not {self.why_not!r} is not one of {', '.join(WHY_NOT)}")

    @property
    def may_run(self) -> bool:
        """Whether the call may be executed (``why_not`` is None)."""
        return self.why_not is None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
            "error": self.error,
            "may_run": self.may_run,
            "why_not": self.why_not,
        }


@dataclass
class Outcome:
    """What a stream amounts to: the public shape of ``replay --json`` and of cassette expectations."""

    api: str
    tool_calls: list[ExpectedToolCall] = field(default_factory=list)
    text: str = ""
    reasoning: str = ""
    # False when the source records no reasoning text (third-party expectations give only its
    # length); the comparison then leaves reasoning out.
    reasoning_recorded: bool = True
    finish_reason: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.api,
            "tool_calls": [{"index": position, **call.to_json()} for position, call in enumerate(self.tool_calls)],
            "text": self.text,
            "reasoning": self.reasoning,
            "finish_reason": self.finish_reason,
            "error": self.error,
        }


def decode_expected_arguments(raw: str) -> dict[str, Any] | None:
    """Strict decode for expectations (plain ``json.loads``, independent of the code under test):
    the arguments object, or None when the text is not one."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _openai_chat(events: Sequence[Any]) -> Outcome:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState()
    for event in events:
        state.handle_chunk(event)
    completion = state.current_completion_snapshot
    outcome = Outcome("openai-chat")
    if completion.choices:
        choice = completion.choices[0]
        message = choice.message
        outcome.text = message.content or ""
        outcome.reasoning = getattr(message, "reasoning_content", None) or ""
        outcome.finish_reason = choice.finish_reason
        for call in message.tool_calls or []:
            raw = call.function.arguments or ""
            outcome.tool_calls.append(
                ExpectedToolCall(call.function.name, call.id, decode_expected_arguments(raw), raw)
            )
    return outcome


_RESPONSES_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def _openai_responses(events: Sequence[Any]) -> Outcome:
    from openai import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    snapshot: Any = None
    final: Any = None
    outcome = Outcome("openai-responses")
    for event in events:
        # handle_event is what responses.stream() runs per event. The terminal event's response is
        # what get_final_response() returns; without one, the helper's running snapshot (private,
        # folded from the deltas) is its whole view of the stream.
        state.handle_event(event)
        snapshot = getattr(state, "_ResponseStreamState__current_snapshot", None)
        if event.type in _RESPONSES_TERMINAL:
            response = event.response
            final = response if getattr(response, "output", None) else None
            outcome.finish_reason = (
                getattr(response.incomplete_details, "reason", None) if response.incomplete_details else None
            ) or response.status
        elif event.type == "error":
            outcome.error = getattr(event, "message", None) or "error event"
    for item in getattr(final if final is not None else snapshot, "output", None) or []:
        if item.type == "function_call":
            raw = item.arguments or ""
            outcome.tool_calls.append(ExpectedToolCall(item.name, item.call_id, decode_expected_arguments(raw), raw))
        elif item.type == "message":
            outcome.text += "".join(part.text for part in item.content if part.type == "output_text")
        elif item.type == "reasoning":
            outcome.reasoning += "".join(part.text for part in item.summary or [])
    return outcome


def anthropic_outcome(events: Sequence[Any], api: str = "anthropic") -> Outcome:
    """Anthropic Messages stream events folded by the SDK's own ``accumulate_event``."""
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    # The accumulator keeps each tool block's raw JSON text here, beside the partial object it
    # recovers; expectations use the text, so a truncated call reads as truncated, not as the
    # partial object jiter salvaged.
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    outcome = Outcome(api)
    if snapshot is None:
        return outcome
    outcome.finish_reason = snapshot.stop_reason
    for index, block in enumerate(snapshot.content):
        if block.type == "tool_use":
            raw = json_bufs.get(index, b"").decode("utf-8")
            outcome.tool_calls.append(ExpectedToolCall(block.name, block.id, decode_expected_arguments(raw), raw))
        elif block.type == "text":
            outcome.text += block.text
        elif block.type == "thinking":
            outcome.reasoning += block.thinking
    return outcome


_ACCUMULATORS: dict[str, Callable[[Sequence[Any]], Outcome]] = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": anthropic_outcome,
}


def sdk_outcome(api: str, sse: bytes) -> Outcome:
    """Replay ``sse`` through the SDK and fold it with the SDK's own accumulator.

    An SDK error raised mid-stream (an in-band error event) ends the fold: what arrived before is
    kept and ``error`` says what the SDK raised.
    """
    from conformance.wire.outcome_libraries import LIBRARY_FOLDS

    fold = _ACCUMULATORS.get(api) or LIBRARY_FOLDS[api]
    events: list[Any] = []
    error: str | None = None
    try:
        for event in iter_sdk_events(api, [sse]):
            events.append(event)
    except WireFormatError:
        raise
    except Exception as raised:  # noqa: BLE001 - each SDK raises its own in-band error classes mid-stream
        error = f"{type(raised).__name__}: {raised}"
    try:
        outcome = fold(events)
    except Exception as raised:  # an accumulator failing on a dialect is what is reported
        raise SdkAccumulatorError(f"the {api} SDK accumulator failed: {type(raised).__name__}: {raised}") from raised
    outcome.error = outcome.error or error
    return derive_may_run(outcome)
