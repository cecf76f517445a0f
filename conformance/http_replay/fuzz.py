"""Hypothesis-chosen cuts through the whole application: seeded, shrunk, printed, replayable.

``fuzz_cassette(cassette, scenario)`` runs ``scenario(replay)`` (your code plus your assertions,
inside an active replay) once per example, each time with the recording served cut at different
byte offsets. A failure is shrunk by hypothesis to the fewest, smallest cuts that still fail and
raised as ``ReplayFuzzError``, which names the seed, the cuts and the exact call that replays
them: ``replay_cassette("openai-chat/single_call", cuts=[131])``. Same seed, same examples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given

from conformance.http_replay.alias import ensure_httpx_alias
from conformance.http_replay.cases import ReplayCase, find_case, load_recording
from conformance.http_replay.chunking import Chunking, cuts_strategy
from conformance.http_replay.errors import ReplayError, ReplayOptionError
from conformance.http_replay.routes import route_for
from conformance.http_replay.session import Engine, Replay, replay_cassette
from conformance.verdict import search_settings, the_same_search_in_every_process
from conformance.wire import Case

__all__ = ["DEFAULT_EXAMPLES", "FuzzRun", "ReplayFuzzError", "fuzz_cassette"]

DEFAULT_EXAMPLES = 25
_PREVIEW = 24  # bytes shown on each side of a cut


@dataclass
class FuzzRun:
    """What a fuzz run did: the case, the seed, how many examples ran, and the last cuts tried."""

    case: ReplayCase
    seed: int
    max_examples: int
    examples: int = 0
    last_cuts: tuple[int, ...] = ()

    def describe(self) -> str:
        """One line for a report: the case, seed and examples (and the cuts of the last example)."""
        return (
            f"{self.case.id}: hypothesis cuts, seed={self.seed}, {self.examples} example(s) run "
            f"(max_examples={self.max_examples}); last cuts={list(self.last_cuts)}"
        )


class ReplayFuzzError(ReplayError, AssertionError):
    """The code under test failed on a recording cut at some byte offsets; ``cuts`` and ``seed`` replay it."""

    def __init__(self, message: str, *, case_id: str, cuts: tuple[int, ...], seed: int) -> None:
        super().__init__(message)
        self.case_id = case_id
        self.cuts = cuts
        self.seed = seed


def _around_cuts(body: bytes, cuts: tuple[int, ...]) -> list[str]:
    return [f"  at {cut}: {body[max(0, cut - _PREVIEW) : cut]!r} | {body[cut : cut + _PREVIEW]!r}" for cut in cuts[:8]]


def fuzz_cassette(
    cassette: str | Path | Case | ReplayCase,
    scenario: Callable[[Replay], Any],
    *,
    max_examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    dirs: Iterable[str | Path] = (),
    bundled: bool = True,
    engine: Engine = "respx",
    fake_credentials: bool = True,
    on_run: Callable[[FuzzRun], None] | None = None,
) -> FuzzRun:
    """Run ``scenario(replay)`` on ``cassette`` served at hypothesis-chosen cuts; raise ``ReplayFuzzError`` on failure.

    ``scenario`` builds and runs your client inside the replay and asserts on its output (against
    ``replay.expected``). The search is seeded (``seed``), uses no example database, and shrinks
    a failure to a minimal set of cuts. ``on_run`` receives the ``FuzzRun`` before the search
    starts (the pytest fixture uses it to print the seed and cuts on failure).
    """
    __tracebackhide__ = True
    case = find_case(cassette, dirs=dirs, bundled=bundled)
    recording = load_recording(case.body_path)
    if engine != "respx":
        raise ReplayOptionError(f"fuzzing cuts needs engine='respx' (the {engine} engine serves bodies whole)")
    if route_for(recording.api).transport == "httpx":
        ensure_httpx_alias()  # a setup problem, not a finding: raised before the search
    longest = max(len(response.body) for response in recording.responses)
    run = FuzzRun(case, seed, max_examples)
    if on_run is not None:
        on_run(run)

    @search_settings(max_examples, seed)
    @given(cuts_strategy(longest))
    def search(cuts: tuple[int, ...]) -> None:
        __tracebackhide__ = True  # pytest shows the user's scenario and assertion, not these frames
        run.examples += 1
        run.last_cuts = cuts
        with replay_cassette(case, cuts=cuts, engine=engine, fake_credentials=fake_credentials) as replay:
            scenario(replay)

    try:
        with the_same_search_in_every_process():
            search()
    except Exception as error:
        cuts = run.last_cuts  # hypothesis replays the shrunk example last
        body = recording.responses[0].body
        pieces = len(Chunking(cuts=cuts).pieces(body))
        message = "\n".join(
            [
                f"{case.id}: the code under test fails when the recording is served "
                + (f"cut at {list(cuts)} ({pieces} pieces" if cuts else "whole, no cut needed (1 piece")
                + f" of {len(body)} bytes); found by hypothesis with seed={seed} in {run.examples} example(s), shrunk.",
                f"replay exactly: replay_cassette({case.id!r}, cuts={list(cuts)})"
                f"  /  toolcall_replay({case.id!r}, cuts={list(cuts)})",
                *_around_cuts(body, cuts),
                f"failure: {type(error).__name__}: {error}",
            ]
        )
        raise ReplayFuzzError(message, case_id=case.id, cuts=cuts, seed=seed) from error
    return run
