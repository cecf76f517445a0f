"""Provider response bodies: loading them from any stored form, telling their wire API, SSE framing.

Bodies come as a vcrpy cassette, a raw SSE body, JSON lines (one provider payload per line, SSE
framing stripped) or a Gemini JSON array (``streamGenerateContent`` without ``alt=sse``). All of
them are normalised to the SSE bytes the SDK expects (``Body.sse``); ``conformance.wire.sdk``
serves those bytes to the real SDKs.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "WIRE_APIS",
    "Body",
    "UnknownFormatError",
    "WireFormatError",
    "detect_api",
    "load_body",
    "sse_payloads",
    "to_sse",
]

WIRE_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")


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
