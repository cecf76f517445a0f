"""Ollama, Amazon Bedrock and Cohere v2 bodies: replay through the real client libraries, offline, and writing them.

Four wire APIs, named as in ``reference_impl.converters.CONVERTERS``:

=====================  =====================================  ==========================================
``api``                body                                   payload (one per event)
=====================  =====================================  ==========================================
``"ollama"``           NDJSON (``POST /api/chat``)            the line's JSON object
``"bedrock-converse"`` AWS binary event stream                ``{eventType: payload}``, as boto3 yields it
                       (``ConverseStream``)                   (``{"headers": ..., "payload": ...}`` read too)
``"bedrock-invoke"``   AWS binary event stream                ``{"chunk": {"bytes": <base64>, "p": ...}}``
                       (``InvokeModelWithResponseStream``)
``"cohere-v2"``        SSE (``POST /v2/chat``)                the ``data:`` JSON object
=====================  =====================================  ==========================================

* ``iter_library_events(api, pieces)`` serves a body in exactly those byte pieces to the **real**
  client library and yields the library's own stream objects. ollama-python and cohere run on
  plain ``httpx``: their clients accept an ``httpx.Client`` (cohere: ``httpx_client=``; ollama:
  ``transport=`` is passed through to the ``httpx.Client`` it builds), so an ``httpx.MockTransport``
  whose response streams the pieces reaches their own line / SSE decoders. ``import httpx`` is done
  at call time, so when an application has called ``httpx2.alias_httpx()`` (which makes ``httpx``
  *be* ``httpx2`` process-wide) the same code gets httpx2's classes, which is what the libraries
  then use too; this module never calls it (it must run before any ``import httpx``, and a
  library must not change that for its host). boto3 does not use httpx at all: a real
  ``bedrock-runtime`` client gets a ``before-send`` event handler that returns an ``AWSResponse``
  whose raw stream yields the pieces, so botocore's own event-stream parser (prelude and message
  CRC32s, headers, the service model's shapes) decodes the binary frames.
* ``iter_payload_events(api, payloads)`` builds the same objects from decoded payloads, without
  the HTTP layer, and tolerates what it does not know (see its docstring).
* ``detect_new_api(payload)`` tells these payloads apart from each other and from the four
  existing APIs'.
* ``encode_message`` / ``encode_body`` write the AWS event-stream framing, so Bedrock cassettes can
  be written here; ``decode_event_stream`` reads frames back with botocore's own decoder.
* ``render_new(turn, api)`` / ``render_new_body(turn, api)`` write a logical ``conformance.render.Turn``
  in each wire format.

No request leaves the process: every client gets fake credentials and an in-process transport.
"""

from __future__ import annotations

import base64
import itertools
import json
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn
from conformance.turns.render import render

__all__ = [
    "NEW_WIRE_APIS",
    "UnknownNewApiError",
    "decode_event_stream",
    "detect_new_api",
    "encode_body",
    "encode_message",
    "iter_library_events",
    "iter_payload_events",
    "render_new",
    "render_new_body",
]

NEW_WIRE_APIS = ("ollama", "bedrock-converse", "bedrock-invoke", "cohere-v2")

# Fake credentials for offline replay. They are sent only to in-process transports.
_FAKE_KEY = "test-key-not-a-real-secret"
_FAKE_AWS_KEY_ID = "test"
_REGION = "us-east-1"
_MESSAGES = [{"role": "user", "content": "replay"}]

_CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
_BEDROCK_EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
        "modelTimeoutException",
    }
)
_COHERE_V2_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
        "debug",
    }
)


class UnknownNewApiError(ValueError):
    """An API name this module does not serve."""


def _check_api(api: str) -> None:
    if api not in NEW_WIRE_APIS:
        raise UnknownNewApiError(f"unknown wire API {api!r}; expected one of {', '.join(NEW_WIRE_APIS)}")


# -- (a) replay through the real client libraries --------------------------------------------------


def iter_library_events(api: str, pieces: Sequence[bytes]) -> Iterator[Any]:
    """Yield the client library's own stream objects for a body served in exactly ``pieces``.

    ``ollama``: ``ollama.ChatResponse`` from ``ollama.Client(...).chat(stream=True)``;
    ``cohere-v2``: the ``V2ChatStreamResponse`` members from ``cohere.ClientV2(...).chat_stream()``;
    ``bedrock-converse`` / ``bedrock-invoke``: the event dicts of a real boto3 ``bedrock-runtime``
    client's ``converse_stream(...)["stream"]`` / ``invoke_model_with_response_stream(...)["body"]``.
    The libraries raise what they raise (``ollama.ResponseError``, botocore's ``EventStreamError``...).
    """
    _check_api(api)
    if api == "ollama":
        yield from _ollama_events(pieces)
    elif api == "cohere-v2":
        yield from _cohere_events(pieces)
    else:
        yield from _bedrock_events(api, pieces)


def _httpx_transport(pieces: Sequence[bytes], content_type: str) -> Any:
    import httpx  # type: ignore[import-not-found, unused-ignore]

    class PiecewiseBody(httpx.SyncByteStream):  # type: ignore[misc, unused-ignore]
        """A response body served in exactly the given pieces (empty pieces included)."""

        def __iter__(self) -> Iterator[bytes]:
            yield from pieces

    def respond(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, stream=PiecewiseBody())

    return httpx.MockTransport(respond)


def _ollama_events(pieces: Sequence[bytes]) -> Iterator[Any]:
    import ollama  # type: ignore[import-not-found, unused-ignore]

    # ollama.Client passes unknown keyword arguments to the httpx.Client it creates.
    client = ollama.Client(host="http://127.0.0.1:11434", transport=_httpx_transport(pieces, "application/x-ndjson"))
    yield from client.chat(model="replay", messages=_MESSAGES, stream=True)


def _cohere_events(pieces: Sequence[bytes]) -> Iterator[Any]:
    import cohere  # type: ignore[import-not-found, unused-ignore]
    import httpx  # type: ignore[import-not-found, unused-ignore]

    client = cohere.ClientV2(
        api_key=_FAKE_KEY,
        base_url="https://api.cohere.com",
        httpx_client=httpx.Client(transport=_httpx_transport(pieces, "text/event-stream")),
    )
    yield from client.chat_stream(model="replay", messages=_MESSAGES)  # type: ignore[arg-type, unused-ignore]


class _RawPieces:
    """What botocore reads an event-stream body from (``AWSResponse.raw``): ``stream()`` and ``close()``."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self._pieces = list(pieces)

    def stream(self, **_options: Any) -> Iterator[bytes]:
        yield from self._pieces

    def close(self) -> None:
        self._pieces = []


def _bedrock_client() -> Any:
    import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]

    return boto3.client(
        "bedrock-runtime",
        region_name=_REGION,
        endpoint_url=f"https://bedrock-runtime.{_REGION}.amazonaws.com",
        aws_access_key_id=_FAKE_AWS_KEY_ID,
        aws_secret_access_key=_FAKE_KEY,
    )


def _bedrock_events(api: str, pieces: Sequence[bytes]) -> Iterator[Any]:
    from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped, import-not-found, unused-ignore]

    client = _bedrock_client()

    def respond(request: Any, **_kwargs: Any) -> Any:
        # A non-None response from a before-send handler replaces the HTTP call entirely.
        headers = {"content-type": "application/vnd.amazon.eventstream"}
        return AWSResponse(request.url, 200, headers, _RawPieces(pieces))

    client.meta.events.register("before-send.bedrock-runtime.*", respond)
    if api == "bedrock-converse":
        response = client.converse_stream(modelId="replay", messages=[{"role": "user", "content": [{"text": "x"}]}])
        yield from response["stream"]
    else:
        response = client.invoke_model_with_response_stream(modelId="replay", body=b"{}")
        yield from response["body"]


# -- (b) the library's objects straight from payloads ----------------------------------------------


def iter_payload_events(api: str, payloads: Sequence[Any]) -> Iterator[Any]:
    """Yield the library's objects built directly from decoded payloads (no HTTP, SSE or frame layer).

    Unknown fields never crash, at any level, and neither do unknown event types (the Gemini SDK's
    ``model_validate`` rejecting a new ``serviceTier`` field is the defect not to repeat):

    * ``ollama``: ``ollama.ChatResponse.model_validate``; its models ignore extra keys. A line the
      models reject (no ``message``, arguments that are not an object) is built with
      ``model_construct`` instead, so the converter sees it (the library itself would raise
      pydantic's ``ValidationError``). ``{"error": ...}`` raises ``ollama.ResponseError``, as the
      library does.
    * ``cohere-v2``: cohere's own ``parse_obj_as(V2ChatStreamResponse, payload)`` (what its stream
      uses; extra keys are kept as pydantic extras). A payload it rejects (an unknown ``type``) is
      yielded as the plain dict, where the library would drop it with a logged warning. The string
      ``"[DONE]"`` ends the stream.
    * ``bedrock-converse`` / ``bedrock-invoke``: each payload is framed (``encode_message``) and read by
      botocore's ``EventStream`` with the operation's output shape, as boto3 would: padding ``p`` and
      unknown members dropped, blobs base64-decoded, exception events raising ``EventStreamError``.
      Where botocore drops an event whose type it does not know, or rejects one (a union with two
      members set), the payload is yielded as a plain ``{eventType: payload}`` dict instead.
    """
    _check_api(api)
    if api == "ollama":
        yield from _ollama_payload_events(payloads)
    elif api == "cohere-v2":
        yield from _cohere_payload_events(payloads)
    else:
        yield from _bedrock_payload_events(api, payloads)


def _ollama_payload_events(payloads: Sequence[Any]) -> Iterator[Any]:
    import ollama  # type: ignore[import-not-found, unused-ignore]
    import pydantic

    for payload in payloads:
        if isinstance(payload, Mapping) and payload.get("error"):
            raise ollama.ResponseError(str(payload["error"]))
        try:
            yield ollama.ChatResponse.model_validate(payload)
        except pydantic.ValidationError:
            yield ollama.ChatResponse.model_construct(**dict(payload)) if isinstance(payload, Mapping) else payload


def _cohere_payload_events(payloads: Sequence[Any]) -> Iterator[Any]:
    import pydantic
    from cohere import V2ChatStreamResponse  # type: ignore[import-not-found, unused-ignore]
    from cohere.core.pydantic_utilities import parse_obj_as  # type: ignore[import-not-found, unused-ignore]

    for payload in payloads:
        if payload == "[DONE]":
            return
        try:
            yield parse_obj_as(V2ChatStreamResponse, payload)  # type: ignore[arg-type, unused-ignore]
        except (pydantic.ValidationError, TypeError, ValueError):
            yield payload


def _bedrock_payload_events(api: str, payloads: Sequence[Any]) -> Iterator[Any]:
    from botocore.eventstream import EventStream  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from botocore.parsers import EventStreamJSONParser, ResponseParserError  # type: ignore[import-untyped, import-not-found, unused-ignore]

    operation = "ConverseStream" if api == "bedrock-converse" else "InvokeModelWithResponseStream"
    member = "stream" if api == "bedrock-converse" else "body"
    model = _bedrock_client().meta.service_model.operation_model(operation)
    shape = model.output_shape.members[member]
    parser = EventStreamJSONParser()
    for payload in payloads:
        kind, body = _event_of(payload)
        frame = _frame_for(kind, body)
        parsed = []
        try:
            parsed = list(EventStream(_RawPieces([frame]), shape, parser, operation))
        except ResponseParserError:
            parsed = []
        if parsed:
            yield from parsed
        else:
            # botocore dropped an event type it does not know, or rejected the event.
            yield {kind: {key: value for key, value in body.items() if key != "p"}}


def _event_of(payload: Any) -> tuple[str, dict[str, Any]]:
    """``(event type, payload)`` from ``{eventType: payload}`` or ``{"headers": ..., "payload": ...}``."""
    if not isinstance(payload, Mapping):
        raise TypeError(f"a Bedrock payload must be a JSON object, got {type(payload).__name__}")
    headers = payload.get("headers")
    if isinstance(headers, Mapping) and "payload" in payload:
        kind = headers.get(":event-type") or headers.get(":exception-type") or ""
        return str(kind), dict(payload["payload"] or {})
    if len(payload) != 1:
        raise ValueError(f"a Bedrock event is one {{eventType: payload}} pair, got keys {sorted(payload)}")
    [(kind, body)] = payload.items()
    return str(kind), dict(body or {})


def _frame_for(kind: str, body: Mapping[str, Any]) -> bytes:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if kind in _BEDROCK_EXCEPTIONS:
        headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    else:
        headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, data)


# -- (c) detection ---------------------------------------------------------------------------------


def detect_new_api(payload: Any) -> str | None:
    """Which of ``NEW_WIRE_APIS`` a decoded payload belongs to, or ``None`` (another API, or ambiguous).

    Never claims an OpenAI Chat / Responses, Anthropic or Gemini payload: Cohere's event types are
    hyphenated (``tool-call-start``; Anthropic's use underscores, Responses' start with
    ``response.``); Ollama lines have ``message`` and a boolean ``done`` (no ``choices``, no
    ``candidates``); Bedrock events are one camelCase event-type key (or the decoded
    ``{"headers": {":event-type": ...}, "payload": ...}`` form, or a bare payload with
    ``contentBlockIndex`` / ``stopReason`` / base64 ``bytes``). An exception event (shared by both
    Bedrock operations) or an ``{"error": ...}`` line is ambiguous.
    """
    if not isinstance(payload, Mapping):
        return None
    headers = payload.get("headers")
    if isinstance(headers, Mapping) and "payload" in payload:
        return _bedrock_kind(headers.get(":event-type"), payload.get("payload"))
    kind = payload.get("type")
    if isinstance(kind, str):
        return "cohere-v2" if kind in _COHERE_V2_EVENTS else None
    if isinstance(payload.get("message"), Mapping) and isinstance(payload.get("done"), bool):
        return "ollama"
    if len(payload) == 1:
        [(key, body)] = payload.items()
        return _bedrock_kind(key, body)
    # A bare event payload, as in an AWS frame (padding ``p`` beside the fields).
    if "contentBlockIndex" in payload or "stopReason" in payload:
        return "bedrock-converse"
    if isinstance(payload.get("bytes"), str) and set(payload) <= {"bytes", "p"}:
        return "bedrock-invoke"
    return None


def _bedrock_kind(event_type: Any, body: Any) -> str | None:
    if not isinstance(body, Mapping):
        return None
    if event_type == "chunk" and "bytes" in body:
        return "bedrock-invoke"
    if event_type == "metadata":
        # A lone "metadata" key is too generic on its own: require what Bedrock puts there.
        return "bedrock-converse" if {"usage", "metrics"} & set(body) else None
    if event_type in _CONVERSE_EVENTS:
        return "bedrock-converse"
    return None


# -- (d) the AWS event-stream framing --------------------------------------------------------------

# Header value types of the AWS event-stream encoding (only these are written here).
_HEADER_TRUE, _HEADER_FALSE, _HEADER_BYTES, _HEADER_STRING = 0, 1, 6, 7
_PRELUDE_LENGTH = 8  # total length and headers length, before the prelude CRC
_MAX_HEADERS_LENGTH = 128 * 1024  # botocore's limits
_MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024


def encode_message(headers: Mapping[str, str | bytes | bool], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude (total length, headers length, CRC32), headers, payload, CRC32.

    Header values are strings (type 7), bytes (type 6) or booleans (types 0 / 1); names and values
    are length-prefixed (1 byte for a name, 2 bytes for a value), big-endian. The message CRC32
    covers everything before it, prelude CRC included.
    """
    encoded = bytearray()
    for name, value in headers.items():
        raw_name = name.encode("utf-8")
        if not 0 < len(raw_name) < 256:
            raise ValueError(f"header name {name!r} must be 1-255 bytes")
        encoded += struct.pack(">B", len(raw_name)) + raw_name
        if isinstance(value, bool):
            encoded += struct.pack(">B", _HEADER_TRUE if value else _HEADER_FALSE)
            continue
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        if len(raw) > 32767:
            raise ValueError(f"header {name!r}: value of {len(raw)} bytes exceeds 32767")
        kind = _HEADER_STRING if isinstance(value, str) else _HEADER_BYTES
        encoded += struct.pack(">BH", kind, len(raw)) + raw
    if len(encoded) > _MAX_HEADERS_LENGTH:
        raise ValueError(f"headers of {len(encoded)} bytes exceed {_MAX_HEADERS_LENGTH}")
    if len(payload) > _MAX_PAYLOAD_LENGTH:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {_MAX_PAYLOAD_LENGTH}")
    total = _PRELUDE_LENGTH + 4 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(encoded) + payload
    return message + struct.pack(">I", zlib.crc32(message))


def decode_event_stream(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """``(headers, payload)`` of every complete message in ``data``, read by botocore's own decoder.

    Raises botocore's ``ChecksumMismatch`` (a ``ParserError``) on a corrupt frame; an incomplete
    trailing frame is left out, as botocore leaves it waiting for more bytes.
    """
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped, import-not-found, unused-ignore]

    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(message.headers), bytes(message.payload)) for message in buffer]


def encode_body(api: str, payloads: Sequence[Any], *, done_marker: bool = False) -> bytes:
    """Frame payloads as ``api``'s response body: NDJSON, AWS event-stream frames, or SSE.

    Ollama lines are written as Go's ``encoding/json`` writes them (the server is Go): compact,
    raw UTF-8, with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so ``<think>`` is
    ``\\u003cthink\\u003e`` on the wire. Cohere frames are ``event: <type>`` + ``data:``; with
    ``done_marker`` a final ``data: [DONE]`` is added (some Cohere-compatible servers send one).
    """
    _check_api(api)
    if api == "ollama":
        return b"".join((_go_json(payload) + "\n").encode("utf-8") for payload in payloads)
    if api == "cohere-v2":
        frames = []
        for payload in payloads:
            data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            frames.append(f"event: {payload.get('type', 'unknown')}\ndata: {data}\n\n")
        if done_marker:
            frames.append("data: [DONE]\n\n")
        return "".join(frames).encode("utf-8")
    return b"".join(_frame_for(*_event_of(payload)) for payload in payloads)


_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _go_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # Outside strings, JSON syntax never contains these characters, so replacing them everywhere
    # only touches string contents, exactly as Go's HTML-safe encoder does.
    for char, escape in _GO_ESCAPES.items():
        text = text.replace(char, escape)
    return text


# -- (e) rendering a logical turn -------------------------------------------------------------------


def render_new(turn: Turn, api: str) -> list[dict[str, Any]]:
    """The payloads of ``turn`` in ``api``'s documented wire format, in wire order (see ``encode_body``).

    Per-API variations in ``turn.extras``: ``ollama_think_tags`` (reasoning streamed as
    ``<think>...</think>`` inside ``content``, as thinking models do without ``think: true``),
    ``ollama_call_ids`` (tool calls carry ``id``, as newer servers send),
    ``cohere_thinking_content`` (reasoning as a ``thinking`` content block instead of a tool plan).
    """
    _check_api(api)
    if api == "ollama":
        return _render_ollama(turn)
    if api == "cohere-v2":
        return _render_cohere(turn)
    if api == "bedrock-converse":
        return _render_converse(turn)
    return _render_invoke(turn)


def render_new_body(turn: Turn, api: str, *, done_marker: bool = False) -> bytes:
    """``render_new`` framed as the response body (``encode_body``)."""
    return encode_body(api, render_new(turn, api), done_marker=done_marker)


def _ollama_arguments(call: Call) -> dict[str, Any]:
    # Ollama parses each call whole before sending it: arguments are always a complete object.
    if not call.arguments.strip():
        return {}
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        raise ValueError(
            f"Ollama sends whole calls only; the arguments of {call.name!r} are not complete JSON"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(f"Ollama arguments are a JSON object; {call.name!r} has {type(value).__name__}")
    return value


def _render_ollama(turn: Turn) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    clock = itertools.count()

    def line(message: dict[str, Any], **fields: Any) -> dict[str, Any]:
        stamp = f"2026-01-15T10:00:{next(clock) % 60:02d}.000000Z"
        return {
            "model": turn.model,
            "created_at": stamp,
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
            **fields,
        }

    calls = itertools.count()
    for item in turn.items:
        if isinstance(item, Reasoning):
            if turn.extras.get("ollama_think_tags"):
                pieces = ("<think>", *item.pieces, "</think>")
                lines += [line({"content": piece}) for piece in pieces]
            else:
                lines += [line({"thinking": piece}) for piece in item.pieces]
        elif isinstance(item, Text):
            lines += [line({"content": piece}) for piece in item.pieces]
        elif isinstance(item, ServerCall):
            raise ValueError("Ollama streams no provider-executed tools")
        else:
            index = next(calls)
            function: dict[str, Any] = {"name": item.name, "arguments": _ollama_arguments(item)}
            if index:  # Go's omitempty: index 0 is left out
                function = {"index": index, **function}
            call: dict[str, Any] = {"function": function}
            if item.call_id and turn.extras.get("ollama_call_ids"):
                call = {"id": item.call_id, **call}
            lines.append(line({"tool_calls": [call]}))
    if turn.ending == "cut":
        return lines
    if turn.ending == "error":
        lines.append({"error": turn.error_message})
        return lines
    prompt, completion = turn.usage
    final = line({}, done=True, done_reason="length" if turn.ending == "length" else "stop")
    final.update(
        total_duration=912_000_000,
        load_duration=21_000_000,
        prompt_eval_count=prompt,
        prompt_eval_duration=100_000_000,
        eval_count=completion,
        eval_duration=700_000_000,
    )
    lines.append(final)
    return lines


def _render_cohere(turn: Turn) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "id": "5f7e0b6a-0000-4000-8000-000000000001",
            "type": "message-start",
            "delta": {
                "message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
            },
        }
    ]
    contents = itertools.count()
    calls = itertools.count()
    for item in turn.items:
        if isinstance(item, Reasoning) and not turn.extras.get("cohere_thinking_content"):
            events += [{"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}} for p in item.pieces]
        elif isinstance(item, (Text, Reasoning)):
            index = next(contents)
            field = "thinking" if isinstance(item, Reasoning) else "text"
            start = {"type": field, field: ""}
            events.append({"type": "content-start", "index": index, "delta": {"message": {"content": start}}})
            events += [
                {"type": "content-delta", "index": index, "delta": {"message": {"content": {field: p}}}}
                for p in item.pieces
            ]
            events.append({"type": "content-end", "index": index})
        elif isinstance(item, ServerCall):
            raise ValueError("Cohere v2 streams no provider-executed tools")
        else:
            index = next(calls)
            call = {
                "id": item.call_id or f"{item.name}_{index}",
                "type": "function",
                "function": {"name": item.name, "arguments": ""},
            }
            events.append({"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}})
            events += [
                {
                    "type": "tool-call-delta",
                    "index": index,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
                }
                for p in item.argument_pieces
                if p
            ]
            if turn.ending in ("length", "cut", "error") and item is turn.items[-1]:
                break  # an interrupted call never gets its tool-call-end
            events.append({"type": "tool-call-end", "index": index})
    if turn.ending == "cut":
        return events
    prompt, completion = turn.usage
    usage = {
        "billed_units": {"input_tokens": prompt, "output_tokens": completion},
        "tokens": {"input_tokens": prompt, "output_tokens": completion},
    }
    if turn.ending == "error":
        delta: dict[str, Any] = {"finish_reason": "ERROR", "error": turn.error_message, "usage": usage}
    else:
        finish = "MAX_TOKENS" if turn.ending == "length" else ("TOOL_CALL" if turn.calls else "COMPLETE")
        delta = {"finish_reason": finish, "usage": usage}
    events.append({"type": "message-end", "delta": delta})
    return events


_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _padder() -> Iterator[str]:
    # Bedrock pads every payload with ``p``, a prefix of this alphabet of varying length (a
    # length side channel mitigation); deterministic here so cassettes are reproducible.
    for position in itertools.count():
        yield _PADDING[: 1 + (position * 37 + 11) % len(_PADDING)]


def _render_converse(turn: Turn) -> list[dict[str, Any]]:
    padding = _padder()
    events: list[dict[str, Any]] = []

    def emit(kind: str, **body: Any) -> None:
        events.append({kind: {**body, "p": next(padding)}})

    emit("messageStart", role="assistant")
    blocks = itertools.count()
    for item in turn.items:
        index = next(blocks)
        if isinstance(item, Reasoning):
            # Reasoning and text blocks get no contentBlockStart: their deltas just start.
            for piece in item.pieces:
                emit("contentBlockDelta", contentBlockIndex=index, delta={"reasoningContent": {"text": piece}})
            if item.signature:
                emit(
                    "contentBlockDelta",
                    contentBlockIndex=index,
                    delta={"reasoningContent": {"signature": item.signature}},
                )
        elif isinstance(item, Text):
            for piece in item.pieces:
                emit("contentBlockDelta", contentBlockIndex=index, delta={"text": piece})
        elif isinstance(item, ServerCall):
            use = {"toolUseId": item.call_id, "name": item.name, "type": "server_tool_use"}
            emit("contentBlockStart", contentBlockIndex=index, start={"toolUse": use})
            for piece in item.input_pieces:
                emit("contentBlockDelta", contentBlockIndex=index, delta={"toolUse": {"input": piece}})
            emit("contentBlockStop", contentBlockIndex=index)
            index = next(blocks)
            result = {"toolUseId": item.call_id, "type": f"{item.name}_result", "status": "success"}
            emit("contentBlockStart", contentBlockIndex=index, start={"toolResult": result})
            emit("contentBlockDelta", contentBlockIndex=index, delta={"toolResult": [{"text": item.result}]})
        else:
            start = {"toolUseId": item.call_id or f"tooluse_{index}", "name": item.name}
            emit("contentBlockStart", contentBlockIndex=index, start={"toolUse": start})
            # Claude on Bedrock sends an empty first input fragment; keep that quirk.
            for piece in ("", *item.argument_pieces):
                emit("contentBlockDelta", contentBlockIndex=index, delta={"toolUse": {"input": piece}})
            if turn.ending in ("length", "cut", "error") and item is turn.items[-1]:
                break  # an interrupted block never gets its contentBlockStop
        emit("contentBlockStop", contentBlockIndex=index)
    if turn.ending == "cut":
        return events
    if turn.ending == "error":
        events.append({"modelStreamErrorException": {"message": turn.error_message, "originalStatusCode": 529}})
        return events
    stop = "max_tokens" if turn.ending == "length" else ("tool_use" if turn.calls else "end_turn")
    emit("messageStop", stopReason=stop)
    prompt, completion = turn.usage
    usage = {"inputTokens": prompt, "outputTokens": completion, "totalTokens": prompt + completion}
    emit("metadata", usage=usage, metrics={"latencyMs": 812})
    return events


def _render_invoke(turn: Turn) -> list[dict[str, Any]]:
    padding = _padder()
    events: list[dict[str, Any]] = []
    prompt, completion = turn.usage
    for original in render(turn, "anthropic"):
        event = original
        if event.get("type") == "error":
            # On Bedrock an error mid-stream is an exception frame, never an Anthropic error event.
            message = event.get("error", {}).get("message", turn.error_message)
            events.append({"modelStreamErrorException": {"message": message, "originalStatusCode": 529}})
            continue
        if event.get("type") == "message_stop":
            metrics = {
                "inputTokenCount": prompt,
                "outputTokenCount": completion,
                "invocationLatency": 812,
                "firstByteLatency": 301,
            }
            event = {**event, "amazon-bedrock-invocationMetrics": metrics}
        data = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        events.append({"chunk": {"bytes": base64.b64encode(data).decode("ascii"), "p": next(padding)}})
    return events
