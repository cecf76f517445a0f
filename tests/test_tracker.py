"""ToolCallTracker: provider keys -> dense tool indexes, linear accumulation, typed errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_impl.tracker import (
    AliasConflictError,
    CallCompletedError,
    CallConflictError,
    DuplicateCallError,
    InvalidKeyError,
    ProviderKey,
    ToolCallTracker,
    TrackedCall,
    TrackerError,
    UnknownCallError,
)

# -- start_call --------------------------------------------------------------------------------


def test_start_call_assigns_dense_indexes_in_order_of_first_appearance() -> None:
    tracker = ToolCallTracker()
    first = tracker.start_call("fc_b", call_id="call_b", name="lookup")
    second = tracker.start_call("fc_a", call_id="call_a", name="fetch")
    assert (first.index, first.call_id, first.name, first.keys) == (0, "call_b", "lookup", ("fc_b",))
    assert (second.index, second.call_id, second.name) == (1, "call_a", "fetch")
    assert not first.completed
    assert first.arguments == ""
    assert tracker.calls() == [first, second]
    assert len(tracker) == 2


def test_start_call_treats_empty_id_and_name_as_absent() -> None:
    call = ToolCallTracker().start_call(0, call_id="", name="")
    assert call.call_id is None
    assert call.name is None


def test_start_call_without_id_or_name() -> None:
    call = ToolCallTracker().start_call(3)
    assert (call.index, call.call_id, call.name) == (0, None, None)


def test_duplicate_start_of_an_open_key_is_a_typed_error_and_changes_nothing() -> None:
    tracker = ToolCallTracker()
    original = tracker.start_call("fc_1", call_id="call_1", name="f")
    with pytest.raises(DuplicateCallError, match=r"'fc_1'.*open call #0") as info:
        tracker.start_call("fc_1", call_id="call_2", name="g")
    assert info.value.key == "fc_1"
    assert isinstance(info.value, TrackerError)
    assert isinstance(info.value, ValueError)
    assert tracker.lookup("fc_1") is original
    assert len(tracker) == 1


def test_duplicate_start_through_an_alias_is_rejected_before_anything_is_registered() -> None:
    tracker = ToolCallTracker()
    tracker.start_call("fc_1", aliases=[0])
    with pytest.raises(DuplicateCallError, match=r"alias 0"):
        tracker.start_call("fc_2", aliases=[0])
    # Atomic: the primary key of the failed start was not registered either.
    assert tracker.lookup("fc_2") is None
    assert len(tracker) == 1


def test_a_key_of_a_completed_call_can_start_a_new_call_with_a_new_index() -> None:
    tracker = ToolCallTracker()
    old = tracker.start_call(1, call_id="toolu_a", name="f")
    tracker.append_arguments(1, '{"x": 1}')
    tracker.complete_call(1)
    new = tracker.start_call(1, call_id="toolu_b", name="g")
    assert new is not old
    assert new.index == 1
    assert tracker.lookup(1) is new
    tracker.append_arguments(1, "{}")
    assert old.arguments == '{"x": 1}'
    assert new.arguments == "{}"
    assert tracker.calls() == [old, new]


def test_start_call_takes_over_only_the_reused_keys_of_a_completed_call() -> None:
    tracker = ToolCallTracker()
    old = tracker.start_call("fc_1", aliases=[0])
    tracker.complete_call(0)
    new = tracker.start_call("fc_2", aliases=[0])
    assert tracker.lookup(0) is new
    assert tracker.lookup("fc_1") is old


def test_aliases_are_deduplicated_and_must_not_be_a_bare_string() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call("fc_1", aliases=["fc_1", 0, 0])
    assert call.keys == ("fc_1", 0)
    with pytest.raises(TypeError, match="aliases"):
        tracker.start_call("fc_2", aliases="fc_2")


@pytest.mark.parametrize("bad_key", [True, False, 1.0, None, b"fc", ("a",)])
def test_keys_must_be_str_or_int(bad_key: object) -> None:
    tracker = ToolCallTracker()
    with pytest.raises(TypeError, match="provider key"):
        tracker.start_call(bad_key)  # type: ignore[arg-type]
    assert len(tracker) == 0


def test_bool_is_not_an_alias_for_block_index_one() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(1)
    with pytest.raises(TypeError):
        tracker.append_arguments(True, "{}")
    assert True not in tracker
    assert 1 in tracker


def test_empty_string_key_is_rejected() -> None:
    tracker = ToolCallTracker()
    with pytest.raises(InvalidKeyError, match="empty string"):
        tracker.start_call("")
    tracker.start_call("fc_1")
    with pytest.raises(InvalidKeyError):
        tracker.add_alias("fc_1", "")


@pytest.mark.parametrize("field", ["call_id", "name"])
def test_start_call_rejects_non_string_id_or_name(field: str) -> None:
    with pytest.raises(TypeError, match=field):
        ToolCallTracker().start_call(0, **{field: 7})  # type: ignore[arg-type]


# -- add_alias ---------------------------------------------------------------------------------


def test_add_alias_routes_events_by_either_key() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call("fc_1", call_id="call_1", name="f")
    assert tracker.add_alias("fc_1", 0) is call
    assert call.keys == ("fc_1", 0)
    tracker.append_arguments(0, '{"a"')
    tracker.append_arguments("fc_1", ": 1}")
    assert tracker.complete_call(0).arguments == '{"a": 1}'


def test_add_alias_is_idempotent_for_the_same_call() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call("fc_1", aliases=[0])
    assert tracker.add_alias(0, "fc_1") is call
    assert call.keys == ("fc_1", 0)


def test_add_alias_of_an_unknown_key_is_a_typed_error() -> None:
    with pytest.raises(UnknownCallError, match=r"add_alias for unknown key 'fc_9'"):
        ToolCallTracker().add_alias("fc_9", 0)


@pytest.mark.parametrize("complete_other", [False, True])
def test_add_alias_never_steals_another_calls_key(complete_other: bool) -> None:
    tracker = ToolCallTracker()
    other = tracker.start_call("fc_1")
    if complete_other:
        tracker.complete_call("fc_1")
    tracker.start_call("fc_2")
    with pytest.raises(AliasConflictError, match=r"'fc_1'.*already belongs to call #0") as info:
        tracker.add_alias("fc_2", "fc_1")
    assert info.value.key == "fc_1"
    assert tracker.lookup("fc_1") is other


def test_add_alias_to_a_completed_call_is_allowed() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call("fc_1")
    tracker.complete_call("fc_1")
    assert tracker.add_alias("fc_1", 4) is call
    assert tracker.lookup(4) is call


# -- update_call -------------------------------------------------------------------------------


def test_update_call_adopts_a_late_id_and_name() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    call = tracker.update_call(0, call_id="call_late")
    assert (call.call_id, call.name) == ("call_late", None)
    tracker.update_call(0, name="search")
    assert (call.call_id, call.name) == ("call_late", "search")


def test_update_call_ignores_empty_and_restated_values() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call(0, call_id="call_1", name="f")
    tracker.update_call(0, call_id="", name="")
    tracker.update_call(0, call_id="call_1", name="f")
    tracker.update_call(0)
    assert (call.call_id, call.name) == ("call_1", "f")


@pytest.mark.parametrize(("field", "old", "new"), [("call_id", "call_1", "call_2"), ("name", "add", "mul")])
def test_update_call_with_a_different_value_is_a_conflict_and_changes_nothing(field: str, old: str, new: str) -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call(0, **{field: old})
    with pytest.raises(CallConflictError, match=rf"{field} '{new}'.*already has {field} '{old}'") as info:
        tracker.update_call(0, **{field: new})
    assert info.value.key == 0
    assert getattr(call, field) == old


def test_update_call_conflict_leaves_the_other_field_untouched() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call(0, call_id="call_1")
    with pytest.raises(CallConflictError):
        tracker.update_call(0, call_id="call_2", name="f")
    assert call.name is None


def test_update_call_of_an_unknown_key_is_a_typed_error() -> None:
    with pytest.raises(UnknownCallError, match="update_call"):
        ToolCallTracker().update_call(0, call_id="x")


def test_update_call_on_a_completed_call_adopts_a_missing_id() -> None:
    tracker = ToolCallTracker()
    tracker.start_call("fc_1")
    tracker.complete_call("fc_1")
    assert tracker.update_call("fc_1", call_id="call_1").call_id == "call_1"


# -- append_arguments --------------------------------------------------------------------------


def test_append_arguments_accumulates_in_order_and_returns_the_call() -> None:
    tracker = ToolCallTracker()
    started = tracker.start_call("fc_1")
    for piece in ['{"q"', ': "', "x", '"}']:
        assert tracker.append_arguments("fc_1", piece) is started
    assert started.arguments == '{"q": "x"}'
    assert started.streamed_arguments == '{"q": "x"}'


def test_append_empty_delta_is_accepted_and_changes_nothing() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(1, call_id="toolu_1", name="get_time")
    tracker.append_arguments(1, "")
    assert tracker.complete_call(1).arguments == ""


def test_delta_before_start_is_an_unknown_call_error_not_a_key_error() -> None:
    tracker = ToolCallTracker()
    with pytest.raises(UnknownCallError, match=r"append_arguments for unknown key 'fc_1'.*known keys: none") as info:
        tracker.append_arguments("fc_1", "{}")
    assert not isinstance(info.value, KeyError)
    assert info.value.key == "fc_1"


def test_unknown_key_message_points_out_int_and_str_twins() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(1)
    with pytest.raises(UnknownCallError, match=r"compared exactly: 1 is known, '1' is not"):
        tracker.append_arguments("1", "{}")
    tracker.start_call("2")
    with pytest.raises(UnknownCallError, match=r"compared exactly: '2' is known, 2 is not"):
        tracker.append_arguments(2, "{}")


def test_unknown_key_message_lists_a_bounded_number_of_keys() -> None:
    tracker = ToolCallTracker()
    for key in range(25):
        tracker.start_call(key)
    with pytest.raises(UnknownCallError, match=r"known keys: 0, 1, .*, 9 and 15 more"):
        tracker.append_arguments("nope", "{}")


def test_append_after_complete_is_a_typed_error() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(1, call_id="toolu_1", name="f")
    tracker.append_arguments(1, "{}")
    tracker.complete_call(1)
    with pytest.raises(CallCompletedError, match=r"key 1 after its call #0.*completed") as info:
        tracker.append_arguments(1, "x")
    assert info.value.key == 1
    assert tracker.lookup(1) is not None
    assert tracker.lookup(1).arguments == "{}"  # type: ignore[union-attr]


def test_append_rejects_non_string_delta() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    with pytest.raises(TypeError, match="argument delta"):
        tracker.append_arguments(0, None)  # type: ignore[arg-type]


# -- complete_call -----------------------------------------------------------------------------


def test_complete_call_joins_once_and_marks_completed() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call(0)
    tracker.append_arguments(0, '{"a":')
    tracker.append_arguments(0, "1}")
    completed = tracker.complete_call(0)
    assert completed is call
    assert call.completed
    assert call.arguments == '{"a":1}'
    assert call.arguments is call.arguments  # stored, not re-joined on each read
    assert call.unstreamed_suffix == ""
    assert not call.arguments_mismatch
    assert tracker.open_calls() == []


def test_complete_unknown_key_is_a_typed_error() -> None:
    with pytest.raises(UnknownCallError, match="complete_call for unknown key 3"):
        ToolCallTracker().complete_call(3)


def test_complete_twice_is_a_typed_error() -> None:
    tracker = ToolCallTracker()
    tracker.start_call("fc_1", aliases=[0])
    tracker.complete_call("fc_1")
    with pytest.raises(CallCompletedError, match=r"complete_call for key 0.*already completed"):
        tracker.complete_call(0)


def test_final_arguments_without_deltas_become_the_arguments_and_the_suffix() -> None:
    # Taxonomy A15: some Responses producers send the arguments only in `.done`.
    tracker = ToolCallTracker()
    tracker.start_call("fc_1", call_id="call_1", name="shell", aliases=[0])
    call = tracker.complete_call("fc_1", final_arguments='{"cmd":"ls"}')
    assert call.arguments == '{"cmd":"ls"}'
    assert call.streamed_arguments == ""
    assert call.unstreamed_suffix == '{"cmd":"ls"}'
    assert not call.arguments_mismatch


def test_final_arguments_equal_to_the_stream_leave_nothing_unstreamed() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    tracker.append_arguments(0, '{"q":')
    tracker.append_arguments(0, '"x"}')
    call = tracker.complete_call(0, final_arguments='{"q":"x"}')
    assert call.unstreamed_suffix == ""
    assert call.arguments == '{"q":"x"}'


def test_final_arguments_extending_the_stream_expose_only_the_missing_tail() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    tracker.append_arguments(0, '{"q":')
    call = tracker.complete_call(0, final_arguments='{"q":"x"}')
    assert call.unstreamed_suffix == '"x"}'
    assert call.streamed_arguments + call.unstreamed_suffix == call.arguments


def test_final_arguments_contradicting_the_stream_win_and_are_flagged() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    tracker.append_arguments(0, '{"q":"y"')
    call = tracker.complete_call(0, final_arguments='{"q":"x"}')
    assert call.arguments == '{"q":"x"}'
    assert call.streamed_arguments == '{"q":"y"'
    assert call.arguments_mismatch
    assert call.unstreamed_suffix == ""


def test_final_arguments_must_be_a_string() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    with pytest.raises(TypeError, match="final_arguments"):
        tracker.complete_call(0, final_arguments={"a": 1})  # type: ignore[arg-type]
    assert not tracker.lookup(0).completed  # type: ignore[union-attr]


# -- reading -----------------------------------------------------------------------------------


def test_lookup_returns_none_for_unknown_keys_and_checks_the_type() -> None:
    tracker = ToolCallTracker()
    assert tracker.lookup("fc_1") is None
    call = tracker.start_call("fc_1")
    assert tracker.lookup("fc_1") is call
    with pytest.raises(TypeError):
        tracker.lookup(None)  # type: ignore[arg-type]


def test_contains_never_raises() -> None:
    tracker = ToolCallTracker()
    tracker.start_call(0)
    assert 0 in tracker
    assert "0" not in tracker
    assert None not in tracker
    assert [0] not in tracker  # unhashable: no TypeError


def test_calls_and_open_calls_are_in_index_order_and_are_copies() -> None:
    tracker = ToolCallTracker()
    a = tracker.start_call("a")
    b = tracker.start_call("b")
    c = tracker.start_call("c")
    tracker.complete_call("b")
    assert tracker.open_calls() == [a, c]
    listing = tracker.calls()
    listing.clear()
    assert tracker.calls() == [a, b, c]


def test_open_call_arguments_are_readable_before_completion() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call(0)
    tracker.append_arguments(0, '{"partial"')
    assert call.arguments == '{"partial"'
    assert call.streamed_arguments == '{"partial"'


def test_tracked_call_is_read_only_for_callers() -> None:
    call = ToolCallTracker().start_call(0, call_id="c", name="f")
    with pytest.raises(AttributeError):
        call.index = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        call.call_id = "other"  # type: ignore[misc]


def test_reprs_are_informative() -> None:
    tracker = ToolCallTracker()
    call = tracker.start_call("fc_1", call_id="call_1", name="f")
    tracker.append_arguments("fc_1", "{}")
    assert repr(call) == "TrackedCall(index=0, call_id='call_1', name='f', keys=('fc_1',), open, 2 argument chars)"
    assert repr(tracker) == "ToolCallTracker(1 calls, 1 open)"


def test_reset_forgets_everything() -> None:
    tracker = ToolCallTracker()
    tracker.start_call("fc_1", aliases=[0])
    tracker.reset()
    assert len(tracker) == 0
    assert tracker.lookup("fc_1") is None
    assert tracker.start_call("fc_1").index == 0


# -- provider scenarios ------------------------------------------------------------------------


def test_anthropic_block_indexes_starting_at_one_map_to_dense_zero_and_one() -> None:
    # content_block 0 is text; tools are blocks 1 and 2 (taxonomy A03).
    tracker = ToolCallTracker()
    read = tracker.start_call(1, call_id="toolu_1", name="read_file")
    tracker.append_arguments(1, "")
    tracker.append_arguments(1, '{"path":')
    tracker.append_arguments(1, '"a"}')
    tracker.complete_call(1)
    write = tracker.start_call(2, call_id="toolu_2", name="write_file")
    tracker.append_arguments(2, '{"path":"b"}')
    tracker.complete_call(2)
    assert [(c.index, c.call_id, c.name, c.arguments) for c in tracker.calls()] == [
        (0, "toolu_1", "read_file", '{"path":"a"}'),
        (1, "toolu_2", "write_file", '{"path":"b"}'),
    ]
    assert (read.index, write.index) == (0, 1)


def test_responses_interleaved_parallel_calls_keyed_by_item_id() -> None:
    # Taxonomy A13/B02: parallel Responses calls interleave; deltas carry item_id, never call_id.
    tracker = ToolCallTracker()
    tracker.start_call("fc_w", call_id="call_w", name="weather", aliases=[1])
    tracker.start_call("fc_t", call_id="call_t", name="time", aliases=[2])
    for item_id, delta in [
        ("fc_w", '{"city":'),
        ("fc_t", '{"tz":'),
        ("fc_w", '"NYC"}'),
        ("fc_t", '"EST"}'),
    ]:
        tracker.append_arguments(item_id, delta)
    # `.done` events route by output_index, with the terminal snapshot.
    weather = tracker.complete_call(1, final_arguments='{"city":"NYC"}')
    time = tracker.complete_call(2, final_arguments='{"tz":"EST"}')
    assert (weather.index, weather.call_id, weather.arguments) == (0, "call_w", '{"city":"NYC"}')
    assert (time.index, time.call_id, time.arguments) == (1, "call_t", '{"tz":"EST"}')
    assert weather.unstreamed_suffix == time.unstreamed_suffix == ""


def test_repeated_provider_call_ids_stay_separate_calls() -> None:
    # Taxonomy B06: some providers reuse one id for parallel calls; keys, not ids, identify calls.
    tracker = ToolCallTracker()
    tracker.start_call(0, call_id="call_x", name="read")
    tracker.start_call(1, call_id="call_x", name="read")
    tracker.append_arguments(0, '{"p":"a"}')
    tracker.append_arguments(1, '{"p":"b"}')
    assert [c.arguments for c in tracker.calls()] == ['{"p":"a"}', '{"p":"b"}']


# -- property: any interleaving keeps each call's fragments together and in order ---------------

_key = st.one_of(st.integers(min_value=-3, max_value=50), st.text(min_size=1, max_size=6))


@st.composite
def _interleaved_calls(draw: st.DrawFn) -> tuple[list[tuple[ProviderKey, list[str]]], list[int]]:
    keys = draw(st.lists(_key, min_size=1, max_size=6, unique=True))
    calls = [(key, draw(st.lists(st.text(max_size=5), max_size=8))) for key in keys]
    # One slot per event: a start, each append and a completion; a call's events stay in order.
    remaining = [len(pieces) + 2 for _, pieces in calls]
    order: list[int] = []
    while any(remaining):
        live = [i for i, count in enumerate(remaining) if count]
        chosen = draw(st.sampled_from(live))
        order.append(chosen)
        remaining[chosen] -= 1
    return calls, order


@given(_interleaved_calls())
def test_any_interleaving_yields_each_calls_pieces_concatenated(
    case: tuple[list[tuple[ProviderKey, list[str]]], list[int]],
) -> None:
    calls, order = case
    tracker = ToolCallTracker()
    progress = [0] * len(calls)
    first_seen: list[int] = []
    for which in order:
        key, pieces = calls[which]
        step = progress[which]
        progress[which] += 1
        if step == 0:
            tracker.start_call(key, name=f"tool{which}")
            first_seen.append(which)
        elif step <= len(pieces):
            tracker.append_arguments(key, pieces[step - 1])
        else:
            tracker.complete_call(key)
    tracked = tracker.calls()
    assert [call.index for call in tracked] == list(range(len(calls)))
    assert [call.name for call in tracked] == [f"tool{which}" for which in first_seen]
    for call, which in zip(tracked, first_seen, strict=True):
        assert call.completed
        assert call.arguments == "".join(calls[which][1])


def test_tracked_call_type_is_exported() -> None:
    assert isinstance(ToolCallTracker().start_call(0), TrackedCall)
