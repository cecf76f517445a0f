"""Finding recordings with expectations, and checking cassettes before they are committed.

A *case* is a body (cassette, ``.sse``, ``.jsonl`` or ``.json``) with an ``<name>.expected.json``
beside it. The expectation file holds ``{"expected": {...}}`` in the ``replay --json`` schema
(the layout of ``shared/real-recordings`` is accepted too: ``expected.tool_calls`` with ``id``,
``arguments``, ``arguments_raw``), so users can point the suite at their own recordings.

``check_cassettes`` is what ``toolcall-conformance cassettes check`` runs (also as a pre-commit
hook): the cassette parses as vcrpy YAML, its body decodes through the SDK, its expectation is
present and well-formed, and nothing in the file looks like a secret.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.expectations import ExpectedToolCall, Outcome
from conformance.wire import WireFormatError, iter_sdk_events, load_body

__all__ = ["Case", "Finding", "bundled_cassette_dir", "check_cassettes", "discover_cases", "load_expectation"]

BODY_SUFFIXES = (".yaml", ".yml", ".sse", ".jsonl", ".json")
_SKIPPED_SUFFIXES = (".expected.json", ".decoded.jsonl")


def bundled_cassette_dir() -> Path:
    """The cassettes shipped with the package (inside the wheel), or the source tree's ``cassettes/``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_bundled_cassettes", here.parent / "cassettes"):
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


def _expectation_path(body: Path) -> Path:
    stem = body.name
    for suffix in BODY_SUFFIXES:
        if stem.endswith(".cassette" + suffix):
            stem = stem[: -len(".cassette" + suffix)]
            break
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
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
                if p.is_file() and p.name.endswith(BODY_SUFFIXES) and not p.name.endswith(_SKIPPED_SUFFIXES)
            ),
            key=lambda p: (p.parent, _expectation_path(p).name, p.suffix in (".yaml", ".yml")),
        )
        for body in ordered:
            expected = _expectation_path(body)
            if expected in seen or not expected.is_file():
                continue
            seen.add(expected)
            name = str(body.relative_to(root)) if root.is_dir() else body.name
            yield Case(body, expected, name)


def load_expectation(path: Path) -> Outcome:
    """Read an expectation file (our schema, or the real-recordings layout) into an ``Outcome``."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise WireFormatError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
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
        outcome.tool_calls.append(
            ExpectedToolCall(call["name"], call.get("call_id", call.get("id")), arguments, str(raw))
        )
    return outcome


# -- checking -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


# Patterns for things that must never be committed. Placeholders that say what they are
# ("test-key-not-a-real-secret", "<scrubbed>") do not match: they have no long random run.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI-style key", re.compile(r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("Groq key", re.compile(r"\bgsk_[A-Za-z0-9]{30,}")),
    ("xAI key", re.compile(r"\bxai-[A-Za-z0-9]{30,}")),
    ("bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}")),
    ("key in a URL", re.compile(r"(?i)[?&](?:key|api_key|apikey|access_token)=[A-Za-z0-9._-]{16,}")),
    (
        "credential header",
        re.compile(
            r"(?i)\b(?:x-api-key|api-key|x-goog-api-key|openai-organization|openai-project)\b[\"']?\s*[:=]\s*[\"'\[]?\s*-?\s*[\"']?[A-Za-z0-9._-]{16,}"
        ),
    ),
)

_SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
    }
)
_SCRUBBED = "<scrubbed>"


def scan_secrets(path: Path, text: str) -> list[Finding]:
    """Every line of ``text`` that looks like it carries a credential."""
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        for label, pattern in SECRET_PATTERNS:
            match = pattern.search(line)
            if match:
                shown = match.group(0)[:12] + "..."
                findings.append(Finding(path, number, f"looks like a {label} ({shown}); scrub it before committing"))
                break
    return findings


def _check_cassette_structure(path: Path, text: str) -> list[Finding]:
    from vcr import serialize
    from vcr.serializers import yamlserializer

    try:
        requests, _responses = serialize.deserialize(text, yamlserializer)
    except Exception as error:
        return [Finding(path, 1, f"not a loadable vcrpy cassette: {type(error).__name__}: {error}")]
    findings = []
    for request in requests:
        for header, value in (request.headers or {}).items():
            values = value if isinstance(value, list) else [value]
            if header.lower() in _SENSITIVE_HEADERS and any(v != _SCRUBBED for v in values):
                findings.append(
                    Finding(
                        path,
                        _line_of(text, header),
                        f"request header {header!r} must be removed or set to {_SCRUBBED!r}",
                    )
                )
    return findings


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return 1


def check_cassettes(paths: Iterable[Path]) -> list[Finding]:
    """Check every recording under ``paths``; return the problems found (empty means clean)."""
    findings: list[Finding] = []
    for root in paths:
        if not root.exists():
            findings.append(Finding(root, 0, "no such file or directory"))
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                findings.append(Finding(path, 0, "not UTF-8 text; cassettes must be readable in review"))
                continue
            findings += scan_secrets(path, text)
            if not path.name.endswith(BODY_SUFFIXES) or path.name.endswith(_SKIPPED_SUFFIXES):
                continue
            if path.suffix in (".yaml", ".yml"):
                structural = _check_cassette_structure(path, text)
                findings += structural
                if structural:
                    continue
            findings += _check_body(path)
    return findings


def _check_body(path: Path) -> list[Finding]:
    expected = _expectation_path(path)
    findings: list[Finding] = []
    if not expected.is_file():
        findings.append(Finding(path, 0, f"no expectation beside it (expected {expected.name})"))
    else:
        try:
            load_expectation(expected)
        except WireFormatError as error:
            findings.append(Finding(expected, 0, str(error)))
    try:
        body = load_body(path)
        events: list[Any] = []
        for event in iter_sdk_events(body.api, [body.sse]):
            events.append(event)
        if not events:
            findings.append(Finding(path, 0, f"the {body.api} SDK decoded no events from this body"))
    except WireFormatError as error:
        findings.append(Finding(path, 0, str(error)))
    except Exception as error:  # an SDK error on a body that is meant to end in an error is fine
        if "error" not in path.name:
            findings.append(Finding(path, 0, f"the SDK could not decode the body: {type(error).__name__}: {error}"))
    return findings
