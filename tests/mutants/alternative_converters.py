"""Correct converters that differ from the reference: the converter checks must not flag any of them.

Each wraps a reference converter and changes its output in a way the converter contract leaves
open (how argument text is split, which chunk carries usage, which usage reading is used, where a
call's metadata arrives, whether the optional Responses item id is given). A failure here is a
false alarm in the suite. ``ALTERNATIVES`` maps a name to ``(api, factory)``; the factory has the
converter-factory signature ``factory(api, **options)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from conformance.wire import WIRE_APIS
from reference_impl.converters import (
    AnthropicConverter,
    BedrockConverseConverter,
    CohereV2Converter,
    GeminiConverter,
    StreamConverter,
    converter_for,
)
from reference_impl.converters.base import as_count, get_field
from reference_impl.types import ChunkResponse, TokenUsage, ToolCallDelta

__all__ = ["ALTERNATIVES"]


class _Rewritten:
    """A reference converter whose every returned chunk list goes through ``rewrite``."""

    def __init__(self, inner: StreamConverter) -> None:
        self._inner = inner
        self.api_errors = inner.api_errors
        self.unknown_events = inner.unknown_events

    def rewrite(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        return chunks

    def convert(self, event: Any) -> list[ChunkResponse]:
        return self.rewrite(self._inner.convert(event))

    def finish(self) -> list[ChunkResponse]:
        return self.rewrite(self._inner.finish())

    def fail(self, error: BaseException) -> list[ChunkResponse]:
        return self.rewrite(self._inner.fail(error))


class SplitArgumentText(_Rewritten):
    """Cuts every argument delta into two-character deltas, all in the chunk of the same event."""

    def rewrite(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        for chunk in chunks:
            if chunk.tool_calls:
                chunk.tool_calls = [piece for delta in chunk.tool_calls for piece in self._split(delta)]
        return chunks

    @staticmethod
    def _split(delta: ToolCallDelta) -> Iterable[ToolCallDelta]:
        text = delta.arguments_delta or ""
        if len(text) <= 2:
            return [delta]
        head = dataclasses.replace(delta, arguments_delta=text[:2])
        return [head, *(ToolCallDelta(delta.index, arguments_delta=text[i : i + 2]) for i in range(2, len(text), 2))]


class UsageOnTerminalChunkOnly(_Rewritten):
    """Reports usage once, on the terminal chunk, instead of also on the chunk of each usage event."""

    def rewrite(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        for chunk in chunks:
            if not chunk.is_complete:
                chunk.usage = None
        return chunks


class MetadataOnSeparateDelta(_Rewritten):
    """Sends a call's provider metadata on a delta of its own, after the call's other deltas in that chunk."""

    def rewrite(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        for chunk in chunks:
            moved: list[ToolCallDelta] = []
            for delta in chunk.tool_calls or ():
                if delta.provider_metadata:
                    moved.append(ToolCallDelta(delta.index, provider_metadata=delta.provider_metadata))
                    delta.provider_metadata = None
            if moved and chunk.tool_calls is not None:
                chunk.tool_calls = [*chunk.tool_calls, *moved]
        return chunks


class WithoutItemIds(_Rewritten):
    """Leaves out the Responses item id (optional: a follow-up may omit the function_call item's id)."""

    def rewrite(self, chunks: list[ChunkResponse]) -> list[ChunkResponse]:
        for chunk in chunks:
            for delta in chunk.tool_calls or ():
                if delta.provider_metadata and "item_id" in delta.provider_metadata:
                    rest = {k: v for k, v in delta.provider_metadata.items() if k != "item_id"}
                    delta.provider_metadata = rest or None
        return chunks


class AnthropicPromptWithoutCache(AnthropicConverter):
    """Reports prompt_tokens as ``input_tokens`` alone, leaving cache reads and writes out."""

    def _update_usage(self, usage: Any) -> TokenUsage | None:
        current = super()._update_usage(usage)
        if current is None:
            return None
        self._usage = TokenUsage(self._usage_fields.get("input_tokens", 0), current.completion_tokens)
        return self._usage


class GeminiCompletionWithoutThoughts(GeminiConverter):
    """Reports completion_tokens as candidatesTokenCount alone (thought tokens left out), the total as sent."""

    def _usage_of(self, metadata: Any) -> TokenUsage | None:  # type: ignore[override]
        current = GeminiConverter._usage_of(metadata)
        if current is None:
            return None
        candidates = as_count(get_field(metadata, "candidates_token_count")) or 0
        return TokenUsage(current.prompt_tokens, candidates, current.total_tokens)


def _wrapping(cls: type[_Rewritten], api: str) -> Callable[..., Any]:
    def factory(wire_api: str, **options: Any) -> Any:
        if wire_api != api:
            raise ValueError(f"{cls.__name__} converts {api!r}, not {wire_api!r}")
        return cls(converter_for(wire_api, **options))

    return factory


def _subclass(cls: type[StreamConverter]) -> Callable[..., Any]:
    def factory(wire_api: str, **options: Any) -> Any:
        if wire_api != cls.api:
            raise ValueError(f"{cls.__name__} converts {cls.api!r}, not {wire_api!r}")
        return cls(**options)

    return factory


class ConversePromptWithoutCache(BedrockConverseConverter):
    """Reports prompt_tokens as Bedrock's ``inputTokens`` alone, leaving cache reads and writes out."""

    @staticmethod
    def _usage_of(usage: Any) -> TokenUsage | None:
        current = BedrockConverseConverter._usage_of(usage)
        if current is None:
            return None
        return TokenUsage(as_count(get_field(usage, "inputTokens")) or 0, current.completion_tokens)


class CohereBilledUnits(CohereV2Converter):
    """Reports the billed units as the usage (``billed_units``), not the tokens the model used."""

    @staticmethod
    def _usage_of(usage: Any) -> TokenUsage | None:
        billed = get_field(usage, "billed_units")
        prompt, completion = as_count(get_field(billed, "input_tokens")), as_count(get_field(billed, "output_tokens"))
        if prompt is None and completion is None:
            return CohereV2Converter._usage_of(usage)
        return TokenUsage(prompt or 0, completion or 0)


_APIS = WIRE_APIS

ALTERNATIVES: dict[str, tuple[str, Callable[..., Any]]] = {
    **{f"{api}_split_argument_text": (api, _wrapping(SplitArgumentText, api)) for api in _APIS},
    **{f"{api}_usage_on_terminal_chunk_only": (api, _wrapping(UsageOnTerminalChunkOnly, api)) for api in _APIS},
    "gemini_metadata_on_separate_delta": ("gemini", _wrapping(MetadataOnSeparateDelta, "gemini")),
    "openai-responses_metadata_on_separate_delta": (
        "openai-responses",
        _wrapping(MetadataOnSeparateDelta, "openai-responses"),
    ),
    "openai-responses_without_item_ids": ("openai-responses", _wrapping(WithoutItemIds, "openai-responses")),
    "anthropic_prompt_without_cache": ("anthropic", _subclass(AnthropicPromptWithoutCache)),
    "gemini_completion_without_thoughts": ("gemini", _subclass(GeminiCompletionWithoutThoughts)),
    "bedrock-converse_prompt_without_cache": ("bedrock-converse", _subclass(ConversePromptWithoutCache)),
    "cohere-v2_billed_units_as_usage": ("cohere-v2", _subclass(CohereBilledUnits)),
}
