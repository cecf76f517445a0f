"""Provider stream converters: the real SDKs' stream objects -> ``ChunkResponse`` for the handlers.

One converter class per wire API, each in its own module:

=====================  ============================  =================================================
``api``                class                         input objects
=====================  ============================  =================================================
``"openai-chat"``      ``OpenAIChatConverter``       ``ChatCompletionChunk`` (OpenAI and every
                                                     OpenAI-compatible server; ``ChunkEvent`` of the
                                                     ``chat.completions.stream()`` helper)
``"openai-responses"`` ``OpenAIResponsesConverter``  Responses stream events (``responses.create``
                                                     or ``responses.stream()``)
``"anthropic"``        ``AnthropicConverter``        raw Messages stream events (``messages.create``
                                                     or the ``messages.stream()`` helper)
``"gemini"``           ``GeminiConverter``           google-genai ``GenerateContentResponse``
                                                     (Gemini API and Vertex AI)
``"ollama"``           ``OllamaConverter``           ``ollama.ChatResponse`` (``/api/chat`` NDJSON)
``"bedrock-converse"`` ``BedrockConverseConverter``  boto3 ``converse_stream`` event dicts
``"bedrock-invoke"``   ``BedrockInvokeConverter``    boto3 ``invoke_model_with_response_stream``
                                                     event dicts (Anthropic models)
``"cohere-v2"``        ``CohereV2Converter``         cohere ``V2ChatStreamResponse`` (``ClientV2``
                                                     ``chat_stream``)
=====================  ============================  =================================================

Usage::

    from reference_impl import ApiToolCallStreamingResponseHandler
    from reference_impl.converters import converter_for, iter_chunks

    handler = ApiToolCallStreamingResponseHandler()
    stream = client.chat.completions.create(..., stream=True)
    for chunk in iter_chunks(converter_for("openai-chat"), stream):
        handler.feed(chunk)
    handler.finalize()  # a no-op when the last chunk was complete

The contract (every converter):

* ``convert(event) -> list[ChunkResponse]``: one SDK stream object in, zero or more chunks out,
  in wire order. Dispatch is on ``.type`` strings, never ``isinstance`` (the openai and anthropic
  SDKs build unknown payloads as the *first* member of their unions). Unknown event, delta,
  block, part and item types are skipped and counted in ``converter.unknown_events``; they never
  raise. Plain dicts with the wire's field names are accepted as well as SDK objects.
* ``finish() -> list[ChunkResponse]``: call when the iterator is exhausted. If no terminal chunk
  was emitted it emits one; a stream that stopped before its terminal event gets
  ``error=StreamError("incomplete", ...)``.
* ``fail(exc) -> list[ChunkResponse]``: call when the SDK raised mid-stream (``openai.APIError``
  for ``data: {"error": ...}``, ``anthropic.APIStatusError`` for ``event: error``,
  ``google.genai.errors.APIError``): one terminal chunk with ``StreamError("provider_error")``, or
  ``"incomplete"`` for the SDK's connection errors. Everything emitted before is kept.
* ``iter_chunks(converter, stream)`` / ``aiter_chunks(converter, async_stream)`` run that loop and
  catch only the SDK's own error classes (``converter.api_errors``); any other exception is a bug
  and propagates. ``converter_for(api)`` returns a fresh converter. A converter holds the state of
  one stream: use a new one per stream.
* After the terminal chunk (``is_complete=True``) a converter emits nothing more; the handler
  finalizes on that chunk, so feeding it everything a converter returns is always safe.

Output rules:

* ``ToolCallDelta.index`` is dense and 0-based, in order of first appearance (Responses items and
  Anthropic blocks are mapped through ``reference_impl.tracker.ToolCallTracker``).
* ``call_id`` is the id the tool result must echo (Responses: the item's ``call_id``, never its
  ``fc_...`` id, which goes to ``provider_metadata={"item_id": ...}``); it is sent once, when
  first known. ``name`` is sent once (a restated name is never forwarded; a genuinely fragmented
  name is forwarded fragment by fragment).
* ``arguments_delta`` fragments are the wire text, verbatim; objects (Gemini ``args``) are
  serialised once with ``json.dumps(ensure_ascii=False)``; absent ``args`` give no argument text,
  which the handler reads as ``{}``. Empty fragments are dropped. Vertex ``partialArgs`` are
  turned into JSON text incrementally (see ``gemini``). Gemini thought signatures travel as
  ``provider_metadata={"thought_signature": <base64>}`` of their call.
* Reasoning (Anthropic thinking, Responses reasoning summary / reasoning text, Gemini
  ``thought`` parts, ``reasoning_content`` / ``reasoning`` of OpenAI-compatible servers) goes to
  ``reasoning``; text to ``content``; usage to ``usage`` (the last cumulative snapshot, on the
  chunk of the event that carried it and again on the terminal chunk).
* Exactly one chunk has ``is_complete=True``: the terminal one. It carries ``finish_reason`` (the
  provider's raw string: Chat ``finish_reason``, Responses status or ``incomplete_details.reason``,
  Anthropic ``stop_reason``, Gemini ``finishReason``) and, when the stream ended abnormally,
  ``error``: ``truncated`` (``length``, ``max_tokens``, ``MAX_TOKENS``, ``max_output_tokens``),
  ``provider_error`` (an in-band error, ``response.failed``, a filtered or malformed output) or
  ``incomplete``. Chat Completions and Gemini have no end-of-stream event distinct from the end
  of the iterator, so their terminal chunk comes from ``finish()``; Responses ends at
  ``response.completed`` / ``.incomplete`` / ``.failed`` and Anthropic at ``message_stop``.
* Provider-executed tools (Anthropic ``server_tool_use`` and ``*_tool_result`` blocks, Responses
  ``web_search_call``-like items, Gemini ``executableCode``) are never client tool calls; they are
  listed in ``converter.server_tool_calls`` / ``server_tool_results``.
* Anomalies the converter works around are listed in ``converter.problems`` and logged on the
  ``reference_impl.converters`` logger. Cost is linear in the stream size.
"""

from __future__ import annotations

from typing import Any

from reference_impl.converters.anthropic import AnthropicConverter
from reference_impl.converters.base import ChunkAssembler, StreamConverter, aiter_chunks, iter_chunks
from reference_impl.converters.bedrock import BedrockConverseConverter, BedrockInvokeConverter
from reference_impl.converters.cohere import CohereV2Converter
from reference_impl.converters.gemini import GeminiConverter
from reference_impl.converters.ollama import OllamaConverter
from reference_impl.converters.openai_chat import ArgumentSnapshotError, OpenAIChatConverter
from reference_impl.converters.openai_responses import OpenAIResponsesConverter

__all__ = [
    "CONVERTERS",
    "AnthropicConverter",
    "ArgumentSnapshotError",
    "BedrockConverseConverter",
    "BedrockInvokeConverter",
    "ChunkAssembler",
    "CohereV2Converter",
    "GeminiConverter",
    "OllamaConverter",
    "OpenAIChatConverter",
    "OpenAIResponsesConverter",
    "StreamConverter",
    "aiter_chunks",
    "converter_for",
    "iter_chunks",
]

CONVERTERS: dict[str, type[StreamConverter]] = {
    "openai-chat": OpenAIChatConverter,
    "openai-responses": OpenAIResponsesConverter,
    "anthropic": AnthropicConverter,
    "gemini": GeminiConverter,
    "ollama": OllamaConverter,
    "bedrock-converse": BedrockConverseConverter,
    "bedrock-invoke": BedrockInvokeConverter,
    "cohere-v2": CohereV2Converter,
}


def converter_for(api: str, **options: Any) -> StreamConverter:
    """A new converter for ``api`` (one of ``CONVERTERS``: the names ``conformance.wire`` uses).

    ``options`` go to the converter's constructor, e.g. ``cumulative_arguments=True`` for an
    OpenAI-compatible server known to send argument snapshots; an option the converter does not
    take is a ``TypeError`` naming it.
    """
    try:
        factory = CONVERTERS[api]
    except (KeyError, TypeError):
        raise ValueError(f"no converter for wire API {api!r}; expected one of {', '.join(CONVERTERS)}") from None
    try:
        return factory(**options)
    except TypeError as error:
        raise TypeError(f"converter for {api!r} does not accept options {sorted(options)}: {error}") from None
