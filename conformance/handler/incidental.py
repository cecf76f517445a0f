"""The same input without one of its shapes: how a finding learns which shapes its failure needs.

A shrunk counterexample still shows shapes its failure does not need (a generated stream that
happens to have no terminal chunk, arguments that happen to arrive in fragments), and its realism
note would name them and the servers that send them. After shrinking, the runner tries each move
here on the counterexample and keeps it when the target still fails the same way: what is left are
the shapes the failure needs, and its realism is theirs.

Every move keeps what the stream says (its calls, their ids, names and arguments, its text and
reasoning, its ending), so the scenario's expected outcome stays true; only how it is laid out
changes. A move returns None when the input does not show its shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from conformance.wire.stream_shapes import call_positions
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = ["MOVES", "without_shape"]

Chunks = tuple[ChunkResponse, ...]


def _add_terminal_chunk(chunks: Chunks) -> Chunks | None:
    """``no_terminal_marker``: end the stream with the finish chunk a server sends."""
    if any(chunk.is_complete or chunk.finish_reason is not None or chunk.error is not None for chunk in chunks):
        return None
    calls = any(chunk.tool_calls for chunk in chunks)
    return (*chunks, ChunkResponse(is_complete=True, finish_reason="tool_calls" if calls else "stop"))


def _carries(chunk: ChunkResponse) -> bool:
    media = chunk.image_urls or chunk.audio_urls or chunk.video_urls
    return bool(chunk.content or chunk.reasoning or chunk.tool_calls or media)


def _ends(chunk: ChunkResponse) -> bool:
    return chunk.is_complete or chunk.finish_reason is not None or chunk.error is not None


def _drop_empty_chunks(chunks: Chunks) -> Chunks | None:
    """``empty_chunk``: leave out chunks that carry nothing and end nothing."""

    def empty(chunk: ChunkResponse) -> bool:
        return not _carries(chunk) and not _ends(chunk) and chunk.usage is None

    kept = tuple(chunk for chunk in chunks if not empty(chunk))
    return kept if len(kept) != len(chunks) else None


def _runs_by_index(deltas: Sequence[ToolCallDelta]) -> list[list[ToolCallDelta]]:
    """``deltas`` in order, cut where the index changes (never reordered: an index may come back)."""
    runs: list[list[ToolCallDelta]] = []
    for delta in deltas:
        if runs and runs[-1][0].index == delta.index:
            runs[-1].append(delta)
        else:
            runs.append([delta])
    return runs


def _one_call_per_chunk(chunks: Chunks) -> Chunks | None:
    """``several_calls_in_one_chunk``: a chunk with deltas of several indices becomes one chunk per
    run of deltas of one index, in the order they were listed (its text and media on the first, its
    ending and usage on the last)."""
    out: list[ChunkResponse] = []
    changed = False
    for chunk in chunks:
        runs = _runs_by_index(chunk.tool_calls or ())
        if len({delta.index for delta in chunk.tool_calls or ()}) < 2:
            out.append(chunk)
            continue
        changed = True
        for number, deltas in enumerate(runs):
            first, last = number == 0, number == len(runs) - 1
            out.append(
                replace(
                    chunk,
                    content=chunk.content if first else "",
                    reasoning=chunk.reasoning if first else None,
                    image_urls=list(chunk.image_urls) if first else [],
                    audio_urls=list(chunk.audio_urls) if first else [],
                    video_urls=list(chunk.video_urls) if first else [],
                    tool_calls=deltas,
                    is_complete=chunk.is_complete and last,
                    finish_reason=chunk.finish_reason if last else None,
                    error=chunk.error if last else None,
                    usage=chunk.usage if last else None,
                )
            )
    return tuple(out) if changed else None


def _text_apart_from_calls(chunks: Chunks) -> Chunks | None:
    """``content_and_tool_delta_in_one_chunk``: a chunk's text comes in a chunk of its own, before its
    tool deltas."""
    out: list[ChunkResponse] = []
    changed = False
    for chunk in chunks:
        if not (chunk.content or chunk.reasoning) or not chunk.tool_calls:
            out.append(chunk)
            continue
        changed = True
        out.append(ChunkResponse(content=chunk.content, reasoning=chunk.reasoning))
        out.append(replace(chunk, content="", reasoning=None))  # its media, ending and usage stay with its calls
    return tuple(out) if changed else None


def _whole_arguments(chunks: Chunks) -> Chunks | None:
    """``arguments_fragmented``: each call's argument text arrives whole, on its first delta that
    carried any; deltas left with nothing, and chunks left empty, are left out. Not when a fragment
    comes with or after the stream's end (moving it earlier would change what the stream says)."""
    ended = next((position for position, chunk in enumerate(chunks) if _ends(chunk)), len(chunks))
    texts: dict[tuple[int, int], str | None] = {}
    for call in call_positions(chunks):
        carrying = [at for at in call if chunks[at[0]].tool_calls[at[1]].arguments_delta]  # type: ignore[index]
        if len(carrying) < 2:
            continue
        if any(position >= ended for position, _ in carrying):
            return None
        whole = "".join(chunks[p].tool_calls[n].arguments_delta or "" for p, n in carrying)  # type: ignore[index]
        texts[carrying[0]] = whole
        texts.update(dict.fromkeys(carrying[1:]))
    return _with_texts(chunks, texts) if texts else None


def _with_texts(chunks: Chunks, texts: dict[tuple[int, int], str | None]) -> Chunks:
    """``chunks`` with the argument text of the deltas at ``texts``' (chunk, delta) positions replaced."""
    out: list[ChunkResponse] = []
    for position, chunk in enumerate(chunks):
        if not chunk.tool_calls:
            out.append(chunk)
            continue
        deltas: list[ToolCallDelta] = []
        for number, delta in enumerate(chunk.tool_calls):
            if (position, number) not in texts:
                deltas.append(delta)
                continue
            moved = replace(delta, arguments_delta=texts[(position, number)])
            if moved.arguments_delta or moved.call_id or moved.name or moved.provider_metadata:
                deltas.append(moved)
        if deltas or _carries(replace(chunk, tool_calls=None)) or _ends(chunk) or chunk.usage is not None:
            out.append(replace(chunk, tool_calls=deltas or None))
    return tuple(out)


# In the order they are tried: the shapes generated streams show most often by chance first.
MOVES: tuple[tuple[str, Callable[[Chunks], Chunks | None]], ...] = (
    ("no_terminal_marker", _add_terminal_chunk),
    ("empty_chunk", _drop_empty_chunks),
    ("several_calls_in_one_chunk", _one_call_per_chunk),
    ("content_and_tool_delta_in_one_chunk", _text_apart_from_calls),
    ("arguments_fragmented", _whole_arguments),
)


def without_shape(shape: str, chunks: Sequence[ChunkResponse]) -> Chunks | None:
    """``chunks`` laid out without ``shape`` (saying the same), or None when it does not show it."""
    move = dict(MOVES)[shape]
    return move(tuple(chunks))
