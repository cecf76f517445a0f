"""Which wire API a body belongs to: from its request URL, or from what its first payloads look like.

Each payload is classified on its own (``payload_api``) by what only that API sends; a body is
detected when its first recognisable payloads agree on one API. The signs, per API:

* ``openai-responses``: ``type`` ``response.*`` (or an ``error`` event with a ``sequence_number``);
* ``anthropic``: ``type`` ``message_start``, ``content_block_*``, ``message_delta`` or ``ping``
  (underscored);
* ``cohere-v2``: ``type`` ``message-start``, ``tool-call-delta``... (hyphenated);
* ``openai-chat``: ``object: chat.completion.chunk`` or ``choices``;
* ``gemini``: ``candidates`` or ``usageMetadata``;
* ``ollama``: a ``message`` object and a boolean ``done`` (no ``choices``, no ``candidates``);
* ``bedrock-converse`` / ``bedrock-invoke``: one camelCase event-type key (``contentBlockDelta``...,
  ``chunk`` with ``bytes``), or the decoded ``{"headers": {":event-type": ...}, "payload": ...}``
  form, or a bare event payload (``contentBlockIndex``, ``stopReason``, base64 ``bytes``).

An exception event (shared by both Bedrock operations) or an ``{"error": ...}`` object says
nothing on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.wire.apis import WIRE_APIS, UnknownFormatError

__all__ = ["api_from_url", "detect_api", "payload_api"]

_ANTHROPIC_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "message_delta", "ping"})
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
_CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
# URL markers, most specific first.
_URL_MARKERS = (
    ("/converse-stream", "bedrock-converse"),
    ("/invoke-with-response-stream", "bedrock-invoke"),
    ("/chat/completions", "openai-chat"),
    ("/api/chat", "ollama"),
    ("/v2/chat", "cohere-v2"),
    ("/messages", "anthropic"),
    ("generateContent", "gemini"),
)
_DETECTION_WINDOW = 20


def api_from_url(url: str) -> str | None:
    """The wire API a request URL belongs to, or None."""
    if url.rstrip("/").endswith("/responses"):
        return "openai-responses"
    return next((api for marker, api in _URL_MARKERS if marker in url), None)


def _typed_api(kind: str, payload: Mapping[str, Any]) -> str | None:
    if kind.startswith("response.") or (kind == "error" and "sequence_number" in payload):
        return "openai-responses"
    if kind in _ANTHROPIC_EVENTS:
        return "anthropic"
    if kind in _COHERE_V2_EVENTS:
        return "cohere-v2"
    return None


def _bedrock_kind(event_type: Any, body: Any) -> str | None:
    if not isinstance(body, Mapping):
        return None
    if event_type == "chunk" and "bytes" in body:
        return "bedrock-invoke"
    if event_type == "metadata":
        # A lone "metadata" key is too generic on its own: require what Bedrock puts there.
        return "bedrock-converse" if {"usage", "metrics"} & set(body) else None
    return "bedrock-converse" if event_type in _CONVERSE_EVENTS else None


def _bare_bedrock(payload: Mapping[str, Any]) -> str | None:
    if "contentBlockIndex" in payload or "stopReason" in payload:
        return "bedrock-converse"
    if isinstance(payload.get("bytes"), str) and set(payload) <= {"bytes", "p"}:
        return "bedrock-invoke"
    return None


def payload_api(payload: Any) -> str | None:
    """Which of ``WIRE_APIS`` a decoded payload belongs to, or None (ambiguous or unknown)."""
    if not isinstance(payload, Mapping):
        return None
    kind = payload.get("type")
    if isinstance(kind, str):
        return _typed_api(kind, payload)
    headers = payload.get("headers")
    if isinstance(headers, Mapping) and "payload" in payload:
        return _bedrock_kind(headers.get(":event-type"), payload.get("payload"))
    if payload.get("object") == "chat.completion.chunk" or "choices" in payload:
        return "openai-chat"
    if "candidates" in payload or "usageMetadata" in payload:
        return "gemini"
    if isinstance(payload.get("message"), Mapping) and isinstance(payload.get("done"), bool):
        return "ollama"
    if len(payload) == 1:
        [(key, body)] = payload.items()
        return _bedrock_kind(key, body)
    return _bare_bedrock(payload)


def detect_api(payloads: Iterable[Any], url: str | None = None, *, source: str = "this body") -> str:
    """The wire API of a body, from its request URL or its first recognisable payloads."""
    if url:
        from_url = api_from_url(url)
        if from_url:
            return from_url
    seen = 0
    votes: set[str] = set()
    for payload in payloads:
        seen += 1
        api = payload_api(payload)
        if api:
            votes.add(api)
        if seen >= _DETECTION_WINDOW:
            break
    if len(votes) == 1:
        return votes.pop()
    if not seen:
        why = "it holds no payload (no SSE data: line, JSON line or event-stream message)"
    elif votes:
        why = f"its payloads look like {sorted(votes)}"
    else:
        why = f"none of its first {seen} payloads belongs to a known wire API"
    raise UnknownFormatError(
        f"{source}: cannot tell the wire API: {why}; pass one of {', '.join(WIRE_APIS)} explicitly (--format)"
    )
