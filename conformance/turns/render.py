"""Render a logical assistant turn as each wire API's stream payloads, following the documented formats.

A ``Turn`` is what the model "said": text, reasoning and tool calls in order, with the cut points
at which each string is streamed, and how the stream ends. ``render(turn, api)`` returns the
provider payloads (dicts) in wire order; ``render_body(turn, api)`` frames them as the body the
API's client library decodes (SSE, Ollama's NDJSON, Bedrock's AWS event stream);
``render_sse`` is its name for the SSE APIs. Dialects (``OPENAI_COMPAT_DIALECTS``) rewrite an
OpenAI Chat rendering the way OpenAI-compatible servers really differ (missing index, ids late or
repeated, ``""`` names...).

One module per wire API family: ``render_openai`` (Chat Completions, Responses),
``render_anthropic``, ``render_gemini``, ``render_ollama``, ``render_bedrock`` (ConverseStream,
InvokeModel with Anthropic events), ``render_cohere``. Payload shapes follow
``shared/research/sdk-surface.md`` section 3 and the quirks seen in real recordings. Used to write
the bundled cassettes and by the byte-level strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.model import Turn
from conformance.turns.render_anthropic import render_anthropic
from conformance.turns.render_bedrock import render_bedrock_converse, render_bedrock_invoke
from conformance.turns.render_cohere import render_cohere_v2
from conformance.turns.render_gemini import render_gemini
from conformance.turns.render_ollama import render_ollama
from conformance.turns.render_openai import render_openai_chat, render_openai_responses
from conformance.wire.apis import FRAMING
from conformance.wire.framing import frame_body

__all__ = ["RENDERED_APIS", "render", "render_body", "render_sse"]

_RENDERERS: dict[str, Callable[[Turn], list[dict[str, Any]]]] = {
    "openai-chat": render_openai_chat,
    "openai-responses": render_openai_responses,
    "anthropic": render_anthropic,
    "gemini": render_gemini,
    "ollama": render_ollama,
    "bedrock-converse": render_bedrock_converse,
    "bedrock-invoke": render_bedrock_invoke,
    "cohere-v2": render_cohere_v2,
}
RENDERED_APIS: tuple[str, ...] = tuple(_RENDERERS)


def render(turn: Turn, api: str, dialects: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The provider payloads for ``turn`` in wire order. ``dialects`` apply to ``openai-chat`` only."""
    if api not in _RENDERERS:
        raise ValueError(f"unknown wire API {api!r}; expected one of {', '.join(_RENDERERS)}")
    payloads = _RENDERERS[api](turn)
    for name in dialects:
        if api != "openai-chat":
            raise ValueError(f"dialect {name!r} applies to openai-chat only, not {api!r}")
        try:
            transform = OPENAI_COMPAT_DIALECTS[name]
        except KeyError:
            raise ValueError(f"unknown dialect {name!r}; known: {', '.join(OPENAI_COMPAT_DIALECTS)}") from None
        payloads = transform(payloads)
    return payloads


def render_body(
    turn: Turn,
    api: str,
    dialects: Sequence[str] = (),
    *,
    sse_comments: bool = False,
    done_marker: bool | None = None,
) -> bytes:
    """``render`` framed as ``api``'s response body (``conformance.wire.framing.frame_body``).

    ``done_marker``: end with ``data: [DONE]`` (default: for OpenAI Chat when the stream ends
    normally, as OpenAI does). ``sse_comments``: OpenRouter's ``: OPENROUTER PROCESSING`` comment
    lines before and between events (SSE APIs only).
    """
    normal_end = turn.ending not in ("cut", "error")
    marker = done_marker if done_marker is not None else (api == "openai-chat" and normal_end)
    body = frame_body(api, render(turn, api, dialects), done_marker=marker and FRAMING[api] == "sse")
    if sse_comments:
        if FRAMING[api] != "sse":
            raise ValueError(f"SSE comment lines apply to SSE bodies, not {api!r}")
        # OpenRouter sends comment lines before (and between) events; decoders must skip them.
        body = b": OPENROUTER PROCESSING\n\n" + body.replace(b"\n\ndata:", b"\n\n: OPENROUTER PROCESSING\n\ndata:", 1)
    return body


def render_sse(turn: Turn, api: str, dialects: Sequence[str] = (), *, sse_comments: bool = False) -> bytes:
    """``render_body`` for the SSE APIs (``data: [DONE]`` for OpenAI Chat when the stream ends normally)."""
    return render_body(turn, api, dialects, sse_comments=sse_comments)
