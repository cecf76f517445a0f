"""``toolcall-conformance cassettes check``: is a cassette safe and sound to commit?

The cassette parses as vcrpy YAML, its body decodes through the SDK (or client library), its
expectation is present and well-formed, and nothing in it looks like a secret. Usable as a
pre-commit hook.

Secrets are looked for in the *parsed* values, not the text, so a key folded over two lines by a
YAML line continuation, or inside a binary (``!!binary``) body, is still found; the text is only
searched to name the line. Credential headers (``authorization``, ``x-api-key``, ``api-key``,
``x-goog-api-key``, cookies, OpenAI organisation and project) must be absent or ``<scrubbed>`` in
requests and responses alike, whatever their value looks like.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.corpus.secrets import PROVIDER_PATTERNS as SECRET_PATTERNS
from conformance.corpus.secrets import credential_header, gunzip, secrets_in
from conformance.wire import WireFormatError, iter_sdk_events, load_body
from conformance.wire.cases import BODY_SUFFIXES, SKIPPED_SUFFIXES, expectation_path, load_expectation
from conformance.wire.eventstream import is_event_stream, iter_messages
from conformance.wire.yaml_bounds import YamlBoundExceeded, load_yaml

__all__ = [
    "SECRET_PATTERNS",
    "SENSITIVE_HEADERS",
    "Finding",
    "NothingToCheckError",
    "cassette_files",
    "check_cassettes",
    "scan_secrets",
]


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class NothingToCheckError(ValueError):
    """A path given to ``cassettes check`` does not exist, or holds no file at all."""


# Secret whatever their value: they must be absent or scrubbed, in requests and responses.
SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-amz-security-token",
        "ocp-apim-subscription-key",
    }
)
_SCRUBBED = "<scrubbed>"


def _line_of(text: str, needle: str) -> int:
    """The line where ``needle`` (or, for a value folded over lines, its first characters) appears."""
    for probe in (needle, needle[:8]):
        if probe:
            for number, line in enumerate(text.splitlines(), start=1):
                if probe in line:
                    return number
    return 1


def scan_secrets(path: Path, text: str) -> list[Finding]:
    """Every line of ``text`` that carries a credential, as written or encoded (``conformance.corpus.secrets``).

    Run over every file, cassettes included: a key in a YAML comment is in no parsed value.
    """
    return _scan_lines(path, text, set())


def _scan_lines(path: Path, text: str, seen: set[str]) -> list[Finding]:
    """``scan_secrets``, adding each secret reported to ``seen`` (and skipping those already in it)."""
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        for label, secret in secrets_in(line):
            if secret not in seen:
                seen.add(secret)
                findings.append(_finding(path, number, label, secret, encoded=secret not in line))
    return findings


def _finding(path: Path, line: int, label: str, secret: str, encoded: bool = False) -> Finding:
    article = "an" if label[:1].lower() in "aeiou" else "a"
    where = " once decoded (base64, gzip, URL or JSON escapes)" if encoded else ""
    return Finding(path, line, f"looks like {article} {label}{where} ({secret[:12]}...); scrub it before committing")


def _binary_strings(data: bytes) -> Iterator[Any]:
    """What a binary body carries: an AWS event stream's payloads (and the base64 Anthropic events inside
    Bedrock InvokeModel chunks), else the bytes read as UTF-8."""
    data = gunzip(data) or data  # a gzip-encoded body hides nothing from the scan
    if not is_event_stream(data):
        yield data.decode("utf-8", errors="replace")
        return
    try:
        for message in iter_messages(data):
            yield message.payload.decode("utf-8", errors="replace")
            for chunk in re.findall(rb'"bytes"\s*:\s*"([A-Za-z0-9+/=]+)"', message.payload):
                yield base64.b64decode(chunk).decode("utf-8", errors="replace")
    except (WireFormatError, binascii.Error):
        yield data.decode("utf-8", errors="replace")


def _strings(value: Any) -> Iterator[str]:
    """Every string of a parsed YAML document (keys too; binary bodies decoded, see ``_binary_strings``)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, bytes):
            stack += list(_binary_strings(node))
        elif isinstance(node, dict):
            for key, item in node.items():
                stack += [key, item]
        elif isinstance(node, list):
            stack += node


def _secret_values(path: Path, text: str, document: Any, already: set[str]) -> list[Finding]:
    """Credentials in the parsed values (a header folded over lines is one value again; binary and
    gzip bodies decoded) that the line scan of the text did not already report."""
    findings = []
    for value in _strings(document):
        for label, secret in secrets_in(value):
            if secret not in already:
                already.add(secret)
                findings.append(_finding(path, _line_of(text, secret), label, secret, encoded=secret not in text))
    return findings


def _headers_of(interaction: Any) -> Iterator[tuple[str, str, list[Any]]]:
    for side in ("request", "response"):
        part = interaction.get(side) if isinstance(interaction, dict) else None
        headers = part.get("headers") if isinstance(part, dict) else None
        for name, value in (headers or {}).items() if isinstance(headers, dict) else ():
            yield side, str(name), value if isinstance(value, list) else [value]


def _sensitive_headers(path: Path, text: str, document: Any) -> list[Finding]:
    findings = []
    interactions = document.get("interactions") if isinstance(document, dict) else None
    for interaction in interactions if isinstance(interactions, list) else ():
        for side, name, values in _headers_of(interaction):
            if name.lower() in SENSITIVE_HEADERS and any(value != _SCRUBBED for value in values):
                why = "is a credential whatever its value"
            elif any(credential_header(name, str(value)) for value in values):
                why = "carries what looks like a credential (its name says so and its value is random)"
            else:
                continue
            findings.append(
                Finding(
                    path,
                    _line_of(text, f"{name}:"),
                    f"{side} header {name!r} {why}: remove it or set it to {_SCRUBBED!r}",
                )
            )
    return findings


def _check_cassette(path: Path, text: str) -> tuple[list[Finding], bool]:
    """Secrets, credential headers and the vcrpy schema of one cassette; whether its body can be checked."""
    try:
        document = load_yaml(text)
    except YamlBoundExceeded as error:
        return [Finding(path, error.line, f"not checked: {error}")], False
    except yaml.YAMLError as error:
        return [Finding(path, 1, f"not a loadable vcrpy cassette: not valid YAML: {error}".splitlines()[0])], False
    seen: set[str] = set()
    findings = _scan_lines(path, text, seen)
    findings += _secret_values(path, text, document, seen) + _sensitive_headers(path, text, document)
    from vcr import serialize
    from vcr.serializers import yamlserializer

    try:
        serialize.deserialize(text, yamlserializer)
    except Exception as error:  # noqa: BLE001 - vcrpy's own reading decides; whatever it raises is the finding
        findings.append(Finding(path, 1, f"not a loadable vcrpy cassette: {type(error).__name__}: {error}"))
        return findings, False
    return findings, True


def cassette_files(paths: Iterable[Path]) -> list[Path]:
    """Every file under ``paths``; ``NothingToCheckError`` when a path does not exist or nothing is found."""
    files: list[Path] = []
    given = list(paths)
    for root in given:
        if not root.exists():
            raise NothingToCheckError(f"{root}: no such file or directory; nothing was checked")
        files += [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    if not files:
        raise NothingToCheckError(f"{', '.join(str(p) for p in given)}: no file found; nothing was checked")
    if not any(is_recording(path) for path in files):
        # Only notes or READMEs: "clean" would say the cassettes were checked when none was found.
        raise NothingToCheckError(
            f"{', '.join(str(p) for p in given)}: {len(files)} file(s), none a cassette or a body "
            f"({', '.join(BODY_SUFFIXES)}); nothing was checked"
        )
    return files


def is_recording(path: Path) -> bool:
    """A cassette or a raw body (what ``cassettes check`` is for), not an expectation or a note."""
    return path.name.endswith(BODY_SUFFIXES) and not path.name.endswith(SKIPPED_SUFFIXES)


def check_cassettes(paths: Iterable[Path]) -> list[Finding]:
    """Check every recording under ``paths``; return the problems found (empty means clean).

    A path that does not exist is a finding here (``cassette_files`` raises instead, for the CLI).
    """
    findings: list[Finding] = []
    for root in paths:
        if not root.exists():
            findings.append(Finding(root, 0, "no such file or directory"))
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            findings += _check_file(path)
    return findings


def _check_file(path: Path) -> list[Finding]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        if path.name.endswith(".bin"):
            return _check_body(path)  # a raw AWS event stream: binary by nature
        return [Finding(path, 0, "not UTF-8 text; cassettes must be readable in review")]
    if path.suffix in (".yaml", ".yml"):
        findings, loadable = _check_cassette(path, text)
    else:
        findings, loadable = scan_secrets(path, text), True
    if loadable and path.name.endswith(BODY_SUFFIXES) and not path.name.endswith(SKIPPED_SUFFIXES):
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
        for event in iter_sdk_events(body.api, [body.data]):
            events.append(event)
        if not events:
            findings.append(Finding(path, 0, f"the {body.api} SDK decoded no events from this body"))
    except WireFormatError as error:
        findings.append(Finding(path, 0, str(error)))
    except Exception as error:  # noqa: BLE001 - an SDK error on a body meant to end in an error is fine; else a finding
        if "error" not in path.name:
            findings.append(Finding(path, 0, f"the SDK could not decode the body: {type(error).__name__}: {error}"))
    return findings
