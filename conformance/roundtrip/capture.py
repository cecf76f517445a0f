"""Send a follow-up through the real SDK to an in-process transport and capture the JSON it would send;
validate messages against the SDKs' own request types.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Required

import httpx2
import pydantic
from typing_extensions import TypedDict

from conformance.wire.sdk import offline_client, stream_request
from reference_impl.followup import (
    WIRE_API,
)
from reference_impl.frozen import thaw

__all__ = ["CapturedRequest", "capture_request", "explain_validation", "materialise", "sdk_type_errors"]


_MINIMAL_BODIES = {
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

    def send(self, target: str, history: list[dict[str, Any]], params: Mapping[str, Any]) -> CapturedRequest:
        api = WIRE_API[target]
        if api is None:  # ollama: no SDK; the JSON /api/chat would receive
            return CapturedRequest(target, {"model": "llama-test", "messages": history, "stream": True, **params})
        self._last.clear()
        client = self._client(api)
        options: dict[str, Any] = {}
        if api == "anthropic" and any(_has_thinking(message) for message in history):
            options = {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}
        try:
            for _ in stream_request(client, api, history, params, options):
                pass
        except Exception as error:  # whatever the SDK raises while building the request is the finding
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


@pydantic.with_config(pydantic.ConfigDict(extra="forbid"))
class _OllamaFunction(TypedDict, total=False):
    name: Required[str]
    arguments: Required[dict[str, Any]]
    index: int


@pydantic.with_config(pydantic.ConfigDict(extra="forbid"))
class _OllamaToolCall(TypedDict, total=False):
    id: str
    function: Required[_OllamaFunction]


@pydantic.with_config(pydantic.ConfigDict(extra="forbid"))
class _OllamaMessage(TypedDict, total=False):
    """Ollama's /api/chat message (api.Message), as a schema: this project has no Ollama SDK."""

    role: Required[Literal["system", "user", "assistant", "tool"]]
    content: str
    thinking: str
    images: list[str]
    tool_calls: list[_OllamaToolCall]
    tool_name: str
    tool_call_id: str


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
        adapter = pydantic.TypeAdapter(list[_OllamaMessage])
    else:
        adapter = None  # google-genai validates its own request (pydantic) before sending
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


def sdk_type_errors(target: str, messages: list[dict[str, Any]]) -> str | None:
    """Why ``messages`` do not validate against the target SDK's request types, or None."""
    adapter = _message_adapter(target)
    if adapter is None:
        return None
    payload = thaw(messages)
    if target == "deepseek":  # DeepSeek's extension field, unknown to the OpenAI types
        for message in payload:
            if isinstance(message, dict):
                message.pop("reasoning_content", None)
    try:
        materialise(adapter.validate_python(payload))
    except pydantic.ValidationError as error:
        return explain_validation(error)
    return None
