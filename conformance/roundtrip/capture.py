"""Send a follow-up through the real SDK (or client library) offline and capture the JSON it would send;
validate messages against the SDKs' and libraries' own request types.

The four SDK targets go through their SDK clients on an ``httpx2.MockTransport``;
``bedrock-converse`` and ``cohere-v2`` through boto3 and cohere's ``ClientV2``
(``conformance.wire.libraries``), whose own serialisation (and, for boto3, parameter validation
against the ``ConverseStream`` input shape) runs before the request is captured. ``ollama`` is
captured as the JSON ``/api/chat`` receives (ollama-python cannot send call ids). Request types:
the SDKs' ``TypedDict``s, ``ollama.Message`` (plus the roles ``/api/chat`` takes),
``list[cohere.ChatMessageV2]``, and botocore's ``ParamValidator`` on ``ConverseStream`` (plus its
``ConversationRole`` enum, which botocore does not check).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import pydantic

from conformance.wire.apis import LIBRARY_APIS, WireFormatError
from conformance.wire.framing import frame_body
from conformance.wire.libraries import library_stream, offline_library_client
from conformance.wire.sdk import offline_client, stream_request
from reference_impl.followup import WIRE_API
from reference_impl.frozen import thaw

__all__ = ["CapturedRequest", "capture_request", "explain_validation", "materialise", "sdk_type_errors"]


_MINIMAL_BODIES = {
    "ollama": b'{"model":"m","created_at":"2026-01-15T10:00:00Z","message":{"role":"assistant","content":"ok"},'
    b'"done":true,"done_reason":"stop"}\n',
    "cohere-v2": b'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"COMPLETE"}}\n\n',
    "bedrock-converse": frame_body("bedrock-converse", [{"messageStop": {"stopReason": "end_turn"}}]),
    "openai-chat": b"data: [DONE]\n\n",
    "openai-responses": b"data: [DONE]\n\n",
    "anthropic": b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    "gemini": (
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}]}'
        b"\n\n"
    ),
}


@dataclass
class CapturedRequest:
    """What the SDK would have sent (``json``), or why it refused (``error``)."""

    target: str
    json: dict[str, Any] | None = None
    error: str | None = None


class _Capture:
    """One SDK client per wire API, each on a transport that records the request and answers minimally."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}
        self._last: list[Any] = []

    def _client(self, api: str) -> Any:
        client = self._clients.get(api)
        if client is None:
            body = _MINIMAL_BODIES[api]

            def respond(request: httpx2.Request) -> httpx2.Response:
                self._last.append(json.loads(request.content))
                return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

            client = offline_client(api, httpx2.MockTransport(respond))
            self._clients[api] = client
        return client

    def _library_stream(self, api: str, history: list[dict[str, Any]], params: Mapping[str, Any]) -> Any:
        def respond(request_body: bytes) -> list[bytes]:
            self._last.append(json.loads(request_body))
            return [_MINIMAL_BODIES[api]]

        return library_stream(offline_library_client(api, respond), api, history, params)

    def send(self, target: str, history: list[dict[str, Any]], params: Mapping[str, Any]) -> CapturedRequest:
        if target == "ollama":
            # The JSON /api/chat receives: ollama-python's models would drop the calls' ids and every
            # JSON Schema keyword they do not know while serialising; sdk_type_errors validates
            # the messages through ollama.Message instead.
            return CapturedRequest(target, {"model": "llama-test", "messages": history, "stream": True, **params})
        api = WIRE_API[target] or target
        self._last.clear()
        if api in LIBRARY_APIS:
            try:
                stream = self._library_stream(api, history, params)
            except WireFormatError as error:  # the library is not installed
                return CapturedRequest(target, None, str(error))
        else:
            options: dict[str, Any] = {}
            if api == "anthropic" and any(_has_thinking(message) for message in history):
                options = {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}
            stream = stream_request(self._client(api), api, history, params, options)
        try:
            for _ in stream:
                pass
        except Exception as error:  # noqa: BLE001 - whatever the SDK raises while building the request is the finding
            return CapturedRequest(target, None, _short_error(error))
        if not self._last:
            return CapturedRequest(target, None, "the SDK sent no request")
        return CapturedRequest(target, self._last[-1])


def _has_thinking(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    blocks: list[Any] = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking") for b in blocks)


@functools.lru_cache(maxsize=1)
def _capture() -> _Capture:
    # One set of SDK clients per process: building a client costs ~25 ms (SSL context, genai setup).
    return _Capture()


def capture_request(
    target: str, history: list[dict[str, Any]], params: Mapping[str, Any] | None = None
) -> CapturedRequest:
    """Send ``history`` (and tool ``params``) through ``target``'s real SDK, offline; return the JSON it sent."""
    return _capture().send(target, history, params or {})


def _short_error(error: BaseException) -> str:
    if isinstance(error, pydantic.ValidationError):
        return f"{type(error).__name__}: {explain_validation(error)}"
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:400]


_VAGUE_ERRORS = frozenset({"literal_error", "missing", "model_attributes_type", "union_tag_invalid", "extra_forbidden"})


def explain_validation(error: pydantic.ValidationError) -> str:
    """The most specific few of a union validation's many errors (a wrong type beats 'not that member')."""
    errors = error.errors(include_url=False)
    specific = [e for e in errors if e["type"] not in _VAGUE_ERRORS] or errors
    shown = []
    for entry in specific[:2]:
        where = ".".join(str(part) for part in entry["loc"])
        value = repr(entry.get("input"))[:80]
        shown.append(f"{where}: {entry['msg']} (got {value})")
    more = f" (+{len(errors) - len(shown)} more)" if len(errors) > len(shown) else ""
    return "; ".join(shown) + more


# -- the SDKs' own request types -------------------------------------------------------------------


_ADAPTERS: dict[str, pydantic.TypeAdapter[Any]] = {}


def _message_adapter(target: str) -> pydantic.TypeAdapter[Any] | None:
    if target in _ADAPTERS:
        return _ADAPTERS[target]
    config = pydantic.ConfigDict(extra="forbid", strict=True)
    adapter: pydantic.TypeAdapter[Any] | None
    if target in ("openai-chat", "deepseek"):
        from openai.types.chat import ChatCompletionMessageParam

        adapter = pydantic.TypeAdapter(list[ChatCompletionMessageParam], config=config)
    elif target == "openai-responses":
        from openai.types.responses import ResponseInputItemParam

        adapter = pydantic.TypeAdapter(list[ResponseInputItemParam], config=config)
    elif target == "anthropic":
        from anthropic.types import MessageParam

        adapter = pydantic.TypeAdapter(list[MessageParam], config=config)
    elif target == "ollama":
        import ollama

        adapter = pydantic.TypeAdapter(list[ollama.Message])
    elif target == "cohere-v2":
        import cohere

        adapter = pydantic.TypeAdapter(list[cohere.ChatMessageV2])
    else:
        adapter = None  # google-genai validates its own request (pydantic); Bedrock: _converse_errors
    _ADAPTERS[target] = adapter  # type: ignore[assignment]
    return adapter


def materialise(value: Any) -> Any:
    """Walk a validated value so the SDK types' lazily validated ``Iterable`` fields are checked too."""
    if isinstance(value, Mapping):
        return {key: materialise(item) for key, item in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    try:
        iterator = iter(value)
    except TypeError:
        return value
    return [materialise(item) for item in iterator]


_OLLAMA_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _role_errors(messages: list[Any], roles: frozenset[str], where: str) -> str | None:
    for position, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in roles:
            return f"{position}.role: {role!r} is not one of {sorted(roles)} ({where})"
    return None


@functools.lru_cache(maxsize=1)
def _converse_input_shape() -> Any:
    import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]

    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client.meta.service_model.operation_model("ConverseStream").input_shape


def _converse_errors(messages: list[Any]) -> str | None:
    """botocore's own validation of ``ConverseStream``'s ``messages``, plus the role enum it does not check."""
    from botocore.validate import ParamValidator  # type: ignore[import-untyped, import-not-found, unused-ignore]

    shape = _converse_input_shape()
    report = ParamValidator().validate({"modelId": "m", "messages": messages}, shape)
    if report.has_errors():
        return str(report.generate_report()).replace("\n", "; ")[:400]
    roles = frozenset(shape.members["messages"].member.members["role"].enum)
    return _role_errors(messages, roles, "ConversationRole")


def sdk_type_errors(target: str, messages: list[dict[str, Any]]) -> str | None:
    """Why ``messages`` do not validate against the target SDK's (or library's) request types, or None."""
    if target == "bedrock-converse":
        return _converse_errors(thaw(messages))
    adapter = _message_adapter(target)
    if adapter is None:
        return None
    payload = thaw(messages)
    if target == "ollama":
        roles = _role_errors(payload, _OLLAMA_ROLES, "the roles /api/chat takes")
        if roles:
            return roles
    if target == "deepseek":  # DeepSeek's extension field, unknown to the OpenAI types
        for message in payload:
            if isinstance(message, dict):
                message.pop("reasoning_content", None)
    try:
        materialise(adapter.validate_python(payload))
    except pydantic.ValidationError as error:
        return explain_validation(error)
    return None
