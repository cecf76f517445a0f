"""Finding recordings with expectations (*cases*) and reading their expectations.

A *case* is a body (cassette, ``.sse``, ``.jsonl``, ``.json``, ``.ndjson`` or an AWS event stream
``.eventstream.bin``) with an ``<name>.expected.json``
beside it. The expectation file holds ``{"expected": {...}}`` in the ``replay --json`` schema
(the layout of ``shared/real-recordings`` is accepted too: ``expected.tool_calls`` with ``id``,
``arguments``, ``arguments_raw``), so users can point the suite at their own recordings.

Which calls may run (``may_run``, ``why_not``) is derived on load by
``conformance.wire.may_run.derive_may_run``, whether the file states it or not (third-party
expectations do not); a file that states it must state what the derivation gives.

Checking cassettes before they are committed is ``conformance.corpus.hygiene``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.wire.bodies import WireFormatError
from conformance.wire.may_run import derive_may_run
from conformance.wire.outcome import ExpectedToolCall, Outcome

__all__ = [
    "BODY_SUFFIXES",
    "SKIPPED_SUFFIXES",
    "Case",
    "bundled_cassette_dir",
    "discover_cases",
    "expectation_path",
    "load_expectation",
]

BODY_SUFFIXES = (".yaml", ".yml", ".sse", ".jsonl", ".json", ".ndjson", ".bin")
SKIPPED_SUFFIXES = (".expected.json", ".decoded.jsonl")


def bundled_cassette_dir() -> Path:
    """The cassettes shipped with the package (inside the wheel), or the source tree's ``cassettes/``."""
    package = Path(__file__).resolve().parents[1]  # conformance/
    for candidate in (package / "_bundled_cassettes", package.parent / "cassettes"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the bundled cassettes are missing from this installation (looked beside the package)")


@dataclass(frozen=True)
class Case:
    """A recording and its expected outcome."""

    body_path: Path
    expected_path: Path
    name: str

    def expected(self) -> Outcome:
        return load_expectation(self.expected_path)


def expectation_path(body: Path) -> Path:
    """Where the expectation of ``body`` lives: ``<name>.expected.json`` beside it."""
    stem = body.name
    for suffix in BODY_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    # x.cassette.yaml (a cassette beside its raw body), x.eventstream.bin (an AWS event stream)
    for marker in (".cassette", ".eventstream"):
        stem = stem.removesuffix(marker)
    return body.with_name(stem + ".expected.json")


def discover_cases(roots: Iterable[Path]) -> Iterator[Case]:
    """Every body under ``roots`` that has an expectation beside it, in a stable order.

    When several bodies share one expectation (``x.sse`` and ``x.cassette.yaml``), the raw body
    is preferred, then the cassette.
    """
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        seen: set[Path] = set()
        ordered = sorted(
            (
                p
                for p in paths
                if p.is_file() and p.name.endswith(BODY_SUFFIXES) and not p.name.endswith(SKIPPED_SUFFIXES)
            ),
            key=lambda p: (p.parent, expectation_path(p).name, p.suffix in (".yaml", ".yml")),
        )
        for body in ordered:
            expected = expectation_path(body)
            if expected in seen or not expected.is_file():
                continue
            seen.add(expected)
            name = str(body.relative_to(root)) if root.is_dir() else body.name
            yield Case(body, expected, name)


def load_expectation(path: Path) -> Outcome:
    """Read an expectation file (our schema, or the real-recordings layout) into an ``Outcome``."""
    try:
        document = json.loads(path.read_bytes())
    except json.JSONDecodeError as error:
        raise WireFormatError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from None
    except UnicodeDecodeError:
        raise WireFormatError(f"{path}: not UTF-8 text; an expectation is a JSON file") from None
    except OSError as error:
        raise WireFormatError(f"{path}: cannot be read: {error.strerror or error}") from None
    expected = document.get("expected") if isinstance(document, dict) else None
    if not isinstance(expected, dict) or not isinstance(expected.get("tool_calls"), list):
        raise WireFormatError(f"{path}: needs an 'expected' object with a 'tool_calls' list")
    outcome = Outcome(
        api=str(expected.get("format") or document.get("api") or ""),
        text=expected.get("text") or "",
        reasoning=expected.get("reasoning") or "",
        reasoning_recorded="reasoning" in expected,
        finish_reason=expected.get("finish_reason"),
        error=expected.get("error"),
    )
    for position, call in enumerate(expected["tool_calls"]):
        if not isinstance(call, dict) or "name" not in call:
            raise WireFormatError(f"{path}: expected.tool_calls[{position}] needs at least a 'name'")
        raw = call.get("raw_arguments", call.get("arguments_raw"))
        arguments = call.get("arguments")
        if raw is None:
            raw = json.dumps(arguments) if arguments is not None else ""
        why = call.get("error")
        outcome.tool_calls.append(
            ExpectedToolCall(
                call["name"],
                call.get("call_id", call.get("id")),
                arguments,
                str(raw),
                why if isinstance(why, str) else None,
            )
        )
    derive_may_run(outcome)
    for position, (call, derived) in enumerate(zip(expected["tool_calls"], outcome.tool_calls, strict=True)):
        _check_stated(path, position, call, derived)
    return outcome


def _check_stated(path: Path, position: int, stated: dict[str, object], derived: ExpectedToolCall) -> None:
    """A file may state ``may_run`` / ``why_not`` (ours do); they are derived, so they must agree."""
    for key, value in (("may_run", derived.may_run), ("why_not", derived.why_not)):
        if key in stated and stated[key] != value:
            raise WireFormatError(
                f"{path}: expected.tool_calls[{position}].{key} is {stated[key]!r}, but the expectation's own "
                f"finish_reason, error and call give {value!r} (conformance/wire/may_run.py derives it); remove "
                "the field or regenerate the file"
            )
