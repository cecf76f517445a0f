"""The JSON-lines bridge protocol, version 1 (``docs/bridge.md``): messages, chunks, hello, exceptions.

Everything here is pure data handling; ``conformance.bridge.process`` moves the lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from conformance.handler import Capabilities, TargetError
from conformance.stack import StackCapabilities
from conformance.wire.numbers import JSON_NUMBERS
from reference_impl.types import ChunkResponse

__all__ = [
    "LEVELS",
    "PROTOCOL_VERSION",
    "BridgeBroken",
    "BridgeObject",
    "Hello",
    "TargetCrashed",
    "TargetRaised",
    "TargetRaisedState",
    "TargetRaisedType",
    "TargetRaisedValue",
    "chunk_to_json",
    "quote",
    "raised_exception",
]

PROTOCOL_VERSION = 1
LEVELS = ("delta", "bytes")
# Keys every answer carries exactly one of.
OUTCOME_KEYS = ("ok", "raised", "error", "unreadable")
_SHOWN = 400


def quote(line: str | bytes) -> str:
    """A protocol line as shown in an error message: decoded, one line, at most 400 characters."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\n")
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


class BridgeBroken(BaseException):
    """The target process cannot go on: it broke the protocol, gave no answer in time, or keeps dying.

    A ``BaseException`` so that it crosses the suite's handling of the target's own exceptions
    (which are findings) and stops the run; ``conformance.bridge.run_bridge`` turns it into a
    ``TargetError`` (exit code 2) carrying this message.
    """

    def to_target_error(self) -> TargetError:
        """The ``TargetError`` the entry points raise for it."""
        return TargetError(str(self))


class TargetCrashed(RuntimeError):
    """The target process exited while serving a request: a finding for that request (it is restarted)."""


class TargetRaised(Exception):
    """An exception the target's own code raised, carried over the bridge as data.

    ``type_name`` is the target's class name (``SyntaxError``), ``kind`` the protocol's
    language-neutral class of it (``state``, ``value``, ``type``, ``other``).
    """

    def __init__(self, type_name: str, message: str, kind: str, stack: str | None = None) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message
        self.kind = kind
        self.stack = stack


class TargetRaisedState(TargetRaised, RuntimeError):
    """The target refused on purpose (``kind: state``): the contract's ``RuntimeError``."""


class TargetRaisedValue(TargetRaised, ValueError):
    """The target's code failed on a value (``kind: value``: JavaScript ``SyntaxError``, ``RangeError``)."""


class TargetRaisedType(TargetRaised, TypeError):
    """The target's code failed on a type (``kind: type``: JavaScript ``TypeError``)."""


_RAISED_KINDS: dict[str, type[TargetRaised]] = {
    "state": TargetRaisedState,
    "value": TargetRaisedValue,
    "type": TargetRaisedType,
}


def raised_exception(data: Any, line: str) -> TargetRaised:
    """The Python exception for an answer's ``raised`` object (``BridgeBroken`` when it is malformed)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        raise BridgeBroken(f"'raised' must be an object with a string 'type' (and 'message', 'class'): {line}")
    kind = data.get("class") if isinstance(data.get("class"), str) else "other"
    stack = data.get("stack") if isinstance(data.get("stack"), str) else None
    cls = _RAISED_KINDS.get(str(kind), TargetRaised)
    return cls(str(data["type"]), str(data.get("message", "")), str(kind), stack)


class BridgeObject:
    """An event or invocation that came over the bridge: its JSON keys as attributes (duck typing).

    Missing keys stay missing, so the suite's reader says exactly what the target left out.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.__dict__.update({str(key): value for key, value in data.items()})
        self._json = dict(data)

    def __repr__(self) -> str:
        return json.dumps(self._json, ensure_ascii=False, default=repr)

    @classmethod
    def wrap(cls, value: Any) -> Any:
        """A JSON object becomes a ``BridgeObject``; anything else is left for the suite to reject."""
        return cls(value) if isinstance(value, dict) else value


def chunk_to_json(chunk: ChunkResponse) -> dict[str, Any]:
    """A chunk as the protocol sends it: every key present, ``null`` when absent."""
    usage = chunk.usage
    return {
        "content": chunk.content,
        "reasoning": chunk.reasoning,
        "is_complete": chunk.is_complete,
        "tool_calls": None
        if chunk.tool_calls is None
        else [
            {
                "index": delta.index,
                "call_id": delta.call_id,
                "name": delta.name,
                "arguments_delta": delta.arguments_delta,
                "provider_metadata": None if delta.provider_metadata is None else dict(delta.provider_metadata),
            }
            for delta in chunk.tool_calls
        ],
        "finish_reason": chunk.finish_reason,
        "error": None if chunk.error is None else {"kind": chunk.error.kind, "message": chunk.error.message},
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "image_urls": list(chunk.image_urls),
        "audio_urls": list(chunk.audio_urls),
        "video_urls": list(chunk.video_urls),
    }


# -- hello ----------------------------------------------------------------------------------------

_DELTA_FIELDS = frozenset(f.name for f in fields(Capabilities))
_BYTES_FIELDS = frozenset(f.name for f in fields(StackCapabilities))


@dataclass(frozen=True)
class Hello:
    """What a target declared when it started: its level, who it is, what it supports."""

    level: str
    target: Mapping[str, Any]
    capabilities: Mapping[str, Any]
    json_numbers: str

    @classmethod
    def parse(cls, message: Mapping[str, Any], line: str) -> Hello:
        """Validate a hello message; ``BridgeBroken`` quoting ``line`` when it is not one this suite can use."""
        if message.get("type") != "hello":
            raise BridgeBroken(f"the first line must be a hello message, got {line}")
        offered = message.get("protocol")
        if not isinstance(offered, list) or PROTOCOL_VERSION not in offered:
            raise BridgeBroken(f"the target offers protocol {offered!r}; this suite speaks {PROTOCOL_VERSION}: {line}")
        level = message.get("level")
        if level not in LEVELS:
            raise BridgeBroken(f"hello 'level' must be one of {', '.join(LEVELS)}, got {level!r}: {line}")
        target = message.get("target") or {}
        capabilities = message.get("capabilities") or {}
        if not isinstance(target, dict) or not isinstance(capabilities, dict):
            raise BridgeBroken(f"hello 'target' and 'capabilities' must be objects: {line}")
        numbers = capabilities.get("json_numbers", "exact")
        if numbers not in JSON_NUMBERS:
            raise BridgeBroken(f"capability json_numbers must be one of {', '.join(JSON_NUMBERS)}, got {numbers!r}")
        known = _DELTA_FIELDS if level == "delta" else _BYTES_FIELDS
        unknown = sorted(set(capabilities) - known)
        if unknown:
            raise BridgeBroken(
                f"unknown {level}-level capabilities {unknown} in {line}; known: {', '.join(sorted(known))}"
            )
        return cls(str(level), dict(target), dict(capabilities), str(numbers))

    @property
    def name(self) -> str:
        """The target's own name, or ``"bridge target"``."""
        name = self.target.get("name")
        return name if isinstance(name, str) and name else "bridge target"

    def describe(self) -> str:
        """``name version (runtime)`` for report titles."""
        parts = [self.name]
        for key in ("version", "runtime"):
            value = self.target.get(key)
            if isinstance(value, str) and value:
                parts.append(f"({value})" if key == "runtime" else value)
        return " ".join(parts)

    def handler_capabilities(self) -> Capabilities:
        """The delta-level declaration as the suite's ``Capabilities`` (``BridgeBroken`` if invalid)."""
        declared = dict(self.capabilities)
        default = Capabilities()
        for key, value in declared.items():
            if isinstance(getattr(default, key), bool) and not isinstance(value, bool):
                raise BridgeBroken(f"capability {key} must be true or false, got {value!r}")
        for key in ("text_lag_chars", "args_lag"):
            lag = declared.get(key, 0)
            if lag is not None and (isinstance(lag, bool) or not isinstance(lag, int) or lag < 0):
                raise BridgeBroken(f"capability {key} must be a number of characters (0 or more) or null, got {lag!r}")
        try:
            return Capabilities.from_declared(declared)
        except (TypeError, ValueError) as error:
            raise BridgeBroken(f"the target's capabilities {declared} are not valid: {error}") from error

    def stack_capabilities(self) -> StackCapabilities:
        """The byte-level declaration as the suite's ``StackCapabilities`` (``BridgeBroken`` if invalid)."""
        try:
            return StackCapabilities.from_declared(self.capabilities)
        except ValueError as error:
            raise BridgeBroken(str(error)) from error
