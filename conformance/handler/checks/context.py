"""What a handler check judges (``CheckContext``), the registry the checks live in, and shared readings.

Calls are matched to the stream's calls by provider id (an id is found on the END's ``call_id``,
the segment id or the invocation id), and calls without a provider id by wire position, in the
order the target started its calls (``conformance.wire.pairing``): never by name or by whether the
arguments parse, so a wrong name is that call's finding, not swapped arguments of two calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from conformance.handler.capabilities import Capabilities
from conformance.handler.drive import ObservedCall, Transcript
from conformance.handler.observe import ObservedEvent, is_reasoning_segment_type
from conformance.handler.scenarios import ExpectedCall, Scenario
from conformance.verdict import CheckRegistry, NotApplicable
from conformance.wire.numbers import canonical_json, same_json
from conformance.wire.pairing import pair_calls
from reference_impl.types import ToolCallDelta

__all__ = ["HANDLER_CHECKS", "TARGET_TITLES", "CallMatch", "CheckContext", "as_json"]


def as_json(value: Any) -> str:
    """A canonical JSON text of a parsed value, as messages show it (key order and spacing never matter).

    Compare parsed arguments with ``CheckContext.same_arguments``: it honours how the target
    declares it reads numbers (``Capabilities.json_numbers``).
    """
    return canonical_json(value)


@dataclass(frozen=True)
class CallMatch:
    """An expected call (wire order) and the target's call that stands for it, if any."""

    position: int
    expected: ExpectedCall
    actual: ObservedCall | None

    @property
    def label(self) -> str:
        ident = f" id={self.expected.call_id!r}" if self.expected.call_id else ""
        return f"call {self.position} ({self.expected.name}{ident})"


@dataclass(frozen=True)
class CheckContext:
    """What a handler check judges: one scenario, one run of the target over it, its capabilities."""

    scenario: Scenario
    transcript: Transcript
    capabilities: Capabilities

    def same_arguments(self, actual: Any, expected: Any) -> bool:
        """Whether two parsed argument values are equal, numbers read as the target declares it reads them."""
        return same_json(actual, expected, numbers=self.capabilities.json_numbers)

    @property
    def surfaced_by_exception(self) -> bool:
        """The target raised on the abnormal end of the stream (conformant when nothing ran, rule R13)."""
        return self.transcript.raised_at_stream_error

    @cached_property
    def segments(self) -> dict[str, list[ObservedEvent]]:
        """The events of each segment, in order."""
        by_segment: dict[str, list[ObservedEvent]] = defaultdict(list)
        for event in self.transcript.events:
            by_segment[event.segment_id].append(event)
        return dict(by_segment)

    @cached_property
    def tool_segment_ids(self) -> set[str]:
        return {call.segment_id for call in self.transcript.calls if call.segment_id is not None}

    def is_text(self, event: ObservedEvent) -> bool:
        return event.segment_id not in self.tool_segment_ids and not is_reasoning_segment_type(event.segment_type)

    def is_reasoning(self, event: ObservedEvent) -> bool:
        return event.segment_id not in self.tool_segment_ids and is_reasoning_segment_type(event.segment_type)

    @cached_property
    def flagged_conflicts(self) -> set[int]:
        """Wire positions of the calls sharing an index with another id that did not run as themselves.

        Each call of such a group (``conflict_group``) may run as itself, or not run and be answered
        by an error (its own error END, or one error for the index): ``_conflict_groups_ok`` judges
        those; a call of the group that ran is judged like any other call (a merge shows there).
        """
        return {
            m.position
            for m in self.matches
            if m.expected.conflict_group is not None and (m.actual is None or not m.actual.executed)
        }

    @cached_property
    def _matching(self) -> tuple[list[CallMatch], list[ObservedCall], dict[int, ObservedCall]]:
        # The rule is ``conformance.wire.pairing``'s, shared with the outcome comparison: by provider
        # id, else by wire position in the order the target started its calls, never by name or by
        # whether the arguments parse. Chunk positions add causality: an output that started before
        # a call first appeared on the wire is not that call's.
        expected = self.scenario.expected.tool_calls
        calls = self._calls_in_start_order
        seen = [deltas[0][0] if deltas else None for deltas in self.deltas_by_call]
        # An output is found under the id its START announced too; one paired that way whose END
        # and invocation lost the id is a lost id below (provider_ids_kept), never a kept one.
        slots = pair_calls(
            [call.call_id for call in expected],
            [call.ids | ({call.start_id} if call.start_id else set()) for call in calls],
            started=[self._started_at.get(call.segment_id) if call.segment_id else None for call in calls],
            first_seen=seen if len(seen) == len(expected) else None,
            announced=[call.start_id for call in calls],
            agrees=lambda i, j: self._says_the_same(expected[i], calls[j]),
        )
        matches = []
        lost_ids: dict[int, ObservedCall] = {}
        for position, (want, slot) in enumerate(zip(expected, slots, strict=True)):
            got = calls[slot] if slot is not None else None
            if got is not None and want.call_id and want.call_id not in got.ids:
                # It lost its provider id: its output holds its slot, and stands for it in no check
                # but provider_ids_kept (which finds it among the unmatched calls).
                lost_ids[position] = got
                got = None
            matches.append(CallMatch(position, want, got))
        paired = {id(match.actual) for match in matches if match.actual is not None}
        return matches, [call for call in self.transcript.calls if id(call) not in paired], lost_ids

    def _says_the_same(self, want: ExpectedCall, got: ObservedCall) -> bool:
        """The output call has the stream call's name and arguments (used only between calls the
        provider gave one id: nothing else tells them apart)."""
        if want.arguments is None or got.arguments is None:
            return want.arguments is None and got.arguments is None and got.name == want.name
        return got.name == want.name and self.same_arguments(got.arguments, want.arguments)

    @cached_property
    def _started_at(self) -> dict[str, int]:
        """The chunk whose ``feed()`` returned each segment's START (finalize: after the last chunk)."""
        started: dict[str, int] = {}
        for position, events in enumerate(self.transcript.returned):
            for event in events:
                if event.kind == "start":
                    started.setdefault(event.segment_id, position)
        return started

    @cached_property
    def _calls_in_start_order(self) -> list[ObservedCall]:
        """The target's calls in the order they first appeared: their STARTs (``transcript.calls`` is in
        END order); calls without a segment (an accumulator's, invocations alone) after them, as listed."""
        first: dict[str, int] = {}
        for position, event in enumerate(self.transcript.events):
            if event.kind == "start":
                first.setdefault(event.segment_id, position)
        calls = list(enumerate(self.transcript.calls))
        never = len(self.transcript.events)
        calls.sort(key=lambda item: (first.get(item[1].segment_id or "", never), item[0]))
        return [call for _, call in calls]

    @property
    def matches(self) -> list[CallMatch]:
        """Every expected call with the target's call for it (``actual`` None when none matched)."""
        return self._matching[0]

    @cached_property
    def deltas_by_call(self) -> list[list[tuple[int, ToolCallDelta]]]:
        """Each wire call's deltas with the position of the chunk that carried them, in wire order.

        A call is an index, until a different non-empty id arrives on it (that starts the next call).
        """
        calls: list[list[tuple[int, ToolCallDelta]]] = []
        current: dict[int, tuple[int, str | None]] = {}  # index -> (call position, its id)
        for position, chunk in enumerate(self.transcript.chunks):
            for delta in chunk.tool_calls or ():
                known = current.get(delta.index)
                if known is None or (delta.call_id and known[1] and delta.call_id != known[1]):
                    known = (len(calls), delta.call_id or None)
                    calls.append([])
                elif delta.call_id and not known[1]:
                    known = (known[0], delta.call_id)
                current[delta.index] = known
                calls[known[0]].append((position, delta))
        return calls

    @cached_property
    def name_settled(self) -> list[bool]:
        """Per wire call: whether its whole name arrived before the call had to START.

        A call must START once its name can no longer grow: when its arguments begin or a later
        call appears. When the wire sent the whole name before that, START must carry it whole;
        a name that keeps arriving after that point (arguments before the name) may START as a prefix.
        """
        calls = self.deltas_by_call
        first_seen = [deltas[0][0] if deltas else 0 for deltas in calls]
        settled = []
        for number, deltas in enumerate(calls):
            parts: list[str] = []
            for _, delta in deltas:
                if delta.name and delta.name != "".join(parts):
                    parts.append(delta.name)
            full, so_far, complete_at = "".join(parts), "", None
            for position, delta in deltas:
                if delta.name and delta.name != so_far:
                    so_far += delta.name
                if so_far == full and full:
                    complete_at = position
                    break
            args_at = next((p for p, d in deltas if d.arguments_delta), None)
            later_at = first_seen[number + 1] if number + 1 < len(calls) else None
            must_start = min((p for p in (args_at, later_at) if p is not None), default=None)
            settled.append(complete_at is not None and (must_start is None or complete_at <= must_start))
        return settled

    @cached_property
    def raw_arguments(self) -> list[str]:
        """The argument text the wire carried for each expected call, in wire order.

        Taken from the expectation when it records it, else from the chunks.
        """
        derived = ["".join(d.arguments_delta or "" for _, d in deltas) for deltas in self.deltas_by_call]
        expected = self.scenario.expected.tool_calls
        return [
            call.raw_arguments or (derived[i] if len(derived) == len(expected) else "")
            for i, call in enumerate(expected)
        ]

    def require_calls(self, what: str = "tool calls") -> None:
        """Raise ``NotApplicable`` when neither the stream nor the target's output holds a tool call.

        A run over a stream without calls, where the target produced none, judges nothing about
        calls: counting it as a pass would let a check PASS on inputs that never exercised it.
        """
        if not self.scenario.expected.tool_calls and not self.transcript.calls:
            raise NotApplicable(f"no {what} in the stream or in the target's output")

    @property
    def unmatched(self) -> list[ObservedCall]:
        """The target's calls that stand for no call of the stream."""
        return self._matching[1]

    @property
    def id_lost(self) -> dict[int, ObservedCall]:
        """By wire position: the output call that holds a call's slot but lost its provider id (it is
        among ``unmatched`` for the checks; what ran for it is still that call's)."""
        return self._matching[2]


HANDLER_CHECKS = CheckRegistry[CheckContext]()

# The title of a check that judges by a bound the target declares, for a target's capabilities
# (by check id): a report says the bound its target was held to. The registered title is the one
# for the default capabilities (what docs/checks.md shows).
TARGET_TITLES: dict[str, Callable[[Capabilities], str]] = {}
