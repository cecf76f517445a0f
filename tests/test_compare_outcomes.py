"""The outcome comparison every recording-based check rests on (``conformance.wire.replay.compare_outcomes``).

``converter_outcome_matches``, ``stack_outcome_matches`` and the corpus tests all judge a target's
final calls with it, so what it leaves out no converter or stack is ever judged on.
"""

from __future__ import annotations

from typing import Any

from conformance.wire.outcome import ExpectedToolCall, Outcome
from conformance.wire.replay import compare_outcomes

_PARIS = {"city": "Paris"}
_OSLO = {"city": "Oslo"}


def _call(name: str | None, call_id: str | None, arguments: dict[str, Any] | None) -> ExpectedToolCall:
    raw = "" if arguments is None else str(arguments)
    return ExpectedToolCall(name, call_id, arguments, raw, None if arguments is not None else "invalid")


def _outcome(*calls: ExpectedToolCall) -> Outcome:
    return Outcome("openai-chat", list(calls), finish_reason="tool_calls")


# -- names ------------------------------------------------------------------------------------------


def test_a_rewritten_name_is_a_finding() -> None:
    expected = _outcome(_call("get_weather", "call_1", _PARIS))
    assert compare_outcomes(expected, _outcome(_call("weather", "call_1", _PARIS))) == [
        "call 0 (get_weather, id 'call_1'): tool name 'weather', the provider sent 'get_weather'"
    ]


def test_a_concatenated_restated_name_is_a_finding() -> None:
    expected = _outcome(_call("get_weather", "call_1", _PARIS))
    problems = compare_outcomes(expected, _outcome(_call("get_weatherget_weather", "call_1", _PARIS)))
    assert problems == [
        "call 0 (get_weather, id 'call_1'): tool name 'get_weatherget_weather', the provider sent 'get_weather'"
    ]


def test_a_call_dispatched_to_another_tool_is_a_finding() -> None:
    expected = _outcome(_call("get_weather", "call_1", _PARIS))
    assert compare_outcomes(expected, _outcome(_call("delete_file", "call_1", _PARIS))) != []


def test_a_rejected_call_keeps_its_name_too() -> None:
    # The error sent back for a rejected call names the tool (Gemini's functionResponse requires it).
    expected = _outcome(_call("get_weather", "call_1", None))
    assert compare_outcomes(expected, _outcome(_call("get_weather", "call_1", None))) == []
    assert compare_outcomes(expected, _outcome(_call("get", "call_1", None))) == [
        "call 0 (get_weather, id 'call_1'): tool name 'get', the provider sent 'get_weather'"
    ]


def test_a_call_the_stream_never_named_must_not_run_and_takes_no_name() -> None:
    # Whatever its arguments: there is no tool to run (the handler checks' rule, invalid_arguments_flagged).
    expected = _outcome(_call(None, "call_1", {}))
    assert compare_outcomes(expected, _outcome(_call(None, "call_1", None))) == []
    assert compare_outcomes(expected, _outcome(_call("", "call_1", None))) == []
    assert compare_outcomes(expected, _outcome(_call(None, "call_1", {}))) == [
        "call 0 (None, id 'call_1'): must not be executable (the stream never named it: no tool to run), "
        "got arguments {}"
    ]
    assert compare_outcomes(expected, _outcome(_call("get_weather", "call_1", None))) == [
        "call 0 (None, id 'call_1'): tool name 'get_weather', but the stream never named it"
    ]
