"""How a response body is cut into the byte pieces the client library receives.

``Chunking`` is one of: the whole body in one piece, pieces of ``N`` bytes, or cuts at explicit
byte offsets (what a hypothesis search finds and prints, so a failure can be replayed exactly).
``cuts_strategy`` is the hypothesis strategy behind ``fuzz``: sorted distinct offsets, shrinking
towards fewer cuts and smaller offsets.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from conformance.http_replay.errors import ReplayOptionError

__all__ = ["Chunking", "cuts_strategy", "split_at"]

# Enough cuts to split every SSE frame of a long recording several times, few enough that the
# SDKs' decoders (Anthropic's is quadratic in an event's piece count) stay fast.
MAX_FUZZ_CUTS = 64


@dataclass(frozen=True)
class Chunking:
    """The piece layout of a served body: ``size`` bytes per piece, or ``cuts`` at these offsets, or whole."""

    size: int | None = None
    cuts: tuple[int, ...] | None = None

    @classmethod
    def of(cls, chunk_bytes: int | None = None, cuts: Sequence[int] | None = None) -> Chunking:
        """Validate the user's options: at most one of them, positive size, non-negative cuts."""
        if chunk_bytes is not None and cuts is not None:
            raise ReplayOptionError("give chunk_bytes or cuts, not both")
        if chunk_bytes is not None and (isinstance(chunk_bytes, bool) or chunk_bytes < 1):
            raise ReplayOptionError(f"chunk_bytes must be a positive number of bytes, got {chunk_bytes!r}")
        if cuts is not None:
            if any(isinstance(cut, bool) or not isinstance(cut, int) or cut < 0 for cut in cuts):
                raise ReplayOptionError(f"cuts must be byte offsets (integers >= 0), got {list(cuts)!r}")
            return cls(cuts=tuple(sorted(set(cuts))))
        return cls(size=chunk_bytes)

    def pieces(self, body: bytes) -> list[bytes]:
        """``body`` in this layout (offsets past the end are ignored; no empty pieces)."""
        if self.size is not None:
            return [body[start : start + self.size] for start in range(0, len(body), self.size)] or [body]
        if self.cuts is not None:
            return split_at(body, self.cuts)
        return [body]

    def describe(self) -> str:
        """How to ask for this layout again: ``chunk_bytes=7``, ``cuts=[12, 40]`` or ``whole body``."""
        if self.size is not None:
            return f"chunk_bytes={self.size}"
        if self.cuts is not None:
            return f"cuts={list(self.cuts)}"
        return "whole body (one piece)"


def split_at(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    """``body`` cut at the given byte offsets (sorted, deduplicated; 0 and offsets >= len ignored)."""
    offsets = [0, *sorted({cut for cut in cuts if 0 < cut < len(body)}), len(body)]
    return [body[start:end] for start, end in itertools.pairwise(offsets)] or [body]


def cuts_strategy(length: int, max_cuts: int = MAX_FUZZ_CUTS) -> st.SearchStrategy[tuple[int, ...]]:
    """Sorted distinct cut offsets inside a body of ``length`` bytes (none for a body under 2 bytes)."""
    if length < 2:
        return st.just(())
    return st.lists(st.integers(1, length - 1), unique=True, max_size=max_cuts).map(lambda cuts: tuple(sorted(cuts)))
