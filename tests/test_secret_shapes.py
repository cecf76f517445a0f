"""'cassettes check' finds a credential in every shape it reaches a cassette in, and flags nothing else.

Each shape plants one credential into a copy of a bundled cassette (or a raw body) the way it
has been seen to leak: in a header no list names, folded over YAML lines, encoded (base64, gzip,
URL, JSON escapes), in a comment, in the metadata. Every key is assembled at run time from a
random-looking run, so that no key-shaped literal sits in the repository.
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.corpus.hygiene import check_cassettes
from conformance.wire.cases import bundled_cassette_dir

SAMPLE = bundled_cassette_dir() / "openai-chat" / "single_call.yaml"
RUN = "Zq9Xk2Lm7Rt4Vw8Yb3Nc6Hd1Jf5Gp0Qs"  # 32 random-looking characters, letters and digits
RUN40 = RUN + "A/b+C9xy"  # the length and alphabet of an AWS secret access key
HEX32 = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"

OPENAI = "sk-proj-" + RUN
ANTHROPIC = "sk-ant-api03-" + RUN
GOOGLE = "AIza" + RUN
AWS_ID = "AKIA" + "Q7WX3MZ9R2TB5KLN"
JWT = ".".join(
    base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
    for part in ({"alg": "HS256", "typ": "JWT"}, {"sub": "1234567890", "name": "A User"}, {"sig": RUN})
)

Plant = Callable[[dict[str, Any]], None]


def _request(document: dict[str, Any]) -> dict[str, Any]:
    return document["interactions"][0]["request"]  # type: ignore[no-any-return]


def _response(document: dict[str, Any]) -> dict[str, Any]:
    return document["interactions"][0]["response"]  # type: ignore[no-any-return]


def _request_header(name: str, value: str) -> Plant:
    return lambda document: _request(document)["headers"].__setitem__(name, [value])


def _response_header(name: str, value: str) -> Plant:
    return lambda document: _response(document)["headers"].__setitem__(name, [value])


def _request_body(payload: dict[str, Any]) -> Plant:
    def plant(document: dict[str, Any]) -> None:
        _request(document)["body"] = json.dumps({"model": "model-under-test", "stream": True, **payload})

    return plant


def _response_text(text: str) -> Plant:
    """``text`` as the content of one more SSE event of the response body."""

    def plant(document: dict[str, Any]) -> None:
        event = {"id": "chatcmpl-test", "choices": [{"index": 0, "delta": {"content": text}}]}
        body = _response(document)["body"]
        body["string"] = f"data: {json.dumps(event)}\n\n" + body["string"]

    return plant


def _response_raw(payload: str) -> Plant:
    """``payload`` as one more SSE event, exactly as written (JSON escapes kept)."""

    def plant(document: dict[str, Any]) -> None:
        body = _response(document)["body"]
        body["string"] = f"data: {payload}\n\n" + body["string"]

    return plant


def _uri(uri: str) -> Plant:
    return lambda document: _request(document).__setitem__("uri", uri)


def _note(text: str) -> Plant:
    return lambda document: document["toolcall_conformance"].__setitem__("origin_note", text)


def _gzip_body(secret: str) -> Plant:
    def plant(document: dict[str, Any]) -> None:
        response = _response(document)
        raw = (f'data: {{"echo": "{secret}"}}\n\n' + response["body"]["string"]).encode()
        response["body"]["string"] = gzip.compress(raw)
        response["headers"]["content-encoding"] = ["gzip"]

    return plant


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# (name, how it is planted): each must be found.
SHAPES: list[tuple[str, Plant]] = [
    ("openai key in the authorization header", _request_header("authorization", f"Bearer {OPENAI}")),
    ("openai key in a response body", _response_text(f"your key is {OPENAI}")),
    ("anthropic key in x-api-key", _request_header("x-api-key", ANTHROPIC)),
    ("anthropic key in a response body", _response_text(ANTHROPIC)),
    ("google key in the URL", _uri(f"https://generativelanguage.googleapis.com/v1beta/models/m?key={GOOGLE}")),
    ("google key in x-goog-api-key", _request_header("x-goog-api-key", GOOGLE)),
    ("aws access key id in a body", _response_text(f"AccessKeyId {AWS_ID}")),
    ("aws secret access key without its id", _request_body({"aws_secret_access_key": RUN40})),
    ("aws session token header", _request_header("x-amz-security-token", RUN * 3)),
    ("jwt in a body without bearer", _response_text(f"session {JWT}")),
    ("opaque api_key field in a JSON body", _request_body({"api_key": "q8Jf7s9dKx2LmNpQ4rTvWz"})),
    ("password field in a JSON body", _request_body({"password": "hunter2-Secret9-" + RUN[:8]})),
    ("anthropic key base64-encoded in a body", _response_text(_b64(f"key={ANTHROPIC}"))),
    ("openai key base64-encoded twice", _response_text(_b64(_b64(OPENAI)))),
    ("token in a URL query", _uri(f"https://gateway.example.com/v1/chat/completions?token={RUN}")),
    ("access_token in a URL query", _uri(f"https://gateway.example.com/v1/chat?access_token={RUN}")),
    ("user and password in a URL", _uri(f"https://alice:{RUN[:12]}@proxy.example.com/v1/chat/completions")),
    ("azure subscription key header", _request_header("Ocp-Apim-Subscription-Key", HEX32)),
    ("github token in a body", _response_text("ghp_" + RUN + "ab")),
    ("github fine-grained token", _response_text("github_pat_" + RUN + "_" + RUN)),
    ("hugging face token in a body", _response_text("hf_" + RUN)),
    ("groq key in a body", _response_text("gsk_" + RUN)),
    ("xai key in a body", _response_text("xai-" + RUN)),
    ("json-escaped openai key", _response_raw('{"content": "sk-\\u0070roj-' + RUN + '"}')),
    ("url-encoded openai key", _uri("https://api.example.com/v1/chat?api_key=sk%2Dproj%2D" + RUN)),
    ("key in the metadata notes", _note(f"recorded with {ANTHROPIC} on a laptop")),
    ("key inside a gzip-encoded body", _gzip_body(OPENAI)),
    ("opaque token in a custom request header", _request_header("x-gateway-token", RUN)),
    ("opaque token in a custom response header", _response_header("x-session-token", RUN)),
    ("opaque secret in an auth-named header", _request_header("x-my-auth", RUN)),
    ("cookie header", _request_header("cookie", f"session={RUN}")),
    ("set-cookie header", _response_header("set-cookie", f"__cf_bm={RUN}; path=/")),
    ("openai-organization header", _response_header("openai-organization", "org-" + RUN)),
    ("bearer token echoed in a body", _response_text(f"Authorization: Bearer {RUN}")),
    ("slack token", _response_text("xoxb-" + "123456789012-1234567890123-" + RUN[:24])),
    ("stripe live key", _response_text("sk_live_" + RUN)),
    ("private key block", _response_text("-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + RUN)),
    ("sendgrid key", _response_text("SG." + RUN[:22] + "." + RUN + RUN[:11])),
    ("npm token in an npmrc line", _response_text("//registry.npmjs.org/:_authToken=npm_" + RUN)),
    ("twilio api key", _response_text("SK" + HEX32)),
]


def _write(tmp_path: Path, plant: Plant) -> Path:
    document = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    plant(document)
    target = tmp_path / "planted.yaml"
    target.write_text(yaml.safe_dump(document, sort_keys=False, width=100), encoding="utf-8")
    shutil.copy(SAMPLE.with_name("single_call.expected.json"), tmp_path / "planted.expected.json")
    return target


def _found(path: Path) -> list[str]:
    return [str(finding) for finding in check_cassettes([path]) if "scrub" in finding.message]


def test_at_least_forty_shapes() -> None:
    assert len(SHAPES) + len(TEXT_SHAPES) >= 40


@pytest.mark.parametrize(("name", "plant"), SHAPES, ids=[name for name, _ in SHAPES])
def test_a_planted_credential_is_found(name: str, plant: Plant, tmp_path: Path) -> None:
    assert _found(_write(tmp_path, plant)), f"{name}: not found"


def _comment(text: str) -> str:
    return text.replace("interactions:\n", f"# recorded with key {OPENAI}\ninteractions:\n", 1)


def _folded_header(text: str) -> str:
    # A double-quoted value continued over two lines with a trailing backslash (as PyYAML writes a
    # long one): the value has the whole key, neither line does.
    header = f'    headers:\n      x-debug:\n      - "prefix {OPENAI[:14]}\\\n        {OPENAI[14:]} suffix"\n'
    return text.replace("    headers:\n", header, 1)


# Shapes that only exist in the text (the parsed document loses them or joins them).
TEXT_SHAPES: list[tuple[str, Callable[[str], str]]] = [
    ("key in a YAML comment", _comment),
    ("key split by YAML line folding", _folded_header),
]


@pytest.mark.parametrize(("name", "edit"), TEXT_SHAPES, ids=[name for name, _ in TEXT_SHAPES])
def test_a_credential_in_the_text_only_is_found(name: str, edit: Callable[[str], str], tmp_path: Path) -> None:
    target = tmp_path / "planted.yaml"
    target.write_text(edit(SAMPLE.read_text(encoding="utf-8")), encoding="utf-8")
    shutil.copy(SAMPLE.with_name("single_call.expected.json"), tmp_path / "planted.expected.json")
    assert yaml.safe_load(target.read_text())  # still a cassette
    assert _found(target), f"{name}: not found"


def test_a_credential_in_a_raw_body_is_found(tmp_path: Path) -> None:
    body = tmp_path / "leak.sse"
    body.write_text(f'data: {{"choices": [{{"delta": {{"content": "{ANTHROPIC}"}}}}]}}\n\n', encoding="utf-8")
    assert _found(body)


# Look-alikes every recording carries: ids, signatures, placeholders, counters. None is a credential.
CONTROLS: list[tuple[str, Plant]] = [
    ("the sample as bundled", lambda document: None),
    ("scrubbed credential headers", _request_header("authorization", "<scrubbed>")),
    ("a placeholder key in a note", _note("use test-key-not-a-real-secret; never a real key")),
    ("tool call and message ids", _response_text("call_Q1w2E3r4T5y6U7i8O9p0 toolu_01AbCdEfGhIjKlMnOpQrStUv")),
    ("a thinking signature", _response_text(base64.b64encode(bytes(range(200))).decode())),
    ("rate limit headers", _response_header("anthropic-ratelimit-tokens-remaining", "39000")),
    ("a request id header", _response_header("x-request-id", "req_01HX2V9K3M7Q8R4T6W1Y5Z0ABC")),
    ("a token count in a body", _response_text('{"usage": {"prompt_tokens": 12, "completion_tokens": 34}}')),
]


@pytest.mark.parametrize(("name", "plant"), CONTROLS, ids=[name for name, _ in CONTROLS])
def test_a_look_alike_is_not_flagged(name: str, plant: Plant, tmp_path: Path) -> None:
    assert _found(_write(tmp_path, plant)) == [], name
