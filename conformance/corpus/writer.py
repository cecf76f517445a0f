"""Write the corpus: render each scenario, confirm it with the SDK's own reading, write the cassette.

``write_corpus`` refuses any cassette whose SDK reading disagrees with its hand-checked definition
(tool calls, text and reasoning), except for the cassettes of ``conformance.corpus.exemptions``,
where the SDK must misread it exactly as documented. ``expectation_for`` is what it stores, so a
test can hold every stored expectation to its definition; it stores each call's ``may_run`` and
``why_not`` too, derived (``conformance.wire.may_run``) from the settled ending. ``python -m conformance.corpus
cassettes`` runs it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.exemptions import SDK_READING_EXEMPTIONS, differences
from conformance.corpus.written import API_URLS, CORPUS, CorpusScenario, expected_from_turn
from conformance.turns.render import render_body
from conformance.wire import Outcome, SdkAccumulatorError, derive_may_run, iter_payloads, sdk_outcome
from conformance.wire.apis import CONTENT_TYPES, FRAMING

__all__ = [
    "Expectation",
    "LiteralDumper",
    "body_for",
    "cassette_document",
    "dump_cassette",
    "expectation_for",
    "expectation_json",
    "main",
    "write_corpus",
]


class LiteralDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, so SSE bodies stay readable in review."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


LiteralDumper.add_representer(str, _str_representer)


def body_for(scenario: CorpusScenario) -> bytes:
    """The response body of ``scenario``, in its wire API's framing."""
    dialects = tuple(d for d in scenario.dialects if d not in ("reasoning_content", "interleaved"))
    return render_body(scenario.turn, scenario.api, dialects, sse_comments=scenario.sse_comments)


_CHECKED_WITH = {
    "ollama": ("ollama", "httpx"),
    "bedrock-converse": ("boto3", "botocore"),
    "bedrock-invoke": ("boto3", "botocore", "anthropic"),
    "cohere-v2": ("cohere", "httpx"),
}


def _versions(api: str) -> dict[str, str]:
    from importlib.metadata import version

    names = _CHECKED_WITH.get(api, ("openai", "anthropic", "google-genai", "httpx2"))
    return {name: version(name) for name in names}


def _compare(expected: Outcome, sdk: Outcome) -> list[str]:
    problems = []
    want = [(c.name, c.call_id, c.arguments) for c in expected.tool_calls]
    got = [(c.name, c.call_id, c.arguments) for c in sdk.tool_calls]
    if want != got:
        problems.append(f"tool calls: definition {want} vs SDK {got}")
    if expected.text != sdk.text:
        problems.append(f"text: definition {expected.text!r} vs SDK {sdk.text!r}")
    if expected.reasoning != sdk.reasoning:
        problems.append(f"reasoning: definition {expected.reasoning!r} vs SDK {sdk.reasoning!r}")
    return problems


def cassette_document(scenario: CorpusScenario, body: bytes, metadata: dict[str, Any]) -> dict[str, Any]:
    """A vcrpy cassette (format version 1) for ``body``, with our metadata beside ``interactions``.

    A text body (SSE, NDJSON) is stored as text, an AWS event stream as ``!!binary``.
    """
    framing = FRAMING[scenario.api]
    request_body = {"model": scenario.turn.model, "stream": True}
    stored: str | bytes = body if framing == "eventstream" else body.decode("utf-8")
    return {
        "toolcall_conformance": metadata,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": API_URLS[scenario.api],
                    "body": json.dumps(request_body),
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": [CONTENT_TYPES[framing]]},
                    "body": {"string": stored},
                },
            }
        ],
        "version": 1,
    }


@dataclass(frozen=True)
class Expectation:
    """What the writer stores for a scenario: the expected outcome and where it comes from."""

    outcome: Outcome
    source: str


def expectation_for(scenario: CorpusScenario, body: bytes | None = None) -> Expectation:
    """The stored expectation of ``scenario``: its definition, confirmed by the SDK's own reading.

    Raises ``RuntimeError`` when the SDK's reading disagrees with the definition and the scenario is
    not in ``SDK_READING_EXEMPTIONS``, or is, but the SDK no longer misreads it as documented.
    """
    body = body_for(scenario) if body is None else body
    expected = expected_from_turn(scenario.turn, scenario.api)
    sdk: Outcome | Exception
    try:
        sdk = sdk_outcome(scenario.api, body)
    except SdkAccumulatorError as error:
        sdk = error
    exemption = SDK_READING_EXEMPTIONS.get(scenario.key)
    if exemption is not None:
        problems = differences(exemption, scenario.turn, sdk, expected)
        if problems:
            raise RuntimeError(f"{scenario.key}: the exemption no longer describes the SDK's reading: {problems}")
        source = (
            "scenario definition (hand-checked); the SDK's own reading is documented as wrong for this "
            f"cassette in conformance/corpus/exemptions.py: {exemption.reason}"
        )
    else:
        if isinstance(sdk, Exception):
            raise RuntimeError(f"{scenario.key}: the SDK could not read the cassette: {sdk}")
        disagreements = _compare(expected, sdk)
        if disagreements:
            raise RuntimeError(f"{scenario.key}: the SDK's reading disagrees with the definition: {disagreements}")
        source = "scenario definition (hand-checked), confirmed by the SDK's own reading"
    if isinstance(sdk, Outcome):
        expected.finish_reason = sdk.finish_reason
        expected.error = sdk.error or expected.error
    else:
        # The SDK cannot read the body at all (a documented exemption): the finish reason is the one
        # the definition put on the wire, or the stored expectation would contradict its own body.
        expected.finish_reason = _rendered_finish_reason(scenario, body)
    if scenario.turn.ending == "cut":
        source += "; the error (no terminal event) is from the definition: an SDK raises nothing when a stream stops"
    # Which calls may run follows from the ending just settled (stored, so readers of the file see it).
    return Expectation(derive_may_run(expected), source)


def _rendered_finish_reason(scenario: CorpusScenario, body: bytes) -> str | None:
    """The finish reason a rendered body carries: Chat Completions' last non-null ``choices[0].finish_reason``.

    Only OpenAI-compatible dialects have an SDK that cannot read them (``exemptions``); any other
    API here is a new exemption this reading does not cover yet.
    """
    if scenario.api != "openai-chat":
        raise RuntimeError(f"{scenario.key}: the SDK cannot read it, and its {scenario.api} finish reason is not read")
    reason = None
    for payload in iter_payloads(scenario.api, body):
        for choice in payload.get("choices") or ():
            if choice.get("index", 0) == 0 and choice.get("finish_reason") is not None:
                reason = str(choice["finish_reason"])
    return reason


def write_corpus(directory: Path, scenarios: Sequence[CorpusScenario] = CORPUS) -> list[Path]:
    """Render, confirm with the SDK's reading, and write every scenario under ``directory``."""
    written: list[Path] = []
    for scenario in scenarios:
        body = body_for(scenario)
        expectation = expectation_for(scenario, body)
        metadata = {
            "origin": "written",
            "origin_note": (
                "composed by conformance/corpus/written.py to follow the documented wire format; not "
                "captured from a provider"
            ),
            "api": scenario.api,
            "scenario": scenario.name,
            "description": scenario.description,
            "dialects": list(scenario.dialects),
            "taxonomy": list(scenario.quirks),
            # A converter cannot tell snapshots from deltas on its own; the server profile says so.
            "converter_options": {"cumulative_arguments": True} if "cumulative_arguments" in scenario.dialects else {},
            "checked_with": _versions(scenario.api),
            "expected_source": expectation.source,
        }
        folder = directory / scenario.folder
        folder.mkdir(parents=True, exist_ok=True)
        cassette_path = folder / f"{scenario.name}.yaml"
        cassette_path.write_text(dump_cassette(cassette_document(scenario, body, metadata)), encoding="utf-8")
        expected_path = folder / f"{scenario.name}.expected.json"
        expected_path.write_text(expectation_json(expectation), encoding="utf-8")
        written += [cassette_path, expected_path]
    return written


def expectation_json(expectation: Expectation) -> str:
    """The text of an ``.expected.json`` file."""
    document = {"source": expectation.source, "expected": expectation.outcome.to_json()}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the bundled cassette corpus.")
    parser.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    paths = write_corpus(args.directory)
    print(f"wrote {len(paths) // 2} cassettes under {args.directory}")
    return 0


def dump_cassette(document: dict[str, Any]) -> str:
    """A cassette document as YAML, multi-line strings (SSE bodies) as literal blocks."""
    return yaml.dump(document, Dumper=LiteralDumper, sort_keys=False, allow_unicode=True)
