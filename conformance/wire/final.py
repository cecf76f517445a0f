"""A finished turn as a final-result target reports it, read into an ``Outcome``.

Final-result targets (accumulators, whole provider stacks, bridged processes) give no events: just
the calls they would run, and the turn's text and reasoning. They may be shaped in many ways; the
suite reads them by duck typing:

* the result is a list of calls, or an object / mapping with ``tool_calls`` (or ``calls``) and
  optionally ``text`` (or ``content``), ``reasoning``, ``error`` and ``finish_reason``;
* a call is a ``(call_id, name, raw_arguments, arguments_or_error)`` tuple, or an object / mapping
  with ``call_id`` (or ``id``), ``name``, ``raw_arguments`` (or ``arguments_raw``), ``arguments``
  (a mapping: the call runs) and ``error`` (set: the call does not run).

The outcome's calls carry ``may_run`` and ``why_not`` (``conformance.wire.may_run``), derived from
what the answer itself says: its ``finish_reason`` and ``error`` (read in the API the answer is
for), each call's name and whether it has an arguments object. A stack that hands a call
arguments runs it, whatever ``may_run`` says; the comparison with the recording's expectation
(``conformance.wire.replay.compare_outcomes``) judges exactly that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from conformance.wire.may_run import derive_may_run
from conformance.wire.outcome import ExpectedToolCall, Outcome

__all__ = ["FinalResultError", "read_final_result"]


class FinalResultError(TypeError):
    """A final result the suite cannot read as calls, text and reasoning: says what was wrong."""


def _field(value: Any, *names: str) -> Any:
    for name in names:
        if isinstance(value, Mapping) and name in value:
            return value[name]
        if not isinstance(value, Mapping) and hasattr(value, name):
            return getattr(value, name)
    return None


_CALL_FIELDS = ("call_id", "id", "name", "tool_name", "raw_arguments", "arguments_raw", "arguments", "args", "error")
_RESULT_FIELDS = ("tool_calls", "calls", "text", "content", "reasoning", "error", "finish_reason")


def _has(value: Any, name: str) -> bool:
    return name in value if isinstance(value, Mapping) else hasattr(value, name)


def _shown(value: Any) -> str:
    # Without memory addresses (`<object object at 0x7f...>`): the same result must read the same
    # in every run, or two runs of one stack would look like two different failures.
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= 200 else text[:197] + "..."


def _call(call: Any) -> ExpectedToolCall:
    if isinstance(call, tuple):
        if len(call) != 4:
            raise FinalResultError(
                f"a call tuple must be (call_id, name, raw_arguments, arguments_or_error): {_shown(call)}"
            )
        call_id, name, raw, outcome = call
        arguments = dict(outcome) if isinstance(outcome, Mapping) else None
        error = None if arguments is not None else str(outcome)
    else:
        if not any(_has(call, name) for name in _CALL_FIELDS):
            raise FinalResultError(
                "a call must be a mapping or object with call_id (or id), name, raw_arguments and arguments or "
                f"error, or a (call_id, name, raw_arguments, arguments_or_error) tuple; got {_shown(call)}"
            )
        call_id = _field(call, "call_id", "id")
        name = _field(call, "name", "tool_name")
        raw = _field(call, "raw_arguments", "arguments_raw") or ""
        error_value = _field(call, "error")
        value = _field(call, "arguments", "args")
        if error_value:
            arguments, error = None, str(error_value)
        elif isinstance(value, Mapping):
            arguments, error = dict(value), None
        else:
            arguments, error = None, f"arguments are not an object: {_shown(value)}"
    if name is not None and not isinstance(name, str):
        raise FinalResultError(f"a call's name must be a string, got {_shown(name)} in {_shown(call)}")
    if arguments is not None:
        arguments = json.loads(json.dumps(arguments, default=repr))
    return ExpectedToolCall(name, str(call_id) if call_id else None, arguments, str(raw), error)


def read_final_result(result: Any, api: str = "") -> tuple[Outcome, bool, bool]:
    """The result as an ``Outcome`` (with ``may_run`` / ``why_not`` derived, ``api`` naming the wire API
    the answer is for), and whether it gave text and reasoning at all (else they are unknown)."""
    calls = result
    outcome = Outcome(api)
    has_text = has_reasoning = False
    if not isinstance(result, (list, tuple)):
        if isinstance(result, (str, bytes, int, float)) or not any(_has(result, name) for name in _RESULT_FIELDS):
            # A value that says nothing (None, a number, a string, an empty mapping) is no empty turn.
            raise FinalResultError(
                "the result must be a list of calls, or a mapping or object with calls (or tool_calls) and "
                f"optionally text, reasoning, error and finish_reason; got {_shown(result)}"
            )
        calls = _field(result, "tool_calls", "calls")
        text = _field(result, "text", "content")
        reasoning = _field(result, "reasoning")
        if isinstance(text, str):
            outcome.text, has_text = text, True
        if isinstance(reasoning, str):
            outcome.reasoning, has_reasoning = reasoning, True
        error = _field(result, "error")
        outcome.error = str(error) if error else None
        finish = _field(result, "finish_reason")
        outcome.finish_reason = str(finish) if finish else None
    if calls is None:
        calls = []
    if not isinstance(calls, (list, tuple)):
        raise FinalResultError(
            f"the result must give a list of calls (or an object with tool_calls), got {_shown(result)}"
        )
    outcome.tool_calls = [_call(call) for call in calls]
    return derive_may_run(outcome), has_text, has_reasoning
