"""What a finding does to the person running the agent: its harm, worst first.

A failing run is classed by its observed outcome (what ran, what came out, what was lost), not
by which check fired, so that running ``write_file`` with truncated content and emitting START
events in another order never read alike:

* ``ran_wrong``: a tool ran that must not (truncated, invalid, never named, cut stream), or ran
  with the wrong name or arguments;
* ``lost``: a call, its arguments or the text were silently dropped;
* ``crashed``: the turn raised (or hung); nothing ran;
* ``misidentified``: what runs is right, but the provider's call id does not reach the follow-up
  (the next request fails);
* ``stream_shape``: what runs and what is answered are right; only the event stream a UI renders
  deviates (order, segmentation, hold-back).

``classify_calls`` holds the rules once, over a neutral description of the calls (each suite
pairs its own output with the stream's calls and hands the pairs in).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "HARMS",
    "TRUNCATION_SENTENCE",
    "CameOut",
    "Harm",
    "HarmVerdict",
    "WantedCall",
    "at_least",
    "classify_calls",
    "parse_harm",
    "worst",
]


class Harm(enum.Enum):
    """The harm classes, declared worst first (``HARMS`` keeps that order)."""

    RAN_WRONG = "ran_wrong"
    LOST = "lost"
    CRASHED = "crashed"
    MISIDENTIFIED = "misidentified"
    STREAM_SHAPE = "stream_shape"

    @property
    def severity(self) -> int:
        """Higher is worse: ``ran_wrong`` 4 ... ``stream_shape`` 0."""
        return len(HARMS) - 1 - HARMS.index(self)

    @property
    def meaning(self) -> str:
        """One sentence for a reader of the report."""
        return _MEANINGS[self]


HARMS: tuple[Harm, ...] = tuple(Harm)

_MEANINGS = {
    Harm.RAN_WRONG: "a tool ran that must not (truncated, invalid, never named, cut stream), or ran with the wrong "
    "name or arguments",
    Harm.LOST: "a call, its arguments or the text were silently dropped",
    Harm.CRASHED: "the turn raised or hung; nothing ran",
    Harm.MISIDENTIFIED: "what runs is right, but the provider's call id does not reach the follow-up "
    "(the next request fails)",
    Harm.STREAM_SHAPE: "what runs and what is answered are right; only the event stream a UI renders deviates",
}

# Said once, where the rule applies: a parsable call from a truncated turn is still run wrong.
TRUNCATION_SENTENCE = (
    "the provider cut the turn at its token limit: a call from it is run wrong even when its arguments happen to "
    "parse, because truncated output can be semantically incomplete (a list of files cut short still parses)"
)


def parse_harm(text: str) -> Harm:
    """A harm from its name (``lost``, ``ran_wrong``...); ``ValueError`` lists the names."""
    try:
        return Harm(text)
    except ValueError:
        raise ValueError(f"unknown harm {text!r}; expected one of {', '.join(h.value for h in HARMS)}") from None


def worst(harms: Iterable[Harm | None]) -> Harm | None:
    """The worst of ``harms`` (None when there is none)."""
    found = [harm for harm in harms if harm is not None]
    return max(found, key=lambda harm: harm.severity) if found else None


def at_least(harm: Harm, threshold: Harm) -> bool:
    """Whether ``harm`` is as bad as ``threshold`` or worse (what ``--fail-on THRESHOLD`` gates on)."""
    return harm.severity >= threshold.severity


@dataclass(frozen=True)
class HarmVerdict:
    """The harm of one failing run, the one sentence that says why, and (when a call ran that must
    not) why it must not: ``cause`` is ``truncated``, ``incomplete``, ``provider_error``,
    ``invalid_arguments`` or ``no_name`` (empty otherwise), so a report can tell a policy the
    library leaves to its caller (running calls of a truncated turn) from the rest."""

    harm: Harm
    why: str
    cause: str = ""

    def to_json(self) -> dict[str, str]:
        return {"harm": self.harm.value, "why": self.why, "cause": self.cause}


@dataclass(frozen=True)
class WantedCall:
    """One call of the stream, as the expectation has it.

    ``arguments`` None means the call must not run; ``why_not`` then says why (a phrase that reads
    after "must not run:"), and ``truncated`` marks a turn the provider cut at its token limit.
    ``error_answers`` is True when an error for the call (or for the index it shares with other
    ids) is a conformant answer instead of running it. ``cause`` names why it must not run in one
    word (``HarmVerdict.cause``).
    """

    label: str
    name: str | None
    call_id: str | None
    arguments: Any
    why_not: str = ""
    truncated: bool = False
    error_answers: bool = False
    null_arguments: bool = False  # the provider sent ``null``: {} is an accepted reading (taxonomy A12)
    cause: str = ""


@dataclass(frozen=True)
class CameOut:
    """One call the target produced: its name, the ids a consumer finds it under, and whether it runs."""

    label: str
    name: str | None
    ids: frozenset[str] = field(default_factory=frozenset)
    arguments: Any = None
    ran: bool = False
    error: bool = False


def _dispatched(got: CameOut, tools: Collection[str]) -> CameOut:
    """What a dispatcher makes of a call that ran: under a name no tool has, an error answer."""
    if not got.ran or got.name in tools:
        return got
    return replace(got, ran=False, error=True)


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def _ran_wrong(
    pairs: Sequence[tuple[WantedCall, CameOut | None]], extra: Sequence[CameOut], same: Any
) -> HarmVerdict | None:
    for want, got in pairs:
        if got is None or not got.ran:
            continue
        if want.arguments is None:
            if want.null_arguments and not want.truncated and not want.why_not and got.arguments == {}:
                continue
            if want.truncated:
                return HarmVerdict(Harm.RAN_WRONG, f"{want.label} ran: {TRUNCATION_SENTENCE}", "truncated")
            return HarmVerdict(Harm.RAN_WRONG, f"{want.label} ran, but it must not run: {want.why_not}", want.cause)
        if got.name != want.name:
            return HarmVerdict(Harm.RAN_WRONG, f"{want.label} ran under the name {got.name!r}, not {want.name!r}")
        if not same(got.arguments, want.arguments):
            return HarmVerdict(
                Harm.RAN_WRONG,
                f"{want.label} ran with arguments {_canonical(got.arguments)}, the stream's are "
                f"{_canonical(want.arguments)}",
            )
    ran_extra = next((out for out in extra if out.ran), None)
    if ran_extra is not None:
        return HarmVerdict(Harm.RAN_WRONG, f"{ran_extra.label} ran, but the stream has no such call")
    return None


def _lost(
    pairs: Sequence[tuple[WantedCall, CameOut | None]], extra: Sequence[CameOut], lost_text: str, turn_error: bool
) -> HarmVerdict | None:
    errors_shown = any(got is not None and got.error for _, got in pairs) or any(out.error for out in extra)
    for want, got in pairs:
        if want.arguments is None or (got is not None and got.ran):
            continue
        if want.error_answers and errors_shown:
            continue  # a call sharing its index with another id, answered by an error: said aloud
        if got is not None and got.error and got.name != want.name:
            return HarmVerdict(
                Harm.LOST,
                f"{want.label} came out under the name {got.name!r}, which no tool has: a runner answers it with an "
                f"error (or raises), and {want.name!r} never ran",
            )
        if got is not None and got.error:
            return HarmVerdict(Harm.LOST, f"{want.label} may run, but it ended with an error and never ran")
        return HarmVerdict(Harm.LOST, f"{want.label} never ran and nothing said why")
    for want, got in pairs:
        # A call that must not run may be left out when an error said so: its own, or the turn's.
        if want.arguments is None and got is None and not (errors_shown or turn_error):
            return HarmVerdict(Harm.LOST, f"{want.label} vanished: nothing ran it and no error answered it")
    if lost_text:
        return HarmVerdict(Harm.LOST, lost_text)
    return None


def _misidentified(pairs: Sequence[tuple[WantedCall, CameOut | None]]) -> HarmVerdict | None:
    # A call answered by an error must echo the provider's id in its result too.
    for want, got in pairs:
        if want.call_id and got is not None and (got.ran or got.error) and want.call_id not in got.ids:
            how = "ran right" if got.ran else "ended with its error"
            return HarmVerdict(
                Harm.MISIDENTIFIED,
                f"{want.label} {how}, but under the ids {sorted(got.ids)}: the provider's id {want.call_id!r} "
                "does not reach the follow-up",
            )
    return None


def classify_calls(
    pairs: Sequence[tuple[WantedCall, CameOut | None]],
    extra: Sequence[CameOut] = (),
    *,
    crashed: str = "",
    lost_text: str = "",
    same_arguments: Any = None,
    turn_error: bool = False,
    tools: Collection[str] | None = None,
) -> HarmVerdict:
    """The harm of one failing run, worst first, from what it ran and what it lost.

    ``pairs`` holds each call of the stream (wire order) with the target's call that stands for it
    (None: none did); ``extra`` the target's calls that stand for no call of the stream;
    ``crashed`` says how the run raised or hung (empty: it did not); ``lost_text`` says what text
    or reasoning the output lost or altered (empty: none); ``same_arguments(got, want)`` compares
    parsed arguments (default: as canonical JSON); ``turn_error`` says the target surfaced an error for
    the whole turn (a stack's answer), which answers a must-not-run call it left out. ``tools`` are
    the names a dispatcher finds a tool under (the stream's, and the tools the turn offered): a call
    that came out under another name runs no tool (every runner answers an unknown name with an
    error, or raises), so its own tool is lost, not run wrong. A run that deviates in none of these
    deviates only in the shape of its event stream.
    """
    same = same_arguments or (lambda got, want: _canonical(got) == _canonical(want))
    unknown: list[str] = []  # what came out under a name no tool has: a runner answers it, nothing runs
    if tools is not None:
        unknown = [
            repr(out.name or "")
            for out in [got for _, got in pairs if got is not None] + list(extra)
            if out.ran and out.name not in tools
        ]
        pairs = [(want, _dispatched(got, tools) if got is not None else None) for want, got in pairs]
        extra = [_dispatched(out, tools) for out in extra]
    ran_wrong = _ran_wrong(pairs, extra, same)
    if ran_wrong is not None:
        return ran_wrong
    if crashed:
        return HarmVerdict(Harm.CRASHED, crashed)
    lost = _lost(pairs, extra, lost_text, turn_error)
    if lost is not None:
        return lost
    misidentified = _misidentified(pairs)
    if misidentified is not None:
        return misidentified
    if unknown:
        return HarmVerdict(
            Harm.STREAM_SHAPE,
            f"nothing runs wrong: what came out under {', '.join(unknown)}, a name no tool has, is answered by a "
            "runner with an error; only the event stream deviates",
        )
    return HarmVerdict(Harm.STREAM_SHAPE, "what runs and the text are right; only the event stream deviates")
