"""The AWS binary event-stream framing (``application/vnd.amazon.eventstream``) of Bedrock's streams.

A message is: a 12-byte prelude (total length, headers length, both big-endian ``uint32``, then the
CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before it. A header
is a 1-byte name length, the name, a 1-byte value type and the value (strings and byte arrays are
prefixed by a 2-byte length). Bedrock sends ``:event-type`` (or ``:exception-type``),
``:content-type`` and ``:message-type`` (``event`` or ``exception``) headers and a JSON payload.

``encode_message`` writes one message (the corpus writes Bedrock cassettes with it);
``iter_messages`` reads them back, checking both CRCs, without botocore, so a Bedrock body can be
detected and its payloads listed without the AWS libraries installed. botocore's own decoder is
what replay goes through (``conformance.wire.libraries``); the tests prove the two agree.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.wire.apis import WireFormatError

__all__ = ["EventStreamError", "Message", "encode_message", "is_event_stream", "iter_messages"]

# Header value types (the AWS event-stream encoding).
_TRUE, _FALSE, _BYTE, _SHORT, _INTEGER, _LONG, _BYTES, _STRING, _TIMESTAMP, _UUID = range(10)
_FIXED_SIZES = {_BYTE: (1, ">b"), _SHORT: (2, ">h"), _INTEGER: (4, ">i"), _LONG: (8, ">q"), _TIMESTAMP: (8, ">q")}
_PRELUDE = 8  # total length and headers length, before the prelude CRC
_OVERHEAD = _PRELUDE + 4 + 4  # prelude, prelude CRC, message CRC
_MAX_HEADERS = 128 * 1024  # botocore's limits
_MAX_PAYLOAD = 24 * 1024 * 1024


class EventStreamError(WireFormatError):
    """A message of an AWS event stream is corrupt: says at which byte offset and why."""


@dataclass(frozen=True)
class Message:
    """One decoded message: its headers, its payload bytes and where it started in the body."""

    headers: dict[str, Any]
    payload: bytes
    offset: int


def encode_message(headers: Mapping[str, str | bytes | bool], payload: bytes) -> bytes:
    """One AWS event-stream message with ``headers`` (strings, bytes or booleans) and ``payload``."""
    encoded = bytearray()
    for name, value in headers.items():
        raw_name = name.encode("utf-8")
        if not 0 < len(raw_name) < 256:
            raise ValueError(f"header name {name!r} must be 1-255 bytes")
        encoded += struct.pack(">B", len(raw_name)) + raw_name
        if isinstance(value, bool):
            encoded += struct.pack(">B", _TRUE if value else _FALSE)
            continue
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        if len(raw) > 32767:
            raise ValueError(f"header {name!r}: value of {len(raw)} bytes exceeds 32767")
        encoded += struct.pack(">BH", _STRING if isinstance(value, str) else _BYTES, len(raw)) + raw
    if len(encoded) > _MAX_HEADERS:
        raise ValueError(f"headers of {len(encoded)} bytes exceed {_MAX_HEADERS}")
    if len(payload) > _MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {_MAX_PAYLOAD}")
    prelude = struct.pack(">II", _OVERHEAD + len(encoded) + len(payload), len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(encoded) + payload
    return message + struct.pack(">I", zlib.crc32(message))


def is_event_stream(data: bytes) -> bool:
    """Whether ``data`` starts with a well-formed event-stream prelude (lengths plausible, CRC right)."""
    if len(data) < _PRELUDE + 4:
        return False
    total, headers_length = struct.unpack_from(">II", data)
    (crc,) = struct.unpack_from(">I", data, _PRELUDE)
    plausible = total >= _OVERHEAD + headers_length and headers_length <= _MAX_HEADERS
    return bool(plausible and zlib.crc32(data[:_PRELUDE]) == crc)


def iter_messages(data: bytes) -> Iterator[Message]:
    """Every complete message of ``data``, in order; an incomplete trailing message is left out.

    A botocore client waiting for more bytes leaves it out too: the stream simply ended. A corrupt
    message (a CRC mismatch, impossible lengths, an unknown header type) raises ``EventStreamError``.
    """
    view = memoryview(data)
    offset = 0
    while len(data) - offset >= _PRELUDE + 4:
        total, headers_length = struct.unpack_from(">II", view, offset)
        (prelude_crc,) = struct.unpack_from(">I", view, offset + _PRELUDE)
        if zlib.crc32(view[offset : offset + _PRELUDE]) != prelude_crc:
            raise EventStreamError(f"byte {offset}: the message prelude's CRC32 does not match (corrupt frame)")
        if total < _OVERHEAD + headers_length or headers_length > _MAX_HEADERS:
            raise EventStreamError(f"byte {offset}: impossible lengths (total {total}, headers {headers_length})")
        if offset + total > len(data):
            return  # the stream stopped inside this message
        (message_crc,) = struct.unpack_from(">I", view, offset + total - 4)
        if zlib.crc32(view[offset : offset + total - 4]) != message_crc:
            raise EventStreamError(f"byte {offset}: the message's CRC32 does not match (corrupt frame)")
        start = offset + _PRELUDE + 4
        headers = _headers(view[start : start + headers_length], offset)
        payload = bytes(view[start + headers_length : offset + total - 4])
        yield Message(headers, payload, offset)
        offset += total


def _headers(raw: memoryview, offset: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    position = 0
    try:
        while position < len(raw):
            name_length = raw[position]
            name = bytes(raw[position + 1 : position + 1 + name_length]).decode("utf-8")
            position += 1 + name_length
            kind = raw[position]
            position += 1
            headers[name], position = _header_value(raw, kind, position)
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as error:
        raise EventStreamError(f"byte {offset}: unreadable headers ({error})") from error
    return headers


def _header_value(raw: memoryview, kind: int, position: int) -> tuple[Any, int]:
    if kind in (_TRUE, _FALSE):
        return kind == _TRUE, position
    if kind in _FIXED_SIZES:
        size, layout = _FIXED_SIZES[kind]
        return struct.unpack_from(layout, raw, position)[0], position + size
    if kind in (_BYTES, _STRING):
        (length,) = struct.unpack_from(">H", raw, position)
        value = bytes(raw[position + 2 : position + 2 + length])
        if len(value) != length:
            raise ValueError("a header value runs past the headers")
        return (value.decode("utf-8") if kind == _STRING else value), position + 2 + length
    if kind == _UUID:
        return str(uuid.UUID(bytes=bytes(raw[position : position + 16]))), position + 16
    raise ValueError(f"unknown header value type {kind}")
