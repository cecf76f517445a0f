"""Recording provider cassettes safely: real SDK + vcrpy, secrets scrubbed, expectation from the SDK.

``record_cassette`` sends one scenario's request with the real SDK or client library
(``conformance.corpus.senders``, eight wire APIs) inside ``vcr.use_cassette(record_mode="all")``,
scrubs credentials from request and response headers and URLs, labels the cassette ``recorded``
with provider, model, date and library versions, refuses to keep it if ``cassettes check`` still
finds anything secret-looking, and writes the expectation read by the SDK's own accumulator (or
the library's stated fold) from the recorded body. A server that cannot be reached, answers an
error, or sends something that is not a stream of the API is a ``RecordingError`` saying what
failed; nothing is kept.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.hygiene import SENSITIVE_HEADERS as HYGIENE_SENSITIVE_HEADERS
from conformance.corpus.hygiene import check_cassettes
from conformance.corpus.senders import SENDERS, SendRequest
from conformance.wire import WireFormatError, load_body
from conformance.wire.apis import READERS
from conformance.wire.outcome import SdkAccumulatorError, sdk_outcome

# The distributions whose versions a recorded cassette names.
_DISTRIBUTIONS = {api: (READERS[api],) for api in READERS} | {
    "bedrock-converse": ("boto3", "botocore"),
    "bedrock-invoke": ("boto3", "botocore"),
}

__all__ = ["PROVIDERS", "SCENARIOS", "RecordingError", "record_cassette"]

SCRUBBED = "<scrubbed>"
# Credentials, in requests and responses alike (``cassettes check`` refuses them unscrubbed).
SENSITIVE_HEADERS = tuple(sorted(HYGIENE_SENSITIVE_HEADERS))
_PLACEHOLDER_KEY = "placeholder-key-for-a-local-server"


class RecordingError(RuntimeError):
    """Recording could not proceed (missing key, unknown scenario, a failing server, unscrubbable output)."""


@dataclass(frozen=True)
class Provider:
    api: str
    key_variables: tuple[str, ...]  # () : no key (Ollama); Bedrock uses the AWS credential chain
    default_model: str
    credential: str = "key"  # "key" | "none" | "aws"


PROVIDERS: dict[str, Provider] = {
    "openai-chat": Provider("openai-chat", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "openai-responses": Provider("openai-responses", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "anthropic": Provider("anthropic", ("ANTHROPIC_API_KEY",), "claude-haiku-4-5"),
    "gemini": Provider("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"),
    "ollama": Provider("ollama", (), "qwen3:4b", credential="none"),
    "bedrock-converse": Provider(
        "bedrock-converse", ("AWS_ACCESS_KEY_ID",), "anthropic.claude-3-haiku-20240307-v1:0", credential="aws"
    ),
    "bedrock-invoke": Provider(
        "bedrock-invoke", ("AWS_ACCESS_KEY_ID",), "anthropic.claude-3-haiku-20240307-v1:0", credential="aws"
    ),
    "cohere-v2": Provider("cohere-v2", ("CO_API_KEY", "COHERE_API_KEY"), "command-r7b-12-2024"),
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


def _aws_credentials_present() -> bool:
    try:
        import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return False
    return boto3.Session().get_credentials() is not None


def _api_key(provider: Provider, environ: Mapping[str, str], base_url: str | None) -> str:
    """The credential to send: the provider's key, or for a server of your own (``--base-url``) a placeholder.

    Ollama needs none; Bedrock signs with the AWS credential chain (the returned value is then ``""``).
    """
    if provider.credential == "none":
        return ""
    for name in provider.key_variables:
        if environ.get(name):
            return "" if provider.credential == "aws" else environ[name]
    if provider.credential == "aws" and base_url is None and _aws_credentials_present():
        return ""
    if base_url is not None:
        return _PLACEHOLDER_KEY  # a local or proxy server may need no key; if it does, it says so
    names = " or ".join(provider.key_variables)
    extra = " (or an AWS profile)" if provider.credential == "aws" else ""
    raise RecordingError(f"set {names}{extra} to record from {provider.api}, or point --base-url at your own server")


def _scrub_headers(headers: Any) -> None:
    for header in list(headers or {}):
        if header.lower() in SENSITIVE_HEADERS:
            headers[header] = SCRUBBED if isinstance(headers[header], str) else [SCRUBBED]


def _scrub_request(request: Any) -> Any:
    _scrub_headers(request.headers)
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    _scrub_headers(response.get("headers"))
    return response


def _send(api: str, *, base_url: str | None, key: str, model: str, prompt: str, tools: list[dict[str, Any]]) -> None:
    """Send the scenario's streaming request with the real SDK or client library and drain the stream."""
    for _event in SENDERS[api](SendRequest(base_url, key, model, prompt, tools)):
        pass


def _failure(api: str, base_url: str | None, error: BaseException) -> RecordingError:
    where = base_url or f"the {api} provider"
    text = str(error).strip().splitlines()
    return RecordingError(
        f"recording from {where} failed, nothing was kept: {type(error).__name__}: {text[0] if text else ''}"[:500]
    )


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
    key = _api_key(spec, environ if environ is not None else os.environ, base_url)
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
    try:
        with recorder.use_cassette(str(cassette_path)):
            send(spec.api, base_url=base_url, key=key, model=chosen_model, prompt=prompt, tools=tools)
    except Exception as error:  # the SDK talking to the server: whatever it raises is reported
        cassette_path.unlink(missing_ok=True)
        raise _failure(spec.api, base_url, error) from error
    if not cassette_path.is_file():
        raise RecordingError(f"{base_url or spec.api}: the SDK sent no request; nothing was recorded")
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
            "checked_with": {name: version(name) for name in (*_DISTRIBUTIONS[spec.api], "vcrpy")},
            "expected_source": "the recorded body folded by the SDK's own stream accumulator",
        },
        **document,
    }
    cassette_path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    try:
        body = load_body(cassette_path, spec.api)
        outcome = sdk_outcome(spec.api, body.data)
    except (WireFormatError, SdkAccumulatorError) as error:
        cassette_path.unlink()
        raise RecordingError(f"the recorded response is not a {spec.api} stream the SDK can read: {error}") from None
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
    if leftovers or (key and key in cassette_path.read_text(encoding="utf-8")):
        cassette_path.unlink()
        expected_path.unlink()
        raise RecordingError(
            "the recorded cassette still contained secret-looking data and was deleted: "
            + "; ".join(str(f) for f in leftovers)
        )
    return cassette_path, expected_path
