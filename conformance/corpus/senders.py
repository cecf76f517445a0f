"""One streaming request per wire API, sent with the real SDK or client library (what ``record`` captures).

``SENDERS[api](request)`` sends the scenario's request and returns the stream, which the caller
drains. Every client is built with retries off (a failing server is reported once, not retried)
and a timeout, against ``request.base_url`` when one is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["SENDERS", "SendRequest"]

_TIMEOUT = 120.0


@dataclass(frozen=True)
class SendRequest:
    """What a sender needs: where, with which credential, which model, the prompt and the tools (JSON Schema)."""

    base_url: str | None
    key: str
    model: str
    prompt: str
    tools: list[dict[str, Any]]


def _openai(request: SendRequest, responses: bool) -> Iterable[Any]:
    import openai

    # Typed as Any: the request params are plain dicts on purpose (one tool schema for every API).
    client: Any = openai.OpenAI(api_key=request.key, base_url=request.base_url, max_retries=0, timeout=_TIMEOUT)
    if responses:
        tools = [{"type": "function", **tool} for tool in request.tools]
        return client.responses.create(model=request.model, input=request.prompt, tools=tools, stream=True)  # type: ignore[no-any-return]
    return client.chat.completions.create(  # type: ignore[no-any-return]
        model=request.model,
        messages=[{"role": "user", "content": request.prompt}],
        tools=[{"type": "function", "function": tool} for tool in request.tools],
        stream=True,
        stream_options={"include_usage": True},
    )


def _anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool["name"], "description": tool["description"], "input_schema": tool["parameters"]}


def _anthropic(request: SendRequest) -> Iterable[Any]:
    import anthropic

    client: Any = anthropic.Anthropic(api_key=request.key, base_url=request.base_url, max_retries=0, timeout=_TIMEOUT)
    tools = [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in request.tools
    ]
    messages = [{"role": "user", "content": request.prompt}]
    return client.messages.create(model=request.model, max_tokens=2048, messages=messages, tools=tools, stream=True)  # type: ignore[no-any-return]


def _gemini(request: SendRequest) -> Iterable[Any]:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=request.base_url + "/" if request.base_url else None,
        retry_options=types.HttpRetryOptions(attempts=1),
        timeout=int(_TIMEOUT * 1000),
    )
    client = genai.Client(api_key=request.key, http_options=options)
    declarations = [
        types.FunctionDeclaration(name=t["name"], description=t["description"], parameters_json_schema=t["parameters"])
        for t in request.tools
    ]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    # A generator, so that the client (closed when collected) lives as long as its stream is read.
    yield from client.models.generate_content_stream(model=request.model, contents=request.prompt, config=config)


def _ollama(request: SendRequest) -> Iterable[Any]:
    import ollama  # type: ignore[import-untyped, import-not-found, unused-ignore]

    client: Any = ollama.Client(host=request.base_url or "http://localhost:11434", timeout=_TIMEOUT)
    tools = [{"type": "function", "function": tool} for tool in request.tools]
    messages = [{"role": "user", "content": request.prompt}]
    return client.chat(model=request.model, messages=messages, tools=tools, stream=True)  # type: ignore[no-any-return]


def _cohere(request: SendRequest) -> Iterable[Any]:
    import cohere  # type: ignore[import-untyped, import-not-found, unused-ignore]

    client: Any = cohere.ClientV2(api_key=request.key, base_url=request.base_url or None, timeout=_TIMEOUT)
    tools = [{"type": "function", "function": tool} for tool in request.tools]
    messages = [{"role": "user", "content": request.prompt}]
    return client.chat_stream(  # type: ignore[no-any-return]
        model=request.model, messages=messages, tools=tools, request_options={"max_retries": 0}
    )


def _bedrock_client(request: SendRequest) -> Any:
    import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]
    from botocore.config import Config  # type: ignore[import-untyped, import-not-found, unused-ignore]

    config = Config(retries={"total_max_attempts": 1}, read_timeout=_TIMEOUT, connect_timeout=30)
    options: dict[str, Any] = {"config": config}
    if request.base_url:
        options["endpoint_url"] = request.base_url
    if request.key:  # a placeholder for a local server (AWS credentials otherwise come from boto3's own chain)
        options.update(aws_access_key_id="local", aws_secret_access_key=request.key, region_name="us-east-1")
    return boto3.client("bedrock-runtime", **options)


def _bedrock_converse(request: SendRequest) -> Iterable[Any]:
    tools = [
        {"toolSpec": {"name": t["name"], "description": t["description"], "inputSchema": {"json": t["parameters"]}}}
        for t in request.tools
    ]
    response = _bedrock_client(request).converse_stream(
        modelId=request.model,
        messages=[{"role": "user", "content": [{"text": request.prompt}]}],
        toolConfig={"tools": tools},
    )
    return response["stream"]  # type: ignore[no-any-return]


def _bedrock_invoke(request: SendRequest) -> Iterable[Any]:
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 2048,
        "messages": [{"role": "user", "content": request.prompt}],
        "tools": [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in request.tools
        ],
    }
    response = _bedrock_client(request).invoke_model_with_response_stream(
        modelId=request.model, body=json.dumps(body).encode("utf-8")
    )
    return response["body"]  # type: ignore[no-any-return]


SENDERS: dict[str, Callable[[SendRequest], Iterable[Any]]] = {
    "openai-chat": lambda request: _openai(request, responses=False),
    "openai-responses": lambda request: _openai(request, responses=True),
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
    "bedrock-converse": _bedrock_converse,
    "bedrock-invoke": _bedrock_invoke,
    "cohere-v2": _cohere,
}
