"""``verdict.signature``: the kind of failure a message describes, which decides what is shown once
and what the shrinking search must reproduce. A signature that kept a random value would make the
same bug look new on every run (and shrinking it would never find it again)."""

from __future__ import annotations

from conformance.verdict import signature


def test_an_apostrophe_inside_a_word_is_prose_not_a_quote() -> None:
    one = "call 1 (f id='toolu_1x'): the provider's id 'toolu_1x' is on no END (segment 'e45c550259e1')"
    other = "call 0 (g id='call_9'): the provider's id 'call_9' is on no END (segment '0a1b2c3d4e5f')"
    assert signature(one) == signature(other) == "call _ (_ id=_): the provider's id _ is on no END (segment _)"


def test_the_tool_a_call_label_names_is_data_not_the_kind() -> None:
    # The same concatenated name, drawn on two tools: one finding, not two.
    weather = "call 0 (get_weather id='call_0') ran under the name 'get_weatherget_weather'"
    time = "call 2 (get_time, id 'c2'): tool name 'get_timeget_time', the provider sent 'get_time'"
    assert signature(weather) == "call _ (_ id=_) ran under the name _"
    assert signature(time) == "call _ (_, id _): tool name _, the provider sent _"
    assert signature("call 1 (None id=None) ran") == "call _ (_ id=None) ran"
    cut = "call 0 (rea id='call_0') must not run (the stream ended abnormally), but it ran as rea({}) id='call_0'"
    other = "call 0 (search id='call_0') must not run (the stream ended abnormally), but it ran as search({}) id='c'"
    assert signature(cut) == signature(other)


def test_nested_objects_and_lists_are_one_value() -> None:
    deep = 'it ran as f({"deep": [{"level": 25, "next": [1, {}]}], "k": [[false, null]]}) id=None'
    flat = "it ran as f({}) id=None"
    assert signature(deep) == signature(flat) == "it ran as _(_) id=None"


def test_different_kinds_stay_different() -> None:
    ended = "call 0 (read_file id='c') ended with tool name 'r'; the stream sent 'read_file'"
    started = "call 0 (read_file id='c') started with tool name None, but the whole name 'read_file' had arrived"
    assert signature(ended) != signature(started)


def test_only_the_first_line_counts() -> None:
    assert signature("text '0' went into segment #…ddf987eb\nmore detail") == "text _ went into segment _"


def test_a_line_separator_inside_a_value_does_not_cut_the_message() -> None:
    message = 'it ran as ({"": [[false, null, "\u2028"]]}) id=None'
    assert signature(message) == "it ran as (_) id=None"
