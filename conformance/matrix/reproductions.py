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
_SMOLAGENTS = "tests/test_repro_smolagents.py::"
_AGNO = "tests/test_repro_agno.py::"
_STRANDS = "tests/test_repro_strands.py::"
_HAYSTACK = "tests/test_repro_haystack.py::"
_NODE_FW = "tests/test_bridge_node_fw.py::test_the_reproduction_shows_the_defect[{}]"
# The Node scripts that show what a column does where the matrix finds no defect (outside target, a policy).
_NODE_SDKS_SHOWN = "tests/test_bridge_node_sdks.py::test_the_reproduction_shows_the_behaviour[{}]"
_NODE_FW_SHOWN = "tests/test_bridge_node_fw.py::test_the_reproduction_shows_the_behaviour[{}]"

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
    ("smolagents", "stack_outcome_matches"): (
        Reproduction(
            _SMOLAGENTS + "test_stream_cut_before_its_terminal_event_runs_the_call_and_raises_nothing",
            recordings=("openai-chat/stream_cut_after_arguments.yaml", "generated/openai-chat/013"),
        ),
        Reproduction(
            _SMOLAGENTS + "test_stream_cut_mid_arguments_is_not_surfaced",
            recordings=("openai-chat/stream_cut_mid_call.yaml", "generated/openai-chat/000"),
        ),
        Reproduction(
            _SMOLAGENTS + "test_every_call_on_index_zero_is_merged_into_one",
            recordings=("openai-compatible/dialect_index_always_zero.yaml", "generated/openai-chat/015"),
        ),
        Reproduction(
            _SMOLAGENTS + "test_tool_deltas_without_an_index_crash_the_step",
            recordings=("openai-compatible/dialect_no_index.yaml",),
        ),
        Reproduction(
            _SMOLAGENTS + "test_object_arguments_crash_the_step_where_the_type_says_text",
            recordings=("openai-compatible/dialect_object_arguments.yaml",),
        ),
    ),
    ("agno", "stack_outcome_matches"): (
        Reproduction(
            _AGNO + "test_stream_cut_before_its_terminal_event_runs_the_call",
            recordings=("openai-chat/stream_cut_after_arguments.yaml", "generated/openai-chat/013"),
        ),
        Reproduction(
            _AGNO + "test_claude_stream_cut_before_message_stop_runs_a_closed_tool_block",
            recordings=("generated/anthropic/021", "generated/anthropic/022"),
        ),
        Reproduction(
            _AGNO + "test_stream_cut_mid_call_completes_the_run_without_an_error",
            recordings=("openai-chat/stream_cut_mid_call.yaml", "generated/openai-chat/000"),
        ),
        Reproduction(
            _AGNO + "test_claude_stream_cut_mid_call_drops_the_call_and_completes_the_run",
            recordings=(
                "anthropic/stream_cut_after_arguments.yaml",
                "anthropic/stream_cut_mid_call.yaml",
                *(f"generated/anthropic/{n:03d}" for n in (0, 13, 23, 24, 25, 26, 27, 28, 29)),
            ),
        ),
        Reproduction(
            _AGNO + "test_claude_max_tokens_with_an_open_tool_block_drops_the_call_silently",
            recordings=("anthropic/truncated_max_tokens.yaml",),
        ),
        Reproduction(
            _AGNO + "test_claude_max_tokens_after_a_closed_tool_block_still_runs_it",
            recordings=tuple(f"generated/anthropic/{n:03d}" for n in (17, 18, 19, 20)),
        ),
        Reproduction(
            _AGNO + "test_calls_sharing_index_zero_are_merged_into_one",
            recordings=("openai-compatible/dialect_index_always_zero.yaml", "generated/openai-chat/015"),
        ),
        Reproduction(
            _AGNO + "test_tool_deltas_without_an_index_are_merged_into_one",
            recordings=("openai-compatible/dialect_no_index.yaml",),
        ),
        Reproduction(
            _AGNO + "test_object_arguments_are_not_decoded_and_the_call_never_runs",
            recordings=("openai-compatible/dialect_object_arguments.yaml",),
        ),
    ),
    ("strands-agents", "stack_outcome_matches"): (
        Reproduction(
            _STRANDS + "test_stream_cut_before_message_stop_reads_as_a_finished_end_turn", "without its terminal event"
        ),
    ),
    ("haystack-ai", "stack_outcome_matches"): (
        Reproduction(
            _HAYSTACK + "test_stream_cut_after_complete_arguments_runs_the_call_and_reports_nothing",
            recordings=("openai-chat/stream_cut_after_arguments.yaml", "generated/openai-chat/013"),
        ),
        Reproduction(
            _HAYSTACK + "test_stream_cut_mid_arguments_drops_the_call_and_reports_no_error",
            recordings=("openai-chat/stream_cut_mid_call.yaml", "generated/openai-chat/000"),
        ),
        Reproduction(
            _HAYSTACK + "test_empty_string_id_on_a_continuation_erases_the_call_id",
            recordings=("openai-compatible/dialect_empty_string_continuations.yaml", "generated/openai-chat/008"),
        ),
        Reproduction(
            _HAYSTACK + "test_every_call_on_index_zero_is_merged_and_dropped_as_malformed",
            recordings=("openai-compatible/dialect_index_always_zero.yaml", "generated/openai-chat/015"),
        ),
        Reproduction(
            _HAYSTACK + "test_a_restated_name_is_concatenated_and_no_tool_has_it",
            recordings=("openai-compatible/dialect_name_restated.yaml",),
        ),
        Reproduction(
            _HAYSTACK + "test_tool_deltas_without_an_index_raise_value_error",
            recordings=("openai-compatible/dialect_no_index.yaml",),
        ),
        Reproduction(
            _HAYSTACK + "test_object_arguments_raise_type_error",
            recordings=("openai-compatible/dialect_object_arguments.yaml",),
        ),
        Reproduction(_HAYSTACK + "test_a_complete_call_of_a_turn_cut_at_the_token_limit_still_runs", "token limit"),
    ),
    ("openai-node", "stack_outcome_matches"): (
        Reproduction(
            _NODE_SDKS_SHOWN.format("openai_chunk_message_field_replaces_the_accumulated_message.mjs"),
            recordings=("openai-compatible/dialect_message_and_delta.yaml",),
        ),
        Reproduction(
            _NODE_SDKS_SHOWN.format("openai_empty_arguments_refused_by_json_parse.mjs"),
            recordings=("openai-chat/no_argument_call.yaml",),
        ),
        Reproduction(
            _NODE_SDKS_SHOWN.format("openai_calls_on_index_zero_are_merged.mjs"),
            recordings=(
                "openai-compatible/dialect_index_always_zero.yaml",
                *(f"generated/openai-chat/{n:03d}" for n in (14, 15, 16, 17, 18)),
            ),
        ),
        Reproduction(
            _NODE_SDKS_SHOWN.format("openai_tool_deltas_without_index_raise.mjs"),
            recordings=("openai-compatible/dialect_no_index.yaml",),
        ),
    ),
    ("langchain-js", "stack_outcome_matches"): (
        Reproduction(
            _NODE_FW.format("langchain_truncated_arguments_repaired_into_a_valid_call.mjs"),
            recordings=("openai-chat/truncated_max_tokens.yaml", "generated/openai-chat/015"),
        ),
        Reproduction(
            _NODE_FW.format("langchain_index_zero_second_call_runs_with_empty_arguments.mjs"),
            recordings=("openai-compatible/dialect_index_always_zero.yaml", "generated/openai-chat/015"),
        ),
        Reproduction(
            _NODE_FW_SHOWN.format("langchain_call_without_id_is_invalid.mjs"),
            recordings=tuple(f"generated/openai-chat/{n:03d}" for n in (5, 6, 7)),
        ),
        Reproduction(_NODE_FW_SHOWN.format("langchain_cut_stream_gives_no_error.mjs"), "without its terminal event"),
        Reproduction(
            _NODE_FW_SHOWN.format("langchain_tool_deltas_without_index.mjs"),
            recordings=("openai-compatible/dialect_no_index.yaml",),
        ),
    ),
    ("mastra", "stack_outcome_matches"): (
        Reproduction(
            _NODE_FW.format("mastra_provider_unclosed_tool_input_dropped.mjs"),
            recordings=(
                "openai-chat/error_event_mid_call.yaml",
                "openai-chat/stream_cut_mid_call.yaml",
                "openai-chat/truncated_max_tokens.yaml",
                "generated/openai-chat/013",
            ),
        ),
        Reproduction(
            _NODE_FW.format("mastra_provider_empty_arguments_call_never_runs.mjs"),
            recordings=("openai-chat/no_argument_call.yaml",),
        ),
        Reproduction(
            _NODE_FW.format("mastra_provider_index_zero_second_call_dropped.mjs"),
            recordings=(
                "openai-compatible/dialect_index_always_zero.yaml",
                *(f"generated/openai-chat/{n:03d}" for n in (14, 15, 16, 17, 18)),
            ),
        ),
        Reproduction(
            _NODE_FW.format("mastra_provider_call_without_id_ends_the_turn.mjs"),
            recordings=(
                "openai-compatible/dialect_id_late.yaml",
                *(f"generated/openai-chat/{n:03d}" for n in (5, 6, 7)),
            ),
        ),
        Reproduction(
            _NODE_FW.format("mastra_runs_calls_of_a_step_that_failed.mjs"),
            recordings=(
                "openai-chat/stream_cut_after_arguments.yaml",
                *(f"generated/openai-chat/{n:03d}" for n in (14, 15, 16, 17, 18)),
            ),
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
    "smolagents": ("docs/matrix/repro/repro_smolagents.py", frozenset({"stack_outcome_matches"})),
    "agno": ("docs/matrix/repro/repro_agno.py", frozenset({"stack_outcome_matches"})),
    "strands-agents": ("docs/matrix/repro/repro_strands.py", frozenset({"stack_outcome_matches"})),
    "haystack-ai": ("docs/matrix/repro/repro_haystack.py", frozenset({"stack_outcome_matches"})),
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
