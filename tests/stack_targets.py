"""Targets for ``run --stack`` / ``pytest --toolcall-stack``: the accepted shapes, and the refused ones.

The stacks here read OpenAI Chat SSE by hand (no SDK: fast) and are correct on the plain Chat
recordings; ``TextOnlyStack`` drops every call, a bug the suite must find.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.stack import StackCapabilities

CLOSED: list[str] = []  # what ClosingStack.close() recorded


def read_chat(body: bytes) -> dict[str, Any]:
    """OpenAI Chat SSE in, the calls an application would run out (plain recordings only)."""
    calls: dict[int, dict[str, str]] = {}
    text = []
    finish = None
    for line in body.decode("utf-8").splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        for choice in json.loads(line[5:]).get("choices", []):
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            for fragment in delta.get("tool_calls") or []:
                call = calls.setdefault(fragment["index"], {"id": "", "name": "", "arguments": ""})
                function = fragment.get("function") or {}
                call["id"] = call["id"] or fragment.get("id") or ""
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
    return {
        "text": "".join(text),
        "finish_reason": finish,
        "tool_calls": [
            {
                "call_id": c["id"] or None,
                "name": c["name"],
                "raw_arguments": c["arguments"],
                "arguments": json.loads(c["arguments"] or "{}"),
            }
            for _, c in sorted(calls.items())
        ],
    }


def chat_stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """A stack function with no declared capabilities (it is taken to run every wire API)."""
    return read_chat(b"".join(pieces))


def declared_chat_stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """The same, declaring Chat Completions only, as a plain mapping."""
    return read_chat(b"".join(pieces))


declared_chat_stack.capabilities = {"apis": ["openai-chat"], "reasoning": False}  # type: ignore[attr-defined]


class ClosingStack:
    """A zero-argument factory (a class) whose instances are stacks, declare capabilities and are closed."""

    capabilities = StackCapabilities(apis=("openai-chat",), reasoning=False)

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        return read_chat(b"".join(pieces))

    def close(self) -> None:
        CLOSED.append("closed")


class TextOnlyStack(ClosingStack):
    """Loses every tool call (a bug): the outcome check fails with harm ``lost``."""

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        result = read_chat(b"".join(pieces))
        return {**result, "tool_calls": []}


def make_stack() -> Any:
    """A zero-argument factory function."""
    return declared_chat_stack


# -- refused --------------------------------------------------------------------------------------

NOT_CALLABLE = {"apis": ["openai-chat"]}


def two_arguments(api: str, pieces: Sequence[bytes]) -> None:
    """Neither a stack (three arguments) nor a factory (none)."""


def raising_factory() -> Any:
    raise RuntimeError("no API key configured")


def factory_of_a_string() -> Any:
    return "not a stack"


def unknown_capability(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return []


unknown_capability.capabilities = {"apis": ["openai-chat"], "streaming": True}  # type: ignore[attr-defined]


def unknown_api(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return []


unknown_api.capabilities = {"apis": ["openai_chat"]}  # type: ignore[attr-defined]


def capabilities_of_a_string(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return []


capabilities_of_a_string.capabilities = "openai-chat"  # type: ignore[attr-defined]


class FailingClose(ClosingStack):
    def close(self) -> None:
        raise OSError("connection pool already closed")


class ChatHonouringOptions(ClosingStack):
    """Declares it honours server profiles, but reads cumulative argument snapshots as deltas (a bug)."""

    capabilities = StackCapabilities(apis=("openai-chat",), reasoning=False, converter_options=True)


def decoding_each_read(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
    """Decodes every network read on its own: a UTF-8 character split across two reads is lost (H02)."""
    text = "".join(piece.decode("utf-8", errors="ignore") for piece in pieces)
    return read_chat(text.encode("utf-8"))


decoding_each_read.capabilities = {"apis": ["openai-chat"], "reasoning": False}  # type: ignore[attr-defined]


def hanging(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    """Never returns."""
    while True:
        time.sleep(0.05)


hanging.capabilities = {"apis": ["openai-chat"]}  # type: ignore[attr-defined]


def exiting(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    """Ends the process, as a stack calling ``sys.exit()`` on an error would."""
    sys.exit(0)


exiting.capabilities = {"apis": ["openai-chat"]}  # type: ignore[attr-defined]


def returning_a_number(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return 12345


def returning_none(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return None


def returning_a_bare_object_as_a_call(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
    return [object()]


for _stack in (returning_a_number, returning_none, returning_a_bare_object_as_a_call):
    _stack.capabilities = {"apis": ["openai-chat"]}  # type: ignore[attr-defined]
