"""Scenarios as JSON files: saved counterexamples and regression scenarios.

``toolcall-conformance run --save-failures DIR`` writes each failing check's minimal chunk split
here; ``toolcall-conformance rerun FILE`` replays it against a handler; ``run --scenario-dir DIR``
keeps such files as regression scenarios in every later run. The format is plain JSON::

    {"format": "toolcall-conformance/scenario", "version": 1, "name": ..., "check": ...,
     "chunks": [{"content": ..., "reasoning": ..., "tool_calls": [{"index", "call_id", "name",
                 "arguments_delta"}], "is_complete": ..., "finish_reason": ..., "error": {"kind", "message"}}],
     "expected": {"text": ..., "reasoning": ..., "tool_calls": [{"name", "call_id", "arguments", "raw_arguments"}]}}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta

__all__ = ["ScenarioFileError", "load_scenarios", "save_scenario", "scenario_from_json", "scenario_to_json"]

FORMAT = "toolcall-conformance/scenario"


class ScenarioFileError(ValueError):
    """A scenario file is not in the documented format; says which file and what is wrong."""


def _chunk_to_json(chunk: ChunkResponse) -> dict[str, Any]:
    data: dict[str, Any] = {"content": chunk.content}
    if chunk.reasoning is not None:
        data["reasoning"] = chunk.reasoning
    if chunk.tool_calls is not None:
        data["tool_calls"] = [
            {"index": d.index, "call_id": d.call_id, "name": d.name, "arguments_delta": d.arguments_delta}
            for d in chunk.tool_calls
        ]
    if chunk.is_complete:
        data["is_complete"] = True
    if chunk.finish_reason is not None:
        data["finish_reason"] = chunk.finish_reason
    if chunk.error is not None:
        data["error"] = {"kind": chunk.error.kind, "message": chunk.error.message}
    return data


def _chunk_from_json(data: dict[str, Any]) -> ChunkResponse:
    tool_calls = None
    if data.get("tool_calls") is not None:
        tool_calls = [
            ToolCallDelta(d["index"], d.get("call_id"), d.get("name"), d.get("arguments_delta"))
            for d in data["tool_calls"]
        ]
    error = data.get("error")
    return ChunkResponse(
        content=data.get("content", ""),
        reasoning=data.get("reasoning"),
        tool_calls=tool_calls,
        is_complete=bool(data.get("is_complete", False)),
        finish_reason=data.get("finish_reason"),
        error=StreamError(error["kind"], error["message"]) if error else None,
    )


def scenario_to_json(
    scenario: Scenario, chunks: Sequence[ChunkResponse] | None = None, *, check: str = ""
) -> dict[str, Any]:
    """A JSON document for ``scenario`` (with ``chunks`` replacing its own, e.g. a minimal split)."""
    return {
        "format": FORMAT,
        "version": 1,
        "name": scenario.name,
        "check": check,
        "description": scenario.description,
        "source": scenario.source,
        "chunks": [_chunk_to_json(chunk) for chunk in (chunks if chunks is not None else scenario.chunks)],
        "expected": {
            "text": scenario.expected.text,
            "reasoning": scenario.expected.reasoning,
            "tool_calls": [
                {"name": c.name, "call_id": c.call_id, "arguments": c.arguments, "raw_arguments": c.raw_arguments}
                for c in scenario.expected.tool_calls
            ],
        },
    }


def scenario_from_json(data: Any, *, source: str = "file") -> Scenario:
    """Rebuild a ``Scenario``; a malformed document is a ``ScenarioFileError`` naming the problem."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ScenarioFileError(f"{source}: not a {FORMAT} document (missing or wrong 'format')")
    try:
        chunks = tuple(_chunk_from_json(chunk) for chunk in data["chunks"])
        expected = data["expected"]
        calls = tuple(
            ExpectedCall(c.get("name"), c.get("call_id"), c.get("arguments"), c.get("raw_arguments", ""))
            for c in expected.get("tool_calls", [])
        )
        outcome = ExpectedOutcome(calls, expected.get("text", ""), expected.get("reasoning", ""))
    except (KeyError, TypeError, ValueError) as error:
        raise ScenarioFileError(f"{source}: malformed scenario: {type(error).__name__}: {error}") from error
    return Scenario(str(data.get("name", "saved")), chunks, outcome, str(data.get("description", "")), source=source)


def save_scenario(directory: Path, scenario: Scenario, chunks: Sequence[ChunkResponse], *, check: str) -> Path:
    """Write a counterexample file named after the check and scenario; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{check}__{scenario.name}")
    path = directory / f"{slug}.json"
    path.write_text(
        json.dumps(scenario_to_json(scenario, chunks, check=check), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return path


def load_scenarios(paths: Iterable[Path]) -> list[Scenario]:
    """Every scenario file under ``paths`` (files or directories of ``*.json``)."""
    scenarios = []
    for root in paths:
        files = [root] if root.is_file() else sorted(root.glob("*.json"))
        for path in files:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as error:
                raise ScenarioFileError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
            scenarios.append(scenario_from_json(data, source=str(path)))
    return scenarios
