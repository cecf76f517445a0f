"""The follow-up checks: is the next request a formatter builds from a finished turn what each provider needs?"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conformance.roundtrip.capture import CapturedRequest
from conformance.roundtrip.scenarios import RoundTripScenario
from conformance.roundtrip.wire_readers import ABSENT, WireBlock, WireResult, WireView, role_of
from conformance.verdict import Check, CheckRegistry, Harm, NotApplicable
from reference_impl.followup import (
    WIRE_API,
    ReasoningItem,
    TextItem,
    ToolCallItem,
    ToolResult,
    result_text,
)
from reference_impl.frozen import thaw

__all__ = ["FOLLOWUP_CHECKS", "RoundTripContext"]

# Targets whose assistant turn is content blocks with signed thinking and whose results carry an
# error flag (Anthropic ``is_error``, Bedrock Converse ``status: "error"``).
_BLOCK_TARGETS = ("anthropic", "bedrock-converse")
# Targets whose replayed arguments are a JSON string (the others take an object).
_STRING_ARGUMENTS = ("openai-chat", "deepseek", "openai-responses", "cohere-v2")


@dataclass
class RoundTripContext:
    """One formatter run: the scenario, what the formatter returned, and what the SDK sent."""

    scenario: RoundTripScenario
    messages: list[dict[str, Any]] | None
    formatter_error: str | None
    captured: CapturedRequest | None
    type_errors: str | None
    view: WireView | None

    @property
    def target(self) -> str:
        return self.scenario.target

    @property
    def calls(self) -> list[ToolCallItem]:
        return self.scenario.turn.tool_calls


def _usable(ctx: RoundTripContext) -> WireView:
    """The request read back, or ``NotApplicable`` when there is none to judge.

    When the formatter raised, or the request's structure cannot be read, ``sdk_accepts_followup``
    reports it; every other check has nothing to compare on that scenario, which is never a pass.
    """
    if ctx.formatter_error is not None:
        raise NotApplicable("the formatter raised (sdk_accepts_followup reports it)")
    if ctx.view is None or ctx.view.structure:
        raise NotApplicable("the request could not be read back (sdk_accepts_followup reports it)")
    return ctx.view


def _only_for(ctx: RoundTripContext, *targets: str) -> None:
    if ctx.target not in targets:
        raise NotApplicable(f"applies to {', '.join(targets)} only")


def _same_output(content: Any, output: Any) -> bool:
    """A result's content carries the tool's output: the same text, or the same JSON value (any spelling)."""
    if isinstance(output, str):
        return bool(content == output)
    parsed = _parsed(content) if isinstance(content, str) else content
    return bool(parsed == thaw(output))


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return ABSENT
    return value


def _expected_output(ctx: RoundTripContext, call: ToolCallItem) -> ToolResult | None:
    return ctx.scenario.output_of(call)


def _call_order_key(ctx: RoundTripContext, wire_list: Sequence[Any]) -> list[Any]:
    return [entry.id if entry.id is not None else getattr(entry, "name", None) for entry in wire_list]


def _expected_reasoning_token(target: str, item: ReasoningItem) -> tuple[str, Any] | None:
    """The token a reasoning item must leave on ``target``'s wire, or None where it leaves none."""
    if target in _BLOCK_TARGETS:
        if item.redacted_data:
            return ("redacted", item.redacted_data)
        if item.signature:
            return ("reasoning", item.signature)
    elif target == "openai-responses" and item.provider_metadata.get("item_id"):
        return ("reasoning", item.provider_metadata["item_id"])
    elif target == "gemini" and item.signature:
        return ("reasoning", item.signature)
    return None


def _expected_tokens(ctx: RoundTripContext) -> list[tuple[str, Any]] | None:
    tokens: list[tuple[str, Any]] = []
    target = ctx.target
    for item in ctx.scenario.turn.items:
        if isinstance(item, ReasoningItem):
            token = _expected_reasoning_token(target, item)
            if token is not None:
                tokens.append(token)
        elif isinstance(item, TextItem):
            if item.text or (target == "gemini" and item.signature):
                if tokens and tokens[-1][0] == "text" and target == "openai-responses":
                    tokens[-1] = ("text", tokens[-1][1] + item.text)
                else:
                    tokens.append(("text", item.text))
        else:
            tokens.append(("call", item.call_id or item.replay_name if target != "gemini" else item.replay_name))
    return tokens


def _wire_reasoning_token(target: str, block: WireBlock) -> tuple[str, Any] | None:
    """The token a replayed reasoning block stands for on ``target``.

    Anthropic/Bedrock blocks by their signature, Responses items by their id; elsewhere a block
    counts only when it carries a signature (None otherwise).
    """
    if target in _BLOCK_TARGETS:
        return ("reasoning", block.signature)
    if target == "openai-responses":
        return ("reasoning", block.key)
    if block.signature:
        return ("reasoning", block.signature)
    return None


def _wire_tokens(ctx: RoundTripContext, view: WireView) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    for block in view.blocks:
        if block.kind == "reasoning":
            token = _wire_reasoning_token(ctx.target, block)
            if token is not None:
                tokens.append(token)
        elif block.kind == "redacted":
            tokens.append(("redacted", block.key))
        elif block.kind == "text":
            if block.text or block.signature:
                tokens.append(("text", block.text))
        elif block.kind == "call":
            tokens.append(("call", block.key))
        else:
            tokens.append((block.kind, None))
    if ctx.target != "gemini":
        # Calls replayed with another id are the id checks' business: compare the shape here.
        call_ids = {c.call_id for c in ctx.calls}
        tokens = [("call", value) if kind == "call" and value in call_ids else (kind, value) for kind, value in tokens]
    return tokens


_ALLOWED_KEYS: dict[str, dict[str, frozenset[str]]] = {
    "chat": {
        "tool_call": frozenset({"id", "type", "function"}),
        "function": frozenset({"name", "arguments"}),
        "tool": frozenset({"role", "tool_call_id", "content", "name"}),
    },
    "ollama": {
        "tool_call": frozenset({"id", "function"}),
        "function": frozenset({"name", "arguments", "index"}),
        "tool": frozenset({"role", "content", "tool_name", "tool_call_id"}),
    },
    "openai-responses": {
        "function_call": frozenset({"type", "id", "call_id", "name", "arguments", "status"}),
        "function_call_output": frozenset({"type", "id", "call_id", "output", "status"}),
        "reasoning": frozenset({"type", "id", "summary", "encrypted_content", "content", "status"}),
        "message": frozenset({"type", "role", "content", "id", "status"}),
    },
    "bedrock-converse": {
        "toolUse": frozenset({"toolUseId", "name", "input"}),
        "toolResult": frozenset({"toolUseId", "content", "status"}),
    },
    "anthropic": {
        "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
        "thinking": frozenset({"type", "thinking", "signature"}),
        "redacted_thinking": frozenset({"type", "data"}),
        "text": frozenset({"type", "text", "citations", "cache_control"}),
        "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    },
}
_STREAM_ONLY_TYPES = frozenset(
    {"input_json_delta", "text_delta", "thinking_delta", "signature_delta", "citations_delta", "content_block_delta"}
)


def _extra_keys(where: str, value: Any, allowed: frozenset[str]) -> list[str]:
    if not isinstance(value, dict):
        return []
    extra = sorted(set(value) - allowed)
    return [f"{where} carries streaming-only or unknown field(s) {extra}"] if extra else []


# Tool schemas and tool_choice, checked against what each provider documents (not against the reference).


FOLLOWUP_CHECK_REGISTRY = CheckRegistry[RoundTripContext]()


@FOLLOWUP_CHECK_REGISTRY.check(
    "sdk_accepts_followup",
    title="The real SDK builds the follow-up request, and the messages match its request types",
    rationale=(
        "A follow-up the SDK (or the API behind it) refuses kills the conversation one turn later (G03, G08, G10)."
    ),
    how_to_fix="Emit the provider's request shapes: string arguments for OpenAI, objects for Anthropic/Gemini/Ollama, "
    "signed thinking blocks, no streaming fields.",
    taxonomy=("G03", "G08", "G10"),
    harm=Harm.MISIDENTIFIED,
)
def _check_sdk_accepts(ctx: RoundTripContext) -> list[str]:
    if ctx.formatter_error is not None:
        return [f"the formatter raised {ctx.formatter_error}"]
    problems = []
    if ctx.captured is not None and ctx.captured.error is not None:
        problems.append(f"the {WIRE_API[ctx.target] or ctx.target} SDK refused the request: {ctx.captured.error}")
    if ctx.type_errors is not None:
        problems.append(f"the messages do not validate against the SDK's request types: {ctx.type_errors}")
    if ctx.view is not None:
        problems += ctx.view.structure
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "calls_replayed_in_order",
    title="Every call of the turn, valid or invalid, is replayed once, in stream order, with its arguments",
    rationale="A dropped call leaves its result orphaned and hides the model's mistake from it (G04, G06).",
    how_to_fix="Replay each ToolCallItem in turn order; invalid ones with {} as arguments, never skipped.",
    taxonomy=("G04", "G06"),
    harm=Harm.LOST,
)
def _check_calls_replayed(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    want = [(call.replay_name, thaw(call.arguments) if call.valid else None) for call in ctx.calls]
    got = [(wire.name, _parsed(wire.arguments)) for wire in view.calls]
    if len(got) != len(want):
        invalid = sum(1 for call in ctx.calls if not call.valid)
        return [
            f"the turn has {len(want)} tool calls ({invalid} invalid) but the assistant turn replays {len(got)}: "
            "every call, valid or not, must be replayed once"
        ]
    for position, ((name, arguments), (wire_name, wire_arguments)) in enumerate(zip(want, got, strict=True)):
        if wire_name != name:
            return [f"call #{position} is replayed as {wire_name!r}, the model called {name!r} (stream order)"]
        if arguments is not None and wire_arguments != arguments:
            return [f"call #{position} ({name}) is replayed with {wire_arguments!r}, the model sent {arguments!r}"]
    return []


@FOLLOWUP_CHECK_REGISTRY.check(
    "arguments_type_per_provider",
    title="Replayed arguments are a JSON string for OpenAI/DeepSeek/Responses, an object for Anthropic/Gemini/Ollama",
    rationale="The wrong type is a 400 on the next turn ('cannot unmarshal string into ... arguments': G03).",
    how_to_fix=(
        "json.dumps the arguments for OpenAI-style targets; pass the parsed object for the others. "
        "Never share one serialisation across targets."
    ),
    taxonomy=("G03",),
    harm=Harm.MISIDENTIFIED,
)
def _check_argument_types(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    wants_string = ctx.target in _STRING_ARGUMENTS
    problems = []
    for position, wire in enumerate(view.calls):
        if wire.arguments is ABSENT:
            problems.append(f"call #{position} ({wire.name}) has no arguments field")
        elif wants_string and not isinstance(wire.arguments, str):
            problems.append(
                f"call #{position} ({wire.name}): {ctx.target} needs arguments as a JSON string, got "
                f"{type(wire.arguments).__name__} {wire.arguments!r}"
            )
        elif not wants_string and not isinstance(wire.arguments, dict):
            problems.append(
                f"call #{position} ({wire.name}): {ctx.target} needs arguments as a JSON object, got "
                f"{type(wire.arguments).__name__} {wire.arguments!r}"
            )
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "arguments_valid_json_objects",
    title="Replayed arguments are always a valid JSON object, also for calls whose arguments were invalid",
    rationale="Replaying the raw invalid text poisons every later request of the session (G04).",
    how_to_fix="Replay the parsed arguments; for an error END replay {} and put the raw text in the error result.",
    taxonomy=("G04",),
    harm=Harm.MISIDENTIFIED,
)
def _check_arguments_valid(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    problems = []
    for position, wire in enumerate(view.calls):
        if wire.arguments is ABSENT:
            continue
        value = _parsed(wire.arguments)
        if value is ABSENT or not isinstance(value, dict):
            problems.append(
                f"call #{position} ({wire.name}) is replayed with arguments {wire.arguments!r}, which is not a JSON "
                "object: the provider rejects the whole conversation from now on"
            )
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "results_answer_every_call",
    title="Exactly one result per call; tool output preserved; failed and invalid calls answered as errors",
    rationale=(
        "A missing result is a 400; an invalid call answered as success (or not at all) hides the error (G04, G06)."
    ),
    how_to_fix="Pair results with calls; synthesise an error result (is_error / {'error': ...}) for invalid calls.",
    taxonomy=("G04", "G06"),
    harm=Harm.LOST,
)
def _check_results_answer(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    calls = ctx.calls
    if len(view.results) != len(calls):
        return [
            f"{len(calls)} calls but {len(view.results)} results: every call, including invalid ones, needs exactly "
            "one result"
        ]
    problems = []
    for position, (call, wire) in enumerate(zip(calls, view.results, strict=True)):
        given = _expected_output(ctx, call)
        error_expected = not call.valid or (given is not None and given.is_error)
        label = f"result #{position} (for {call.replay_name} {call.key!r})"
        if error_expected:
            problem = _error_result_problem(ctx.target, label, wire)
        elif given is None:  # pragma: no cover - every valid call of a scenario has a result
            continue
        else:
            problem = _success_result_problem(ctx.target, label, wire, given)
        if problem is not None:
            problems.append(problem)
    return problems


def _error_result_problem(target: str, label: str, wire: WireResult) -> str | None:
    """What is wrong with the result answering a failed or invalid call, if anything."""
    if target in _BLOCK_TARGETS and wire.is_error is not True:
        flag = "is_error: true" if target == "anthropic" else 'status: "error"'
        return f"{label} answers a failed/invalid call but lacks {flag}"
    if target == "gemini" and not wire.is_error:
        return f"{label} answers a failed/invalid call but its response has no 'error' key"
    if target not in (*_BLOCK_TARGETS, "gemini") and not (isinstance(wire.content, str) and wire.content):
        return f"{label} answers a failed/invalid call with empty content; say what went wrong"
    return None


def _success_result_problem(target: str, label: str, wire: WireResult, given: ToolResult) -> str | None:
    """What is wrong with the result answering a call that succeeded, if anything."""
    if target == "gemini":
        response = wire.content if isinstance(wire.content, dict) else {}
        output = thaw(given.output)
        if wire.is_error or output not in (response.get("output"), response.get("result"), response):
            return f"{label} response {wire.content!r} does not carry the tool's output {output!r}"
        return None
    if not _same_output(wire.content, given.output):
        return f"{label} content {wire.content!r} is not the tool's output {result_text(given.output)!r}"
    if target in _BLOCK_TARGETS and wire.is_error:
        return f"{label} is marked as an error although the tool succeeded"
    return None


@FOLLOWUP_CHECK_REGISTRY.check(
    "tool_result_ids_match_calls",
    title="Every result echoes the id of a replayed call (Gemini/Ollama without ids: its name)",
    rationale=(
        "'tool_use ids were found without tool_result blocks' / 'must be a response to a preceding tool_calls' (G01)."
    ),
    how_to_fix="Use the call's provider id (ToolCallItem.key) for both the call and its result; never the segment id.",
    taxonomy=("G01",),
    harm=Harm.MISIDENTIFIED,
)
def _check_result_ids(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    problems = []
    call_ids = [wire.id for wire in view.calls]
    named = ctx.target in ("gemini", "ollama")
    for position, result in enumerate(view.results):
        if (result.id is not None or not named) and result.id not in call_ids:
            problems.append(
                f"result #{position} answers id {result.id!r}, which no replayed call has ({call_ids}): the "
                "provider rejects a result without its call"
            )
        if (
            named
            and result.name is not None
            and position < len(view.calls)
            and result.name != view.calls[position].name
        ):
            problems.append(
                f"result #{position} is named {result.name!r} but answers call #{position} "
                f"{view.calls[position].name!r}"
            )
        if named and result.name is None and ctx.target == "gemini":
            problems.append(f"functionResponse #{position} has no name")
    counts: dict[Any, int] = {}
    for wire in view.calls:
        counts[wire.id] = counts.get(wire.id, 0) + 1
    for position, wire in enumerate(view.calls):
        if wire.id is None and not named:
            problems.append(f"call #{position} ({wire.name}) is replayed without an id")
        answered = sum(1 for result in view.results if result.id == wire.id)
        if wire.id is not None and answered != counts[wire.id]:
            problems.append(f"call id {wire.id!r} is answered {answered} time(s), expected {counts[wire.id]}")
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "provider_ids_byte_exact",
    title="Call ids are replayed byte for byte as the provider streamed them",
    rationale=(
        "Sanitised, truncated or re-prefixed ids break providers that validate them (Kimi functions.x:N: G11, G01)."
    ),
    how_to_fix="Copy call_id verbatim; never re.sub or slice it, never replace it with a generated id.",
    taxonomy=("G01", "G11"),
    harm=Harm.MISIDENTIFIED,
)
def _check_ids_exact(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    if len(view.calls) != len(ctx.calls):
        return []  # calls_replayed_in_order reports it; positions no longer pair up
    problems = []
    for position, (call, wire) in enumerate(zip(ctx.calls, view.calls, strict=True)):
        if not call.call_id:
            continue
        if wire.id != call.call_id:
            problems.append(
                f"call #{position} ({call.replay_name}) is replayed with id {wire.id!r}; the provider sent "
                f"{call.call_id!r} and ids must round-trip byte for byte"
            )
        if position < len(view.results) and view.results[position].id not in (call.call_id, None):
            problems.append(
                f"result #{position} echoes {view.results[position].id!r}, the provider's call id is {call.call_id!r}"
            )
        elif position < len(view.results) and view.results[position].id is None and ctx.target != "ollama":
            problems.append(f"result #{position} does not echo the provider's call id {call.call_id!r}")
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "responses_item_ids_valid",
    title="Responses function_call items pair by call_id; their id is the original fc_ item id or absent",
    rationale="'Invalid input[N].id: call_... Expected an ID that begins with fc' (G02).",
    how_to_fix="Set call_id from ToolCallItem.call_id; set id only from provider_metadata['item_id'], or omit it.",
    taxonomy=("G02", "A13"),
    harm=Harm.MISIDENTIFIED,
)
def _check_responses_item_ids(ctx: RoundTripContext) -> list[str]:
    _only_for(ctx, "openai-responses")
    view = _usable(ctx)
    problems = []
    for position, (call, wire) in enumerate(zip(ctx.calls, view.calls, strict=False)):
        original = call.provider_metadata.get("item_id")
        if wire.item_id is ABSENT or wire.item_id is None:
            continue
        if wire.item_id != original:
            problems.append(
                f"function_call #{position} has id {wire.item_id!r}; the item id is either the original output item id "
                f"({original!r}, 'fc_...') or absent, never the call id (call_id {call.call_id!r})"
            )
        if wire.id == wire.item_id and call.call_id != original:
            problems.append(f"function_call #{position}: call_id and id are both {wire.id!r}")
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "results_adjacent_in_call_order",
    title="Results come right after the assistant turn, together, in call order (not completion order)",
    rationale="Positional templates mis-pair completion-order results; split results are rejected (G06).",
    how_to_fix="Sort results by the turn's call order; one user message (Anthropic) / one content (Gemini) for all.",
    taxonomy=("G06",),
    harm=Harm.MISIDENTIFIED,
)
def _check_results_adjacent(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    problems = list(view.adjacency)
    if len(view.results) != len(ctx.calls) or len(view.calls) != len(ctx.calls):
        return problems  # results_answer_every_call reports the count; positions no longer pair up
    named = ctx.target in ("gemini", "ollama")
    for position, (wire, result) in enumerate(zip(view.calls, view.results, strict=False)):
        if result.id is not None and wire.id is not None:
            if result.id != wire.id:
                problems.append(
                    f"result #{position} answers {result.id!r} but call #{position} is {wire.id!r}: results must "
                    "follow in call order, not completion order"
                )
                break
        elif named and result.name != wire.name:
            problems.append(
                f"response #{position} is for {result.name!r} but call #{position} is {wire.name!r}: without ids, "
                "results pair with calls by position"
            )
            break
        elif named:
            given = ctx.scenario.output_of(ctx.calls[position]) if position < len(ctx.calls) else None
            if given is not None and not given.is_error and ctx.target == "gemini":
                response = result.content if isinstance(result.content, dict) else {}
                if thaw(given.output) not in (response.get("output"), response.get("result"), response):
                    problems.append(
                        f"response #{position} carries {result.content!r}, the output of another call: results "
                        "must follow in call order"
                    )
                    break
            elif given is not None and not given.is_error and not _same_output(result.content, given.output):
                problems.append(f"result #{position} carries {result.content!r}: results must follow in call order")
                break
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "signatures_preserved",
    title="Thinking signatures and Gemini thought signatures survive exactly, on the right block, none fabricated",
    rationale="'Invalid signature in thinking block' / 'Function call is missing a thought_signature' (G07, G08).",
    how_to_fix="Carry signatures through provider metadata; emit each on its own block or part only.",
    taxonomy=("G07", "G08"),
    harm=Harm.MISIDENTIFIED,
)
def _check_signatures(ctx: RoundTripContext) -> list[str]:
    _only_for(ctx, *_BLOCK_TARGETS, "gemini")
    view = _usable(ctx)
    signed = any(
        getattr(item, "signature", None) or getattr(item, "redacted_data", None) for item in ctx.scenario.turn.items
    ) or any(call.provider_metadata.get("thought_signature") for call in ctx.calls)
    if not signed:
        raise NotApplicable("the turn carries no signature")
    problems = []
    if ctx.target in _BLOCK_TARGETS:
        want = [
            (item.text, item.signature)
            for item in ctx.scenario.turn.items
            if isinstance(item, ReasoningItem) and item.signature and not item.redacted_data
        ]
        got = [(block.text, block.signature) for block in view.blocks if block.kind == "reasoning"]
        missing = [pair for pair in want if pair not in got]
        if missing:
            problems.append(
                f"thinking block(s) {[text[:30] for text, _ in missing]} are not replayed with their exact text and "
                f"signature (replayed: {[(t, s) for t, s in got]})"
            )
        want_redacted = [
            i.redacted_data for i in ctx.scenario.turn.items if isinstance(i, ReasoningItem) and i.redacted_data
        ]
        got_redacted = [block.key for block in view.blocks if block.kind == "redacted"]
        if want_redacted != got_redacted:
            problems.append(f"redacted_thinking data {want_redacted} replayed as {got_redacted}")
    elif ctx.target == "gemini":
        for position, (call, wire) in enumerate(zip(ctx.calls, view.calls, strict=False)):
            want_signature = call.provider_metadata.get("thought_signature")
            if wire.signature != want_signature:
                problems.append(
                    f"functionCall #{position} ({call.replay_name}) carries thoughtSignature {wire.signature!r}, "
                    f"streamed {want_signature!r}: each call keeps exactly its own signature, none is fabricated"
                )
        want_parts = [
            item.signature
            for item in ctx.scenario.turn.items
            if isinstance(item, (TextItem, ReasoningItem)) and item.signature
        ]
        got_parts = [
            block.signature for block in view.blocks if block.kind in ("text", "reasoning") and block.signature
        ]
        if want_parts != got_parts:
            problems.append(f"text/thought part signatures {want_parts} replayed as {got_parts}")
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "block_order_preserved",
    title="Reasoning, text and calls are replayed in streamed order (Anthropic, Gemini, Responses)",
    rationale=(
        "'thinking blocks in the latest assistant message cannot be modified': regrouping is a modification (G08)."
    ),
    how_to_fix="Build the assistant content by walking the turn's items in order, not by kind.",
    taxonomy=("G08",),
    harm=Harm.STREAM_SHAPE,
)
def _check_block_order(ctx: RoundTripContext) -> list[str]:
    _only_for(ctx, *_BLOCK_TARGETS, "gemini", "openai-responses")
    view = _usable(ctx)
    if len(view.calls) != len(ctx.calls):
        return []  # calls_replayed_in_order reports it
    want = _expected_tokens(ctx) or []
    got = _wire_tokens(ctx, view)
    want_shape = [kind for kind, _ in want]
    got_shape = [kind for kind, _ in got]
    if want_shape == got_shape:
        return []
    return [
        f"the assistant turn is replayed as {got_shape}, it was streamed as {want_shape}: reasoning, text and "
        "calls must keep their streamed order (regrouped thinking blocks are rejected)"
    ]


@FOLLOWUP_CHECK_REGISTRY.check(
    "reasoning_passed_back",
    title="Reasoning the provider needs on the next turn is sent back (thinking, rs_ items, reasoning_content)",
    rationale="DeepSeek/Kimi 400 without reasoning_content; Anthropic needs the thinking of tool-use turns (G09, G08).",
    how_to_fix="Keep reasoning items (with ids and encrypted content) in the turn and replay them.",
    taxonomy=("G09", "G08"),
    harm=Harm.MISIDENTIFIED,
)
def _check_reasoning_passed_back(ctx: RoundTripContext) -> list[str]:
    _only_for(ctx, "deepseek", *_BLOCK_TARGETS, "openai-responses")
    view = _usable(ctx)
    reasoning = [item for item in ctx.scenario.turn.items if isinstance(item, ReasoningItem)]
    if not reasoning:
        raise NotApplicable("the turn has no reasoning")
    if ctx.target == "deepseek":
        want = ctx.scenario.turn.reasoning
        got = view.assistant.get("reasoning_content") if view.assistant else None
        if got != want:
            return [
                f"reasoning_content is {got!r}; a thinking-mode tool-call turn must pass back the full reasoning "
                f"{want!r}"
            ]
    elif ctx.target in _BLOCK_TARGETS:
        want_count = sum(1 for item in reasoning if item.signature or item.redacted_data)
        got_count = sum(1 for block in view.blocks if block.kind in ("reasoning", "redacted"))
        if got_count < want_count:
            return [
                f"{want_count} thinking/redacted_thinking block(s) were streamed, {got_count} replayed: with thinking "
                "on, the tool-use turn must carry its thinking blocks"
            ]
    elif ctx.target == "openai-responses":
        return _responses_reasoning_problems(view, reasoning)
    return []


def _responses_reasoning_problems(view: WireView, reasoning: list[ReasoningItem]) -> list[str]:
    """Responses: every reasoning item with an id is replayed by that id, its encrypted_content intact."""
    problems = []
    by_id = {block.key: block for block in view.blocks if block.kind == "reasoning"}
    for item in reasoning:
        item_id = item.provider_metadata.get("item_id")
        if not item_id:
            continue
        block = by_id.get(item_id)
        if block is None:
            problems.append(f"reasoning item {item_id!r} is not replayed")
            continue
        encrypted = item.provider_metadata.get("encrypted_content")
        if encrypted and block.raw.get("encrypted_content") != encrypted:
            problems.append(f"reasoning item {item_id!r} lost its encrypted_content")
    if problems and any(c.item_id not in (ABSENT, None) for c in view.calls):
        problems.append("function_call items keep their fc_ ids while their reasoning item is missing (rejected)")
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "no_streaming_artifacts",
    title="Replayed blocks carry only request-schema fields (no index, partial_json, delta blocks)",
    rationale="'Input tag input_json_delta does not match any of the expected tags' (G10).",
    how_to_fix="Build request blocks from the parsed turn, never by copying accumulated stream blocks.",
    taxonomy=("G10",),
    harm=Harm.MISIDENTIFIED,
)
def _check_no_stream_artifacts(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    target = ctx.target
    if target in ("openai-chat", "deepseek", "ollama", "cohere-v2"):
        return _chat_artifacts(view, _ALLOWED_KEYS["ollama" if target == "ollama" else "chat"])
    if target == "openai-responses":
        return _responses_artifacts(view, _ALLOWED_KEYS[target])
    if target == "bedrock-converse":
        return _converse_artifacts(view, _ALLOWED_KEYS[target])
    if target == "anthropic":
        return _anthropic_artifacts(view, _ALLOWED_KEYS[target])
    return _gemini_artifacts(view)


def _chat_artifacts(view: WireView, table: dict[str, frozenset[str]]) -> list[str]:
    problems: list[str] = []
    for position, wire in enumerate(view.calls):
        problems += _extra_keys(f"tool_calls[{position}]", wire.raw, table["tool_call"])
        problems += _extra_keys(f"tool_calls[{position}].function", wire.raw.get("function"), table["function"])
    for position, result in enumerate(view.results):
        problems += _extra_keys(f"tool message #{position}", result.raw, table["tool"])
    return problems


def _responses_artifacts(view: WireView, table: dict[str, frozenset[str]]) -> list[str]:
    problems: list[str] = []
    for position, entry in enumerate(view.entries):
        kind = entry.get("type", "message") if isinstance(entry, dict) else None
        if kind in table:
            problems += _extra_keys(f"input item #{position} ({kind})", entry, table[kind])
    return problems


def _converse_artifacts(view: WireView, table: dict[str, frozenset[str]]) -> list[str]:
    problems: list[str] = []
    for position, wire in enumerate(view.calls):
        problems += _extra_keys(f"toolUse #{position}", wire.raw, table["toolUse"])
    for position, result in enumerate(view.results):
        problems += _extra_keys(f"toolResult #{position}", result.raw, table["toolResult"])
    return problems


def _anthropic_artifacts(view: WireView, table: dict[str, frozenset[str]]) -> list[str]:
    problems: list[str] = []
    for message in view.entries[:2]:
        content = message.get("content") if isinstance(message, dict) else None
        for position, block in enumerate(content if isinstance(content, list) else []):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in _STREAM_ONLY_TYPES:
                problems.append(f"block #{position} is a streaming event ({kind}), not a content block")
            elif kind in table:
                problems += _extra_keys(f"{role_of(message)} block #{position} ({kind})", block, table[kind])
    return problems


def _gemini_artifacts(view: WireView) -> list[str]:
    problems: list[str] = []
    for position, wire in enumerate(view.calls):
        value = wire.raw.get("functionCall", wire.raw.get("function_call"))
        problems += _extra_keys(f"functionCall #{position}", value, frozenset({"name", "args", "id"}))
    return problems


@FOLLOWUP_CHECK_REGISTRY.check(
    "no_empty_text",
    title="No empty text blocks or parts; a tool-only OpenAI turn has content null, not ''",
    rationale="Anthropic rejects empty text blocks; several OpenAI-compatible providers reject '' (G05).",
    how_to_fix="Skip empty text; send content null for tool-only chat turns.",
    taxonomy=("G05",),
    harm=Harm.MISIDENTIFIED,
)
def _check_no_empty_text(ctx: RoundTripContext) -> list[str]:
    view = _usable(ctx)
    target = ctx.target
    if target in ("openai-chat", "deepseek") and view.assistant is not None and view.assistant.get("content") == "":
        return [
            "the assistant message has content '' : several OpenAI-compatible providers reject it; send null when "
            "the turn has no text"
        ]
    problems = []
    for block in view.blocks:
        if block.kind != "text" or block.text not in ("", None):
            continue
        if target == "gemini" and block.signature:
            continue  # an empty part that carries a signature is how Gemini sends one
        if target == "ollama":
            continue
        problems.append(f"an empty text {'part' if target == 'gemini' else 'block'} is replayed ({block.raw!r})")
    if target in _BLOCK_TARGETS and view.assistant is not None and view.assistant.get("content") in ("", []):
        problems.append("the assistant message has empty content")
    return problems


FOLLOWUP_CHECKS: tuple[Check[RoundTripContext], ...] = FOLLOWUP_CHECK_REGISTRY.all()
