"""The one reviewed list of written cassettes whose SDK reading differs from their definition, and how exactly.

A written cassette's expectation is its hand-checked definition, confirmed by the SDK's own
reading (``conformance.wire.sdk_outcome``). Where the SDK's reading is provably wrong, the cassette
is listed here, never exempted by what its own metadata says: each entry states the reason and the
exact wrong reading, which ``differences`` checks (the writer refuses a cassette whose SDK reading
is not exactly the documented one, and ``tests/test_cassette_corpus.py`` holds every entry to it on
every run). An entry whose SDK starts to read the cassette right fails that check: remove it.

Every entry is an OpenAI-compatible dialect that the OpenAI SDK's ``ChatCompletionStreamState``
(what ``chat.completions.stream()`` folds with) cannot fold: it keys deltas by an integer
``index``, concatenates every ``name`` and ``id`` fragment it sees, and appends ``arguments`` as
text. The definition is then the only oracle; the converters are held to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from conformance.turns.model import Turn
from conformance.wire.outcome import Outcome

__all__ = ["SDK_READING_EXEMPTIONS", "SdkReadingExemption", "differences"]

# (name, call id, raw argument text) of each call the SDK reads.
CallReading = tuple[str | None, str | None, str]


@dataclass(frozen=True)
class SdkReadingExemption:
    """Why the SDK misreads a cassette, and exactly what it does instead.

    ``raises``: the accumulator fails with this exception type, its message containing this text.
    ``reads``: the calls the accumulator folds instead, computed from the scenario's turn (text and
    reasoning must still agree with the definition).
    """

    reason: str
    raises: tuple[str, str] | None = None
    reads: Callable[[Turn], list[CallReading]] | None = None


def _pieces(turn: Turn) -> list[int]:
    """Per call, the number of chunks that carry it: the header chunk and one per non-empty fragment."""
    return [1 + sum(1 for piece in call.argument_pieces if piece) for call in turn.calls]


def _all_on_index_zero(turn: Turn) -> list[CallReading]:
    calls = turn.calls
    return [
        (
            "".join(c.name for c in calls),
            "".join(c.call_id or "" for c in calls),
            "".join(c.arguments for c in calls),
        )
    ]


def _ids_repeated(turn: Turn) -> list[CallReading]:
    return [(c.name, (c.call_id or "") * n, c.arguments) for c, n in zip(turn.calls, _pieces(turn), strict=True)]


def _names_repeated(turn: Turn) -> list[CallReading]:
    return [(c.name * n, c.call_id, c.arguments) for c, n in zip(turn.calls, _pieces(turn), strict=True)]


def _snapshots_appended(turn: Turn) -> list[CallReading]:
    return [(c.name, c.call_id, "".join(itertools.accumulate(p for p in c.argument_pieces if p))) for c in turn.calls]


_OPENAI = "the OpenAI SDK's ChatCompletionStreamState"
SDK_READING_EXEMPTIONS: dict[str, SdkReadingExemption] = {
    "openai-compatible/dialect_no_index": SdkReadingExemption(
        f"{_OPENAI} indexes its tool-call list by the delta's index, which this dialect leaves out",
        raises=("TypeError", "list indices must be integers or slices, not NoneType"),
    ),
    "openai-compatible/dialect_index_always_zero": SdkReadingExemption(
        f"{_OPENAI} keys calls by index only: every call on index 0 folds into one, names, ids and arguments "
        "concatenated",
        reads=_all_on_index_zero,
    ),
    "openai-compatible/dialect_null_continuations": SdkReadingExemption(
        f"{_OPENAI} asserts that a continuation's explicit null type is a string",
        raises=("AssertionError", ""),
    ),
    "openai-compatible/dialect_id_on_every_chunk": SdkReadingExemption(
        f"{_OPENAI} appends every id it sees: an id repeated on every chunk is read once per chunk",
        reads=_ids_repeated,
    ),
    "openai-compatible/dialect_name_restated": SdkReadingExemption(
        f"{_OPENAI} appends every name it sees: a name restated on every chunk is read once per chunk",
        reads=_names_repeated,
    ),
    "openai-compatible/dialect_cumulative_arguments": SdkReadingExemption(
        f"{_OPENAI} appends argument text: cumulative snapshots are read as deltas, each prefix appended",
        reads=_snapshots_appended,
    ),
    "openai-compatible/dialect_object_arguments": SdkReadingExemption(
        f"{_OPENAI} expects argument text and calls str methods on a JSON object",
        raises=("AttributeError", "'dict' object has no attribute"),
    ),
}


def differences(exemption: SdkReadingExemption, turn: Turn, sdk: Outcome | Exception, want: Outcome) -> list[str]:
    """Where the SDK's reading (``sdk``: its outcome, or what it raised) departs from the documented one."""
    if exemption.raises is not None:
        kind, fragment = exemption.raises
        if not isinstance(sdk, Exception):
            return [f"the SDK was documented to raise {kind} but read the stream: {sdk.to_json()}"]
        if f"{kind}: {fragment}" not in str(sdk):
            return [f"the SDK was documented to raise {kind} ({fragment!r}), it raised: {sdk}"]
        return []
    if isinstance(sdk, Exception):
        return [f"the SDK was documented to misread the stream, but it raised: {sdk}"]
    problems = []
    assert exemption.reads is not None
    documented = exemption.reads(turn)
    read = [(call.name, call.call_id, call.raw_arguments) for call in sdk.tool_calls]
    if read != documented:
        problems.append(f"the SDK reads calls {read}, documented {documented}")
    if sdk.text != want.text:
        problems.append(f"the SDK reads text {sdk.text!r}, the definition says {want.text!r}")
    if sdk.reasoning != want.reasoning:
        problems.append(f"the SDK reads reasoning {sdk.reasoning!r}, the definition says {want.reasoning!r}")
    return problems
