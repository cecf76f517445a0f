"""Scenarios as JSON files: saved counterexamples and regression scenarios.

``toolcall-conformance run --save-failures DIR`` writes each failing check's minimal chunk split
here, with the target it failed on; ``toolcall-conformance rerun FILE`` replays it against that
same target (or another one); ``run --scenario-dir DIR`` keeps such files as regression scenarios
in every later run. The format is plain JSON::

    {"format": "toolcall-conformance/scenario", "version": 1, "name": ..., "check": ...,
     "target": {"kind": "handler" | "accumulator", "spec": "MODULE:FACTORY", "capabilities": {...},
                "adapter": "MODULE:OBJECT"},
     "chunks": [{"content": ..., "reasoning": ..., "tool_calls": [{"index", "call_id", "name",
                 "arguments_delta"}], "is_complete": ..., "finish_reason": ..., "error": {"kind", "message"}}],
     "expected": {"text": ..., "reasoning": ..., "tool_calls": [{"name", "call_id", "arguments", "raw_arguments",
                                                                "conflict_group"}]}}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta

__all__ = [
    "ScenarioFileError",
    "load_scenarios",
    "load_target",
    "save_scenario",
    "scenario_from_json",
    "scenario_to_json",
]

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


def _field(data: Any, key: str, where: str, kinds: tuple[type, ...], default: Any) -> Any:
    """``data[key]`` when it has one of ``kinds`` (a wrong type names the field: ``expected.text``)."""
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object, got {type(data).__name__}")
    value = data.get(key, default)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if kind is type(None) else kind.__name__ for kind in kinds)
        raise TypeError(f"{where}.{key} must be {names}, got {type(value).__name__}: {value!r}")
    return value


def _expected_from_json(expected: Any) -> ExpectedOutcome:
    """The saved expectation, each field's type checked: a wrong one would crash a check mid-run."""
    optional_str = (str, type(None))
    calls = []
    for position, call in enumerate(_field(expected, "tool_calls", "expected", (list,), [])):
        where = f"expected.tool_calls[{position}]"
        calls.append(
            ExpectedCall(
                _field(call, "name", where, optional_str, None),
                _field(call, "call_id", where, optional_str, None),
                _field(call, "arguments", where, (dict, type(None)), None),
                _field(call, "raw_arguments", where, (str,), ""),
                _field(call, "conflict_group", where, (int, type(None)), None),
            )
        )
    return ExpectedOutcome(
        tuple(calls),
        _field(expected, "text", "expected", (str,), ""),
        _field(expected, "reasoning", "expected", (str,), ""),
    )


def scenario_to_json(
    scenario: Scenario,
    chunks: Sequence[ChunkResponse] | None = None,
    *,
    check: str = "",
    target: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON document for ``scenario`` (with ``chunks`` replacing its own, e.g. a minimal split)."""
    document: dict[str, Any] = {
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
                {
                    "name": c.name,
                    "call_id": c.call_id,
                    "arguments": c.arguments,
                    "raw_arguments": c.raw_arguments,
                    **({"conflict_group": c.conflict_group} if c.conflict_group is not None else {}),
                }
                for c in scenario.expected.tool_calls
            ],
        },
    }
    if target:
        document["target"] = target
    return document


def scenario_from_json(data: Any, *, source: str = "file") -> Scenario:
    """Rebuild a ``Scenario``; a malformed document is a ``ScenarioFileError`` naming the problem."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ScenarioFileError(f"{source}: not a {FORMAT} document (missing or wrong 'format')")
    try:
        chunks = tuple(_chunk_from_json(chunk) for chunk in data["chunks"])
        outcome = _expected_from_json(data["expected"])
    except (KeyError, TypeError, ValueError) as error:
        raise ScenarioFileError(f"{source}: malformed scenario: {type(error).__name__}: {error}") from error
    return Scenario(str(data.get("name", "saved")), chunks, outcome, str(data.get("description", "")), source=source)


def save_scenario(
    directory: Path,
    scenario: Scenario,
    chunks: Sequence[ChunkResponse],
    *,
    check: str,
    target: dict[str, Any] | None = None,
) -> Path:
    """Write a counterexample file named after the check and scenario (with its target); return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{check}__{scenario.name}")
    path = directory / f"{slug}.json"
    document = scenario_to_json(scenario, chunks, check=check, target=target)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _scenario_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for root in paths:
        files += [root] if root.is_file() else sorted(root.glob("*.json"))
    return files


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ScenarioFileError(f"{path}: not a text file ({error.reason} at byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise ScenarioFileError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
    except OSError as error:
        raise ScenarioFileError(f"{path}: cannot be read: {error.strerror or error}") from error


def load_target(paths: Iterable[Path]) -> dict[str, Any] | None:
    """The target the saved scenarios under ``paths`` were recorded against (None if they name none).

    Files that name different targets are a ``ScenarioFileError``: a re-run is against one target.
    """
    targets = {
        json.dumps(doc.get("target"), sort_keys=True): doc.get("target")
        for doc in map(_read, _scenario_files(paths))
        if isinstance(doc, dict) and doc.get("target")
    }
    if len(targets) > 1:
        raise ScenarioFileError(
            f"the scenario files name {len(targets)} different targets; re-run one target at a time"
        )
    return next(iter(targets.values()), None)


def load_scenarios(paths: Iterable[Path]) -> list[Scenario]:
    """Every scenario file under ``paths`` (files or directories of ``*.json``)."""
    return [scenario_from_json(_read(path), source=str(path)) for path in _scenario_files(paths)]
