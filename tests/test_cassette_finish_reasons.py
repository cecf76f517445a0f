"""Every bundled expectation's ``finish_reason`` is the one its body sends.

``converter_outcome_matches`` holds converters to it, and the README's replay idiom holds users'
clients to it, so an expectation that contradicts its own body fails a correct client. The body's
finish reason is read here straight from the raw payloads, per wire API, with nothing of the suite
(plain YAML, JSON and base64; botocore's own event-stream decoder for the Bedrock framing).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1] / "cassettes"
EXPECTATIONS = sorted(ROOT.rglob("*.expected.json"))


def _last_body(cassette: dict[str, Any]) -> str | bytes:
    # A multi-turn cassette's expectation is its last turn's (the earlier turns are the history).
    body = cassette["interactions"][-1]["response"]["body"]["string"]
    assert isinstance(body, (str, bytes))
    return body


def _sse_data(body: str | bytes) -> Iterator[Any]:
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            yield json.loads(line[5:])


def _json_lines(body: str | bytes) -> Iterator[Any]:
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    yield from (json.loads(line) for line in text.splitlines() if line.strip())


def _event_stream(body: str | bytes) -> Iterator[tuple[str, Any]]:
    from botocore.eventstream import EventStreamBuffer

    frames = EventStreamBuffer()
    frames.add_data(body if isinstance(body, bytes) else body.encode("latin-1"))
    for message in frames:
        yield str(message.headers.get(":event-type")), json.loads(message.payload)


def _openai_chat(body: str | bytes) -> str | None:
    reason = None
    for payload in _sse_data(body):
        for choice in payload.get("choices") or ():
            if choice.get("index", 0) == 0 and choice.get("finish_reason") is not None:
                reason = choice["finish_reason"]
    return reason


def _openai_responses(body: str | bytes) -> str | None:
    reason = None
    for payload in _sse_data(body):
        if payload.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            response = payload["response"]
            reason = (response.get("incomplete_details") or {}).get("reason") or response.get("status")
    return reason


def _anthropic_events(events: Iterator[Any]) -> str | None:
    reason = None
    for event in events:
        if event.get("type") == "message_start":
            reason = event["message"].get("stop_reason") or reason
        elif event.get("type") == "message_delta":
            reason = event["delta"].get("stop_reason") or reason
    return reason


def _gemini(body: str | bytes) -> str | None:
    reason = None
    for payload in _sse_data(body):
        for candidate in payload.get("candidates") or ():
            if candidate.get("index", 0) == 0 and candidate.get("finishReason") is not None:
                reason = candidate["finishReason"]
    return reason


def _ollama(body: str | bytes) -> str | None:
    reason = None
    for line in _json_lines(body):
        if line.get("done") is True:
            reason = line.get("done_reason")
    return reason


def _bedrock_converse(body: str | bytes) -> str | None:
    reason = None
    for kind, payload in _event_stream(body):
        if kind == "messageStop":
            reason = payload.get("stopReason")
    return reason


def _bedrock_invoke(body: str | bytes) -> str | None:
    chunks = (payload for kind, payload in _event_stream(body) if kind == "chunk")
    return _anthropic_events(json.loads(base64.b64decode(chunk["bytes"])) for chunk in chunks)


def _cohere_v2(body: str | bytes) -> str | None:
    reason = None
    for payload in _sse_data(body):
        if payload.get("type") == "message-end":
            reason = (payload.get("delta") or {}).get("finish_reason")
    return reason


FINISH_REASON_ON_THE_WIRE = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": lambda body: _anthropic_events(_sse_data(body)),
    "gemini": _gemini,
    "ollama": _ollama,
    "bedrock-converse": _bedrock_converse,
    "bedrock-invoke": _bedrock_invoke,
    "cohere-v2": _cohere_v2,
}


def test_every_wire_api_of_the_corpus_is_read() -> None:
    formats = {json.loads(path.read_text(encoding="utf-8"))["expected"]["format"] for path in EXPECTATIONS}
    assert formats == set(FINISH_REASON_ON_THE_WIRE)


@pytest.mark.parametrize("expected_path", EXPECTATIONS, ids=[str(p.relative_to(ROOT)) for p in EXPECTATIONS])
def test_the_expected_finish_reason_is_the_one_the_body_sends(expected_path: Path) -> None:
    expected = json.loads(expected_path.read_text(encoding="utf-8"))["expected"]
    cassette_path = expected_path.with_name(expected_path.name.removesuffix(".expected.json") + ".yaml")
    cassette = yaml.load(cassette_path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    on_the_wire = FINISH_REASON_ON_THE_WIRE[expected["format"]](_last_body(cassette))
    assert expected["finish_reason"] == on_the_wire
