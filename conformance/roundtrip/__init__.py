"""Round-trip conformance: does a formatter's next request survive the provider? (taxonomy G01-G12)

A *round-trip formatter* turns a finished turn and its tool results into the next request's
history, and tool definitions into the request's tool parameters. The protocol (any object, or a
bare ``format_followup`` function)::

    class MyFormatter:
        targets = ("openai-chat", "anthropic")          # optional; default: every target
        def format_followup(self, target: str, turn: FinishedTurn,
                            results: Sequence[ToolResult]) -> list[dict]: ...
        def format_tools(self, target: str, tools: Sequence[ToolDefinition],
                         choice: ToolChoice | str) -> dict: ...  # optional: the SDK call's tool kwargs

``format_followup`` returns the entries to append after the request that produced the turn, in
the target's *request* JSON shape: OpenAI Chat / DeepSeek / Ollama messages, Responses input
items, Anthropic messages, Gemini contents. ``results`` arrive in completion order and carry
``call_key`` (``ToolCallItem.key``); invalid calls may come without a result (the formatter must
answer them with an error). Targets: ``openai-chat``, ``deepseek`` (OpenAI Chat wire, thinking-mode
profile: ``reasoning_content`` is passed back), ``openai-responses``, ``anthropic``, ``gemini``,
``ollama`` (native ``/api/chat``). The reference is ``reference_impl.followup.ReferenceFormatter``.

How each scenario is checked: the formatter's output is appended to a user message and sent
through the *real* SDK (``openai``, ``anthropic``, ``google-genai``) to an in-process
``httpx2.MockTransport`` that records the JSON the SDK would send. The SDK must accept it (the
google-genai SDK validates; the openai and anthropic SDKs do not, so the output is also validated
against the SDKs' own request ``TypedDict``s), and the captured JSON is read back and compared
with the turn: ids byte-exact, argument types per provider, results adjacent and in call order,
signatures and thinking blocks preserved. Ollama has no SDK here: its request is checked against
a local schema of ``/api/chat`` messages. ``run_roundtrip_conformance(formatter)`` returns the same
``Report`` as the handler checks, so it renders the same way.

Modules: ``formatter`` (the protocol and its adapter), ``scenarios`` (finished turns and results
per target), ``capture`` (through the SDK, request capture and type validation), ``wire_readers``
(the captured request read back per provider), ``checks_followup`` / ``checks_tools`` (the checks),
``runner`` (``run_roundtrip_conformance``).
"""

from conformance.roundtrip.capture import CapturedRequest, capture_request, sdk_type_errors
from conformance.roundtrip.checks_followup import FOLLOWUP_CHECKS, RoundTripContext
from conformance.roundtrip.checks_tools import TOOL_CHECKS, TOOL_CHOICE_EXPECTATIONS, ToolsContext
from conformance.roundtrip.formatter import FormatterAdapter, as_formatter
from conformance.roundtrip.runner import (
    ROUNDTRIP_CHECKS,
    evaluate_scenario,
    evaluate_tools,
    roundtrip_check_by_id,
    run_roundtrip_conformance,
)
from conformance.roundtrip.scenarios import ROUNDTRIP_SCENARIOS, RoundTripScenario, builtin_scenarios, random_scenarios
from conformance.roundtrip.wire_readers import WireView, wire_view

__all__ = [
    "FOLLOWUP_CHECKS",
    "ROUNDTRIP_CHECKS",
    "ROUNDTRIP_SCENARIOS",
    "TOOL_CHECKS",
    "TOOL_CHOICE_EXPECTATIONS",
    "CapturedRequest",
    "FormatterAdapter",
    "RoundTripContext",
    "RoundTripScenario",
    "ToolsContext",
    "WireView",
    "as_formatter",
    "builtin_scenarios",
    "capture_request",
    "evaluate_scenario",
    "evaluate_tools",
    "random_scenarios",
    "roundtrip_check_by_id",
    "run_roundtrip_conformance",
    "sdk_type_errors",
    "wire_view",
]
