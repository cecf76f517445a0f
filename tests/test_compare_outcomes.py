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


# -- pairing: by provider id, else by wire position -------------------------------------------------


def test_an_idless_call_with_a_concatenated_name_is_that_calls_wrong_name_not_swapped_arguments() -> None:
    # Paired by name, the second call (whose name is right) stood for the first: the findings were
    # two calls' swapped arguments and an order problem, none of them the concatenated name.
    expected = _outcome(_call("get_weather", None, _PARIS), _call("get_weather", None, _OSLO))
    actual = _outcome(_call("get_weatherget_weather", None, _PARIS), _call("get_weather", None, _OSLO))
    assert compare_outcomes(expected, actual) == [
        "call 0 (get_weather, id None): tool name 'get_weatherget_weather', the provider sent 'get_weather'"
    ]


def test_an_idless_repaired_call_is_blamed_on_itself_not_on_a_later_invalid_call() -> None:
    # Paired by argument validity, the third call (rejected, like the first should be) stood for
    # the first: the finding landed on call 2 with an order problem [2, 1, 0].
    expected = _outcome(_call("f", None, None), _call("f", "call_1", {}), _call("f", None, None))
    actual = _outcome(_call("f", None, {}), _call("f", "call_1", {}), _call("f", None, None))
    assert compare_outcomes(expected, actual) == [
        "call 0 (f, id None): must not be executable (its arguments are invalid ('')), got arguments {}"
    ]


def test_a_lost_last_call_is_one_missing_call() -> None:
    expected = _outcome(_call("f", None, {"a": 1}), _call("g", None, {"b": 2}), _call("h", None, {"c": 3}))
    actual = _outcome(_call("f", None, {"a": 1}), _call("g", None, {"b": 2}))
    assert compare_outcomes(expected, actual) == [
        "3 tool calls expected (['f', 'g', 'h']), got 2 ([('f', None), ('g', None)])",
        "call 2 (h, id None): no call came out for it",
    ]


def test_a_lost_call_with_an_id_is_one_missing_call_wherever_it_was() -> None:
    expected = _outcome(_call("f", "a", {}), _call("g", "b", {}), _call("h", None, {}))
    actual = _outcome(_call("f", "a", {}), _call("h", None, {}))
    assert compare_outcomes(expected, actual) == [
        "3 tool calls expected (['f', 'g', 'h']), got 2 ([('f', 'a'), ('h', None)])",
        "call 1 (g, id 'b'): no call came out for it",
    ]


def test_a_call_that_lost_its_id_keeps_its_wire_slot() -> None:
    # It pairs with the call it is (the finding: a wrong id), and the id-less call after it with its own.
    expected = _outcome(_call("f", "call_1", _PARIS), _call("g", None, _OSLO))
    actual = _outcome(_call("f", None, _PARIS), _call("g", None, _OSLO))
    assert compare_outcomes(expected, actual) == ["call 0 (f, id 'call_1'): call id None, the provider sent 'call_1'"]


def test_calls_paired_by_id_keep_wire_order() -> None:
    expected = _outcome(_call("f", "a", {}), _call("g", None, {}))
    actual = _outcome(_call("g", None, {}), _call("f", "a", {}))
    assert compare_outcomes(expected, actual) == [
        "calls came out in the order [1, 0] of the stream's calls; they must keep wire order"
    ]
