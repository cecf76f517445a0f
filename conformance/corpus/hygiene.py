"""``toolcall-conformance cassettes check``: is a cassette safe and sound to commit?

The cassette parses as vcrpy YAML, its body decodes through the SDK, its expectation is present
and well-formed, and nothing in the file looks like a secret. Usable as a pre-commit hook.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.wire import WireFormatError, iter_sdk_events, load_body
from conformance.wire.cases import BODY_SUFFIXES, SKIPPED_SUFFIXES, expectation_path, load_expectation

__all__ = ["SECRET_PATTERNS", "Finding", "check_cassettes", "scan_secrets"]


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
            if not path.name.endswith(BODY_SUFFIXES) or path.name.endswith(SKIPPED_SUFFIXES):
                continue
            if path.suffix in (".yaml", ".yml"):
                structural = _check_cassette_structure(path, text)
                findings += structural
                if structural:
                    continue
            findings += _check_body(path)
    return findings


def _check_body(path: Path) -> list[Finding]:
    expected = expectation_path(path)
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
