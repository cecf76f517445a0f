"""Direct reproductions for langchain-core's streaming tool-call accumulation (no toolcall-conformance).

langchain's chat integrations turn each provider delta into one ``AIMessageChunk`` whose
``tool_call_chunks`` hold one ``tool_call_chunk(name=, args=, id=, index=)`` per tool delta (a field
the delta left out is ``None``), after a role-only first chunk, and merge them with ``+``; agents run
``.tool_calls`` and skip ``.invalid_tool_calls``. ``merge`` below is exactly that. Each test asserts
one behaviour of ``docs/matrix.md``: a defect (named in the matrix's failing cells) or a correct
behaviour the suite passes, so a behaviour that changes is noticed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core", reason="langchain-core is not installed (pip install '.[adapters]')")

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk


def tc(index, id=None, name=None, args=None):
    return AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name=name, args=args, id=id, index=index)])


def merge(*deltas):
    message = AIMessageChunk(content="")  # the role-only chunk every integration yields first
    for delta in deltas:
        message = message + (AIMessageChunk(content=delta) if isinstance(delta, str) else delta)
    return message


def calls(message):
    return [(c["id"], c["name"], c["args"]) for c in message.tool_calls]


def invalid(message):
    return [(c["id"], c["name"], c["args"]) for c in message.invalid_tool_calls]


# --- defects: the failing cells -------------------------------------------------------------------


def test_restated_name_is_concatenated():
    # tool_names_whole: equal ids are deduplicated when merging, equal names are concatenated
    m = merge(tc(0, "c1", "get_weather", '{"city":'), tc(0, "c1", "get_weather", ' "Rome"}'))
    assert calls(m) == [("c1", "get_weatherget_weather", {"city": "Rome"})]


def test_truncated_arguments_are_repaired_into_a_valid_call():
    # invalid_arguments_flagged: parse_partial_json turns truncated JSON into a call that runs
    m = merge(tc(0, "c1", "ui_show", '{"surface_type": "card", "data": '))
    assert calls(m) == [("c1", "ui_show", {"surface_type": "card"})] and m.invalid_tool_calls == []


def test_two_objects_in_one_buffer_keep_only_the_first():
    # invalid_arguments_flagged: the second object is dropped silently
    m = merge(tc(0, "c1", "lookup", '{"entity":"A"}{"entity":"B"}'))
    assert calls(m) == [("c1", "lookup", {"entity": "A"})] and m.invalid_tool_calls == []


def test_name_never_arriving_gives_a_valid_call_named_empty_string():
    # invalid_arguments_flagged: a call without a name runs (under the name '')
    assert calls(merge(tc(0, "c1", None, '{"a": 1}'))) == [("c1", "", {"a": 1})]


def test_continuation_after_a_second_id_on_an_index_goes_to_the_first_call():
    # invocations_match_stream: a second id on index 0 starts a new call, but id-less continuations
    # still land on the first entry of that index (servers that put every call on index 0)
    m = merge(tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", "{"), tc(0, args='"b": 2}'))
    assert calls(m) == [("call_2", "mul", {})]  # mul's '{' repaired to {}
    assert invalid(m) == [("call_1", "add", '{"a": 1}"b": 2}')]  # add gets mul's arguments appended


# --- correct behaviours the suite passes ---------------------------------------------------------


def test_split_name_late_id_and_arguments_before_the_name_are_joined():
    m = merge(tc(0, args='{"path": '), tc(0, name="read_"), tc(0, "call_late", "file", '"a.py"}'))
    assert calls(m) == [("call_late", "read_file", {"path": "a.py"})]


def test_interleaved_parallel_calls_are_routed_by_index():
    m = merge(tc(0, "a", "f", '{"x":'), tc(1, "b", "g", '{"y":'), tc(0, args="1}"), tc(1, args="2}"))
    assert calls(m) == [("a", "f", {"x": 1}), ("b", "g", {"y": 2})]


def test_empty_id_and_name_on_continuations_and_empty_arguments():
    assert calls(merge(tc(0, "c1", "f", '{"x":'), tc(0, "", "", "1}"))) == [("c1", "f", {"x": 1})]
    assert calls(merge(tc(0, "c1", "list_files", ""))) == [("c1", "list_files", {})]


def test_same_provider_id_on_two_indices_and_sparse_indices_stay_separate_calls():
    m = merge(tc(1, "dup", "ping", '{"n": 1}'), tc(3, "dup", "ping", '{"n": 2}'))
    assert calls(m) == [("dup", "ping", {"n": 1}), ("dup", "ping", {"n": 2})]


def test_non_object_arguments_are_invalid_tool_calls():
    m = merge(tc(0, "c1", "f", "[1, 2]"))
    assert m.tool_calls == [] and invalid(m) == [("c1", "f", "[1, 2]")]


def test_text_is_one_string_in_wire_order():
    m = merge("pre ", tc(0, "a", "f", '{"x":'), "mid ", tc(0, args="1}"), "post")
    assert m.content == "pre mid post" and calls(m) == [("a", "f", {"x": 1})]
