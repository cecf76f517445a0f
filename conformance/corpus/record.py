"""Recording provider cassettes safely: real SDK + vcrpy, secrets scrubbed, expectation from the SDK.

``record_cassette`` sends one scenario's request with the real SDK inside
``vcr.use_cassette(record_mode="all")``, scrubs credentials from request and response headers and
URLs, labels the cassette ``recorded`` with provider, model, date and SDK versions, refuses to keep
it if ``cassettes check`` still finds anything secret-looking, and writes the expectation folded by
the SDK's own accumulator from the recorded body.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.hygiene import check_cassettes
from conformance.wire import load_body
from conformance.wire.outcome import sdk_outcome

__all__ = ["PROVIDERS", "SCENARIOS", "RecordingError", "record_cassette"]

SCRUBBED = "<scrubbed>"
SENSITIVE_REQUEST_HEADERS = (
    "authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "cookie",
    "openai-organization",
    "openai-project",
)
SENSITIVE_RESPONSE_HEADERS = (
    "set-cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "x-goog-api-key",
)


class RecordingError(RuntimeError):
    """Recording could not proceed (missing key, unknown scenario, unscrubbable output)."""


@dataclass(frozen=True)
class Provider:
    api: str
    key_variables: tuple[str, ...]
    default_model: str


PROVIDERS: dict[str, Provider] = {
    "openai-chat": Provider("openai-chat", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "openai-responses": Provider("openai-responses", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "anthropic": Provider("anthropic", ("ANTHROPIC_API_KEY",), "claude-haiku-4-5"),
    "gemini": Provider("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"),
}

_WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"],
    },
}
_TIME_TOOL = {
    "name": "get_time",
    "description": "Current local time in an IANA time zone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
}
_LIST_TOOL = {
    "name": "list_files",
    "description": "List the files in the workspace.",
    "parameters": {"type": "object", "properties": {}},
}
_WRITE_TOOL = {
    "name": "write_file",
    "description": "Write a text file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}

# scenario -> (prompt, tools)
SCENARIOS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "single_call": ("What is the weather in Paris? Use the tool.", [_WEATHER_TOOL]),
    "parallel_calls": (
        "What is the weather in Paris and the local time in Tokyo? Call both tools at once.",
        [_WEATHER_TOOL, _TIME_TOOL],
    ),
    "same_tool_twice": ("Compare the weather in Paris and in Oslo. Call the tool once per city.", [_WEATHER_TOOL]),
    "no_argument_call": ("List the files in my workspace.", [_LIST_TOOL]),
    "text_then_call": ("First say one short sentence, then check the weather in Oslo.", [_WEATHER_TOOL]),
    "long_arguments": ("Write a 40-line poem about the sea to poem.txt using the tool.", [_WRITE_TOOL]),
}


def _api_key(provider: Provider, environ: dict[str, str] | os._Environ[str]) -> str:
    for name in provider.key_variables:
        if environ.get(name):
            return environ[name]
    raise RecordingError(f"set {' or '.join(provider.key_variables)} to record from {provider.api}")


def _scrub_request(request: Any) -> Any:
    for header in list(request.headers):
        if header.lower() in SENSITIVE_REQUEST_HEADERS:
            request.headers[header] = SCRUBBED
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    for header in list(headers):
        if header.lower() in SENSITIVE_RESPONSE_HEADERS:
            headers[header] = [SCRUBBED]
    return response


def _send(api: str, *, base_url: str | None, key: str, model: str, prompt: str, tools: list[dict[str, Any]]) -> None:
    """Send the scenario's streaming request with the real SDK and drain the stream."""
    messages = [{"role": "user", "content": prompt}]
    if api in ("openai-chat", "openai-responses"):
        import openai

        # Typed as Any: the request params are plain dicts on purpose (one tool schema for every API).
        client: Any = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0)
        if api == "openai-chat":
            stream: Any = client.chat.completions.create(
                model=model,
                messages=messages,
                tools=[{"type": "function", "function": tool} for tool in tools],
                stream=True,
                stream_options={"include_usage": True},
            )
        else:
            stream = client.responses.create(
                model=model,
                input=prompt,
                tools=[{"type": "function", **tool} for tool in tools],
                stream=True,
            )
    elif api == "anthropic":
        import anthropic

        client_a: Any = anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0)
        stream = client_a.messages.create(
            model=model,
            max_tokens=2048,
            messages=messages,
            tools=[
                {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools
            ],
            stream=True,
        )
    else:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=base_url + "/" if base_url else None)
        client_g = genai.Client(api_key=key, http_options=options)
        config = types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name=t["name"], description=t["description"], parameters_json_schema=t["parameters"]
                        )
                        for t in tools
                    ]
                )
            ],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        stream = client_g.models.generate_content_stream(model=model, contents=prompt, config=config)
    for _event in stream:
        pass


def record_cassette(
    provider: str,
    scenario: str,
    out_dir: Path,
    *,
    model: str | None = None,
    base_url: str | None = None,
    environ: dict[str, str] | None = None,
    send: Callable[..., None] = _send,
) -> tuple[Path, Path]:
    """Record ``scenario`` from ``provider`` into ``out_dir/<provider>/<scenario>.yaml`` (+ expectation)."""
    import vcr

    if provider not in PROVIDERS:
        raise RecordingError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    if scenario not in SCENARIOS:
        raise RecordingError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    spec = PROVIDERS[provider]
    key = _api_key(spec, environ if environ is not None else os.environ)
    chosen_model = model or spec.default_model
    folder = out_dir / provider
    folder.mkdir(parents=True, exist_ok=True)
    cassette_path = folder / f"{scenario}.yaml"
    cassette_path.unlink(missing_ok=True)
    prompt, tools = SCENARIOS[scenario]
    recorder = vcr.VCR(
        record_mode="all",
        decode_compressed_response=True,
        filter_query_parameters=[("key", SCRUBBED)],
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
    )
    with recorder.use_cassette(str(cassette_path)):
        send(spec.api, base_url=base_url, key=key, model=chosen_model, prompt=prompt, tools=tools)
    document = yaml.safe_load(cassette_path.read_text(encoding="utf-8"))
    from importlib.metadata import version

    document = {
        "toolcall_conformance": {
            "origin": "recorded",
            "origin_note": f"captured from {base_url or 'the provider'} with toolcall-conformance record",
            "api": spec.api,
            "scenario": scenario,
            "model": chosen_model,
            "recorded_on": _dt.date.today().isoformat(),
            "checked_with": {name: version(name) for name in ("openai", "anthropic", "google-genai", "vcrpy")},
            "expected_source": "the recorded body folded by the SDK's own stream accumulator",
        },
        **document,
    }
    cassette_path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    body = load_body(cassette_path, spec.api)
    outcome = sdk_outcome(spec.api, body.sse)
    expected_path = folder / f"{scenario}.expected.json"
    expected_path.write_text(
        json.dumps(
            {"source": document["toolcall_conformance"]["expected_source"], "expected": outcome.to_json()},
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    leftovers = [
        finding
        for finding in check_cassettes([cassette_path])
        if "secret" in finding.message or "scrub" in finding.message or "header" in finding.message
    ]
    if leftovers or key in cassette_path.read_text(encoding="utf-8"):
        cassette_path.unlink()
        expected_path.unlink()
        raise RecordingError(
            "the recorded cassette still contained secret-looking data and was deleted: "
            + "; ".join(str(f) for f in leftovers)
        )
    return cassette_path, expected_path
