"""The round-trip checks (conformance.roundtrip): they pass the reference, catch every G-class mutant, flag no
correct alternative, and report like the handler checks. ``python -m tests.test_roundtrip_checks`` prints the
mutant table."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from conformance.report import render_terminal
from conformance.roundtrip import (
    ROUNDTRIP_CHECKS,
    ROUNDTRIP_SCENARIOS,
    FormatterAdapter,
    as_formatter,
    builtin_scenarios,
    random_scenarios,
    roundtrip_check_by_id,
    run_roundtrip_conformance,
    sdk_type_errors,
    wire_view,
)
from conformance.verdict import Report
from reference_impl.followup import FOLLOWUP_TARGETS, FinishedTurn, ReferenceFormatter, ToolResult, format_followup
from tests.mutants.formatter_mutants import ALTERNATIVE_FORMATTERS, FORMATTER_MUTANTS, FormatterMutant


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _failed(report: Report) -> dict[str, str]:
    return {result.check.id: result.message for result in report.by_status("failed")}


# -- the reference and correct alternatives ----------------------------------------------------------


def test_reference_formatter_passes_every_check_on_every_target() -> None:
    report = run_roundtrip_conformance(ReferenceFormatter(), profile="ci", seed=0)
    assert report.conformant, {r.check.id: r.counterexample for r in report.by_status("failed")}
    assert not report.by_status("skipped")
    assert report.scenarios == len(FOLLOWUP_TARGETS) * (6 + 6)
    assert all(result.scenarios_run > 0 for result in report.results)


def test_reference_passes_deep_on_other_seeds() -> None:
    for seed in (1, 12345):
        report = run_roundtrip_conformance(ReferenceFormatter(), profile="deep", seed=seed)
        assert report.conformant, _failed(report)


@pytest.mark.parametrize("name", sorted(ALTERNATIVE_FORMATTERS))
def test_correct_alternatives_pass(name: str) -> None:
    report = run_roundtrip_conformance(ALTERNATIVE_FORMATTERS[name](), profile="ci")
    assert report.conformant, f"false alarm on {name}: {_failed(report)}"


def test_a_bare_function_skips_the_tool_checks_by_name() -> None:
    report = run_roundtrip_conformance(ALTERNATIVE_FORMATTERS["bare_function"](), profile="dev")
    skipped = {r.check.id: r.skipped_reason for r in report.by_status("skipped")}
    assert skipped == {
        "tool_schemas_accepted": "formatter does not declare: format_tools",
        "tool_choice_mapped": "formatter does not declare: format_tools",
    }


# -- the mutants -----------------------------------------------------------------------------------

MUTANT_TARGETS = [(mutant, target) for mutant in FORMATTER_MUTANTS for target in mutant.targets]


@pytest.mark.parametrize(("mutant", "target"), MUTANT_TARGETS, ids=[f"{m.name}-{t}" for m, t in MUTANT_TARGETS])
def test_checks_catch_mutant(mutant: FormatterMutant, target: str) -> None:
    report = run_roundtrip_conformance(mutant.factory(), targets=[target], profile="dev", seed=0)
    failed = _failed(report)
    assert failed, f"{mutant.name} ({', '.join(mutant.taxonomy)}) passed every check on {target}"
    assert set(failed) & mutant.caught_by, (
        f"{mutant.name} on {target} was caught by {sorted(failed)}, not by {sorted(mutant.caught_by)}"
    )


def test_mutant_catalogue_covers_the_taxonomy() -> None:
    names = [m.name for m in FORMATTER_MUTANTS]
    assert len(names) == len(set(names)) >= 20
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]+", name) for name in names)
    classes = {klass for mutant in FORMATTER_MUTANTS for klass in mutant.taxonomy}
    assert {f"G{n:02d}" for n in range(1, 13)} <= classes
    check_ids = {check.id for check in ROUNDTRIP_CHECKS}
    for mutant in FORMATTER_MUTANTS:
        assert mutant.caught_by <= check_ids, mutant.name
        assert set(mutant.targets) <= set(FOLLOWUP_TARGETS)
    # Every check is the intended catcher of at least one mutant.
    assert check_ids == {check for mutant in FORMATTER_MUTANTS for check in mutant.caught_by}


# -- the catalogue and the report --------------------------------------------------------------------


def test_check_catalogue_is_well_formed() -> None:
    ids = [check.id for check in ROUNDTRIP_CHECKS]
    assert len(ids) == len(set(ids))
    for check in ROUNDTRIP_CHECKS:
        assert re.fullmatch(r"[a-z][a-z0-9_]+", check.id)
        assert check.title and check.rationale and check.how_to_fix
        assert roundtrip_check_by_id(check.id) is check
    with pytest.raises(KeyError, match="unknown round-trip check"):
        roundtrip_check_by_id("nope")
    from conformance.handler.checks import CHECKS

    assert not set(ids) & {check.id for check in CHECKS}  # one id space across both suites


def test_failure_report_renders_with_counterexample_and_fix() -> None:
    mutant = next(m for m in FORMATTER_MUTANTS if m.name == "COMPLETION_ORDER_RESULTS")
    report = run_roundtrip_conformance(mutant.factory(), targets=["anthropic"], profile="dev")
    text = render_terminal(report)
    assert "FAIL  results_adjacent_in_call_order" in text and "NOT CONFORMANT" in text
    assert "scenario: parallel_results_out_of_order (target anthropic)" in text
    assert "results given (completion order)" in text and "how to fix:" in text
    document = report.to_json()
    assert json.loads(json.dumps(document))["conformant"] is False
    entry = next(c for c in document["checks"] if c["id"] == "results_adjacent_in_call_order")
    assert entry["status"] == "failed" and "G06" in entry["taxonomy"] and entry["counterexample"]


def test_a_raising_formatter_fails_sdk_accepts() -> None:
    def broken(target: str, turn: FinishedTurn, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        raise KeyError("call_id")

    report = run_roundtrip_conformance(broken, targets=["openai-chat"], profile="dev")
    assert "formatter raised KeyError" in _failed(report)["sdk_accepts_followup"]


def test_a_formatter_returning_the_wrong_type_is_reported() -> None:
    report = run_roundtrip_conformance(lambda target, turn, results: "nope", targets=["gemini"], profile="dev")
    assert "list of dicts" in _failed(report)["sdk_accepts_followup"]


# -- the pieces ------------------------------------------------------------------------------------


def test_as_formatter_accepts_objects_classes_factories_and_functions() -> None:
    assert as_formatter(ReferenceFormatter()).formats_tools
    assert as_formatter(ReferenceFormatter).formats_tools
    assert as_formatter(lambda: ReferenceFormatter(), "factory").formats_tools  # noqa: PLW0108 - a factory on purpose
    bare = as_formatter(format_followup)
    assert not bare.formats_tools and bare.targets == FOLLOWUP_TARGETS
    assert as_formatter(bare) is bare
    with pytest.raises(TypeError):
        as_formatter(42)

    class Declared(ReferenceFormatter):
        targets = ("anthropic",)

    assert FormatterAdapter(Declared()).targets == ("anthropic",)
    report = run_roundtrip_conformance(Declared(), profile="dev")
    assert report.scenarios == 6 + 2

    class Wrong(ReferenceFormatter):
        targets = ("bedrock",)

    with pytest.raises(ValueError, match="unknown targets"):
        as_formatter(Wrong())
    with pytest.raises(ValueError, match="unknown targets"):
        run_roundtrip_conformance(ReferenceFormatter(), targets=["bedrock"])


def test_scenarios_cover_every_target_and_generation_is_reproducible() -> None:
    assert {s.target for s in ROUNDTRIP_SCENARIOS} == set(FOLLOWUP_TARGETS)
    assert len(builtin_scenarios(["gemini"])) == 6
    first = random_scenarios("anthropic", 5, seed=3)
    again = random_scenarios("anthropic", 5, seed=3)
    assert [s.name for s in first] == [s.name for s in again]
    assert [[c.raw_arguments for c in s.turn.tool_calls] for s in first] == [
        [c.raw_arguments for c in s.turn.tool_calls] for s in again
    ]


def test_sdk_types_catch_what_the_openai_and_anthropic_sdks_let_through() -> None:
    # Neither SDK validates requests; their TypedDicts do (arguments as an object, a tool_use input as text).
    bad_chat = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        }
    ]
    assert "arguments" in (sdk_type_errors("openai-chat", bad_chat) or "")
    bad_anthropic = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]}]
    assert sdk_type_errors("anthropic", bad_anthropic) is not None
    bad_ollama = [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]
    assert sdk_type_errors("ollama", bad_ollama) is not None
    deepseek = [{"role": "assistant", "content": None, "reasoning_content": "r"}]
    assert sdk_type_errors("deepseek", deepseek) is None  # the DeepSeek extension field is allowed there
    assert sdk_type_errors("gemini", []) is None  # google-genai validates its own requests


def test_wire_view_reports_structure_problems() -> None:
    view = wire_view("openai-chat", {"messages": [{"role": "user", "content": "x"}]}, prefix=1)
    assert view.structure == ["the formatter returned nothing: the assistant turn is missing"]
    view = wire_view("anthropic", {"messages": [{"role": "user", "content": "x"}]}, prefix=0)
    assert "assistant" in view.structure[0]
    split = {
        "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        ]
    }
    assert "message #2" in wire_view("anthropic", split, prefix=0).adjacency[0]


def test_cli_runs_the_reference_formatter(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    assert main(["run", "--formatter", "reference_impl.followup:ReferenceFormatter", "--profile", "dev"]) == 0
    assert "CONFORMANT" in capsys.readouterr().out


# -- the mutant table (python -m tests.test_roundtrip_checks) ---------------------------------------


def mutant_table() -> list[tuple[str, str, str, str, bool]]:
    rows = []
    for mutant in FORMATTER_MUTANTS:
        caught_everywhere = True
        failed_checks: set[str] = set()
        for target in mutant.targets:
            report = run_roundtrip_conformance(mutant.factory(), targets=[target], profile="dev")
            failed = {r.check.id for r in report.by_status("failed")}
            failed_checks |= failed
            caught_everywhere &= bool(failed & mutant.caught_by)
        rows.append(
            (
                mutant.name,
                ",".join(mutant.taxonomy),
                ",".join(mutant.targets),
                ",".join(sorted(failed_checks)),
                caught_everywhere,
            )
        )
    return rows


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    for name, taxonomy, targets, checks, caught in mutant_table():
        print(f"| {name} | {taxonomy or '-'} | {targets} | {checks} | {'yes' if caught else 'NO'} |")
