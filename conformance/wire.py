"""Provider response bodies: loading them from any stored form, and replaying them through the real SDKs.

Bodies come as a vcrpy cassette, a raw SSE body, JSON lines (one provider payload per line, SSE
framing stripped) or a Gemini JSON array (``streamGenerateContent`` without ``alt=sse``). All of
them are normalised to the SSE bytes the SDK expects, then served to the SDK through an
``httpx2.MockTransport`` in exactly the byte pieces the caller chooses, so chunk boundaries
(inside UTF-8 sequences, inside ``\\n\\n``) reach the SDK's own decoder. No request leaves the process.

Why not respx or vcrpy for replay: the current SDKs run on ``httpx2``, which plain respx does not
see, and vcrpy replays a body as one piece, so neither can test chunk boundaries.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import yaml

__all__ = [
    "WIRE_APIS",
    "Body",
    "UnknownFormatError",
    "WireFormatError",
    "aiter_sdk_events",
    "detect_api",
    "iter_payload_events",
    "iter_sdk_events",
    "load_body",
    "sse_payloads",
    "to_sse",
]

WIRE_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")

# Fake credentials for offline replay. They are sent only to the in-process mock transport.
_FAKE_KEY = "test-key-not-a-real-secret"


class WireFormatError(ValueError):
    """A body cannot be read: says which file, where, and why."""


class UnknownFormatError(WireFormatError):
    """The wire API of a body could not be detected; pass it explicitly (``--format``)."""


@dataclass(frozen=True)
class Body:
    """A provider response body, normalised to SSE bytes for ``api``."""

    api: str
    sse: bytes
    source: str
    request: dict[str, Any] | None = None  # the request JSON, when the source recorded it
    # Converter options a cassette declares (toolcall_conformance.converter_options), e.g. a server
    # known to send cumulative argument snapshots.
    converter_options: dict[str, Any] = field(default_factory=dict)


def _payload_api(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return None
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind.startswith("response.") or (kind == "error" and "sequence_number" in payload):
            return "openai-responses"
        if kind in {"message_start", "content_block_start", "content_block_delta", "message_delta", "ping"}:
            return "anthropic"
    if payload.get("object") == "chat.completion.chunk" or "choices" in payload:
        return "openai-chat"
    if "candidates" in payload or "usageMetadata" in payload:
        return "gemini"
    return None


def _api_from_url(url: str) -> str | None:
    if "/chat/completions" in url:
        return "openai-chat"
    if url.rstrip("/").endswith("/responses"):
        return "openai-responses"
    if "/messages" in url:
        return "anthropic"
    if "streamGenerateContent" in url or "generateContent" in url:
        return "gemini"
    return None


def detect_api(payloads: Sequence[Any], url: str | None = None) -> str:
    """The wire API of a body, from its request URL or its first recognisable payloads."""
    if url:
        from_url = _api_from_url(url)
        if from_url:
            return from_url
    votes = {api for api in (_payload_api(payload) for payload in payloads[:20]) if api}
    if len(votes) == 1:
        return votes.pop()
    raise UnknownFormatError(
        "cannot tell the wire API of this body"
        + (f" (payloads look like {sorted(votes)})" if votes else "")
        + f"; pass one of {', '.join(WIRE_APIS)} explicitly"
    )


def sse_payloads(sse: bytes) -> list[Any]:
    """The JSON ``data:`` payloads of an SSE body (for detection and inspection only)."""
    payloads: list[Any] = []
    for raw_line in sse.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        line = raw_line.decode("utf-8", errors="replace")
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            payloads.append(json.loads(data))
        except json.JSONDecodeError:
            continue
    return payloads


def to_sse(api: str, payloads: Sequence[Any]) -> bytes:
    """Frame provider payloads as the SSE body ``api``'s SDK decodes.

    Anthropic's SDK drops events without an ``event:`` line; Gemini's accepts only ``data: `` lines.
    """
    frames: list[str] = []
    for payload in payloads:
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if api == "anthropic":
            frames.append(f"event: {payload.get('type', 'unknown')}\ndata: {data}\n\n")
        else:
            frames.append(f"data: {data}\n\n")
    return "".join(frames).encode("utf-8")


def _read_jsonl(path: Path, text: str) -> list[Any]:
    payloads = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            payloads.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise WireFormatError(
                f"{path}:{number}: not a JSON payload line: {error.msg} at column {error.colno}"
            ) from error
    return payloads


def _cassette_body(path: Path) -> tuple[bytes, str | None, dict[str, Any] | None, dict[str, Any]]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise WireFormatError(f"{path}: not valid YAML: {error}") from error
    interactions = (document or {}).get("interactions") if isinstance(document, dict) else None
    if not interactions:
        raise WireFormatError(f"{path}: a vcrpy cassette needs a non-empty 'interactions' list")
    interaction = interactions[-1]
    try:
        body = interaction["response"]["body"]["string"]
        headers = {key.lower(): value for key, value in (interaction["response"].get("headers") or {}).items()}
        url = interaction["request"]["uri"]
    except (KeyError, TypeError) as error:
        raise WireFormatError(
            f"{path}: interaction lacks {error}; expected request.uri and response.body.string"
        ) from error
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    encoding = headers.get("content-encoding")
    if encoding and "gzip" in str(encoding).lower():
        raw = gzip.decompress(raw)
    request_json: dict[str, Any] | None = None
    request_body = interaction["request"].get("body")
    if isinstance(request_body, (str, bytes)) and request_body:
        try:
            request_json = json.loads(request_body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            request_json = None
    ours = document.get("toolcall_conformance") or {}
    options = ours.get("converter_options") or {} if isinstance(ours, dict) else {}
    return raw, url, request_json, dict(options)


def load_body(path: str | Path, api: str | None = None) -> Body:
    """Read a body from a cassette (``.yaml``/``.yml``), ``.sse``, ``.jsonl`` or ``.json`` file."""
    path = Path(path)
    if api is not None and api not in WIRE_APIS:
        raise UnknownFormatError(f"unknown wire API {api!r}; expected one of {', '.join(WIRE_APIS)}")
    if not path.is_file():
        raise WireFormatError(f"{path}: no such file")
    suffix = path.suffix.lower()
    url: str | None = None
    request: dict[str, Any] | None = None
    options: dict[str, Any] = {}
    if suffix in {".yaml", ".yml"}:
        raw, url, request, options = _cassette_body(path)
        payloads = sse_payloads(raw)
        if not payloads and raw.lstrip().startswith(b"["):
            payloads = _json_array(path, raw.decode("utf-8"))
            raw = b""
    elif suffix == ".jsonl":
        payloads = _read_jsonl(path, path.read_text(encoding="utf-8"))
        raw = b""
    elif suffix == ".json":
        payloads = _json_array(path, path.read_text(encoding="utf-8"))
        raw = b""
    else:
        raw = path.read_bytes()
        payloads = sse_payloads(raw)
    chosen = api or detect_api(payloads, url)
    sse = raw if raw else to_sse(chosen, payloads)
    return Body(api=chosen, sse=sse, source=str(path), request=request, converter_options=options)


def _json_array(path: Path, text: str) -> list[Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise WireFormatError(f"{path}: not a JSON array body: {error.msg} at line {error.lineno}") from error
    if not isinstance(value, list):
        raise WireFormatError(
            f"{path}: a .json body must be a JSON array of response objects, got {type(value).__name__}"
        )
    return value


# -- replay through the real SDKs ---------------------------------------------------------------


class _PiecewiseBody(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body served in exactly the given pieces (empty pieces included)."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self._pieces = list(pieces)

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


def _transport(pieces: Sequence[bytes]) -> httpx2.MockTransport:
    def respond(_request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_PiecewiseBody(pieces))

    return httpx2.MockTransport(respond)


_MESSAGES = [{"role": "user", "content": "replay"}]


def iter_sdk_events(api: str, pieces: Sequence[bytes]) -> Iterator[Any]:
    """Yield the SDK's own stream objects for a body served in ``pieces`` (sync clients)."""
    transport = _transport(pieces)
    if api in ("openai-chat", "openai-responses"):
        import openai

        client = openai.OpenAI(api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.Client(transport=transport))
        if api == "openai-chat":
            yield from client.chat.completions.create(model="replay", messages=_MESSAGES, stream=True)  # type: ignore[arg-type]
        else:
            yield from client.responses.create(model="replay", input="replay", stream=True)
    elif api == "anthropic":
        import anthropic

        client_a = anthropic.Anthropic(api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.Client(transport=transport))
        yield from client_a.messages.create(
            model="claude-test-model",
            max_tokens=1024,
            messages=_MESSAGES,  # type: ignore[arg-type]
            stream=True,
        )
    elif api == "gemini":
        yield from _gemini_client(transport).models.generate_content_stream(model="gemini-test", contents="replay")
    else:
        raise UnknownFormatError(f"unknown wire API {api!r}; expected one of {', '.join(WIRE_APIS)}")


async def aiter_sdk_events(api: str, pieces: Sequence[bytes]) -> AsyncIterator[Any]:
    """Async twin of ``iter_sdk_events`` (the SDKs' async clients over the same transport)."""
    transport = _transport(pieces)
    if api in ("openai-chat", "openai-responses"):
        import openai

        client = openai.AsyncOpenAI(
            api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
        )
        if api == "openai-chat":
            stream: Any = await client.chat.completions.create(model="replay", messages=_MESSAGES, stream=True)  # type: ignore[arg-type]
        else:
            stream = await client.responses.create(model="replay", input="replay", stream=True)
    elif api == "anthropic":
        import anthropic

        client_a = anthropic.AsyncAnthropic(
            api_key=_FAKE_KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
        )
        stream = await client_a.messages.create(
            model="claude-test-model",
            max_tokens=1024,
            messages=_MESSAGES,  # type: ignore[arg-type]
            stream=True,
        )
    elif api == "gemini":
        stream = await _gemini_client(transport).aio.models.generate_content_stream(
            model="gemini-test", contents="replay"
        )
    else:
        raise UnknownFormatError(f"unknown wire API {api!r}; expected one of {', '.join(WIRE_APIS)}")
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


def iter_payload_events(api: str, payloads: Sequence[Any]) -> Iterator[Any]:
    """Yield the SDK's model objects built directly from decoded payloads.

    This skips the SDK's HTTP client and SSE decoder (``iter_sdk_events`` exercises those); the
    objects are the same types the SDK's stream yields, and in-band errors raise the same errors.
    """
    if api in ("openai-chat", "openai-responses"):
        from openai._models import construct_type
        from openai.types.chat import ChatCompletionChunk
        from openai.types.responses import ResponseStreamEvent

        target: Any = ChatCompletionChunk if api == "openai-chat" else ResponseStreamEvent
        for payload in payloads:
            if api == "openai-chat" and isinstance(payload, dict) and payload.get("error"):
                _raise_in_band_error(api, payload)
            yield construct_type(type_=target, value=payload)
    elif api == "anthropic":
        from anthropic._models import construct_type as anthropic_construct
        from anthropic.types import RawMessageStreamEvent

        for payload in payloads:
            kind = payload.get("type") if isinstance(payload, dict) else None
            if kind == "ping":
                continue  # the SDK's stream skips pings too
            if kind == "error":
                _raise_in_band_error(api, payload)
            yield anthropic_construct(type_=RawMessageStreamEvent, value=payload)
    elif api == "gemini":
        from google.genai import types

        for payload in payloads:
            if isinstance(payload, dict) and payload.get("error"):
                _raise_in_band_error(api, payload)
            yield types.GenerateContentResponse.model_validate(payload)
    else:
        raise UnknownFormatError(f"unknown wire API {api!r}; expected one of {', '.join(WIRE_APIS)}")
