"""Provider response bodies: loading them from any stored form and telling their wire API.

A body comes as a vcrpy cassette (``.yaml``/``.yml``; a binary body as ``!!binary``), a raw body
as the provider sent it (``.sse``, ``.ndjson``, ``.eventstream.bin``... : SSE, NDJSON or an AWS
event stream, told apart by content), JSON lines (``.jsonl``: one payload per line, framing
stripped) or a Gemini JSON array (``.json``: ``streamGenerateContent`` without ``alt=sse``). Every
form is normalised to the bytes the API's client library decodes (``Body.data``, framed by
``conformance.wire.framing``); ``conformance.wire.sdk`` serves those bytes to the library.

Every problem is a ``WireFormatError`` that names the file and says why (missing, a directory,
empty, not UTF-8, not YAML, no payload, payloads of another API than the one asked for).
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance.wire.apis import FRAMING, WIRE_APIS, UnknownFormatError, WireFormatError, check_api
from conformance.wire.detect import api_from_url, detect_api, payload_api
from conformance.wire.eventstream import is_event_stream, iter_messages
from conformance.wire.framing import frame_body, iter_payloads, iter_sse_payloads, sse_payloads, to_sse
from conformance.wire.yaml_bounds import YamlBoundExceeded, load_yaml

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

_SNIFF = 20  # payloads looked at to tell or confirm a body's wire API


_READ_SIZE = 1 << 20


@dataclass(frozen=True)
class Body:
    """A provider response body: ``data`` in ``api``'s own framing (SSE, NDJSON or AWS event stream).

    A body loaded with ``load_body(..., hold=False)`` from a raw SSE or NDJSON file is not held in
    memory: ``data`` is empty and ``file`` is read on demand by ``chunks()`` and ``payloads()``.
    """

    api: str
    data: bytes
    source: str
    request: dict[str, Any] | None = None  # the request JSON, when the source recorded it
    # Converter options a cassette declares (toolcall_conformance.converter_options), e.g. a server
    # known to send cumulative argument snapshots.
    converter_options: dict[str, Any] = field(default_factory=dict)
    file: Path | None = None

    @property
    def sse(self) -> bytes:
        """``data`` under its older name (from when every body was SSE)."""
        return self.data

    def chunks(self) -> Iterator[bytes]:
        """The body's bytes: ``data`` as one piece, or the file in 1 MiB reads."""
        if self.file is None:
            yield self.data
            return
        with self.file.open("rb") as stream:
            while piece := stream.read(_READ_SIZE):
                yield piece

    def payloads(self, *, strict: bool = True) -> Iterator[Any]:
        """The decoded payloads, lazily (``conformance.wire.framing.iter_payloads``), naming the file on error."""
        try:
            if self.file is None:
                yield from iter_payloads(self.api, self.data, strict=strict)
                return
            with self.file.open("rb") as stream:
                yield from iter_payloads(self.api, stream, strict=strict)
        except WireFormatError as error:
            raise type(error)(f"{self.source}: {error}") from None


@dataclass
class _Raw:
    """A file read, before its wire API is known: raw body bytes, or payloads already decoded."""

    data: bytes = b""
    streamed: bool = False  # ``data`` is only the head of the file, which is read again on demand
    payloads: list[Any] | None = None
    url: str | None = None
    request: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)


def _text(path: Path, data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WireFormatError(
            f"{path}: not UTF-8 text (byte {error.start}); a {what} is text, so this is not one"
        ) from None


def _cassette_document(path: Path, data: bytes) -> Any:
    try:
        return load_yaml(_text(path, data, "vcrpy cassette (.yaml)"))
    except YamlBoundExceeded as error:
        raise WireFormatError(f"{path}:{error.line}: {error}") from None
    except yaml.YAMLError as error:
        raise WireFormatError(f"{path}: not valid YAML{_yaml_where(error)}") from None


def _cassette(path: Path, data: bytes) -> _Raw:
    document = _cassette_document(path, data)
    interactions = document.get("interactions") if isinstance(document, dict) else None
    if not isinstance(interactions, list) or not interactions:
        raise WireFormatError(f"{path}: a vcrpy cassette needs a non-empty 'interactions' list")
    interaction = interactions[-1]
    try:
        body = interaction["response"]["body"]["string"]
        headers = {str(k).lower(): v for k, v in (interaction["response"].get("headers") or {}).items()}
        url = str(interaction["request"]["uri"])
    except (KeyError, TypeError, AttributeError) as error:
        raise WireFormatError(
            f"{path}: the last interaction lacks {error}; expected request.uri and response.body.string"
        ) from None
    if not isinstance(body, (str, bytes)):
        raise WireFormatError(f"{path}: response.body.string is a {type(body).__name__}, not text or !!binary")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if "gzip" in str(headers.get("content-encoding") or "").lower():
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as error:
            raise WireFormatError(f"{path}: the body says gzip but does not decompress: {error}") from None
    request_json: dict[str, Any] | None = None
    request_body = interaction["request"].get("body")
    if isinstance(request_body, (str, bytes)) and request_body:
        try:
            parsed = json.loads(request_body)
            request_json = parsed if isinstance(parsed, dict) else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            request_json = None
    ours = document.get("toolcall_conformance") or {}
    options = (ours.get("converter_options") or {}) if isinstance(ours, dict) else {}
    found = _Raw(raw, url=url, request=request_json, options=dict(options))
    if raw.lstrip().startswith(b"[") and not sse_payloads(raw[:65536]):
        found.payloads = _json_array(path, _text(path, raw, "Gemini JSON array"))
        found.data = b""
    return found


def _yaml_where(error: yaml.YAMLError) -> str:
    """Where and why YAML parsing failed, on one line."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{where}: {problem}"


def _json_lines(path: Path, text: str) -> list[Any]:
    payloads = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            payloads.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise WireFormatError(
                f"{path}:{number}: not a JSON payload line: {error.msg} at column {error.colno}"
            ) from None
    return payloads


def _json_array(path: Path, text: str) -> list[Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise WireFormatError(f"{path}: not a JSON array body: {error.msg} at line {error.lineno}") from None
    if not isinstance(value, list):
        raise WireFormatError(
            f"{path}: a .json body must be a JSON array of response objects, got {type(value).__name__}"
        )
    return value


_HEAD = 1 << 16  # what is first read of a body not held in memory, to tell its wire API


def _read_bytes(path: Path, *, head_only: bool) -> bytes:
    """The file's bytes (or its first ``_HEAD`` bytes), or a ``WireFormatError`` saying why not."""
    if path.is_dir():
        raise WireFormatError(f"{path}: is a directory; give one body file (a cassette, .sse, .jsonl, .json...)")
    if not path.is_file():
        raise WireFormatError(f"{path}: no such file")
    try:
        if head_only:
            return _head(path)
        return path.read_bytes()
    except OSError as error:
        raise WireFormatError(f"{path}: cannot be read: {error.strerror or error}") from None


def _head(path: Path) -> bytes:
    """Enough of the file's start to hold its first payloads: ``_HEAD`` bytes, doubled while no whole
    payload is in them (a first event carrying a 50 MB argument is read to its end, not refused)."""
    with path.open("rb") as stream:
        data = stream.read(_HEAD)
        while not is_event_stream(data) and not _sniff_bytes(data):
            more = stream.read(max(len(data), _HEAD))
            if not more:
                break
            data += more
        return data


def _read(path: Path, *, hold: bool = True) -> _Raw:
    suffix = path.suffix.lower()
    streamed = not hold and suffix not in {".yaml", ".yml", ".jsonl", ".json"}
    data = _read_bytes(path, head_only=streamed)
    if not data.strip():
        raise WireFormatError(f"{path}: the file is empty; there is no body to read")
    if streamed:
        # An event stream is read whole (its frames are binary, not lines); SSE and NDJSON on demand.
        return _Raw(path.read_bytes()) if is_event_stream(data) else _Raw(data, streamed=True)
    if suffix in {".yaml", ".yml"}:
        return _cassette(path, data)
    if suffix == ".jsonl":
        return _Raw(payloads=_json_lines(path, _text(path, data, "JSON-lines body (.jsonl)")))
    if suffix == ".json":
        return _Raw(payloads=_json_array(path, _text(path, data, "JSON array body (.json)")))
    return _Raw(data)


def _sniff_bytes(data: bytes) -> list[Any]:
    """The first payloads of raw body bytes, whatever their framing (event stream, SSE, else NDJSON)."""
    if is_event_stream(data):
        return [
            {str(m.headers.get(":event-type") or m.headers.get(":exception-type")): _loads(m.payload)}
            for m in itertools.islice(iter_messages(data), _SNIFF)
        ]
    found = list(itertools.islice(iter_sse_payloads(data, strict=False), _SNIFF))
    if found:
        return found
    return list(itertools.islice(iter_payloads("ollama", data, strict=False), _SNIFF))


def _loads(payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _check_belongs(path: Path, api: str, sample: list[Any], data: bytes) -> None:
    """``api`` was given: refuse a body in which nothing belongs to it but something belongs elsewhere."""
    if FRAMING[api] == "eventstream" and data and not is_event_stream(data):
        raise WireFormatError(f"{path}: {api} bodies are AWS event streams; this body is not one")
    kinds = {payload_api(payload) for payload in sample}
    if api in kinds:
        return
    others = sorted(kind for kind in kinds if kind)
    if not sample:
        raise WireFormatError(f"{path}: nothing in this body is a {api} payload (it holds no payload at all)")
    if others:
        raise WireFormatError(
            f"{path}: nothing in this body belongs to {api}: its payloads look like {', '.join(others)}; "
            "pass the right --format, or leave it out to detect it"
        )
    # Nothing of any known API (a JSON list of numbers, objects no provider sends): read as an empty
    # stream it would be a silent "no tool calls"; a body of no known shape cannot be replayed.
    shown = ", ".join(_shape_of(payload) for payload in sample[:3])
    raise WireFormatError(
        f"{path}: none of the first {len(sample)} payload(s) of this body is a payload of {api}, nor of any other "
        f"API's (they are: {shown}{', ...' if len(sample) > 3 else ''})"
    )


def _shape_of(payload: Any) -> str:
    """A payload's shape, in a few words, for an error message."""
    if isinstance(payload, dict):
        keys = sorted(map(str, payload))
        return "an object with keys " + ", ".join(keys[:5]) + (", ..." if len(keys) > 5 else "")
    return f"a JSON {type(payload).__name__} {json.dumps(payload)[:40]}" if payload is not None else "not JSON"


def _frame(api: str, raw: _Raw) -> bytes:
    if raw.payloads is None:
        return raw.data
    return frame_body(api, raw.payloads)


def load_body(path: str | Path, api: str | None = None, *, hold: bool = True) -> Body:
    """Read a body from any stored form; ``api`` (one of ``WIRE_APIS``) or detected when unambiguous.

    ``hold=False``: a raw SSE or NDJSON file is not read into memory, only its head (to tell its wire
    API); the returned ``Body`` reads the file on demand (``Body.file``). Replay then holds a body of
    any size once at most, never twice.
    """
    path = Path(path)
    if api is not None:
        check_api(api)
    raw = _read(path, hold=hold)
    sample = raw.payloads[:_SNIFF] if raw.payloads is not None else _sniff_bytes(raw.data)
    if api is None:
        from_url = api_from_url(raw.url) if raw.url else None
        chosen = from_url or detect_api(sample, source=str(path))
    else:
        chosen = api
        _check_belongs(path, api, sample, raw.data)
    if raw.streamed:
        return Body(chosen, b"", str(path), file=path)
    try:
        data = _frame(chosen, raw)
    except WireFormatError as error:
        raise WireFormatError(f"{path}: {error}") from None
    return Body(chosen, data, str(path), request=raw.request, converter_options=raw.options)
