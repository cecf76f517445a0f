"""Deliberately broken converters for the client-library wire APIs: Ollama, Bedrock (Converse, Invoke), Cohere v2.

Same rules as ``tests/mutants/converter_mutants.py`` (which appends ``LIBRARY_MUTANTS`` to its
``MUTANTS``): each subclasses the reference converter and plants one bug seen in real converters,
and names the check meant to catch it. The Bedrock Invoke mutants are the Anthropic mutants' own
bugs on the Anthropic events Bedrock wraps (the same classes, mixed into ``BedrockInvokeConverter``).
"""

from __future__ import annotations

import base64
from typing import Any

from reference_impl.converters import (
    BedrockConverseConverter,
    BedrockInvokeConverter,
    ChunkAssembler,
    CohereV2Converter,
    OllamaConverter,
)
from reference_impl.converters.base import get_field
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta
from tests.mutants.converter_mutants import (
    ABNORMAL,
    DELTAS,
    DENSE,
    INCREMENTAL,
    OUTCOME,
    USAGE,
    BufferInputUntilStop,
    ErrorEventEndsNormally,
    IgnoreMaxTokens,
    Mutant,
    SumCumulativeUsage,
    _mutant,
    _ReasoningAsContent,
    index_tool_calls_by_block,
)

__all__ = ["LIBRARY_MUTANTS"]


# -- Ollama /api/chat -------------------------------------------------------------------------------


class OllamaKeyByWireIndex(OllamaConverter):
    """KEY_BY_WIRE_INDEX: ``function.index`` as the tool index; it is omitted for 0 and dropped by ollama-python,
    so every call lands on index 0 and parallel calls merge (A02, B01)."""

    def _tool_call(self, entry: Any) -> list[ToolCallDelta]:
        deltas = super()._tool_call(entry)
        index = get_field(get_field(entry, "function"), "index")
        for delta in deltas:
            delta.index = index if isinstance(index, int) else 0
        return deltas


class OllamaReprArguments(OllamaConverter):
    """REPR_OBJECT_ARGS: ``str(arguments)``: the arguments object as a Python repr, not JSON (A11, D06)."""

    def _tool_call(self, entry: Any) -> list[ToolCallDelta]:
        deltas = super()._tool_call(entry)
        arguments = get_field(get_field(entry, "function"), "arguments")
        for delta in deltas:
            if delta.arguments_delta:
                delta.arguments_delta = str(dict(arguments) if arguments is not None else {})
        return deltas


class OllamaThinkingAsText(OllamaConverter):
    """THOUGHT_AS_TEXT: ``message.thinking`` is streamed as content (C05)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        for chunk in chunks:
            if chunk.reasoning:
                chunk.content, chunk.reasoning = (chunk.reasoning or "") + (chunk.content or ""), None
        return chunks


class OllamaLengthIsNormal(OllamaConverter):
    """IGNORE_LENGTH_STOP: ``done_reason: "length"`` ends the turn like ``stop`` (F06)."""

    TRUNCATION_REASONS = frozenset()


class OllamaEndOfStreamIsSuccess(OllamaConverter):
    """EOF_IS_SUCCESS: the body ending without a ``done: true`` line is taken as a normal end (F07)."""

    def _finish(self) -> list[ChunkResponse]:
        return self._terminal(ChunkAssembler(), finish_reason="stop", error=None)


# -- Bedrock ConverseStream ---------------------------------------------------------------------------


class ConverseBlockIndexAsToolIndex(BedrockConverseConverter):
    """KEY_BY_POSITION: ``ToolCallDelta.index = contentBlockIndex`` (text and reasoning blocks count) (A03)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        return index_tool_calls_by_block(super()._convert(event), self.tracker.calls())


class ConverseServerToolAsClient(BedrockConverseConverter):
    """SERVER_TOOL_AS_CLIENT: every ``start.toolUse`` is a client call, ``type: server_tool_use`` included (A19)."""

    def _tool_start(self, index: int, body: Any, pieces: ChunkAssembler) -> None:
        if get_field(body, "type") == "server_tool_use":
            body = {"toolUseId": get_field(body, "toolUseId"), "name": get_field(body, "name")}
        super()._tool_start(index, body, pieces)


class ConverseBufferInputUntilStop(BedrockConverseConverter):
    """BUFFER_ARGS_UNTIL_END: ``toolUse.input`` fragments are held and sent whole at ``contentBlockStop`` (C07)."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, list[str]] = {}

    def _input(self, index: int | None, fragment: str, pieces: ChunkAssembler) -> None:
        held = ChunkAssembler()
        super()._input(index, fragment, held)
        for chunk in held.build():
            for delta in chunk.tool_calls or ():
                self._held.setdefault(delta.index, []).append(delta.arguments_delta or "")

    def _flush(self, pieces: ChunkAssembler) -> None:
        for index, parts in self._held.items():
            pieces.tool(ToolCallDelta(index, arguments_delta="".join(parts)))
        self._held.clear()

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        if "contentBlockStop" in (event if isinstance(event, dict) else {}) and self._held:
            pieces = ChunkAssembler()
            self._flush(pieces)
            chunks = pieces.build() + chunks
        return chunks

    def _terminal(
        self, pieces: ChunkAssembler, *, finish_reason: str | None, error: StreamError | None
    ) -> list[ChunkResponse]:
        self._flush(pieces)
        return super()._terminal(pieces, finish_reason=finish_reason, error=error)


class ConverseMaxTokensIsNormal(BedrockConverseConverter):
    """IGNORE_LENGTH_STOP: ``stopReason: max_tokens`` is a normal stop (F06)."""

    TRUNCATION_REASONS = frozenset()
    NORMAL_REASONS = frozenset({"end_turn", "tool_use", "stop_sequence", "max_tokens"})


class ConverseEndAtMessageStop(BedrockConverseConverter):
    """STOP_BEFORE_METADATA: the turn ends at ``messageStop``; the ``metadata`` usage after it is lost (F03, F05)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        if isinstance(event, dict) and "messageStop" in event:
            self._stop_reason = get_field(event["messageStop"], "stopReason")
            self._stopped = True
            return self._end(ChunkAssembler())
        return super()._convert(event)


class ConverseReasoningAsText(BedrockConverseConverter):
    """THOUGHT_AS_TEXT: ``reasoningContent.text`` is emitted as content (C05)."""

    def _delta(self, index: int | None, delta: Any, pieces: ChunkAssembler) -> None:
        super()._delta(index, delta, _ReasoningAsContent(pieces))  # type: ignore[arg-type]


# -- Bedrock InvokeModelWithResponseStream (Anthropic events) -----------------------------------------


class InvokeDecodeBase64Again(BedrockInvokeConverter):
    """DOUBLE_DECODE: ``chunk.bytes`` is base64-decoded again, though botocore already did (right only for the
    wire's base64 text in hand-written fixtures) (D06)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunk = get_field(event, "chunk") if isinstance(event, dict) else None
        raw = get_field(chunk, "bytes")
        if isinstance(raw, (bytes, bytearray)):
            event = {"chunk": {"bytes": base64.b64decode(bytes(raw))}}
        return super()._convert(event)


class InvokeBufferInputUntilStop(BufferInputUntilStop, BedrockInvokeConverter):
    """BUFFER_ARGS_UNTIL_END on Bedrock: input_json fragments held until the block stops (C07)."""


class InvokeIgnoreMaxTokens(IgnoreMaxTokens, BedrockInvokeConverter):
    """IGNORE_LENGTH_STOP on Bedrock: stop_reason 'max_tokens' is a normal stop (F06)."""

    TRUNCATION_REASONS = frozenset()


class InvokeExceptionEndsNormally(ErrorEventEndsNormally, BedrockInvokeConverter):
    """IGNORE_ERROR_EVENTS on Bedrock: ``except EventStreamError: break``: an exception frame ends the turn normally
    (F08)."""


class InvokeSumCumulativeUsage(SumCumulativeUsage, BedrockInvokeConverter):
    """SUM_CUMULATIVE_USAGE on Bedrock: the cumulative ``message_delta`` output tokens are added up (F05)."""


# -- Cohere v2 ----------------------------------------------------------------------------------------


class CohereToolPlanAsText(CohereV2Converter):
    """PLAN_AS_TEXT: the ``tool-plan-delta`` plan is streamed as answer text (C05)."""

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        if get_field(event, "type") == "tool-plan-delta":
            for chunk in chunks:
                chunk.content, chunk.reasoning = chunk.reasoning, None
        return chunks


class CohereKeyCallsByName(CohereV2Converter):
    """KEY_BY_NAME: calls are keyed by tool name, so a second call of the same tool continues the first (A04, B06)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_name: dict[str, int] = {}
        self._alias: dict[int, int] = {}

    def _start(self, index: Any, call: Any, pieces: ChunkAssembler) -> None:
        name = get_field(get_field(call, "function"), "name")
        if isinstance(name, str) and name in self._by_name and isinstance(index, int):
            self._alias[index] = self._by_name[name]
            return
        if isinstance(name, str) and isinstance(index, int):
            self._by_name[name] = index
        super()._start(index, call, pieces)

    def _arguments(self, index: Any, fragment: Any, pieces: ChunkAssembler) -> None:
        super()._arguments(self._alias.get(index, index), fragment, pieces)

    def _end_call(self, index: Any) -> None:
        super()._end_call(self._alias.get(index, index))


class CohereMaxTokensIsNormal(CohereV2Converter):
    """IGNORE_LENGTH_STOP: ``finish_reason: MAX_TOKENS`` is a normal end (F06)."""

    TRUNCATION_REASONS = frozenset()
    NORMAL_REASONS = frozenset({"COMPLETE", "STOP_SEQUENCE", "TOOL_CALL", "MAX_TOKENS"})


class CohereErrorFinishIsNormal(CohereV2Converter):
    """IGNORE_ERROR_EVENTS: ``message-end`` with ``finish_reason: ERROR`` ends the turn normally (F08)."""

    def _message_end(self, delta: Any, pieces: ChunkAssembler) -> list[ChunkResponse]:
        return self._terminal(pieces, finish_reason=get_field(delta, "finish_reason"), error=None)


class CohereBufferArgumentsUntilEnd(CohereV2Converter):
    """BUFFER_ARGS_UNTIL_END: ``tool-call-delta`` fragments are held and sent whole at ``tool-call-end`` (C07)."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, list[str]] = {}

    def _arguments(self, index: Any, fragment: Any, pieces: ChunkAssembler) -> None:
        held = ChunkAssembler()
        super()._arguments(index, fragment, held)
        for chunk in held.build():
            for delta in chunk.tool_calls or ():
                self._held.setdefault(delta.index, []).append(delta.arguments_delta or "")

    def _convert(self, event: Any) -> list[ChunkResponse]:
        chunks = super()._convert(event)
        if get_field(event, "type") in ("tool-call-end", "message-end") and self._held:
            pieces = ChunkAssembler()
            for index, parts in self._held.items():
                pieces.tool(ToolCallDelta(index, arguments_delta="".join(parts)))
            self._held.clear()
            chunks = pieces.build() + chunks
        return chunks


LIBRARY_MUTANTS: tuple[Mutant, ...] = (
    # Ollama
    _mutant("ollama_key_by_wire_index", OllamaKeyByWireIndex, ("A02", "B01"), {OUTCOME}),
    _mutant("ollama_repr_arguments", OllamaReprArguments, ("A11", "D06"), {DELTAS, OUTCOME}),
    _mutant("ollama_thinking_as_text", OllamaThinkingAsText, ("C05",), {OUTCOME}),
    _mutant("ollama_length_is_normal", OllamaLengthIsNormal, ("F06",), {ABNORMAL}),
    _mutant("ollama_end_of_stream_is_success", OllamaEndOfStreamIsSuccess, ("F07",), {ABNORMAL, OUTCOME}),
    # Bedrock ConverseStream
    _mutant("converse_block_index_as_tool_index", ConverseBlockIndexAsToolIndex, ("A03",), {DENSE}),
    _mutant("converse_server_tool_as_client", ConverseServerToolAsClient, ("A19",), {OUTCOME}),
    _mutant("converse_buffer_input_until_stop", ConverseBufferInputUntilStop, ("C07",), {INCREMENTAL}),
    _mutant("converse_max_tokens_is_normal", ConverseMaxTokensIsNormal, ("F06",), {ABNORMAL}),
    _mutant("converse_end_at_message_stop", ConverseEndAtMessageStop, ("F03", "F05"), {USAGE}),
    _mutant("converse_reasoning_as_text", ConverseReasoningAsText, ("C05",), {OUTCOME}),
    # Bedrock InvokeModelWithResponseStream
    _mutant("invoke_decode_base64_again", InvokeDecodeBase64Again, ("D06",), {OUTCOME}),
    _mutant("invoke_buffer_input_until_stop", InvokeBufferInputUntilStop, ("C07",), {INCREMENTAL}),
    _mutant("invoke_ignore_max_tokens", InvokeIgnoreMaxTokens, ("F06",), {ABNORMAL}),
    _mutant("invoke_exception_ends_normally", InvokeExceptionEndsNormally, ("F08",), {ABNORMAL, OUTCOME}),
    _mutant("invoke_sum_cumulative_usage", InvokeSumCumulativeUsage, ("F05",), {USAGE}),
    # Cohere v2
    _mutant("cohere_tool_plan_as_text", CohereToolPlanAsText, ("C05",), {OUTCOME}),
    _mutant("cohere_key_calls_by_name", CohereKeyCallsByName, ("A04", "B06"), {OUTCOME}),
    _mutant("cohere_max_tokens_is_normal", CohereMaxTokensIsNormal, ("F06",), {ABNORMAL}),
    _mutant("cohere_error_finish_is_normal", CohereErrorFinishIsNormal, ("F08",), {ABNORMAL, OUTCOME}),
    _mutant("cohere_buffer_arguments_until_end", CohereBufferArgumentsUntilEnd, ("C07",), {INCREMENTAL}),
)
