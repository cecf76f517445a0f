"""Payloads <-> body bytes, in each wire API's own framing (SSE, NDJSON, AWS event stream).

A *payload* is one decoded provider event: the JSON of an SSE ``data:`` line, of an NDJSON line,
or of an event-stream message, which for Bedrock is written ``{eventType: payload}`` (the shape
boto3 yields; ``{"headers": {":event-type": ...}, "payload": ...}`` is read too).

* ``frame_body(api, payloads)`` writes the body a client library decodes;
* ``iter_payloads(api, data)`` reads the payloads back, lazily (a 50 MB body is never held twice);
* ``sse_payloads`` / ``to_sse`` are the SSE halves, kept for callers that know they have SSE.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from conformance.wire.apis import FRAMING, WireFormatError, check_api
from conformance.wire.eventstream import encode_message, iter_messages

__all__ = [
    "BEDROCK_EXCEPTIONS",
    "bedrock_event",
    "frame_body",
    "iter_payloads",
    "iter_sse_payloads",
    "sse_payloads",
    "to_sse",
]

# The exception events of the ConverseStream and ResponseStream shapes (sent as exception frames).
BEDROCK_EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
        "modelTimeoutException",
    }
)
# SSE APIs whose events need an ``event:`` line (their SDKs drop events without one).
_NAMED_SSE_EVENTS = frozenset({"anthropic", "cohere-v2"})
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


# -- writing ---------------------------------------------------------------------------------------


def _compact(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def to_sse(api: str, payloads: Iterable[Any]) -> bytes:
    """Frame payloads as the SSE body ``api``'s SDK decodes.

    Anthropic's SDK drops events without an ``event:`` line (and so does cohere's stream, which
    names them by their ``type``); Gemini's accepts only ``data: `` lines.
    """
    named = api in _NAMED_SSE_EVENTS
    frames = []
    for payload in payloads:
        kind = payload.get("type", "unknown") if named and isinstance(payload, Mapping) else None
        frames.append((f"event: {kind}\n" if kind else "") + f"data: {_compact(payload)}\n\n")
    return "".join(frames).encode("utf-8")


def go_json(value: Any) -> str:
    """JSON as Go's ``encoding/json`` writes it (Ollama's server): compact, raw UTF-8, HTML-safe escapes.

    Outside strings, JSON syntax never contains ``<``, ``>``, ``&``, U+2028 or U+2029, so replacing
    them everywhere touches only string contents, exactly as Go's encoder does (``<think>`` is
    ``\\u003cthink\\u003e`` on the wire).
    """
    text = _compact(value)
    for char, escape in _GO_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def bedrock_event(payload: Any) -> tuple[str, dict[str, Any]]:
    """``(event type, payload)`` from ``{eventType: payload}`` or ``{"headers": ..., "payload": ...}``."""
    if not isinstance(payload, Mapping):
        raise WireFormatError(f"a Bedrock event is a JSON object, got {type(payload).__name__}")
    headers = payload.get("headers")
    if isinstance(headers, Mapping) and "payload" in payload:
        kind = headers.get(":event-type") or headers.get(":exception-type") or ""
        body = payload["payload"]
    elif len(payload) == 1:
        [(kind, body)] = payload.items()
    else:
        raise WireFormatError(f"a Bedrock event is one {{eventType: payload}} pair, got keys {sorted(payload)}")
    if body is not None and not isinstance(body, Mapping):
        raise WireFormatError(f"the payload of Bedrock event {kind!r} is not a JSON object")
    return str(kind), dict(body or {})


def _bedrock_frame(payload: Any) -> bytes:
    kind, body = bedrock_event(payload)
    data = _compact(body).encode("utf-8")
    if kind in BEDROCK_EXCEPTIONS:
        headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    else:
        headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, data)


def frame_body(api: str, payloads: Iterable[Any], *, done_marker: bool = False) -> bytes:
    """The response body of ``payloads`` in ``api``'s framing.

    SSE (``to_sse``; with ``done_marker`` a final ``data: [DONE]``, as OpenAI and some
    Cohere-compatible servers send), NDJSON written as Go writes it (``go_json``), or AWS
    event-stream messages (``:exception-type`` frames for Bedrock's exception events).
    """
    framing = FRAMING[check_api(api)]
    if framing == "ndjson":
        return b"".join((go_json(payload) + "\n").encode("utf-8") for payload in payloads)
    if framing == "eventstream":
        return b"".join(_bedrock_frame(payload) for payload in payloads)
    return to_sse(api, payloads) + (b"data: [DONE]\n\n" if done_marker else b"")


# -- reading ---------------------------------------------------------------------------------------


Source = bytes | BinaryIO  # a body in memory, or a file opened in binary mode (read line by line)


def _lines(data: Source) -> Iterator[bytes]:
    """The lines of ``data`` (``\\n``, ``\\r\\n`` or ``\\r`` endings), without a copy of the whole body."""
    for raw in io.BytesIO(data) if isinstance(data, bytes) else data:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if b"\r" in line:
            yield from line.removesuffix(b"\r").split(b"\r")
        else:
            yield line


def _decode(line: bytes, number: int, *, strict: bool) -> str | None:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        if strict:
            raise WireFormatError(f"line {number}: not UTF-8 (byte {error.start} of the line)") from None
        return None


def iter_sse_payloads(data: Source, *, strict: bool = True) -> Iterator[Any]:
    """The JSON ``data:`` payloads of an SSE body, up to ``data: [DONE]`` (where the SDKs stop).

    ``strict``: a ``data:`` line that is not UTF-8 or not JSON raises ``WireFormatError`` naming the
    line; otherwise it is skipped (for detection and inspection).
    """
    for number, raw in enumerate(_lines(data), start=1):
        if not raw.startswith(b"data:"):
            continue
        line = _decode(raw, number, strict=strict)
        if line is None:
            continue
        value = line[5:].strip()
        if value == "[DONE]":
            return
        if not value:
            continue
        try:
            yield json.loads(value)
        except json.JSONDecodeError as error:
            if strict:
                raise WireFormatError(
                    f"line {number}: a data: line that is not JSON ({error.msg} at column {error.colno + 5})"
                ) from None


def sse_payloads(sse: bytes) -> list[Any]:
    """The JSON ``data:`` payloads of an SSE body, skipping lines that are not JSON (inspection only)."""
    return list(iter_sse_payloads(sse, strict=False))


def _ndjson_payloads(data: Source, *, strict: bool) -> Iterator[Any]:
    for number, raw in enumerate(_lines(data), start=1):
        if not raw.strip():
            continue
        line = _decode(raw, number, strict=strict)
        if line is None:
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as error:
            if strict:
                raise WireFormatError(f"line {number}: not a JSON line ({error.msg} at column {error.colno})") from None


def _eventstream_payloads(data: bytes, *, strict: bool) -> Iterator[Any]:
    for message in iter_messages(data):
        kind = message.headers.get(":event-type") or message.headers.get(":exception-type") or ""
        try:
            body = json.loads(message.payload) if message.payload else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            if strict:
                raise WireFormatError(
                    f"byte {message.offset}: the payload of event {kind!r} is not JSON ({error})"
                ) from None
            continue
        yield {str(kind): body}


def iter_payloads(api: str, data: Source, *, strict: bool = True) -> Iterator[Any]:
    """The decoded payloads of a body in ``api``'s framing, lazily, in wire order (see ``iter_sse_payloads``).

    ``data``: the body's bytes, or a file opened in binary mode (SSE and NDJSON are read line by
    line; an event stream is read whole). Bedrock messages come out as ``{eventType: payload}``
    (exception frames too, under their exception type). A corrupt event-stream frame raises
    ``EventStreamError`` whatever ``strict``.
    """
    framing = FRAMING[check_api(api)]
    if framing == "ndjson":
        return _ndjson_payloads(data, strict=strict)
    if framing == "eventstream":
        return _eventstream_payloads(data if isinstance(data, bytes) else data.read(), strict=strict)
    return iter_sse_payloads(data, strict=strict)
