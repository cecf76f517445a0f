"""Replay a body through the real SDKs (or client libraries), offline, in exactly the byte pieces chosen.

Each body is served to the SDK through an ``httpx2.MockTransport``, so chunk boundaries (inside
UTF-8 sequences, inside ``\\n\\n``) reach the SDK's own decoder; no request leaves the process.
``iter_payload_events`` builds the same SDK objects straight from decoded payloads instead.
``iter_sdk_events`` and ``iter_payload_events`` serve all of ``WIRE_APIS``: the Ollama, Bedrock
and Cohere bodies go to their client libraries (``conformance.wire.libraries``).

Why not respx or vcrpy for replay: the current SDKs run on ``httpx2``, which plain respx does not
see, and vcrpy replays a body as one piece, so neither can test chunk boundaries.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

import httpx2
import pydantic

from conformance.wire.apis import LIBRARY_APIS, SDK_APIS, check_api
from conformance.wire.libraries import iter_library_events, iter_library_payload_events

__all__ = [
    "aiter_sdk_events",
    "iter_payload_events",
    "iter_sdk_events",
    "offline_async_client",
    "offline_client",
    "stream_request",
]

# Fake credentials for offline replay. They are sent only to the in-process mock transport.
_FAKE_KEY = "test-key-not-a-real-secret"


# -- replay through the real SDKs ---------------------------------------------------------------


class _PiecewiseBody(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body served in exactly the given pieces (empty pieces included)."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        # Kept as given: a file read lazily stays lazy (replaying a 50 MB body never holds it twice).
        self._pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


def _transport(pieces: Iterable[bytes]) -> httpx2.MockTransport:
    def respond(_request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_PiecewiseBody(pieces))

    return httpx2.MockTransport(respond)


_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "replay"}]
_GEMINI_CONTENTS: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "replay"}]}]
_MODELS = {
    "openai-chat": "replay",
    "openai-responses": "replay",
    "anthropic": "claude-test-model",
    "gemini": "gemini-test",
}


def offline_client(api: str, transport: httpx2.MockTransport) -> Any:
    """The real SDK's sync client for ``api``, talking only to ``transport``, with no retries."""
    if api in ("openai-chat", "openai-responses"):
        import openai

        return openai.OpenAI(api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.Client(transport=transport))
    if api == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.Client(transport=transport))
    if check_api(api) == "gemini":
        return _gemini_client(transport)
    raise ValueError(f"{api} has no SDK client here; its client library is in conformance.wire.libraries")


def offline_async_client(api: str, transport: httpx2.MockTransport) -> Any:
    """The real SDK's async client for ``api`` (google-genai's client serves both)."""
    if api in ("openai-chat", "openai-responses"):
        import openai

        return openai.AsyncOpenAI(api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=transport))
    if api == "anthropic":
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
        )
    return offline_client(api, transport)


def _request(
    api: str, messages: list[dict[str, Any]] | None, params: Mapping[str, Any], options: Mapping[str, Any]
) -> dict[str, Any]:
    """The keyword arguments of the SDK's streaming call for ``api``."""
    model = _MODELS[api]
    if api == "openai-chat":
        return {"model": model, "messages": messages or _MESSAGES, "stream": True, **params, **options}
    if api == "openai-responses":
        return {"model": model, "input": messages or "replay", "stream": True, **params, **options}
    if api == "anthropic":
        return {
            "model": model,
            "messages": messages or _MESSAGES,
            "stream": True,
            "max_tokens": 1024,
            **params,
            **options,
        }
    from google.genai import types

    # Automatic function calling off: the SDK must never execute tools on its own during replay.
    config = types.GenerateContentConfig(
        **params, **options, automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    return {"model": model, "contents": messages or _GEMINI_CONTENTS, "config": config}


def stream_request(
    client: Any,
    api: str,
    messages: list[dict[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[Any]:
    """Send one streaming request through the SDK ``client`` and yield its stream objects.

    ``messages`` is the history in ``api``'s request shape (default: one user message), ``params``
    tool parameters (``tools``, ``tool_choice``...), ``options`` other request fields.
    """
    request = _request(api, messages, params or {}, options or {})
    if api == "openai-chat":
        yield from client.chat.completions.create(**request)
    elif api == "openai-responses":
        yield from client.responses.create(**request)
    elif api == "anthropic":
        yield from client.messages.create(**request)
    else:
        yield from client.models.generate_content_stream(**request)


def iter_sdk_events(api: str, pieces: Iterable[bytes]) -> Iterator[Any]:
    """Yield the SDK's (or client library's) own stream objects for a body served in ``pieces`` (sync clients)."""
    if check_api(api) in LIBRARY_APIS:
        yield from iter_library_events(api, pieces)
        return
    yield from stream_request(offline_client(api, _transport(pieces)), api)


async def aiter_sdk_events(api: str, pieces: Iterable[bytes]) -> AsyncIterator[Any]:
    """Async twin of ``iter_sdk_events`` (the SDKs' async clients over the same transport).

    The four SDK APIs only: boto3 has no async client, so the client-library APIs are replayed sync.
    """
    if check_api(api) not in SDK_APIS:
        raise ValueError(f"async replay covers {', '.join(SDK_APIS)}; replay {api} with iter_sdk_events")
    client = offline_async_client(api, _transport(pieces))
    request = _request(api, None, {}, {})
    stream: Any
    if api == "openai-chat":
        stream = await client.chat.completions.create(**request)
    elif api == "openai-responses":
        stream = await client.responses.create(**request)
    elif api == "anthropic":
        stream = await client.messages.create(**request)
    else:
        stream = await client.aio.models.generate_content_stream(**request)
    async for event in stream:
        yield event


def _gemini_client(transport: httpx2.MockTransport) -> Any:
    from google import genai
    from google.genai import types

    # Both clients are given: with aiohttp installed, genai would otherwise pick aiohttp for async.
    options = types.HttpOptions(
        httpx_client=httpx2.Client(transport=transport),
        httpx_async_client=httpx2.AsyncClient(transport=transport),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=_FAKE_KEY, http_options=options)


# -- SDK objects straight from payloads (no HTTP or SSE layer) -----------------------------------


def _raise_in_band_error(api: str, payload: dict[str, Any]) -> None:
    """Raise what the SDK's own stream raises for an error payload, so both replay paths agree."""
    error = payload.get("error")
    message = (error.get("message") if isinstance(error, dict) else None) or "An error occurred during streaming"
    request = httpx2.Request("POST", "https://replay.invalid/")
    if api == "openai-chat":
        import openai

        raise openai.APIError(message, request, body=error)
    if api == "anthropic":
        import anthropic

        raise anthropic.APIStatusError(message, response=httpx2.Response(500, request=request), body=payload)
    if api == "gemini":
        from google.genai import errors

        code = error.get("code", 500) if isinstance(error, dict) else 500
        raise errors.APIError(int(code) if isinstance(code, int) else 500, payload)


@functools.cache
def _fields_of(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """A pydantic model's field annotations by wire name: field names and their aliases."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        fields[name] = info.annotation
        if info.alias:
            fields[info.alias] = info.annotation
    return fields


def _known_only(annotation: Any, value: Any) -> Any:
    """``value`` without the keys the pydantic models in ``annotation`` do not declare, at every level.

    What google-genai's own reading path does before validating (its models forbid extra fields,
    and a newer API adds them: ``usageMetadata.serviceTier``); free-form dicts (``args``) are kept.
    """
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        if not isinstance(value, dict):
            return value
        fields = _fields_of(annotation)
        return {key: _known_only(fields[key], item) for key, item in value.items() if key in fields}
    origin = typing.get_origin(annotation)
    arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
    if origin in (typing.Union, types.UnionType):
        for argument in arguments:
            stripped = _known_only(argument, value)
            if stripped is not value:
                return stripped
        return value
    if origin in (list, tuple, collections.abc.Sequence) and isinstance(value, list) and arguments:
        return [_known_only(arguments[0], item) for item in value]
    return value


def _openai_events(api: str, payloads: Iterable[Any]) -> Iterator[Any]:
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    target: Any = ChatCompletionChunk if api == "openai-chat" else ResponseStreamEvent
    for payload in payloads:
        if api == "openai-chat" and isinstance(payload, dict) and payload.get("error"):
            _raise_in_band_error(api, payload)
        yield construct_type(type_=target, value=payload)


def _anthropic_events(payloads: Iterable[Any]) -> Iterator[Any]:
    from anthropic._models import construct_type as anthropic_construct
    from anthropic.types import RawMessageStreamEvent

    for payload in payloads:
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == "ping":
            continue  # the SDK's stream skips pings too
        if kind == "error":
            _raise_in_band_error(api="anthropic", payload=payload)
        yield anthropic_construct(type_=RawMessageStreamEvent, value=payload)


def _gemini_events(payloads: Iterable[Any]) -> Iterator[Any]:
    from google.genai import types as genai_types

    for payload in payloads:
        if isinstance(payload, dict) and payload.get("error"):
            _raise_in_band_error("gemini", payload)
        response = genai_types.GenerateContentResponse
        yield response.model_validate(_known_only(response, payload))


def iter_payload_events(api: str, payloads: Iterable[Any]) -> Iterator[Any]:
    """Yield the SDK's (or client library's) model objects built directly from decoded payloads.

    This skips the HTTP client and SSE decoder (``iter_sdk_events`` exercises those); the objects
    are the same types the stream yields, in-band errors raise the same errors, and fields the
    SDK does not know are dropped (google-genai) or kept as extras, never an error.
    """
    if check_api(api) in LIBRARY_APIS:
        yield from iter_library_payload_events(api, iter(payloads))
    elif api in ("openai-chat", "openai-responses"):
        yield from _openai_events(api, payloads)
    elif api == "anthropic":
        yield from _anthropic_events(payloads)
    else:
        yield from _gemini_events(payloads)
