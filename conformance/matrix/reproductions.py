"""Which direct reproduction (a test in ``tests/`` that drives the library without the suite) backs each finding.

Every finding of a failing cell of the published matrix names at least one test here: a
``Reproduction`` of its cell whose ``finding`` pattern matches the finding's message (an empty
pattern matches every finding of the cell). ``tests/test_matrix.py`` checks that each named test
exists and that no published finding is without one, and the tests themselves assert the defect
(and the correct behaviours the suite passes), so a cell that flips is noticed twice. ``SUITE_BUGS`` holds the
failing cells suspected to be the suite's fault rather than the library's (their reproduction, in
``tests/test_matrix_suite_bugs.py``, shows the suite's wrong verdict): they are shown as such,
never as the library's defect.

The Vercel AI SDK runs in Node: its reproductions are the scripts under ``tests/repro_vercel/``, one
per finding (``conformance.adapters.vercel_ai_sdk.FINDINGS``), each run by a parametrized test of
``tests/test_bridge_repro_vercel.py`` (the node id names the script).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.adapters.vercel_ai_sdk import FINDINGS as _VERCEL_FINDINGS

__all__ = ["REPRODUCTIONS", "SCRIPTS", "SUITE_BUGS", "Reproduction", "reproductions_for", "script_for"]


@dataclass(frozen=True)
class Reproduction:
    """A test that shows a finding on the library alone, and which findings of its cell it shows: those
    failing on one of ``recordings`` (``Case.name`` s, a stack cell's), else those whose message
    ``finding`` (a regular expression) is found in; neither given: all of them."""

    node: str
    finding: str = ""
    recordings: tuple[str, ...] = ()

    def shows(self, message: str, recordings: Sequence[str] = ()) -> bool:
        if self.recordings:
            return not set(self.recordings).isdisjoint(recordings)
        return not self.finding or re.search(self.finding, message) is not None


_LANGCHAIN = "tests/test_repro_langchain_core.py::"
_PYDANTIC_AI = "tests/test_repro_pydantic_ai.py::"
_LITELLM = "tests/test_repro_litellm.py::"
_AGENTS = "tests/test_repro_openai_agents.py::"
_OPENAI = "tests/test_repro_openai.py::"
_ANTHROPIC = "tests/test_repro_anthropic.py::"
_VERCEL = "tests/test_bridge_repro_vercel.py::test_the_reproduction_still_reproduces[{}]"

REPRODUCTIONS: dict[tuple[str, str], tuple[Reproduction, ...]] = {
    ("langchain-core", "tool_names_whole"): (Reproduction(_LANGCHAIN + "test_restated_name_is_concatenated"),),
    ("langchain-core", "invalid_arguments_flagged"): (
        Reproduction(_LANGCHAIN + "test_truncated_arguments_are_repaired_into_a_valid_call"),
        Reproduction(_LANGCHAIN + "test_two_objects_in_one_buffer_keep_only_the_first"),
        Reproduction(_LANGCHAIN + "test_name_never_arriving_gives_a_valid_call_named_empty_string"),
    ),
    ("langchain-core", "segment_per_call"): (
        Reproduction(_LANGCHAIN + "test_continuation_after_a_second_id_on_an_index_goes_to_the_first_call"),
    ),
    ("langchain-core", "invocations_match_stream"): (
        Reproduction(_LANGCHAIN + "test_continuation_after_a_second_id_on_an_index_goes_to_the_first_call"),
    ),
    ("pydantic-ai", "no_crash"): (
        Reproduction(_PYDANTIC_AI + "test_nameless_call_before_a_named_one_crashes_the_stream_with_index_error"),
        Reproduction(_PYDANTIC_AI + "test_after_a_nameless_call_part_end_events_carry_the_wrong_part"),
    ),
    ("pydantic-ai", "segment_lifecycle"): (
        Reproduction(_PYDANTIC_AI + "test_interleaved_calls_end_the_first_part_before_its_last_delta"),
    ),
    ("pydantic-ai", "segment_per_call"): (
        Reproduction(_PYDANTIC_AI + "test_name_never_arriving_drops_the_call_silently"),
        Reproduction(_PYDANTIC_AI + "test_second_id_on_an_occupied_index_is_merged_into_the_first_call"),
        Reproduction(_PYDANTIC_AI + "test_late_id_after_an_early_part_end_the_end_event_carries_a_generated_id"),
    ),
    ("pydantic-ai", "invocations_match_stream"): (
        Reproduction(_PYDANTIC_AI + "test_restated_name_is_concatenated", "ran under the name '(\\w+)\\1'"),
    ),
    ("pydantic-ai", "tool_names_whole"): (
        Reproduction(_PYDANTIC_AI + "test_restated_name_is_concatenated"),
        Reproduction(_PYDANTIC_AI + "test_a_name_split_across_deltas_starts_the_part_with_its_first_fragment"),
    ),
    ("pydantic-ai", "provider_ids_kept"): (
        Reproduction(_PYDANTIC_AI + "test_late_id_after_an_early_part_end_the_end_event_carries_a_generated_id"),
    ),
    ("pydantic-ai", "invalid_arguments_flagged"): (
        Reproduction(_PYDANTIC_AI + "test_a_call_cut_by_the_token_limit_still_runs"),
        Reproduction(_PYDANTIC_AI + "test_second_id_on_an_occupied_index_is_merged_into_the_first_call"),
    ),
    ("litellm", "segment_per_call"): (
        Reproduction(_LITELLM + "test_call_without_any_id_is_dropped_silently"),
        Reproduction(_LITELLM + "test_calls_sharing_an_index_are_merged_later_id_and_name_win"),
        Reproduction(_LITELLM + "test_name_never_arriving_drops_the_call_silently"),
    ),
    ("litellm", "tool_names_whole"): (
        Reproduction(_LITELLM + "test_arguments_before_a_split_name_keep_only_the_last_name_fragment"),
    ),
    ("openai-agents", "text_segments_follow_wire"): (
        Reproduction(_AGENTS + "test_text_after_a_call_goes_into_the_message_opened_before_it"),
        Reproduction(_AGENTS + "test_reasoning_after_a_call_goes_into_the_reasoning_item_opened_before_it"),
    ),
    ("openai-agents", "segment_lifecycle"): (
        Reproduction(_AGENTS + "test_a_call_without_an_id_is_announced_at_the_end_under_another_calls_output_index"),
    ),
    ("openai-agents", "segment_per_call"): (
        Reproduction(_AGENTS + "test_calls_sharing_an_index_are_merged_later_id_and_name_win"),
    ),
    ("openai-agents", "tool_names_whole"): (
        Reproduction(_AGENTS + "test_arguments_before_a_split_name_keep_only_the_last_name_fragment"),
    ),
    ("openai-agents", "calls_in_wire_order"): (
        Reproduction(_AGENTS + "test_a_late_id_puts_the_calls_out_of_wire_order"),
    ),
    ("openai-agents", "argument_integrity"): (
        Reproduction(_AGENTS + "test_a_late_id_delays_the_call_and_drops_the_arguments_sent_before_it"),
    ),
    ("openai-agents", "arguments_stream_incrementally"): (
        Reproduction(_AGENTS + "test_a_late_id_delays_the_call_and_drops_the_arguments_sent_before_it"),
    ),
    ("openai", "stack_outcome_matches"): (
        Reproduction(
            _OPENAI + "test_stream_cut_before_its_terminal_event_gives_a_runnable_call_and_no_error",
            "without its terminal event",
        ),
        Reproduction(_OPENAI + "test_id_restated_on_every_chunk_is_concatenated", "call id '(call_\\w+)\\1"),
        Reproduction(_OPENAI + "test_name_restated_on_every_chunk_is_concatenated", "tool name '(\\w+)\\1"),
        Reproduction(_OPENAI + "test_every_call_on_index_zero_is_merged_into_one", r"tool calls expected .*, got 1"),
        Reproduction(_OPENAI + "test_tool_deltas_without_an_index_crash_handle_chunk", "raised TypeError"),
        Reproduction(_OPENAI + "test_explicit_null_type_on_a_continuation_trips_an_assertion", "raised AssertionError"),
        Reproduction(_OPENAI + "test_object_arguments_are_kept_as_a_dict_where_the_type_says_text", "got an error END"),
    ),
    ("anthropic", "stack_outcome_matches"): (
        Reproduction(
            _ANTHROPIC + "test_truncated_arguments_at_max_tokens_are_repaired_into_a_smaller_object", "token limit"
        ),
        Reproduction(
            _ANTHROPIC + "test_stream_cut_before_message_stop_gives_a_runnable_call_and_no_error",
            "without its terminal event",
        ),
        Reproduction(
            _ANTHROPIC + "test_stream_cut_mid_call_gives_a_partial_input_and_no_error", "without its terminal event"
        ),
    ),
    # The defects of FINDINGS fail this cell (tests/test_bridge_vercel.py asserts exactly those
    # fail; the legitimate alternatives and conventions are not applicable in the column).
    ("vercel-ai-sdk", "stack_outcome_matches"): tuple(
        Reproduction(
            _VERCEL.format(script),
            recordings=tuple(name for name, f in _VERCEL_FINDINGS.items() if f.reproduction == script),
        )
        for script in dict.fromkeys(f.reproduction for f in _VERCEL_FINDINGS.values() if f.kind == "defect")
    ),
}


# The standalone script of each library's failing cells: one file under docs/matrix/repro/ that imports
# only the library (never this project), runs offline, prints what the stream says and what the library
# did, and exits 1 while a defect it shows is still there (``python FILE CHECK`` runs one cell's
# findings). What a maintainer pastes into an issue; ``tests/test_matrix.py`` runs each, cut off from
# this project, and checks it covers exactly these cells.
SCRIPTS: dict[str, tuple[str, frozenset[str]]] = {
    "langchain-core": (
        "docs/matrix/repro/repro_langchain_core.py",
        frozenset({"tool_names_whole", "invalid_arguments_flagged", "segment_per_call", "invocations_match_stream"}),
    ),
    "pydantic-ai": (
        "docs/matrix/repro/repro_pydantic_ai.py",
        frozenset({"no_crash", "segment_per_call", "tool_names_whole", "invalid_arguments_flagged"}),
    ),
    "litellm": ("docs/matrix/repro/repro_litellm.py", frozenset({"segment_per_call"})),
    "openai-agents": ("docs/matrix/repro/repro_openai_agents.py", frozenset({"segment_per_call"})),
    "openai": ("docs/matrix/repro/repro_openai.py", frozenset({"stack_outcome_matches"})),
}


def script_for(column: str, check: str) -> str:
    """``"docs/matrix/repro/repro_x.py CHECK"``: the standalone script of a failing cell ("" when none)."""
    path, cells = SCRIPTS.get(column, ("", frozenset()))
    return f"{path} {check}" if check in cells else ""


def reproductions_for(column: str, check: str, message: str, recordings: Sequence[str] = ()) -> list[str]:
    """The tests that show the finding ``message`` (failing on ``recordings``, for a stack cell) of cell
    (``column``, ``check``) on the library alone."""
    return [r.node for r in REPRODUCTIONS.get((column, check), ()) if r.shows(message, recordings)]


# tests/test_matrix_suite_bugs.py keeps the suite bugs found while measuring as strict xfails,
# whether or not the current generator meets them; a cell listed here is published as a suite bug.
# None published at the moment (the pairing bug found on pydantic-ai's argument_integrity is fixed).
SUITE_BUGS: dict[tuple[str, str], str] = {}
