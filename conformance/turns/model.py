"""A logical assistant turn: what the model "said" (text, reasoning, tool calls) and how the stream ended.

Each string carries the cut points at which it is streamed. ``conformance.turns.render`` renders a
turn as each wire API's payloads; the corpus, the strategies and the round-trip scripts build on it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Call", "Ending", "Item", "Reasoning", "ServerCall", "Text", "Turn", "fake_signature", "split_evenly"]

Ending = Literal["stop", "length", "error", "cut"]


@dataclass(frozen=True)
class Text:
    pieces: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True)
class Reasoning:
    pieces: tuple[str, ...]
    signature: str | None = None  # Anthropic thinking signature

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True)
class Call:
    """A tool call. ``argument_pieces`` are the streamed fragments of the JSON argument text."""

    name: str
    argument_pieces: tuple[str, ...]
    call_id: str | None = None
    thought_signature: str | None = None  # Gemini; base64 text

    @property
    def arguments(self) -> str:
        return "".join(self.argument_pieces)


@dataclass(frozen=True)
class ServerCall:
    """A provider-executed tool (Anthropic ``server_tool_use``, Responses ``web_search_call``) and its result.

    Never a client tool call: a correct converter emits nothing for it. ``input`` is the JSON text
    of the tool's input (streamed in ``input_pieces`` on Anthropic); ``result`` a short summary of
    what the provider found. OpenAI Chat and Gemini have no such item in this corpus.
    """

    name: str
    input_pieces: tuple[str, ...]
    call_id: str
    result: str = "Paris: 18 C, light rain"

    @property
    def input(self) -> str:
        return "".join(self.input_pieces)


Item = Text | Reasoning | Call | ServerCall


@dataclass(frozen=True)
class Turn:
    items: tuple[Item, ...]
    ending: Ending = "stop"
    error_message: str = "Overloaded"
    usage: tuple[int, int] = (12, 34)  # prompt, completion tokens
    model: str = "model-under-test"
    # OpenAI-compatible only: interleave the argument deltas of parallel calls round-robin.
    interleave_calls: bool = False
    # Per-API variations: responses_arguments_only_in_done, gemini_restate_calls,
    # gemini_calls_share_chunk, gemini_usage_every_chunk, gemini_thoughts_tokens (int),
    # anthropic_cache_tokens ((creation, read)): see the renderers.
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def calls(self) -> list[Call]:
        return [item for item in self.items if isinstance(item, Call)]


def split_evenly(text: str, size: int) -> tuple[str, ...]:
    """Cut ``text`` into pieces of ``size`` characters (the last may be shorter)."""
    return tuple(text[i : i + size] for i in range(0, len(text), size)) or ("",)


def fake_signature(seed: str) -> str:
    """A deterministic, valid base64 stand-in for a Gemini thought signature or Anthropic signature."""
    return base64.b64encode(f"signature-for-{seed}".encode()).decode()
