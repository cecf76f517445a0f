"""Credentials in recordings, in every form a body may hide them: what ``cassettes check`` looks for.

Two sources of detectors: the detect-secrets library's (cloud and service keys, JSON web tokens,
``user:password@`` in URLs, keyword assignments such as ``"api_key": "..."``), and the provider
keys it does not know (``PROVIDER_PATTERNS``: Anthropic, Google, Groq, xAI, Hugging Face, Azure
subscription keys, bearer tokens, keys in URL queries). Its high-entropy detectors are left out:
tool-call ids and thinking signatures are long random strings too, and every recording has them.

Each string is scanned as written and in each form it decodes to (``decoded_forms``): URL-encoded,
JSON-escaped, base64 (and gzip inside it). A key split or encoded on its way into a cassette is
still a key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import re
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

__all__ = ["PROVIDER_PATTERNS", "credential_header", "decoded_forms", "gunzip", "secrets_in"]

# The first pattern that matches names the finding, so the specific ones come first. Placeholders
# that say what they are ("test-key-not-a-real-secret", "<scrubbed>") do not match: they have no
# long random run.
PROVIDER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Anthropic key", re.compile(r"\bsk-ant-(?:[a-z]+\d\d-)?[A-Za-z0-9_-]{20,}")),
    ("OpenAI-style key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "AWS secret access key",
        re.compile(r"(?i)aws.{0,20}secret.{0,20}?[\"'=:\s]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"),
    ),
    ("Groq key", re.compile(r"\bgsk_[A-Za-z0-9]{30,}")),
    ("xAI key", re.compile(r"\bxai-[A-Za-z0-9]{30,}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}")),
    (
        "credential in a URL",
        re.compile(
            r"(?i)[?&;](?:key|api[_-]?key|access[_-]?token|token|auth|sig|signature|secret|password|pwd|code)"
            r"=[A-Za-z0-9._~%+/-]{16,}"
        ),
    ),
    ("password in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s:@]{3,}@")),
    (
        "credential header",
        re.compile(
            r"(?i)\b(?:x-api-key|api-key|x-goog-api-key|openai-organization|openai-project|ocp-apim-subscription-key)"
            r"\b[\"']?\s*[:=]\s*[\"'\[]?\s*-?\s*[\"']?[A-Za-z0-9._-]{16,}"
        ),
    ),
)

# detect-secrets detectors too noisy for recordings: ids and signatures are random, servers' IPs are public,
# and Artifactory's pattern (AP followed by letters) matches base64 event-stream payloads.
_LEFT_OUT = frozenset(
    {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)", "Artifactory Credentials"}
)
# A value made of these words only is a placeholder, not a credential.
_PLACEHOLDER = re.compile(
    r"(?i)^[<{\[(*x._-]*(?:scrubbed|redacted|placeholder|dummy|fake|test|example|your|not|a|real|secret|key|api|"
    r"token|here|changeme|xxx+|\*+|[-_.\s])*[>}\])*x._-]*$"
)
# Enough of a random run to be a credential: 16 or more letters and digits with both in it.
_RANDOM_RUN = re.compile(r"(?=[A-Za-z0-9._~+/=-]{16,})(?=[^\s\"',]*[0-9])(?=[^\s\"',]*[A-Za-z])[A-Za-z0-9._~+/=-]{16,}")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\(/)")
# Header names that carry credentials whatever the server calls them, and those that only count them.
_CREDENTIAL_NAME = re.compile(r"(?i)key|token|secret|auth|credential|password|session|signature|subscription")
_COUNTING_NAME = re.compile(r"(?i)ratelimit|rate-limit|-limit|-remaining|-reset|-used|tokens-|-tokens\b|usage")


@functools.cache
def _detectors() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins: dict[str, Any] = get_mapping_from_secret_type_to_class()
    return tuple(plugin() for name, plugin in plugins.items() if name not in _LEFT_OUT)


def _library_findings(line: str) -> Iterator[tuple[str, str]]:
    # The detectors are called directly, without detect-secrets' settings context: entering it
    # per line was nine tenths of the scan's time, and these detectors do not read it.
    for detector in _detectors():
        for found in detector.analyze_line(filename="cassette.yaml", line=line, line_number=1):
            value = str(found.secret_value or "")
            if value and not _PLACEHOLDER.match(value):
                yield str(found.type), value


def gunzip(data: bytes) -> bytes | None:
    """``data`` decompressed when it is gzip (or zlib), else None."""
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return None
    return None


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    shown = sum(1 for char in text if char.isprintable() or char in "\n\r\t")
    return text if text and shown >= 0.9 * len(text) else None


def _base64_decoded(value: str) -> Iterator[str]:
    for run in _BASE64_RUN.findall(value):
        padded = run + "=" * (-len(run) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                data = decode(padded)
            except (binascii.Error, ValueError):
                continue
            text = _printable(gunzip(data) or data)
            if text is not None:
                yield text
                break


def decoded_forms(value: str, depth: int = 2) -> Iterator[str]:
    """``value`` and what it decodes to: URL-decoded, JSON-unescaped, base64 (gzip inside), ``depth`` deep."""
    yield value
    if depth == 0:
        return
    if "%" in value:
        unquoted = unquote(value)
        if unquoted != value:
            yield from decoded_forms(unquoted, depth - 1)
    if "\\" in value:
        unescaped = _JSON_ESCAPE.sub(lambda m: m.group(2) or chr(int(m.group(1), 16)), value)
        if unescaped != value:
            yield from decoded_forms(unescaped, depth - 1)
    for decoded in _base64_decoded(value):
        yield from decoded_forms(decoded, depth - 1)


def _provider_finding(line: str) -> tuple[str, str] | None:
    for label, pattern in PROVIDER_PATTERNS:
        found = pattern.search(line)
        if found:
            return label, found.group(0)
    return None


def secrets_in(value: str) -> list[tuple[str, str]]:
    """Each credential in ``value`` (in any of its ``decoded_forms``) as ``(what it is, the secret)``."""
    found: dict[str, str] = {}
    for form in decoded_forms(value):
        for line in form.splitlines() or [form]:
            provider = _provider_finding(line)
            if provider is not None:
                found.setdefault(provider[1], provider[0])
            for label, secret in _library_findings(line):
                if not any(secret in known or known in secret for known in found):
                    found.setdefault(secret, label)
    return [(label, secret) for secret, label in found.items()]


def credential_header(name: str, value: str) -> bool:
    """A header whose name says it carries a credential (any server's naming) and whose value is
    random enough to be one: an opaque token in ``x-my-gateway-token`` is a secret too."""
    if not _CREDENTIAL_NAME.search(name) or _COUNTING_NAME.search(name):
        return False
    return bool(_RANDOM_RUN.search(value)) and not _PLACEHOLDER.match(value)
