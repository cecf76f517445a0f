"""Replay Ollama, Bedrock and Cohere v2 bodies through their real client libraries, offline.

The twin of ``conformance.wire.sdk`` for the wire APIs that have a client library instead of a
provider SDK here (dependencies of this package, like the SDKs):

* ``ollama``: ``ollama.Client(...).chat(stream=True)`` yields ``ollama.ChatResponse``;
* ``cohere-v2``: ``cohere.ClientV2(...).chat_stream()`` yields the ``V2ChatStreamResponse`` members;
* ``bedrock-converse`` / ``bedrock-invoke``: a real boto3 ``bedrock-runtime`` client's
  ``converse_stream(...)["stream"]`` / ``invoke_model_with_response_stream(...)["body"]`` yield
  event dicts.

How the bytes reach the library. ollama-python and cohere run on ``httpx``; their clients take an
``httpx`` transport (ollama passes ``transport=`` to the ``httpx.Client`` it builds; cohere takes
``httpx_client=``), so an ``httpx.MockTransport`` streams the body in exactly the pieces chosen and
the libraries' own line / SSE decoders read it. ``httpx`` is imported at call time: when an
application has called ``httpx2.alias_httpx()`` the same code gets httpx2's classes, which the
libraries then use too; nothing here calls it. boto3 does not use httpx: the client gets a
``before-send`` handler that returns an ``AWSResponse`` whose raw stream yields the pieces, so
botocore's own event-stream parser (CRCs, headers, the service model's shapes) decodes the frames.

``iter_library_payload_events`` builds the same objects from decoded payloads (no HTTP layer) and
tolerates what it does not know; see its docstring. Clients are built once per process (building a
boto3 client costs ~50 ms) and told per request what to answer. No request leaves the process:
fake credentials, in-process transports.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.wire.apis import CONTENT_TYPES, FRAMING, LIBRARY_APIS, LibraryMissingError, check_api
from conformance.wire.framing import bedrock_event, frame_body

__all__ = [
    "Responder",
    "iter_library_events",
    "iter_library_payload_events",
    "library_stream",
    "offline_library_client",
    "require_library",
]

# A responder gets the request body the library sent and returns the response body's pieces.
Responder = Callable[[bytes], Iterable[bytes]]

# Fake credentials for offline replay. They are sent only to in-process transports.
_FAKE_KEY = "test-key-not-a-real-secret"
_FAKE_AWS_KEY_ID = "test"
_REGION = "us-east-1"
_MESSAGES = [{"role": "user", "content": "replay"}]
_BEDROCK_MESSAGES = [{"role": "user", "content": [{"text": "replay"}]}]
_MODULES = {"ollama": "ollama", "cohere-v2": "cohere", "bedrock-converse": "boto3", "bedrock-invoke": "boto3"}
_OPERATIONS = {
    "bedrock-converse": ("ConverseStream", "stream"),
    "bedrock-invoke": ("InvokeModelWithResponseStream", "body"),
}


def require_library(api: str) -> Any:
    """The client library module ``api`` is read through; ``LibraryMissingError`` when it is not installed."""
    if check_api(api) not in LIBRARY_APIS:
        raise ValueError(f"{api} is read through its SDK (conformance.wire.sdk), not a client library")
    name = _MODULES[api]
    try:
        return importlib.import_module(name)
    except ImportError:
        raise LibraryMissingError(
            f"the {api} wire API is read through the {name} library, which is not installed: "
            "pip install ollama cohere boto3 (dependencies of toolcall-conformance)"
        ) from None


class _Slot:
    """What a cached client answers with: set right before each request is sent."""

    def __init__(self) -> None:
        self.respond: Responder = lambda _request: [b""]


@functools.cache
def _httpx_client(api: str) -> tuple[Any, _Slot]:
    import httpx  # type: ignore[import-untyped, import-not-found, unused-ignore]

    slot = _Slot()
    content_type = CONTENT_TYPES[FRAMING[api]]

    class PiecewiseBody(httpx.SyncByteStream):  # type: ignore[misc, unused-ignore]
        """A response body served in exactly the given pieces (empty pieces included)."""

        def __init__(self, pieces: Iterable[bytes]) -> None:
            self.pieces = pieces

        def __iter__(self) -> Iterator[bytes]:
            yield from self.pieces

    def respond(request: httpx.Request) -> httpx.Response:
        pieces = slot.respond(request.read())
        return httpx.Response(200, headers={"content-type": content_type}, stream=PiecewiseBody(pieces))

    transport = httpx.MockTransport(respond)
    if api == "ollama":
        import ollama  # type: ignore[import-untyped, import-not-found, unused-ignore]

        # ollama.Client passes unknown keyword arguments to the httpx.Client it creates.
        return ollama.Client(host="http://127.0.0.1:11434", transport=transport), slot
    import cohere  # type: ignore[import-untyped, import-not-found, unused-ignore]

    http = httpx.Client(transport=transport)
    return cohere.ClientV2(api_key=_FAKE_KEY, base_url="https://api.cohere.com", httpx_client=http), slot


class _RawPieces:
    """What botocore reads an event-stream body from (``AWSResponse.raw``): ``stream()`` and ``close()``."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = pieces

    def stream(self, **_options: Any) -> Iterator[bytes]:
        yield from self._pieces

    def close(self) -> None:
        self._pieces = ()


@functools.cache
def _bedrock_client() -> tuple[Any, _Slot]:
    import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped, import-not-found, unused-ignore]

    client = boto3.client(
        "bedrock-runtime",
        region_name=_REGION,
        endpoint_url=f"https://bedrock-runtime.{_REGION}.amazonaws.com",
        aws_access_key_id=_FAKE_AWS_KEY_ID,
        aws_secret_access_key=_FAKE_KEY,
    )
    slot = _Slot()

    def respond(request: Any, **_kwargs: Any) -> Any:
        # A non-None response from a before-send handler replaces the HTTP call entirely.
        body = request.body if isinstance(request.body, bytes) else (request.body or b"")
        pieces = slot.respond(body if isinstance(body, bytes) else str(body).encode("utf-8"))
        headers = {"content-type": CONTENT_TYPES["eventstream"]}
        return AWSResponse(request.url, 200, headers, _RawPieces(pieces))

    client.meta.events.register("before-send.bedrock-runtime.*", respond)
    return client, slot


def offline_library_client(api: str, respond: Responder) -> Any:
    """The library's real client for ``api``, answering every request with ``respond(request body)``.

    The client is shared within the process; ``respond`` applies to the next request sent.
    """
    require_library(api)
    client, slot = _bedrock_client() if FRAMING[api] == "eventstream" else _httpx_client(api)
    slot.respond = respond
    return client


def library_stream(
    client: Any, api: str, messages: Sequence[Any] | None = None, params: Mapping[str, Any] | None = None
) -> Iterator[Any]:
    """Send one streaming request through ``client`` and yield the library's stream objects.

    ``messages``: the history in ``api``'s request shape (default: one user message); ``params``:
    tool parameters (``tools``, ``tool_choice``, Bedrock ``toolConfig``). The libraries raise what
    they raise (``ollama.ResponseError``, botocore's ``EventStreamError``...).
    """
    extra = dict(params or {})
    if api == "ollama":
        yield from client.chat(model="replay", messages=list(messages or _MESSAGES), stream=True, **extra)
    elif api == "cohere-v2":
        yield from client.chat_stream(model="replay", messages=list(messages or _MESSAGES), **extra)
    elif api == "bedrock-converse":
        response = client.converse_stream(modelId="replay", messages=list(messages or _BEDROCK_MESSAGES), **extra)
        yield from response["stream"]
    else:
        response = client.invoke_model_with_response_stream(modelId="replay", body=b"{}", **extra)
        yield from response["body"]


def iter_library_events(api: str, pieces: Iterable[bytes]) -> Iterator[Any]:
    """The library's own stream objects for a body served in exactly ``pieces``."""
    yield from library_stream(offline_library_client(api, lambda _request: pieces), api)


# -- the library's objects straight from payloads -------------------------------------------------


def iter_library_payload_events(api: str, payloads: Sequence[Any] | Iterator[Any]) -> Iterator[Any]:
    """The library's objects built directly from decoded payloads (no HTTP, SSE or frame layer).

    Unknown fields never fail, at any level, and neither do unknown event types:

    * ``ollama``: ``ollama.ChatResponse.model_validate`` (its models ignore extra keys); a line the
      models reject (no ``message``, arguments that are not an object) is built with
      ``model_construct`` instead, so the converter sees it where the library would raise pydantic's
      ``ValidationError``. ``{"error": ...}`` raises ``ollama.ResponseError``, as the library does.
    * ``cohere-v2``: cohere's own ``parse_obj_as(V2ChatStreamResponse, payload)`` (what its stream
      uses; extra keys are kept as pydantic extras). A payload it rejects (an unknown ``type``) is
      yielded as the plain dict, where the library drops it with a logged warning.
    * ``bedrock-converse`` / ``bedrock-invoke``: each payload is framed and read by botocore's
      ``EventStream`` with the operation's output shape, as boto3 would: padding ``p`` and unknown
      members dropped, blobs base64-decoded, exception events raising ``EventStreamError``. Where
      botocore drops an event type it does not know, or rejects one (a union with two members set),
      the payload is yielded as a plain ``{eventType: payload}`` dict instead.
    """
    require_library(api)
    if api == "ollama":
        yield from _ollama_payload_events(payloads)
    elif api == "cohere-v2":
        yield from _cohere_payload_events(payloads)
    else:
        yield from _bedrock_payload_events(api, payloads)


def _ollama_payload_events(payloads: Sequence[Any] | Iterator[Any]) -> Iterator[Any]:
    import ollama  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pydantic

    for payload in payloads:
        if isinstance(payload, Mapping) and payload.get("error"):
            raise ollama.ResponseError(str(payload["error"]))
        try:
            yield ollama.ChatResponse.model_validate(payload)
        except pydantic.ValidationError:
            yield ollama.ChatResponse.model_construct(**dict(payload)) if isinstance(payload, Mapping) else payload


def _cohere_payload_events(payloads: Sequence[Any] | Iterator[Any]) -> Iterator[Any]:
    import pydantic
    from cohere import V2ChatStreamResponse  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from cohere.core.pydantic_utilities import parse_obj_as  # type: ignore[import-untyped, import-not-found, unused-ignore]

    for payload in payloads:
        if payload == "[DONE]":
            return
        try:
            yield parse_obj_as(V2ChatStreamResponse, payload)  # type: ignore[arg-type, unused-ignore]
        except (pydantic.ValidationError, TypeError, ValueError):
            yield payload


@functools.cache
def _event_shape(api: str) -> Any:
    operation, member = _OPERATIONS[api]
    client, _slot = _bedrock_client()
    return client.meta.service_model.operation_model(operation).output_shape.members[member]


def _bedrock_payload_events(api: str, payloads: Sequence[Any] | Iterator[Any]) -> Iterator[Any]:
    from botocore.eventstream import EventStream  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from botocore.parsers import EventStreamJSONParser, ResponseParserError  # type: ignore[import-untyped, import-not-found, unused-ignore]

    operation, _member = _OPERATIONS[api]
    shape = _event_shape(api)
    parser = EventStreamJSONParser()
    for payload in payloads:
        kind, body = bedrock_event(payload)
        frame = frame_body(api, [{kind: body}])
        try:
            parsed = list(EventStream(_RawPieces([frame]), shape, parser, operation))
        except ResponseParserError:
            parsed = []
        if parsed:
            yield from parsed
        else:
            # botocore dropped an event type it does not know, or rejected the event.
            yield {kind: {key: value for key, value in body.items() if key != "p"}}
