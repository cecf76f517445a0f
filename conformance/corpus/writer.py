"""Write the corpus: render each scenario, cross-check it with the SDK's own accumulator, write the cassette.

``write_corpus`` refuses any cassette whose SDK view disagrees with its hand-checked definition,
except for the dialects the OpenAI accumulator is known to mishandle, where the disagreement is
recorded in the metadata instead. ``python -m conformance.corpus cassettes`` runs it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.written import (
    API_URLS,
    CORPUS,
    SDK_ACCUMULATOR_MISHANDLES,
    CorpusScenario,
    expected_from_turn,
)
from conformance.turns import render_sse
from conformance.wire import Outcome, SdkAccumulatorError, sdk_outcome

__all__ = ["LiteralDumper", "cassette_document", "dump_cassette", "main", "write_corpus"]


class LiteralDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, so SSE bodies stay readable in review."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


LiteralDumper.add_representer(str, _str_representer)


def _sse_for(scenario: CorpusScenario) -> bytes:
    dialects = tuple(d for d in scenario.dialects if d not in ("reasoning_content", "interleaved"))
    return render_sse(scenario.turn, scenario.api, dialects, sse_comments=scenario.sse_comments)


def _sdk_versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("openai", "anthropic", "google-genai", "httpx2")}


def _compare(expected: Outcome, sdk: Outcome) -> list[str]:
    problems = []
    want = [(c.name, c.call_id, c.arguments) for c in expected.tool_calls]
    got = [(c.name, c.call_id, c.arguments) for c in sdk.tool_calls]
    if want != got:
        problems.append(f"tool calls: definition {want} vs SDK {got}")
    if expected.text != sdk.text:
        problems.append(f"text: definition {expected.text!r} vs SDK {sdk.text!r}")
    return problems


def cassette_document(scenario: CorpusScenario, sse: bytes, metadata: dict[str, Any]) -> dict[str, Any]:
    """A vcrpy cassette (format version 1) for ``sse``, with our metadata beside ``interactions``."""
    request_body = {"model": scenario.turn.model, "stream": True}
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
                    "headers": {"content-type": ["text/event-stream"]},
                    "body": {"string": sse.decode("utf-8")},
                },
            }
        ],
        "version": 1,
    }


def write_corpus(directory: Path, scenarios: Sequence[CorpusScenario] = CORPUS) -> list[Path]:
    """Render, cross-check with the SDK accumulators, and write every scenario under ``directory``."""
    written: list[Path] = []
    versions = _sdk_versions()
    for scenario in scenarios:
        sse = _sse_for(scenario)
        expected = expected_from_turn(scenario.turn, scenario.api)
        expected.finish_reason = None
        try:
            sdk = sdk_outcome(scenario.api, sse)
            disagreements = _compare(expected, sdk)
        except SdkAccumulatorError as error:
            sdk, disagreements = None, [str(error)]
        dialect_known_bad = bool(set(scenario.dialects) & SDK_ACCUMULATOR_MISHANDLES) or bool(
            scenario.sdk_accumulator_mishandles
        )
        if disagreements and not dialect_known_bad:
            raise RuntimeError(f"{scenario.api}/{scenario.name}: the SDK accumulator disagrees: {disagreements}")
        if sdk is not None:
            expected.finish_reason = sdk.finish_reason
            expected.error = sdk.error or expected.error
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
            "checked_with": versions,
            "expected_source": (
                "scenario definition (hand-checked); the SDK accumulator mishandles this dialect: "
                + "; ".join(filter(None, [scenario.sdk_accumulator_mishandles, *disagreements]))
                if disagreements
                else "scenario definition (hand-checked), confirmed by the SDK's own stream accumulator"
            )
            + (
                "; the error (no terminal event) is from the definition: an SDK raises nothing when a stream stops"
                if scenario.turn.ending == "cut"
                else ""
            ),
        }
        folder = directory / scenario.folder
        folder.mkdir(parents=True, exist_ok=True)
        cassette_path = folder / f"{scenario.name}.yaml"
        cassette_path.write_text(
            dump_cassette(cassette_document(scenario, sse, metadata)),
            encoding="utf-8",
        )
        expected_path = folder / f"{scenario.name}.expected.json"
        expected_path.write_text(
            json.dumps(
                {"source": metadata["expected_source"], "expected": expected.to_json()}, indent=2, ensure_ascii=False
            )
            + "\n",
            encoding="utf-8",
        )
        written += [cassette_path, expected_path]
    return written


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
