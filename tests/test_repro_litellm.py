"""Direct reproductions for litellm's streaming tool-call accumulation (no toolcall-conformance).

``litellm.stream_chunk_builder`` folds the OpenAI-shaped chunks ``litellm.completion(stream=True)``
yields (one per provider delta, after a role-only chunk) into a response whose ``tool_calls`` carry
the raw argument text. Each test asserts one behaviour of ``docs/matrix.md``: a defect (named in
the matrix's failing cells) or a correct behaviour the suite passes.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before import: no network fetch of the cost map
litellm = pytest.importorskip("litellm", reason="litellm is not installed (pip install '.[adapters]')")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")  # litellm's own


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-x",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def tc(index, id=None, name=None, args=None):
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    entry = {"index": index, "function": function}
    if id is not None:
        entry["id"] = id
    if id is not None or name is not None:
        entry["type"] = "function"
    return {"tool_calls": [entry]}


def build(*deltas, finish="tool_calls"):
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": d} if isinstance(d, str) else d) for d in deltas]
    chunks.append(chunk({}, finish))
    return litellm.stream_chunk_builder(chunks)


def calls(response):
    return [(c.id, c.function.name, c.function.arguments) for c in response.choices[0].message.tool_calls or []]


# --- defects: the failing cells -------------------------------------------------------------------


def test_call_without_any_id_is_dropped_silently():
    # segment_per_call: `if id and name` drops calls from providers that send no id (Gemini-style servers)
    r = build("Let me look.", tc(0, None, "search", '{"q": '), tc(0, args='"tides"}'))
    assert calls(r) == [] and r.choices[0].message.content == "Let me look."


def test_name_never_arriving_drops_the_call_silently():
    # segment_per_call: a call whose name never arrives disappears instead of being reported
    assert calls(build(tc(0, "call_nameless", None, '{"a": 1}'))) == []


def test_calls_sharing_an_index_are_merged_later_id_and_name_win():
    # segment_per_call: a second id on an occupied index (servers that put every call on index 0)
    r = build(tc(0, "call_1", "add", '{"a": 1}'), tc(0, "call_2", "mul", '{"b": 2}'))
    assert calls(r) == [("call_2", "mul", '{"a": 1}{"b": 2}')]


def test_arguments_before_a_split_name_keep_only_the_last_name_fragment():
    # tool_names_whole: the name is overwritten by each fragment, so 'read_' + 'file' ends as 'file'
    r = build(tc(0, args='{"path": '), tc(0, name="read_"), tc(0, "call_late", "file", '"a.py"}'))
    assert calls(r) == [("call_late", "file", '{"path": "a.py"}')]
    assert calls(build(tc(0, "c1", "read_", ""), tc(0, None, "file", "{}"))) == [("c1", "file", "{}")]


# --- correct behaviours the suite passes ---------------------------------------------------------


def test_restated_name_and_id_are_kept_once():
    r = build(tc(0, "call_r", "get_weather", '{"city":'), tc(0, "call_r", "get_weather", ' "Rome"}'))
    assert calls(r) == [("call_r", "get_weather", '{"city": "Rome"}')]


def test_late_id_empty_continuations_and_interleaving():
    assert calls(build(tc(0, None, "f", '{"x":'), tc(0, "c1", None, "1}"))) == [("c1", "f", '{"x":1}')]
    assert calls(build(tc(0, "c1", "f", '{"x":'), tc(0, "", "", "1}"))) == [("c1", "f", '{"x":1}')]
    r = build(tc(0, "a", "f", '{"x":'), tc(1, "b", "g", '{"y":'), tc(0, args="1}"), tc(1, args="2}"))
    assert calls(r) == [("a", "f", '{"x":1}'), ("b", "g", '{"y":2}')]


def test_same_provider_id_on_two_indices_and_sparse_indices_stay_separate_calls():
    r = build(tc(1, "dup", "ping", '{"n": 1}'), tc(3, "dup", "ping", '{"n": 2}'))
    assert calls(r) == [("dup", "ping", '{"n": 1}'), ("dup", "ping", '{"n": 2}')]


def test_text_and_reasoning_are_accumulated():
    r = build({"reasoning_content": "thi"}, {"reasoning_content": "nk"}, "pre ", tc(0, "a", "f", "{}"), "post")
    message = r.choices[0].message
    assert (message.reasoning_content, message.content) == ("think", "pre post")


def test_empty_arguments_become_an_empty_object():
    assert calls(build(tc(0, "c1", "list_files", ""))) == [("c1", "list_files", "{}")]
