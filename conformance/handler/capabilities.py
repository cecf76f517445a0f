"""What a handler declares it supports; checks and scenarios that need more are skipped for it, by name."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """What a handler declares it supports. Checks needing more are skipped for it, by name."""

    reasoning: bool = True
    stream_errors: bool = True  # reads ChunkResponse.error / is_complete
    callbacks: bool = True
    # How many characters of text the handler may hold back before emitting them (0: none).
    # None: the handler makes no latency promise, and the latency check is skipped.
    text_lag_chars: int | None = 0
    # None: tool calls arrive as ChunkResponse.tool_calls. "xml" / "json" / "sentinel": they are
    # embedded in the text, and the checks about raw argument deltas do not apply.
    text_format: str | None = None

    def has(self, name: str) -> bool:
        if name == "text_lag":
            return self.text_lag_chars is not None
        if name == "api_tool_calls":
            return self.text_format is None
        value: bool = getattr(self, name)
        return value
