"""How real an input is: the shapes a stream shows, the reviewed list behind them, and --realistic.

The shapes expected of each hand-written stream below are read off the stream by hand; the
reviewed list's verdicts (observed or theoretical) are its own, with evidence (docs/realism.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from conformance import run_conformance
from conformance.adapters.openai_wire import chunk_dict, role_chunk
from conformance.cli import main
from conformance.handler.generate import wire_scenarios
from conformance.handler.wire_dialects import rendering_dialects
from conformance.wire.shapes import OBSERVED, SHAPES, realism_of
from conformance.wire.stream_shapes import chunk_shapes, stream_realism
from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta
from tests.mutants import api_handler_mutants as mutants

ROOT = Path(__file__).resolve().parents[1]


def _tc(index: int, call_id: str | None = None, name: str | None = None, args: str | None = None) -> ChunkResponse:
    return ChunkResponse(tool_calls=[ToolCallDelta(index, call_id, name, args)])


END = ChunkResponse(is_complete=True, finish_reason="tool_calls")


@pytest.mark.parametrize(
    ("chunks", "shapes"),
    [
        # OpenAI's own shape: id and whole name first, arguments in pieces, a finish reason.
        ([_tc(0, "call_1", "f", '{"a"'), _tc(0, args=": 1}"), END], {"arguments_fragmented"}),
        ([_tc(0, args='{"a": 1}'), _tc(0, "call_1", "f"), END], {"id_late", "name_late"}),
        ([_tc(0, "call_1", "read_"), _tc(0, name="file", args="{}"), END], {"name_fragmented"}),
        ([_tc(0, "c", "f", "{"), _tc(0, "c", "f", "}"), END], {"id_restated", "name_restated", "arguments_fragmented"}),
        (
            [_tc(0, "c", "f", "{"), _tc(0, "", "", "}"), END],
            {"empty_string_continuation_fields", "arguments_fragmented"},
        ),
        ([_tc(0, "a", "f", "{}"), _tc(0, "b", "g", "{}"), END], {"index_reused"}),
        ([_tc(0, "a", "f", ""), _tc(0, "b", "g", '{"a": 1}'), END], {"index_reused", "arguments_empty"}),
        (
            [_tc(0, "a", "f", '{"a"'), _tc(0, "b", "g", ": 1}"), END],
            {
                "index_reused",
                "arguments_continue_across_ids",
                "arguments_truncated_normal_end",
                "arguments_invalid_json",
            },
        ),
        (
            [_tc(0, "a", "f", "{"), _tc(1, "b", "g", "{}"), _tc(0, args="}"), END],
            {"interleaved_calls", "arguments_fragmented"},
        ),
        ([_tc(2, "a", "f", "{}"), END], {"indices_not_dense"}),
        ([_tc(0, None, "f", "{}"), END], {"no_id"}),
        ([_tc(0, "a", None, "{}"), END], {"no_name"}),
        (
            [_tc(0, "a", "f", "{"), ChunkResponse(content="hi"), _tc(0, args="}"), END],
            {"text_inside_open_call", "arguments_fragmented"},
        ),
        (
            [ChunkResponse(content="hi", tool_calls=[ToolCallDelta(0, "a", "f", "{}")]), END],
            {"content_and_tool_delta_in_one_chunk"},
        ),
        (
            [_tc(0, "a", "f", "{}"), ChunkResponse(is_complete=True, finish_reason="stop")],
            {"finish_stop_with_tool_calls"},
        ),
        ([_tc(0, "a", "f", "{}")], {"no_terminal_marker"}),
        (
            [_tc(0, "a", "f", '{"a": '), ChunkResponse(error=StreamError("truncated", "length"))],
            {"truncated_by_token_limit"},
        ),
        ([_tc(0, "a", "f", "null"), END], {"arguments_null"}),
        ([_tc(0, "a", "f", "[1]"), END], {"arguments_not_an_object"}),
        ([_tc(0, "a", "f", "{}{}"), END], {"arguments_two_objects"}),
        ([_tc(0, "a", "f", '{"self": 1}'), END], {"reserved_argument_keys"}),
        ([ChunkResponse(), _tc(0, "a", "f", "{}"), END], {"empty_chunk"}),
    ],
)
def test_the_shapes_a_stream_shows(chunks: list[ChunkResponse], shapes: set[str]) -> None:
    assert chunk_shapes(chunks) == shapes


def test_the_reviewed_list_says_which_shapes_are_observed() -> None:
    # The issue's own examples: servers were never seen moving ids later or interleaving calls.
    never_seen = {"id_late", "name_late", "interleaved_calls", "name_fragmented", "text_inside_open_call"}
    # A null or missing `arguments` is a call without arguments (arguments_empty); the text `null` was never seen.
    never_seen.add("arguments_null")
    assert never_seen.isdisjoint(OBSERVED)
    assert {"no_index", "index_reused", "finish_stop_with_tool_calls", "null_content_first_chunk"} <= OBSERVED
    for shape in SHAPES.values():
        assert shape.level in ("observed", "theoretical")
        assert shape.why, shape.id
        if shape.level == "observed":
            assert shape.evidence, f"{shape.id} is observed without evidence"
            assert shape.servers != "none known", shape.id
    with pytest.raises(KeyError, match="unknown shapes"):
        realism_of({"made_up"})
    plain = realism_of(set())
    assert plain.level == "observed" and "plain stream" in plain.describe()
    late = realism_of({"id_late", "arguments_fragmented"})
    assert late.level == "theoretical" and late.theoretical == ("id_late",) and "id_late" in late.describe()


@settings(max_examples=150, database=None, suppress_health_check=list(HealthCheck), deadline=None)
@given(wire_scenarios(realistic=True, wire_dialects=True))
def test_a_realistic_draw_shows_observed_shapes_only(scenario: object) -> None:
    realism = stream_realism(scenario.chunks, scenario.wire_dialects)  # type: ignore[attr-defined]
    assert not realism.theoretical


@settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck), deadline=None)
@given(wire_scenarios(wire_dialects=True))
def test_every_drawn_stream_is_tagged_by_the_reviewed_list(scenario: object) -> None:
    stream_realism(scenario.chunks, scenario.wire_dialects)  # type: ignore[attr-defined]  # KeyError: unknown shape


def test_wire_dialects_change_the_bytes_not_the_stream() -> None:
    id_only = ChunkResponse(tool_calls=[ToolCallDelta(0, "call_1")])
    with rendering_dialects(frozenset({"no_index", "entry_without_function", "null_content_first_chunk"})):
        entry = chunk_dict(id_only)["choices"][0]["delta"]["tool_calls"][0]  # type: ignore[index]
        assert entry == {"id": "call_1", "type": "function"}
        assert role_chunk()["choices"][0]["delta"]["content"] is None
    with rendering_dialects(frozenset({"null_index"})):
        assert chunk_dict(_tc(0, "c", "f", "{}"))["choices"][0]["delta"]["tool_calls"][0]["index"] is None  # type: ignore[index]
    entry = chunk_dict(id_only)["choices"][0]["delta"]["tool_calls"][0]  # type: ignore[index]
    assert entry == {"index": 0, "id": "call_1", "type": "function", "function": {}}
    assert role_chunk()["choices"][0]["delta"]["content"] == ""


# -- findings carry realism; --realistic --------------------------------------------------------------


def test_a_failure_first_met_on_a_theoretical_input_is_shown_on_an_observed_one_when_there_is_one() -> None:
    # Running a call of a truncated turn needs no theoretical shape: whatever input first met it,
    # the finding shown is one a named server sends.
    report = run_conformance(mutants.IgnoreStreamErrors, profile="dev", seed=0)
    finding = next(r for r in report.results if r.check.id == "invalid_arguments_flagged").counterexamples[0]
    assert finding.realism is not None and finding.realism.level == "observed", finding.realism


def test_a_bug_only_theoretical_inputs_show_is_labelled_theoretical_and_gone_under_realistic() -> None:
    # NAME_OVERWRITE needs a name in several fragments, which no server was seen sending.
    report = run_conformance(mutants.NameOverwrite, profile="dev", seed=0)
    failing = [r for r in report.by_status("failed") if r.check.id == "tool_names_whole"]
    assert failing and all(
        c.realism is not None and "name_fragmented" in c.realism.theoretical for c in failing[0].counterexamples
    )
    realistic = run_conformance(mutants.NameOverwrite, profile="dev", seed=0, realistic=True)
    assert realistic.conformant, [r.message for r in realistic.by_status("failed")]
    assert any("--realistic" in note for note in realistic.notes)


def test_realistic_from_the_cli_leaves_out_theoretical_scenarios_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    report = tmp_path / "report.json"
    argv = ["run", "--handler", "tests.mutants.api_handler_mutants:NameOverwrite", "--profile", "dev"]
    assert main([*argv, "--report-json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "realism:  theoretical: no server has been seen sending" in out
    finding = next(c for c in json.loads(report.read_text())["checks"] if c["status"] == "failed")["counterexamples"][0]
    assert finding["realism"]["level"] == "theoretical" and "name_fragmented" in finding["realism"]["theoretical"]
    assert main([*argv, "--realistic"]) == 0
    out = capsys.readouterr().out
    assert "scenarios with theoretical shapes left out" in out and "late_id_and_late_name" in out


# -- recordings ---------------------------------------------------------------------------------------

REAL_RECORDINGS = ROOT.parent / "shared" / "real-recordings"


@pytest.mark.skipif(not REAL_RECORDINGS.is_dir(), reason="needs ../shared/real-recordings beside the clone")
def test_every_real_recording_shows_only_shapes_the_reviewed_list_calls_observed() -> None:
    # Captured from real servers: a theoretical shape in one would contradict the reviewed list.
    from conformance.wire import discover_cases, load_body
    from conformance.wire.stream_shapes import recording_realism

    cases = list(discover_cases([REAL_RECORDINGS]))
    assert len(cases) > 20
    theoretical = {case.name: recording_realism(load_body(case.body_path)).theoretical for case in cases}
    assert {name: shapes for name, shapes in theoretical.items() if shapes} == {}


def test_written_cassettes_imitating_unconfirmed_claims_are_theoretical() -> None:
    from conformance.wire import bundled_cassette_dir, discover_cases, load_body
    from conformance.wire.stream_shapes import recording_realism

    theoretical = {
        case.name: recording_realism(load_body(case.body_path)).theoretical
        for case in discover_cases([bundled_cassette_dir()])
    }
    assert {name: shapes for name, shapes in theoretical.items() if shapes} == {
        "gemini/restated_call_same_id.yaml": ("call_restated",),
        "openai-compatible/dialect_cumulative_arguments.yaml": ("cumulative_arguments",),
        "openai-compatible/dialect_id_late.yaml": ("id_late",),
        "openai-compatible/dialect_object_arguments.yaml": ("object_arguments",),
        "openai-compatible/interleaved_parallel_calls.yaml": ("interleaved_calls",),
    }


def test_a_counterexample_names_the_wire_shapes_its_bytes_were_rendered_with() -> None:
    # A failure only the rendered bytes trigger (no `index` key) must say so: its chunks alone pass.
    from conformance.handler.drive import Transcript
    from conformance.handler.runner import _render
    from conformance.handler.scenarios import ExpectedOutcome, Scenario
    from reference_impl.types import ChunkResponse, ToolCallDelta

    chunks = [ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "f", "{}")])]
    plain = Scenario("generated", tuple(chunks), ExpectedOutcome(()))
    dialect = Scenario("generated", tuple(chunks), ExpectedOutcome(()), wire_dialects=frozenset({"no_index"}))
    assert "rendered with" not in _render(plain, chunks, Transcript(chunks), ["x"])
    assert "wire:     rendered with no_index\n" in _render(dialect, chunks, Transcript(chunks), ["x"])


# -- which shapes a finding needs; which servers send them -------------------------------------------


def test_every_server_a_shape_names_is_placed_on_one_wire_api() -> None:
    from conformance.wire.shapes import SERVER_APIS, server_names

    for shape in SHAPES.values():
        names = server_names(shape.servers)  # KeyError: a server the table does not place
        assert bool(names) == (shape.level == "observed"), shape.id
    assert set(SERVER_APIS.values()) <= {
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "bedrock-converse",
        "cohere-v2",
        "*",
    }
    # Parenthesised details dropped; services and deployments kept apart (Vertex AI is not the
    # Gemini API, MiniMax on NIM is not GLM on NIM): a "together" claim needs the same server.
    assert server_names("vLLM / vLLM-Ascend (GLM parsers), Vertex AI (native), Gemini native") == (
        "vLLM",
        "vLLM-Ascend",
        "Vertex AI Gemini",
        "Gemini native",
    )
    assert realism_of({"name_restated", "no_terminal_marker"}).together == ()
    assert realism_of({"continuous_usage_stats", "several_deltas_of_one_call_in_a_chunk"}).together == ()


def test_evidence_names_a_server_of_the_api_the_input_was_read_in() -> None:
    # An Anthropic recording's fragmented arguments cite Anthropic, not OpenAI Chat Completions.
    anthropic = realism_of({"arguments_fragmented"}, "anthropic")
    assert anthropic.evidence == ("arguments_fragmented (Anthropic Messages)",)
    assert realism_of({"arguments_fragmented"}).evidence == ("arguments_fragmented (OpenAI Chat Completions)",)
    # Seen only on another API: still observed (the lists say who sends a shape, not who never
    # does), and the note says so.
    other = realism_of({"no_id"}, "anthropic")
    assert other.level == "observed" and other.evidence == ("no_id (Gemini native; no anthropic server seen)",)


def test_a_combination_says_whether_one_server_sends_all_of_it() -> None:
    together = realism_of({"name_restated", "no_id"})
    assert together.together[0] == "vLLM"
    assert together.describe() == "observed: name_restated, no_id, each seen from vLLM"
    apart = realism_of({"index_reused", "no_name"})
    assert apart.level == "observed" and apart.together == ()
    assert "from different servers (none is known to send all of them)" in apart.describe()
    assert realism_of({"reserved_argument_keys", "arguments_fragmented"}, "anthropic").together == (
        "Anthropic Messages",
    )


def test_a_finding_shows_only_the_shapes_its_failure_needs() -> None:
    # Dropping id-less calls needs a call without an id (or with a late one), nothing else: a missing
    # terminal chunk or several calls in one chunk that the input happened to show are left out.
    report = run_conformance(mutants.DropIdless, profile="dev", seed=0)
    failing = report.by_status("failed")
    assert failing
    incidental = {"no_terminal_marker", "several_calls_in_one_chunk", "empty_chunk"}
    for result in failing:
        for counterexample in result.counterexamples:
            assert counterexample.realism is not None
            shapes = set(counterexample.realism.shapes)
            assert shapes & {"no_id", "id_late"}, (result.check.id, counterexample.realism)
            assert incidental.isdisjoint(shapes), (result.check.id, counterexample.realism)
            # Argument text in pieces is what loses it when the pieces before the id are dropped
            # (argument_integrity); a name that is lost does not need it.
            if result.check.id == "tool_names_whole":
                assert "arguments_fragmented" not in shapes, counterexample.realism


def test_a_call_cut_before_any_argument_text_is_not_a_call_without_arguments() -> None:
    from reference_impl.types import StreamError

    cut = [_tc(0, "c", "read"), ChunkResponse(error=StreamError("truncated", "length"), finish_reason="length")]
    assert "arguments_empty" not in chunk_shapes(cut)
    assert "arguments_empty" in chunk_shapes([_tc(0, "c", "read", ""), END])
