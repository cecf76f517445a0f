"""Render a turn as Amazon Bedrock stream events: ConverseStream, and InvokeModelWithResponseStream (Anthropic).

Each event is written ``{eventType: payload}`` (the shape boto3 yields); ``conformance.wire.framing``
frames it as an AWS event-stream message. Bedrock pads every payload with ``p``, a prefix of an
alphanumeric alphabet of varying length (a length side-channel mitigation); it is deterministic
here so cassettes are reproducible.

ConverseStream: ``messageStart``; content blocks by ``contentBlockIndex`` (text and reasoning
blocks get no ``contentBlockStart``, their deltas just start; a tool block opens with
``start.toolUse``, gets an empty first ``input`` fragment as Claude sends, and a
``contentBlockStop``); ``messageStop`` with the stop reason, then ``metadata`` (usage, latency).
An interrupted block never gets its stop; an error is a ``modelStreamErrorException`` frame.
``turn.extras["anthropic_cache_tokens"]`` ``(written, read)`` adds the cache counts to the usage.

InvokeModelWithResponseStream: the Anthropic rendering, each event base64-encoded in a ``chunk``'s
``bytes``; ``message_stop`` carries ``amazon-bedrock-invocationMetrics``, and an error is an
exception frame, never an Anthropic ``error`` event.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn
from conformance.turns.render_anthropic import render_anthropic

__all__ = ["render_bedrock_converse", "render_bedrock_invoke"]

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _padder() -> Iterator[str]:
    for position in itertools.count():
        yield _PADDING[: 1 + (position * 37 + 11) % len(_PADDING)]


class _Converse:
    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.events: list[dict[str, Any]] = []
        self._padding = _padder()
        self._blocks = itertools.count()

    def emit(self, kind: str, **body: Any) -> None:
        self.events.append({kind: {**body, "p": next(self._padding)}})

    def delta(self, index: int, **delta: Any) -> None:
        self.emit("contentBlockDelta", contentBlockIndex=index, delta=delta)

    def reasoning(self, index: int, item: Reasoning) -> None:
        for piece in item.pieces:
            self.delta(index, reasoningContent={"text": piece})
        if item.signature:
            self.delta(index, reasoningContent={"signature": item.signature})

    def server_call(self, index: int, item: ServerCall) -> int:
        use = {"toolUseId": item.call_id, "name": item.name, "type": "server_tool_use"}
        self.emit("contentBlockStart", contentBlockIndex=index, start={"toolUse": use})
        for piece in item.input_pieces:
            self.delta(index, toolUse={"input": piece})
        self.emit("contentBlockStop", contentBlockIndex=index)
        index = next(self._blocks)
        result = {"toolUseId": item.call_id, "type": f"{item.name}_result", "status": "success"}
        self.emit("contentBlockStart", contentBlockIndex=index, start={"toolResult": result})
        self.delta(index, toolResult=[{"text": item.result}])
        return index

    def call(self, index: int, item: Call) -> bool:
        """Write a tool block; False when the stream is interrupted inside it (no contentBlockStop)."""
        start = {"toolUseId": item.call_id or f"tooluse_{index}", "name": item.name}
        self.emit("contentBlockStart", contentBlockIndex=index, start={"toolUse": start})
        # Claude on Bedrock sends an empty first input fragment; keep that quirk.
        for piece in ("", *item.argument_pieces):
            self.delta(index, toolUse={"input": piece})
        return not (self.turn.ending in ("length", "cut", "error") and item is self.turn.items[-1])

    def blocks(self) -> None:
        for item in self.turn.items:
            index = next(self._blocks)
            if isinstance(item, Reasoning):
                self.reasoning(index, item)
            elif isinstance(item, Text):
                for piece in item.pieces:
                    self.delta(index, text=piece)
            elif isinstance(item, ServerCall):
                index = self.server_call(index, item)
            elif not self.call(index, item):
                return
            self.emit("contentBlockStop", contentBlockIndex=index)

    def end(self) -> None:
        turn = self.turn
        stop = "max_tokens" if turn.ending == "length" else ("tool_use" if turn.calls else "end_turn")
        self.emit("messageStop", stopReason=stop)
        prompt, completion = turn.usage
        usage: dict[str, int] = {"inputTokens": prompt, "outputTokens": completion}
        written, read = turn.extras.get("anthropic_cache_tokens") or (0, 0)
        if written or read:
            usage.update(cacheReadInputTokens=read, cacheWriteInputTokens=written)
        usage["totalTokens"] = prompt + completion + written + read
        self.emit("metadata", usage=usage, metrics={"latencyMs": 812})


def render_bedrock_converse(turn: Turn) -> list[dict[str, Any]]:
    """ConverseStream events in wire order (see the module docstring)."""
    converse = _Converse(turn)
    converse.emit("messageStart", role="assistant")
    converse.blocks()
    if turn.ending == "error":
        converse.events.append(
            {"modelStreamErrorException": {"message": turn.error_message, "originalStatusCode": 529}}
        )
    elif turn.ending != "cut":
        converse.end()
    return converse.events


def render_bedrock_invoke(turn: Turn) -> list[dict[str, Any]]:
    """InvokeModelWithResponseStream events: Anthropic events in ``chunk.bytes`` (see the module docstring)."""
    padding = _padder()
    events: list[dict[str, Any]] = []
    prompt, completion = turn.usage
    for original in render_anthropic(turn):
        event = original
        if event.get("type") == "error":
            # On Bedrock an error mid-stream is an exception frame, never an Anthropic error event.
            message = event.get("error", {}).get("message", turn.error_message)
            events.append({"modelStreamErrorException": {"message": message, "originalStatusCode": 529}})
            continue
        if event.get("type") == "message_stop":
            metrics = {
                "inputTokenCount": prompt,
                "outputTokenCount": completion,
                "invocationLatency": 812,
                "firstByteLatency": 301,
            }
            event = {**event, "amazon-bedrock-invocationMetrics": metrics}
        data = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        events.append({"chunk": {"bytes": base64.b64encode(data).decode("ascii"), "p": next(padding)}})
    return events
