"""The wire APIs the suite reads, how each one frames its stream, and the errors a body can raise.

Eight wire APIs, named as in ``reference_impl.converters.CONVERTERS``:

=====================  ===================  ============================  =====================================
``api``                framing              read through                  stream endpoint
=====================  ===================  ============================  =====================================
``openai-chat``        SSE                  ``openai``                    ``POST /v1/chat/completions``
``openai-responses``   SSE                  ``openai``                    ``POST /v1/responses``
``anthropic``          SSE (``event:``)     ``anthropic``                 ``POST /v1/messages``
``gemini``             SSE or JSON array    ``google-genai``              ``:streamGenerateContent``
``ollama``             NDJSON               ``ollama`` (ollama-python)    ``POST /api/chat``
``bedrock-converse``   AWS event stream     ``boto3`` / botocore          ``/model/{id}/converse-stream``
``bedrock-invoke``     AWS event stream     ``boto3`` / botocore          ``/model/{id}/invoke-with-response-stream``
``cohere-v2``          SSE (``event:``)     ``cohere`` (``ClientV2``)     ``POST /v2/chat``
=====================  ===================  ============================  =====================================

The first four are read through the provider SDKs (``conformance.wire.sdk``), the last four
through their client libraries (``conformance.wire.libraries``); all eight are dependencies.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CONTENT_TYPES",
    "FRAMING",
    "LIBRARY_APIS",
    "READERS",
    "SDK_APIS",
    "WIRE_APIS",
    "Framing",
    "LibraryMissingError",
    "UnknownFormatError",
    "WireFormatError",
    "check_api",
]

SDK_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
LIBRARY_APIS = ("ollama", "bedrock-converse", "bedrock-invoke", "cohere-v2")
WIRE_APIS = SDK_APIS + LIBRARY_APIS

# The Python distribution each wire API is read through (for messages).
READERS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google-genai",
    "ollama": "ollama",
    "bedrock-converse": "boto3",
    "bedrock-invoke": "boto3",
    "cohere-v2": "cohere",
}

Framing = Literal["sse", "ndjson", "eventstream"]
FRAMING: dict[str, Framing] = {
    **dict.fromkeys(("openai-chat", "openai-responses", "anthropic", "gemini", "cohere-v2"), "sse"),
    "ollama": "ndjson",
    "bedrock-converse": "eventstream",
    "bedrock-invoke": "eventstream",
}
CONTENT_TYPES: dict[Framing, str] = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "eventstream": "application/vnd.amazon.eventstream",
}


class WireFormatError(ValueError):
    """A body cannot be read: says which file, where, and why."""


class UnknownFormatError(WireFormatError):
    """The wire API of a body could not be detected, or is not one of ``WIRE_APIS``; pass it explicitly."""


class LibraryMissingError(WireFormatError):
    """The client library a wire API is read through is not installed."""


def check_api(api: str) -> str:
    """``api`` itself when it is one of ``WIRE_APIS``; otherwise an ``UnknownFormatError`` listing them."""
    if api not in WIRE_APIS:
        raise UnknownFormatError(f"unknown wire API {api!r}; expected one of {', '.join(WIRE_APIS)}")
    return api
