"""Which calls of a stream may run, and why not: derived from the stream itself, in one place.

A tool call may run only when the turn ended normally *and* the call itself is whole. Both halves
are read here and nowhere else, from what an ``Outcome`` records about the stream (its
``finish_reason`` and ``error``) and about each call (its ``name`` and ``arguments``), never from
the code under test: expectations, ``replay --json``, the ``toolcall_replay`` fixture's
``replay.expected``, a stack's answer read by ``conformance.wire.final`` and the comparison rules
of ``conformance.wire.replay`` all go through ``derive_may_run``.

``why_not`` is one word of a small vocabulary (``WHY_NOT``), in this order of precedence: when
several reasons apply, the first one listed is given, because a reader acts on the turn before the
call (a turn that ended abnormally is retried as a whole, whatever state each call is in):

1. ``provider_error``: the provider reported, inside the 200 stream, that the turn failed or was
   withheld: an error event or object (the SDK raised mid-stream), or a stop reason of that kind
   (``STOP_REASONS``: Responses ``failed``, Chat ``content_filter``, Anthropic ``refusal``,
   Gemini ``SAFETY``, Bedrock ``guardrail_intervened``, Cohere ``ERROR``, ...);
2. ``incomplete``: the stream ended without its terminal event (the body stopped before it);
3. ``truncated``: the provider cut the turn at its token limit (the stop reasons of
   ``STOP_REASONS``: Chat ``length``, Responses ``max_output_tokens``, Anthropic ``max_tokens``, ...);
4. ``no_name``: the stream never named the call;
5. ``invalid_arguments``: the call has no arguments object: its argument text is not one JSON
   object (invalid, truncated text, a list or a scalar, several objects). In a target's answer
   (``replay``, a stack), it is the target's own statement that the call has no arguments to run.

The first three are the stream-level reasons, and the contract's ``StreamError`` kinds. They
come from the outcome's ``error`` and ``finish_reason``:

* an error's kind is the ``<kind>:`` prefix the suite writes (``incomplete: the stream ended
  without ...`` in the corpus, a replay's ``truncated: ...``); any other error (what an SDK raised
  mid-stream, a third party's error object) is a ``provider_error``. It wins over a truncation
  stop beside it: with an error object beside ``finish_reason: "length"``, the finish reason is
  the provider's bookkeeping of the error. SDKs raise nothing when a connection is cut, so
  ``incomplete`` comes from an expectation's ``error`` (the corpus definition, a third party's) or
  from a replay's converter;
* a finish reason means what ``STOP_REASONS`` says it means in the outcome's wire API. One listed
  as normal, or not listed at all (a dialect's own value), gives no reason. The table lists every
  value the installed SDKs declare (``tests/test_may_run.py`` holds it to their type definitions).

The vocabulary is closed on purpose: add a word only for a real case no word covers, and document
it here, in ``WHY_NOT`` and in ``docs/replay-schema.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.wire.outcome import Outcome

__all__ = [
    "NORMALISED_STOP_REASONS",
    "PRECEDENCE",
    "STOP_REASONS",
    "WHY_NOT",
    "StopReasons",
    "call_why_not",
    "derive_may_run",
    "finish_reason_meaning",
    "stop_reason_kind",
    "stream_why_not",
]

WHY_NOT: Mapping[str, str] = {
    "provider_error": "the provider reported an error inside the stream (an error event, or a stop reason that "
    "says the turn failed or was withheld)",
    "incomplete": "the stream ended without its terminal event (the body stopped before it)",
    "truncated": "the provider cut the turn at its token limit",
    "no_name": "the stream never named the call",
    "invalid_arguments": "the argument text is not one JSON object (invalid, truncated text, a list or a scalar, "
    "several objects)",
}

# When several reasons apply, the first of these is the one given.
PRECEDENCE: tuple[str, ...] = ("provider_error", "incomplete", "truncated", "no_name", "invalid_arguments")


@dataclass(frozen=True)
class StopReasons:
    """One wire API's stop reasons, as ``Outcome.finish_reason`` holds them, by what they mean.

    ``source`` says where the value comes from on the wire and which SDK type declares it.
    """

    source: str
    normal: frozenset[str]
    truncated: frozenset[str]
    failed: frozenset[str]  # the turn failed or was withheld: ``provider_error``


_ANTHROPIC = StopReasons(
    "message_delta.delta.stop_reason (anthropic.types.StopReason)",
    normal=frozenset({"end_turn", "stop_sequence", "tool_use", "pause_turn"}),
    truncated=frozenset({"max_tokens", "model_context_window_exceeded"}),
    failed=frozenset({"refusal"}),
)

STOP_REASONS: Mapping[str, StopReasons] = {
    "openai-chat": StopReasons(
        "choices[].finish_reason (openai.types.chat.ChatCompletionChunk Choice.finish_reason)",
        normal=frozenset({"stop", "tool_calls", "function_call"}),
        truncated=frozenset({"length"}),
        failed=frozenset({"content_filter"}),
    ),
    # The outcome's finish reason is the terminal response's incomplete_details.reason, else its
    # status (what conformance.wire.outcome reads): in_progress and queued never end a stream.
    "openai-responses": StopReasons(
        "response.status, or response.incomplete_details.reason on response.incomplete "
        "(openai.types.responses.ResponseStatus, Response.IncompleteDetails.reason)",
        normal=frozenset({"completed"}),
        truncated=frozenset({"max_output_tokens"}),
        failed=frozenset({"failed", "cancelled", "incomplete", "content_filter", "max_messages", "steered"}),
    ),
    "anthropic": _ANTHROPIC,
    "bedrock-invoke": replace(_ANTHROPIC, source="Anthropic message_delta inside the InvokeModel chunks"),
    "gemini": StopReasons(
        "candidates[].finishReason (google.genai.types.FinishReason)",
        normal=frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"}),
        # CONTINUATION: "the response reached the per-request token limit, but generation is not
        # yet complete" (google-genai's own description): a token limit.
        truncated=frozenset({"MAX_TOKENS", "CONTINUATION"}),
        failed=frozenset(
            {
                "SAFETY",
                "RECITATION",
                "LANGUAGE",
                "OTHER",
                "BLOCKLIST",
                "PROHIBITED_CONTENT",
                "SPII",
                "MALFORMED_FUNCTION_CALL",
                "IMAGE_SAFETY",
                "IMAGE_PROHIBITED_CONTENT",
                "IMAGE_OTHER",
                "NO_IMAGE",
                "IMAGE_RECITATION",
                "UNEXPECTED_TOOL_CALL",
                "TOO_MANY_TOOL_CALLS",
                "MISSING_THOUGHT_SIGNATURE",
                "MALFORMED_RESPONSE",
                "ESCALATION",
                "PUP_LIMITED_DISABLED",
                "MODEL_ARMOR",
            }
        ),
    ),
    # ollama-python types done_reason as a plain str; the server writes "stop" or "length" (its
    # llm.DoneReason), and "load" / "unload" for requests that only load or evict a model.
    "ollama": StopReasons(
        "done_reason on the line with done: true (ollama.ChatResponse.done_reason, a str)",
        normal=frozenset({"stop", "load", "unload"}),
        truncated=frozenset({"length"}),
        failed=frozenset(),
    ),
    "bedrock-converse": StopReasons(
        "messageStop.stopReason (botocore bedrock-runtime shape StopReason)",
        normal=frozenset({"end_turn", "tool_use", "stop_sequence"}),
        truncated=frozenset({"max_tokens", "model_context_window_exceeded"}),
        failed=frozenset({"guardrail_intervened", "content_filtered", "malformed_model_output", "malformed_tool_use"}),
    ),
    "cohere-v2": StopReasons(
        "message-end delta.finish_reason (cohere.types.ChatFinishReason)",
        normal=frozenset({"COMPLETE", "STOP_SEQUENCE", "TOOL_CALL"}),
        truncated=frozenset({"MAX_TOKENS"}),
        failed=frozenset({"ERROR", "TIMEOUT"}),
    ),
}


def _union(kind: str) -> frozenset[str]:
    return frozenset().union(*(getattr(reasons, kind) for reasons in STOP_REASONS.values()))


# For an outcome whose API is not one of the eight (a third-party expectation names its format its
# own way): no stop reason means one thing in one API and another in another, so the union is exact.
_ANY_API = StopReasons(
    "any of the wire APIs", normal=_union("normal"), truncated=_union("truncated"), failed=_union("failed")
)


def stop_reason_kind(api: str, finish_reason: object) -> str | None:
    """``"truncated"`` or ``"provider_error"`` when ``finish_reason`` means so in ``api``, else None."""
    if not isinstance(finish_reason, str):
        return None
    reasons = STOP_REASONS.get(api, _ANY_API)
    if finish_reason in reasons.truncated:
        return "truncated"
    if finish_reason in reasons.failed:
        return "provider_error"
    return None


# Stop reasons a library may report in its own normalised vocabulary instead of the provider's
# (a stack's ``finish_reason``), by what they mean. Sources: the OpenTelemetry GenAI semantic
# conventions' ``gen_ai.response.finish_reasons`` (pydantic-ai's ``FinishReason``), the Vercel AI
# SDK's ``FinishReason``. ``other`` and ``unknown`` say nothing: a result that gives them is not judged.
NORMALISED_STOP_REASONS: Mapping[str, str | None] = {
    "stop": "normal",
    "tool_call": "normal",
    "tool_calls": "normal",
    "tool-calls": "normal",
    "length": "truncated",
    "content_filter": "provider_error",
    "content-filter": "provider_error",
    "error": "provider_error",
    "other": None,
    "unknown": None,
}


def finish_reason_meaning(api: str, finish_reason: str) -> str | None:
    """What a reported stop reason says of the turn: ``"normal"``, ``"truncated"`` or ``"provider_error"``,
    read in ``api``'s own table, then any API's, then ``NORMALISED_STOP_REASONS``; ``"unknown"`` for a
    value none of them lists; None for one that says nothing (``other``)."""
    for reasons in (STOP_REASONS.get(api, _ANY_API), _ANY_API):
        if finish_reason in reasons.normal:
            return "normal"
        kind = stop_reason_kind(api if reasons is not _ANY_API else "", finish_reason)
        if kind is not None:
            return kind
    if finish_reason in NORMALISED_STOP_REASONS:
        return NORMALISED_STOP_REASONS[finish_reason]
    return "unknown"


def _error_kind(error: object) -> str:
    # The suite writes "<kind>: <message>" (a replay's StreamError, the corpus's cut streams);
    # anything else is what the provider or its SDK said.
    text = str(error)
    for kind in ("incomplete", "truncated", "provider_error"):
        if text.startswith(kind):
            return kind
    return "provider_error"


def stream_why_not(api: str, finish_reason: object, error: object) -> str | None:
    """Why no call of this stream may run, or None when the stream ended normally.

    The kind of ``error`` (see the module docstring) and of ``finish_reason`` in ``api`` by
    ``STOP_REASONS`` (``api`` not one of the eight: every API's table at once); when both say
    something, the first in ``PRECEDENCE``.
    """
    kinds = {_error_kind(error) if error else None, stop_reason_kind(api, finish_reason)}
    return next((kind for kind in PRECEDENCE if kind in kinds), None)


def call_why_not(name: str | None, arguments: Mapping[str, Any] | None) -> str | None:
    """Why this call may not run whatever the stream did (``no_name``, ``invalid_arguments``), or None."""
    if not name:
        return "no_name"
    if arguments is None:
        return "invalid_arguments"
    return None


def derive_may_run(outcome: Outcome) -> Outcome:
    """``outcome`` with each call's ``why_not`` (hence ``may_run``) derived from the stream and the call.

    The one place the suite decides which calls of a stream may run. The reason is recomputed from
    scratch (a stale ``why_not`` is replaced); ``outcome`` is updated in place and returned.
    """
    stream = stream_why_not(outcome.api, outcome.finish_reason, outcome.error)
    outcome.tool_calls = [
        replace(call, why_not=stream or call_why_not(call.name, call.arguments)) for call in outcome.tool_calls
    ]
    return outcome
