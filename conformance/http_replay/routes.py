"""Which request each wire API's client sends for a stream: the route table of HTTP-level replay.

A replay serves one recording; it mounts the route of the recording's wire API only, on any host
(an application may point its client at a proxy, Azure, OpenRouter or a local server: the path is
what identifies the endpoint). Every other request fails loudly (``UnroutedRequestError``), and
the message says which wire API the stray request looks like, from this same table.

``transport`` says how requests are intercepted: ``"httpx"`` through respx (the SDKs on
``httpx2``, and ollama / cohere on ``httpx`` once ``httpx2.alias_httpx()`` has run), ``"botocore"``
by taking over botocore's HTTP session (boto3 does not use httpx). Adding a wire API is one entry.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from conformance.http_replay.errors import UnsupportedWireApiError

__all__ = ["ROUTES", "Route", "route_for", "route_matching"]


@dataclass(frozen=True)
class Route:
    """How the client library of one wire API asks for a stream."""

    api: str
    method: str
    path: str  # a regular expression searched in the URL path
    content_type: str  # of the served response
    transport: Literal["httpx", "botocore"]
    client: str  # the call that sends it, for messages
    stream_field: str | None = None  # request JSON field that must be true for a stream
    non_stream_path: str | None = None  # the same endpoint's non-streaming form, for a better message

    def matches(self, method: str, path: str) -> bool:
        """Whether a request with this method and URL path is this route's."""
        return method.upper() == self.method and re.search(self.path, path) is not None

    def describe(self) -> str:
        """``POST <any host>.../chat/completions (openai.OpenAI().chat.completions.create(stream=True))``."""
        shown = self.path.replace("\\", "").removesuffix("$").replace("[^/]+", "{model}")
        return f"{self.method} <any host>...{shown} ({self.client})"

    def refuses(self, method: str, path: str, content: bytes) -> str | None:
        """Why a request to this API's endpoint cannot get the streamed recording, or None."""
        if self.non_stream_path and method.upper() == self.method and re.search(self.non_stream_path, path):
            return f"it asks {self.api} for a complete (non-streaming) response, and the recording is a stream"
        if self.stream_field is None or not self.matches(method, path):
            return None
        try:
            document = json.loads(content or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if isinstance(document, dict) and document.get(self.stream_field) is not True:
            return f'its JSON body does not say "{self.stream_field}": true, and the recording is a stream'
        return None


_NDJSON = "application/x-ndjson"
_SSE = "text/event-stream"
_EVENTSTREAM = "application/vnd.amazon.eventstream"

ROUTES: dict[str, Route] = {
    route.api: route
    for route in (
        Route(
            "openai-chat",
            "POST",
            r"/chat/completions$",
            _SSE,
            "httpx",
            "openai.OpenAI().chat.completions.create(stream=True)",
            stream_field="stream",
        ),
        Route(
            "openai-responses",
            "POST",
            r"/responses$",
            _SSE,
            "httpx",
            "openai.OpenAI().responses.create(stream=True)",
            stream_field="stream",
        ),
        Route(
            "anthropic",
            "POST",
            r"/messages$",
            _SSE,
            "httpx",
            "anthropic.Anthropic().messages.create(stream=True) / .messages.stream()",
            stream_field="stream",
        ),
        Route(
            "gemini",
            "POST",
            r"/models/[^/]+:streamGenerateContent$",
            _SSE,
            "httpx",
            "genai.Client().models.generate_content_stream()",
            non_stream_path=r"/models/[^/]+:generateContent$",
        ),
        Route("ollama", "POST", r"/api/chat$", _NDJSON, "httpx", "ollama.Client().chat(stream=True)", "stream"),
        Route("cohere-v2", "POST", r"/v2/chat$", _SSE, "httpx", "cohere.ClientV2().chat_stream()", "stream"),
        Route(
            "bedrock-converse",
            "POST",
            r"/model/[^/]+/converse-stream$",
            _EVENTSTREAM,
            "botocore",
            'boto3.client("bedrock-runtime").converse_stream()',
            non_stream_path=r"/model/[^/]+/converse$",
        ),
        Route(
            "bedrock-invoke",
            "POST",
            r"/model/[^/]+/invoke-with-response-stream$",
            _EVENTSTREAM,
            "botocore",
            'boto3.client("bedrock-runtime").invoke_model_with_response_stream()',
            non_stream_path=r"/model/[^/]+/invoke$",
        ),
    )
}


def route_for(api: str) -> Route:
    """The route of ``api``; ``UnsupportedWireApiError`` names the supported ones."""
    try:
        return ROUTES[api]
    except KeyError:
        raise UnsupportedWireApiError(
            f"no HTTP replay route for wire API {api!r}; supported: {', '.join(ROUTES)}"
        ) from None


def route_matching(method: str, path: str) -> Route | None:
    """The route a request belongs to, whichever API it is (for messages about stray requests)."""
    for route in ROUTES.values():
        if route.matches(method, path) or (
            route.non_stream_path and method.upper() == route.method and re.search(route.non_stream_path, path)
        ):
            return route
    return None
