"""Deliberately broken stream converters: one realistic bug each, from the taxonomy's mutation operators.

Each mutant subclasses a reference converter (``reference_impl.converters``) and changes as little
as possible to plant one bug seen in real converters (Appendix 2 of the bug taxonomy), so a catch
proves the converter checks see *that* bug and not some unrelated breakage. ``MUTANTS`` lists, per
mutant, its wire API, taxonomy classes, the converter check ids that should catch it, and a
factory with the converter-factory signature ``factory(api, **options)``.

A mutant with ``gap`` set is one the suite does not catch today: ``gap`` names the check that is
missing (see the docstring of ``tests/test_converter_mutants.py``); its test is a strict xfail.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_impl.converters import (
    AnthropicConverter,
    ChunkAssembler,
    GeminiConverter,
    OpenAIChatConverter,
    OpenAIResponsesConverter,
    StreamConverter,
)
from reference_impl.converters.base import clean_name, get_field, text_or_none

# Private seam: the index-collapsing mutants reuse the reference's reading of a delta's wire index.
from reference_impl.converters.openai_chat import _wire_index
from reference_impl.tracker import TrackedCall
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["MUTANTS", "Mutant"]


@dataclass(frozen=True)
class Mutant:
    name: str
    api: str
    taxonomy: tuple[str, ...]
    caught_by: frozenset[str]
    factory: Callable[..., StreamConverter]
    description: str
    gap: str | None = None  # the suite cannot catch it yet: why, and the check that would


class _ReasoningAsContent:
    """Wraps a ``ChunkAssembler`` so that reasoning goes where text goes (``content or reasoning``)."""

    def __init__(self, pieces: ChunkAssembler) -> None:
        self._pieces = pieces

    def reasoning(self, text: str | None) -> None:
        self._pieces.content(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pieces, name)


class _ReasoningDropped(_ReasoningAsContent):
    def reasoning(self, text: str | None) -> None:
        pass


def _finish_reason_of(chunk: Any) -> str | None:
    for choice in get_field(chunk, "choices") or ():
        reason = text_or_none(get_field(choice, "finish_reason"))
        if reason is not None:
            return reason
    return None


# -- OpenAI Chat Completions and OpenAI-compatible servers ---------------------------------------


class IgnoreCumulativeProfile(OpenAIChatConverter):
    """APPEND_SNAPSHOT: the server profile says 'cumulative arguments' but snapshots are forwarded as deltas (A09)."""

    def __init__(self, *, cumulative_arguments: bool = False) -> None:
        super().__init__()  # the option is accepted, and never acted on


class ReprObjectArguments(OpenAIChatConverter):
    """REPR_DICT: object-typed ``arguments`` (a dict on the wire) become ``str(dict)``, Python repr (A11)."""

    def _fragment(self, call: Any, raw: Any) -> str | None:
        if raw is not None and not isinstance(raw, str):
            return str(raw)
        return super()._fragment(call, raw)


class NameRestatementForwarded(OpenAIChatConverter):
    """NAME restatement forwarded: a name present on a continuation is sent again (A06)."""

    def _delta_for(self, call: Any, call_id: str | None, name: str | None, arguments: Any) -> ToolCallDelta | None:
        restated = name is not None and call.announced and name == call.name
        delta = super()._delta_for(call, call_id, name, arguments)
        if restated:
            if delta is None:
                return ToolCallDelta(call.index, name=name)
            delta.name = name
        return delta


class StripNamePrefix(OpenAIChatConverter):
    """NAME_REWRITE: a 'namespace' up to the first '_' is dropped (``get_weather`` -> ``weather``): no such tool."""

    def _delta_for(self, call: Any, call_id: str | None, name: str | None, arguments: Any) -> ToolCallDelta | None:
        delta = super()._delta_for(call, call_id, name, arguments)
        if delta is not None and delta.name:
            delta.name = delta.name.partition("_")[2] or delta.name
        return delta


class IdPresentNotNone(OpenAIChatConverter):
    """TRUST_PLACEHOLDER_ID / ``if tc.id is not None``: a '' id on a continuation is taken as a new id (A05, A20)."""

    def _delta(self, delta: Any, pieces: ChunkAssembler) -> None:
        # The reference ``_delta``, except for the one marked line.
        pieces.reasoning(
            text_or_none(get_field(delta, "reasoning_content")) or text_or_none(get_field(delta, "reasoning"))
        )
        pieces.content(text_or_none(get_field(delta, "content")))
        pieces.content(text_or_none(get_field(delta, "refusal")))
        for entry in get_field(delta, "tool_calls") or ():
            function = get_field(entry, "function")
            if function is None:
                self._unknown(f"tool_calls entry type {get_field(entry, 'type')!r}")
                continue
            raw_id = get_field(entry, "id")
            call_id = raw_id if isinstance(raw_id, str) else None  # the bug: '' and 'null' count as ids
            name = clean_name(get_field(function, "name"))
            call = self._resolve(_wire_index(get_field(entry, "index")), call_id, name)
            pieces.tool(self._delta_for(call, call_id, name, get_field(function, "arguments")))
        legacy = get_field(delta, "function_call")
        if legacy is not None:
            if self._legacy_call is None:
                self._legacy_call = self._new_call()
            name = clean_name(get_field(legacy, "name"))
            pieces.tool(self._delta_for(self._legacy_call, None, name, get_field(legacy, "arguments")))


class KeyByWireIndexOnly(OpenAIChatConverter):
    """IGNORE_ID_CHANGE: calls are keyed by the wire index alone; a new id on index 0 merges two calls (A02, B01)."""

    def _resolve(self, wire_index: int | None, call_id: str | None, name: str | None) -> Any:
        if wire_index is None:
            return super()._resolve(wire_index, call_id, name)
        call = self._by_wire_index.get(wire_index)
        if call is None:
            call = self._by_wire_index[wire_index] = self._new_call()
        self._current = call
        return call


class RouteToLastCall(OpenAIChatConverter):
    """ROUTE_TO_LAST: an entry with a new id opens a call, any other entry continues the last one (B02, B04)."""

    def _resolve(self, wire_index: int | None, call_id: str | None, name: str | None) -> Any:
        known = self._by_id.get(call_id) if call_id is not None else None
        if known is not None:
            call = known
        elif call_id is not None or self._current is None:
            call = self._new_call()
        else:
            call = self._current
        self._current = call
        return call


class ChoicesZeroUnguarded(OpenAIChatConverter):
    """CHOICES_ZERO_UNGUARDED: ``chunk.choices[0]`` on chunks with ``choices: []`` (usage, Azure) (F04)."""

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        choice = get_field(chunk, "choices")[0]  # the bug: IndexError on choices: []
        if get_field(choice, "index") not in (None, 0):
            return []
        return super()._chunk(chunk)


class ReturnOnFinishFirst(OpenAIChatConverter):
    """RETURN_ON_FINISH_FIRST: a chunk with a finish_reason is read for the reason only; its delta is lost (F02)."""

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        reason = _finish_reason_of(chunk)
        if reason is not None:
            self._finish_reason = reason
            return []
        return super()._chunk(chunk)


class RequireFinishToolCalls(OpenAIChatConverter):
    """REQUIRE_FINISH_TOOL_CALLS: tool calls are held and released only if finish_reason == 'tool_calls' (F01)."""

    def __init__(self, *, cumulative_arguments: bool = False) -> None:
        super().__init__(cumulative_arguments=cumulative_arguments)
        self._held: list[ToolCallDelta] = []

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        chunks = super()._chunk(chunk)
        for piece in chunks:
            self._held += piece.tool_calls or ()
            piece.tool_calls = None
        return chunks

    def _finish(self) -> list[ChunkResponse]:
        chunks = super()._finish()
        if self._finish_reason == "tool_calls" and self._held:
            chunks.insert(0, ChunkResponse(tool_calls=self._held))
        return chunks


class CompleteOnFinishReason(OpenAIChatConverter):
    """TERMINATE_ON_ANY_FINISH: ``is_complete=finish_reason is not None`` per chunk, then the real end (F03)."""

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        chunks = super()._chunk(chunk)
        reason = _finish_reason_of(chunk)
        if reason is not None and not self.is_complete:
            chunks = chunks or [ChunkResponse()]
            chunks[-1].is_complete = True
            chunks[-1].finish_reason = reason
        return chunks


class TerminateOnUsage(OpenAIChatConverter):
    """TERMINATE_ON_USAGE: a chunk with usage is taken as the last one (true only of include_usage) (F03)."""

    def _chunk(self, chunk: Any) -> list[ChunkResponse]:
        chunks = super()._chunk(chunk)
        if get_field(chunk, "usage") is not None and not self.is_complete:
            chunks += self._finish()
        return chunks


class IgnoreLengthStop(OpenAIChatConverter):
    """IGNORE_LENGTH_STOP: finish_reason 'length' is passed through as a normal stop (F06)."""

    TRUNCATION_REASONS = frozenset()


class EndOfIterationIsSuccess(OpenAIChatConverter):
    """EOS_IS_SUCCESS: the iterator ending is a normal end even without a finish_reason (F07)."""

    def _finish(self) -> list[ChunkResponse]:
        if self._finish_reason is None:
            return self._terminal(ChunkAssembler(), finish_reason="stop", error=None)
        return super()._finish()


class ReasoningContentAsText(OpenAIChatConverter):
    """THOUGHT_AS_TEXT: ``delta.content or delta.reasoning_content``: reasoning shown as the answer (C05)."""

    def _delta(self, delta: Any, pieces: ChunkAssembler) -> None:
        super()._delta(delta, _ReasoningAsContent(pieces))  # type: ignore[arg-type]


class DropReasoningContent(OpenAIChatConverter):
    """DROP_REASONING: ``reasoning_content`` is never read; DeepSeek needs it echoed back after tool calls (G09)."""

    def _delta(self, delta: Any, pieces: ChunkAssembler) -> None:
        super()._delta(delta, _ReasoningDropped(pieces))  # type: ignore[arg-type]


# -- OpenAI Responses ----------------------------------------------------------------------------


class ItemIdAsCallId(OpenAIResponsesConverter):
    """ITEM_ID_AS_CALL_ID: the item's ``fc_...`` id is used as the call id the tool result must echo (A13, G02)."""

    def _start(self, item_id: Any, output_index: Any, item: Any, pieces: ChunkAssembler) -> TrackedCall | None:
        if item is not None:
            item = {"call_id": item_id, "name": get_field(item, "name")}
        return super()._start(item_id, output_index, item, pieces)


class OutputIndexAsToolIndex(OpenAIResponsesConverter):
    """KEY_BY_POSITION: ``ToolCallDelta.index = event.output_index``, which counts messages and reasoning (A03)."""

    def __init__(self) -> None:
        super().__init__()
        self._positions: dict[int, int] = {}

    def _start(self, item_id: Any, output_index: Any, item: Any, pieces: ChunkAssembler) -> TrackedCall | None:
        call = super()._start(item_id, output_index, item, pieces)
        if call is not None and isinstance(output_index, int):
            self._positions[call.index] = output_index
        return call

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        for chunk in chunks:
            for delta in chunk.tool_calls or ():
                delta.index = self._positions.get(delta.index, delta.index)
        return chunks


class CallIdAsItemId(OpenAIResponsesConverter):
    """CALL_ID_AS_ITEM_ID: ``provider_metadata['item_id']`` gets the ``call_...`` id; the replay is rejected (G02)."""

    def _start(self, item_id: Any, output_index: Any, item: Any, pieces: ChunkAssembler) -> TrackedCall | None:
        call = super()._start(item_id, output_index, item, ChunkAssembler())
        if call is not None:
            metadata = {"item_id": call.call_id} if call.call_id else None
            pieces.tool(ToolCallDelta(call.index, call.call_id, call.name, provider_metadata=metadata))
        return call


class TypoArgumentsDeltaEvent(OpenAIResponsesConverter):
    """TYPO_EVENT_NAME: 'response.function_call.arguments.delta' never matches; arguments only come at .done (A14)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        if get_field(event, "type") == "response.function_call_arguments.delta":
            self._unknown("event 'response.function_call_arguments.delta'")
            return []
        return super()._convert(event)


class IgnoreDoneSnapshot(OpenAIResponsesConverter):
    """IGNORE_DONE: arguments are taken from the deltas only; the ``.done`` snapshot is never read (A15)."""

    def _reconcile(self, call: TrackedCall, call_id: Any, name: Any, arguments: Any, pieces: ChunkAssembler) -> None:
        self._added_arguments.pop(call.index, None)
        super()._reconcile(call, call_id, name, None, pieces)


class AppendDoneArguments(OpenAIResponsesConverter):
    """APPEND_DONE: ``function_call_arguments.done`` is forwarded as one more delta, after the deltas (A15)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        if get_field(event, "type") == "response.function_call_arguments.done":
            call = self._lookup(get_field(event, "item_id"), get_field(event, "output_index"))
            arguments = get_field(event, "arguments")
            if call is not None and isinstance(arguments, str) and arguments:
                chunks.append(ChunkResponse(tool_calls=[ToolCallDelta(call.index, arguments_delta=arguments)]))
        return chunks


class ServerItemAsFunctionCall(OpenAIResponsesConverter):
    """SERVER_TOOL_AS_CLIENT: every ``*_call`` output item is a client call, ``web_search_call`` included (A19)."""

    def _item_added(self, event: Any, pieces: ChunkAssembler) -> None:
        item = get_field(event, "item")
        item_type = get_field(item, "type")
        if isinstance(item_type, str) and item_type.endswith("_call") and item_type != "function_call":
            self._start(get_field(item, "id"), get_field(event, "output_index"), _as_client_call(item), pieces)
            return
        super()._item_added(event, pieces)

    def _item_done(self, item: Any, output_index: Any, pieces: ChunkAssembler) -> None:
        item_type = get_field(item, "type")
        if isinstance(item_type, str) and item_type.endswith("_call") and item_type != "function_call":
            item = _as_client_call(item)
        super()._item_done(item, output_index, pieces)


def _as_client_call(item: Any) -> dict[str, Any]:
    action = get_field(item, "action")
    arguments = json.dumps({"query": get_field(action, "query")}) if action is not None else ""
    return {
        "type": "function_call",
        "id": get_field(item, "id"),
        "call_id": get_field(item, "id"),
        "name": get_field(item, "type"),
        "arguments": arguments,
    }


class FailedIsCompleted(OpenAIResponsesConverter):
    """IGNORE_ERROR_EVENTS: the ``error`` event is skipped and ``response.failed`` ends the stream normally (F08)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        kind = get_field(event, "type")
        if kind == "error":
            return []
        if kind == "response.failed":
            pieces = ChunkAssembler()
            return self._response_end("response.completed", get_field(event, "response"), pieces)
        return super()._convert(event)


class CompleteOnItemDone(OpenAIResponsesConverter):
    """TERMINATE_ON_ITEM_DONE: a function call's ``output_item.done`` is marked ``is_complete`` (F03)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        call_done = get_field(event, "type") == "response.output_item.done" and (
            get_field(get_field(event, "item"), "type") == "function_call"
        )
        if call_done and not self.is_complete:
            chunks = chunks or [ChunkResponse()]
            chunks[-1].is_complete = True
        return chunks


def index_tool_calls_by_block(chunks: list[ChunkResponse], calls: Any) -> list[ChunkResponse]:
    """The planted KEY_BY_POSITION defect of the content-block APIs: each tool delta's index becomes
    the position of its content block (text and reasoning blocks count), as a naive converter keys it."""
    blocks = {call.index: call.keys[0] for call in calls}
    for chunk in chunks:
        for delta in chunk.tool_calls or ():
            block = blocks.get(delta.index)
            if isinstance(block, int):
                delta.index = block
    return chunks


# -- Anthropic Messages --------------------------------------------------------------------------


class BlockIndexAsToolIndex(AnthropicConverter):
    """KEY_BY_POSITION: ``ToolCallDelta.index = event.index``, the content block index (text blocks count) (A03)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        return index_tool_calls_by_block(super()._convert(event), self.tracker.calls())


class StartInputAsDelta(AnthropicConverter):
    """APPEND_SNAPSHOT at start: ``json.dumps(block.input)`` ('{}') is sent before the input_json deltas (A09, D08)."""

    def _block_start(self, index: Any, block: Any, pieces: ChunkAssembler) -> None:
        super()._block_start(index, block, pieces)
        if get_field(block, "type") == "tool_use" and isinstance(index, int):
            call = self.tracker.lookup(index)
            if call is not None:
                pieces.tool(ToolCallDelta(call.index, arguments_delta=json.dumps(get_field(block, "input") or {})))


class ServerToolUseAsClient(AnthropicConverter):
    """SERVER_TOOL_AS_CLIENT: ``type.endswith('tool_use')``: a server_tool_use block becomes a client call (A19)."""

    def _block_start(self, index: Any, block: Any, pieces: ChunkAssembler) -> None:
        if get_field(block, "type") == "server_tool_use":
            block = {
                "type": "tool_use",
                "id": get_field(block, "id"),
                "name": get_field(block, "name"),
                "input": get_field(block, "input"),
            }
        super()._block_start(index, block, pieces)


class BufferInputUntilStop(AnthropicConverter):
    """BUFFER_ARGS_UNTIL_END: input_json fragments are held and sent as one delta at block stop or stream end (C07)."""

    def _input_json(self, index: Any, fragment: str, pieces: ChunkAssembler) -> None:
        super()._input_json(index, fragment, ChunkAssembler())  # recorded in the tracker, not forwarded

    def _flush(self, call: TrackedCall, pieces: ChunkAssembler) -> None:
        if call.streamed_arguments:
            pieces.tool(ToolCallDelta(call.index, arguments_delta=call.streamed_arguments))

    def _block_stop(self, index: Any, pieces: ChunkAssembler) -> None:
        call = self.tracker.lookup(index) if isinstance(index, int) else None
        if call is not None and not call.completed:
            self._flush(call, pieces)
        super()._block_stop(index, pieces)

    def _terminal(
        self, pieces: ChunkAssembler, *, finish_reason: str | None, error: StreamError | None
    ) -> list[ChunkResponse]:
        for call in self.tracker.open_calls():
            self._flush(call, pieces)
        return super()._terminal(pieces, finish_reason=finish_reason, error=error)


class IgnoreMaxTokens(AnthropicConverter):
    """IGNORE_LENGTH_STOP: stop_reason 'max_tokens' is forwarded as a normal stop (F06)."""

    TRUNCATION_REASONS = frozenset()


class ErrorEventEndsNormally(AnthropicConverter):
    """IGNORE_ERROR_EVENTS: ``except anthropic.APIError: break``: an ``event: error`` ends the turn normally (F08)."""

    def fail(self, exc: BaseException) -> list[ChunkResponse]:
        if self.is_complete:
            return []
        return self._terminal(ChunkAssembler(), finish_reason=self._stop_reason or "end_turn", error=None)


class ThinkingAsText(AnthropicConverter):
    """THOUGHT_AS_TEXT: ``thinking_delta`` text is emitted as content (C05)."""

    def _block_delta(self, index: Any, delta: Any, pieces: ChunkAssembler) -> None:
        super()._block_delta(index, delta, _ReasoningAsContent(pieces))  # type: ignore[arg-type]


class SumCumulativeUsage(AnthropicConverter):
    """SUM_CUMULATIVE_USAGE: ``message_delta.usage.output_tokens`` is cumulative but is added up (F05)."""

    def _update_usage(self, usage: Any) -> TokenUsage | None:
        if usage is None:
            return None
        previous = self._usage
        current = super()._update_usage(usage)
        if current is None or previous is None:
            return current
        self._usage = TokenUsage(current.prompt_tokens, previous.completion_tokens + current.completion_tokens)
        return self._usage


# -- Gemini --------------------------------------------------------------------------------------


class FirstPartOnly(GeminiConverter):
    """FIRST_PART_ONLY: ``candidate.content.parts[0]``: the second call of a parallel chunk is lost (A16)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        for candidate in get_field(event, "candidates") or ():
            content = get_field(candidate, "content")
            parts = get_field(content, "parts")
            if parts:
                content.parts = parts[:1]
        return super()._convert(event)


class _GeminiArgumentsText(GeminiConverter):
    """A Gemini converter whose whole-call arguments text comes from ``_arguments_text`` (the mutated line)."""

    def _arguments_text(self, args: Any) -> str | None:
        raise NotImplementedError

    def _complete_call(
        self, name: str | None, call_id: str | None, args: Any, signature: str | None, pieces: ChunkAssembler
    ) -> None:
        if call_id is not None and call_id in self._by_id:
            super()._complete_call(name, call_id, args, signature, pieces)  # a restatement: no arguments sent
            return
        index = self._new_index(call_id)
        pieces.tool(
            ToolCallDelta(
                index, call_id, name, self._arguments_text(args), provider_metadata=self._metadata(index, signature)
            )
        )


class DumpsNoneArgs(_GeminiArgumentsText):
    """DUMPS_NONE: ``json.dumps(part.function_call.args)`` with args absent gives 'null' (A12)."""

    def _arguments_text(self, args: Any) -> str | None:
        return json.dumps(args, ensure_ascii=False)


class ReprArgs(_GeminiArgumentsText):
    """REPR_DICT: ``str(part.function_call.args)``: Python repr, single quotes, not JSON (A11)."""

    def _arguments_text(self, args: Any) -> str | None:
        return None if args is None else str(args)


class KeyCallsByName(_GeminiArgumentsText):
    """KEY_BY_NAME: one call per function name; a second same-name call is merged into the first (A04, B06)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_name: dict[str | None, int] = {}

    def _complete_call(
        self, name: str | None, call_id: str | None, args: Any, signature: str | None, pieces: ChunkAssembler
    ) -> None:
        index = self._by_name.setdefault(name, len(self._by_name))
        pieces.tool(
            ToolCallDelta(
                index, call_id, name, self._arguments_text(args), provider_metadata=self._metadata(index, signature)
            )
        )

    def _arguments_text(self, args: Any) -> str | None:
        return None if args is None else json.dumps(args, ensure_ascii=False)


class NewIndexPerPart(GeminiConverter):
    """NEW_INDEX_PER_PART: every functionCall part is a new call; a restatement (same id) runs twice (B08)."""

    def _complete_call(
        self, name: str | None, call_id: str | None, args: Any, signature: str | None, pieces: ChunkAssembler
    ) -> None:
        self._by_id.pop(call_id or "", None)  # the id is never looked up
        super()._complete_call(name, call_id, args, signature, pieces)


class DropThoughtSignature(GeminiConverter):
    """DROP_SIGNATURE: ``part.thought_signature`` is never read; Gemini 3 rejects the next request without it (G07)."""

    def _metadata(self, index: int, signature: str | None) -> dict[str, Any] | None:
        return None


class SignatureOnEveryCall(GeminiConverter):
    """COPY_SIGNATURE: the batch's thought signature is put on every call, though only the first has one (G07)."""

    def __init__(self) -> None:
        super().__init__()
        self._last_signature: str | None = None

    def _metadata(self, index: int, signature: str | None) -> dict[str, Any] | None:
        self._last_signature = signature or self._last_signature
        return super()._metadata(index, self._last_signature)


class SumUsagePerChunk(GeminiConverter):
    """SUM_CUMULATIVE_USAGE: every chunk's usageMetadata is added up, though each one is a running total (F05)."""

    def _usage_of(self, metadata: Any) -> TokenUsage | None:  # type: ignore[override]
        current = GeminiConverter._usage_of(metadata)
        if current is None or self._usage is None:
            return current
        return TokenUsage(current.prompt_tokens, self._usage.completion_tokens + current.completion_tokens)


class ThoughtPartsAsText(GeminiConverter):
    """THOUGHT_AS_TEXT: ``part.text`` is read without looking at ``part.thought`` (C05)."""

    def _part(self, part: Any, pieces: ChunkAssembler) -> None:
        super()._part(part, _ReasoningAsContent(pieces))  # type: ignore[arg-type]


class MaxTokensIsNormal(GeminiConverter):
    """IGNORE_LENGTH_STOP: finishReason MAX_TOKENS is treated like STOP (F06)."""

    def _finish(self) -> list[ChunkResponse]:
        chunks = super()._finish()
        for chunk in chunks:
            if chunk.error is not None and chunk.error.kind == "truncated":
                chunk.error = None
        return chunks


class ApiErrorEndsNormally(GeminiConverter):
    """IGNORE_ERROR_EVENTS: ``except errors.APIError: break``: an in-band error ends the turn as STOP (F08)."""

    def fail(self, exc: BaseException) -> list[ChunkResponse]:
        if self.is_complete:
            return []
        return self._terminal(ChunkAssembler(), finish_reason=self._finish_reason or "STOP", error=None)


# -- the catalogue -------------------------------------------------------------------------------

OUTCOME = "converter_outcome_matches"
DENSE = "converter_indices_dense"
ONCE = "converter_id_and_name_once"
DELTAS = "converter_deltas_match_final_arguments"
ABNORMAL = "converter_abnormal_end_surfaced"
TERMINAL = "converter_one_terminal_chunk"
INCREMENTAL = "converter_arguments_stream_incrementally"
USAGE = "converter_usage_is_last_snapshot"
METADATA = "converter_provider_metadata_kept"


def _factory(cls: type[StreamConverter]) -> Callable[..., StreamConverter]:
    def factory(api: str, **options: Any) -> StreamConverter:
        if api != cls.api:
            raise ValueError(f"{cls.__name__} converts {cls.api!r}, not {api!r}")
        return cls(**options)

    factory.__name__ = factory.__qualname__ = cls.__name__
    factory.__doc__ = cls.__doc__
    return factory


def _mutant(
    name: str,
    cls: type[StreamConverter],
    taxonomy: tuple[str, ...],
    caught_by: set[str],
    gap: str | None = None,
) -> Mutant:
    doc = (cls.__doc__ or name).strip().splitlines()[0]
    return Mutant(name, cls.api, taxonomy, frozenset(caught_by), _factory(cls), doc, gap)


MUTANTS: tuple[Mutant, ...] = (
    # OpenAI Chat Completions (and OpenAI-compatible dialects)
    _mutant("chat_ignore_cumulative_profile", IgnoreCumulativeProfile, ("A09",), {DELTAS, OUTCOME}),
    _mutant("chat_repr_object_arguments", ReprObjectArguments, ("A11", "D06"), {DELTAS, OUTCOME}),
    _mutant("chat_name_restatement_forwarded", NameRestatementForwarded, ("A06",), {ONCE}),
    _mutant("chat_strip_name_prefix", StripNamePrefix, ("A07",), {OUTCOME}),
    _mutant("chat_id_present_not_none", IdPresentNotNone, ("A05", "A20"), {OUTCOME, ONCE, DENSE}),
    _mutant("chat_key_by_wire_index_only", KeyByWireIndexOnly, ("A02", "B01"), {OUTCOME}),
    _mutant("chat_route_to_last_call", RouteToLastCall, ("B02", "B04"), {OUTCOME, DELTAS}),
    _mutant("chat_choices_zero_unguarded", ChoicesZeroUnguarded, ("F04",), {OUTCOME}),
    _mutant("chat_return_on_finish_first", ReturnOnFinishFirst, ("F02",), {DELTAS, OUTCOME}),
    _mutant("chat_require_finish_tool_calls", RequireFinishToolCalls, ("F01",), {OUTCOME}),
    _mutant("chat_complete_on_finish_reason", CompleteOnFinishReason, ("F03",), {TERMINAL}),
    _mutant("chat_terminate_on_usage", TerminateOnUsage, ("F03", "F05"), {OUTCOME}),
    _mutant("chat_ignore_length_stop", IgnoreLengthStop, ("F06",), {ABNORMAL}),
    _mutant("chat_end_of_iteration_is_success", EndOfIterationIsSuccess, ("F07",), {ABNORMAL, OUTCOME}),
    _mutant("chat_reasoning_content_as_text", ReasoningContentAsText, ("C05",), {OUTCOME}),
    _mutant(
        "chat_drop_reasoning_content",
        DropReasoningContent,
        ("C05", "G09"),
        {OUTCOME},
    ),
    # OpenAI Responses
    _mutant("responses_item_id_as_call_id", ItemIdAsCallId, ("A13", "G02"), {OUTCOME}),
    _mutant("responses_output_index_as_tool_index", OutputIndexAsToolIndex, ("A03",), {DENSE}),
    _mutant("responses_call_id_as_item_id", CallIdAsItemId, ("G02", "A13"), {METADATA}),
    _mutant("responses_typo_arguments_delta_event", TypoArgumentsDeltaEvent, ("A14", "C07"), {DELTAS}),
    _mutant("responses_ignore_done_snapshot", IgnoreDoneSnapshot, ("A15",), {DELTAS, OUTCOME}),
    _mutant("responses_append_done_arguments", AppendDoneArguments, ("A15",), {DELTAS, OUTCOME}),
    _mutant("responses_server_item_as_function_call", ServerItemAsFunctionCall, ("A19",), {OUTCOME}),
    _mutant("responses_failed_is_completed", FailedIsCompleted, ("F08",), {ABNORMAL, OUTCOME}),
    _mutant("responses_complete_on_item_done", CompleteOnItemDone, ("F03",), {TERMINAL}),
    # Anthropic Messages
    _mutant("anthropic_block_index_as_tool_index", BlockIndexAsToolIndex, ("A03",), {DENSE}),
    _mutant("anthropic_start_input_as_delta", StartInputAsDelta, ("A09", "D08"), {DELTAS, OUTCOME}),
    _mutant("anthropic_server_tool_use_as_client", ServerToolUseAsClient, ("A19",), {OUTCOME}),
    _mutant("anthropic_buffer_input_until_stop", BufferInputUntilStop, ("C07",), {INCREMENTAL}),
    _mutant("anthropic_ignore_max_tokens", IgnoreMaxTokens, ("F06",), {ABNORMAL}),
    _mutant("anthropic_error_event_ends_normally", ErrorEventEndsNormally, ("F08",), {ABNORMAL, OUTCOME}),
    _mutant("anthropic_thinking_as_text", ThinkingAsText, ("C05",), {OUTCOME}),
    _mutant("anthropic_sum_cumulative_usage", SumCumulativeUsage, ("F05",), {USAGE}),
    # Gemini
    _mutant("gemini_first_part_only", FirstPartOnly, ("A16",), {OUTCOME}),
    _mutant("gemini_dumps_none_args", DumpsNoneArgs, ("A12",), {DELTAS}),
    _mutant("gemini_repr_args", ReprArgs, ("A11",), {DELTAS, OUTCOME}),
    _mutant("gemini_key_calls_by_name", KeyCallsByName, ("A04", "B06"), {OUTCOME, ONCE}),
    _mutant("gemini_new_index_per_part", NewIndexPerPart, ("B08",), {OUTCOME}),
    _mutant("gemini_drop_thought_signature", DropThoughtSignature, ("G07",), {METADATA}),
    _mutant("gemini_signature_on_every_call", SignatureOnEveryCall, ("G07",), {METADATA}),
    _mutant("gemini_sum_usage_per_chunk", SumUsagePerChunk, ("F05",), {USAGE}),
    _mutant("gemini_thought_parts_as_text", ThoughtPartsAsText, ("C05",), {OUTCOME}),
    _mutant("gemini_max_tokens_is_normal", MaxTokensIsNormal, ("F06",), {ABNORMAL}),
    _mutant("gemini_api_error_ends_normally", ApiErrorEndsNormally, ("F08",), {ABNORMAL, OUTCOME}),
)

# The client-library APIs' mutants live in their own module (imported here, after everything it uses
# from this one is defined).
from tests.mutants.library_converter_mutants import LIBRARY_MUTANTS  # noqa: E402

MUTANTS += LIBRARY_MUTANTS

assert len({mutant.name for mutant in MUTANTS}) == len(MUTANTS)


# -- ends of streams and shared state (added with the verdict rework: each was CONFORMANT before) ----


class TextOnlyIsTruncated(OpenAIChatConverter):
    """Every stream without tool calls is reported as truncated (an unexpected error on a normal end)."""

    def finish(self) -> list[ChunkResponse]:
        chunks = super().finish()
        for chunk in chunks:
            if chunk.is_complete and chunk.error is None and not self._saw_tool_calls:
                chunk.error = StreamError("truncated", "assumed")
        return chunks

    def convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super().convert(event)
        self._saw_tool_calls = getattr(self, "_saw_tool_calls", False) or any(c.tool_calls for c in chunks)
        return chunks


class TerminalChunkLosesFinishReason(AnthropicConverter):
    """The terminal chunk carries no finish_reason: agent loops that branch on 'tool_use' stop (F01)."""

    def convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super().convert(event)
        for chunk in chunks:
            chunk.finish_reason = None
        return chunks


class MaxTokensAsIncomplete(AnthropicConverter):
    """A max_tokens truncation is reported as a generic 'incomplete' error (the wrong remedy follows)."""

    def convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super().convert(event)
        for chunk in chunks:
            if chunk.error is not None and chunk.error.kind == "truncated":
                chunk.error = StreamError("incomplete", chunk.error.message)
        return chunks


# One call table per process, cleared by each new converter: the "default stream state" of B07.
_SHARED_CALLS: list[Any] = []
_SHARED_BY_INDEX: dict[int, Any] = {}


class SharedCallTable(OpenAIChatConverter):
    """The call table is module state that each new converter clears: streams converted at once mix calls (B07)."""

    def __init__(self, *, cumulative_arguments: bool = False) -> None:
        super().__init__(cumulative_arguments=cumulative_arguments)
        _SHARED_CALLS.clear()
        _SHARED_BY_INDEX.clear()
        self._calls = _SHARED_CALLS
        self._by_wire_index = _SHARED_BY_INDEX


ENDS_AND_STATE_MUTANTS: tuple[Mutant, ...] = (
    _mutant("openai-chat_text_only_is_truncated", TextOnlyIsTruncated, ("F03",), {ABNORMAL}),
    _mutant("anthropic_terminal_loses_finish_reason", TerminalChunkLosesFinishReason, ("F01",), {OUTCOME}),
    _mutant("anthropic_max_tokens_as_incomplete", MaxTokensAsIncomplete, ("F06",), {ABNORMAL}),
    _mutant("openai-chat_shared_call_table", SharedCallTable, ("B07",), {"converter_instances_independent"}),
)
