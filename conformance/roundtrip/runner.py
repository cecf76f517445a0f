"""Run the round-trip checks against a formatter: every scenario and target, through the real SDKs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from conformance.roundtrip.capture import capture_request, sdk_type_errors
from conformance.roundtrip.checks_followup import FOLLOWUP_CHECKS, RoundTripContext
from conformance.roundtrip.checks_tools import CHOICES, TOOL_CHECKS, ToolsContext
from conformance.roundtrip.formatter import FormatterAdapter, as_formatter
from conformance.roundtrip.scenarios import (
    SCENARIO_TOOLS,
    TOOLSET_FOR_SCHEMAS,
    RoundTripScenario,
    builtin_scenarios,
    random_scenarios,
)
from conformance.roundtrip.wire_readers import HISTORY_KEY, wire_view
from conformance.verdict import Check, CheckResult, NotApplicable, Profile, ProgressStep, Report, resolve_profile
from conformance.verdict.deadline import DEFAULT_DEADLINE_SECONDS, within
from reference_impl.followup import (
    FOLLOWUP_TARGETS,
    ReasoningItem,
    ToolCallItem,
    user_message,
)
from reference_impl.frozen import thaw
from reference_impl.tools import tool_params

__all__ = [
    "ROUNDTRIP_CHECKS",
    "evaluate_scenario",
    "evaluate_tools",
    "roundtrip_check_by_id",
    "run_roundtrip_conformance",
]

# Report order: the follow-up checks, then the checks that need ``format_tools``.
ROUNDTRIP_CHECKS: tuple[Check[Any], ...] = (*FOLLOWUP_CHECKS, *TOOL_CHECKS)


def roundtrip_check_by_id(check_id: str) -> Check[Any]:
    """Look a round-trip check up by its stable id."""
    for check in ROUNDTRIP_CHECKS:
        if check.id == check_id:
            return check
    raise KeyError(f"unknown round-trip check {check_id!r}; known: {', '.join(c.id for c in ROUNDTRIP_CHECKS)}")


def evaluate_scenario(
    formatter: FormatterAdapter, scenario: RoundTripScenario, *, deadline: float | None = DEFAULT_DEADLINE_SECONDS
) -> RoundTripContext:
    """Run the formatter on one scenario and send the result through the target's SDK.

    A formatter that does not return within ``deadline`` seconds is judged as one that raised.
    """
    target = scenario.target
    prefix = [user_message(target, "What's up? (round-trip conformance)")]
    try:
        with within(deadline, lambda: f"scenario {target}/{scenario.name}"):
            messages = formatter.format_followup(target, scenario.turn, scenario.results)
    except Exception as error:  # noqa: BLE001 - the formatter under test may raise anything: a finding
        return RoundTripContext(scenario, None, f"{type(error).__name__}: {error}", None, None, None)
    params = tool_params(target, scenario.tools)
    history = prefix + thaw(messages)
    captured = capture_request(target, history, params)
    type_errors = sdk_type_errors(target, messages)
    # When the SDK refused, the other checks still read what the formatter produced (unsent).
    sent = captured.json if captured.json is not None else {HISTORY_KEY.get(target, "messages"): history}
    view = wire_view(target, sent, len(prefix))
    return RoundTripContext(scenario, messages, None, captured, type_errors, view)


def evaluate_tools(
    formatter: FormatterAdapter, target: str, *, deadline: float | None = DEFAULT_DEADLINE_SECONDS
) -> ToolsContext:
    """Run ``format_tools`` for the schema toolset and every tool_choice case, through the SDK.

    A ``format_tools`` that does not return within ``deadline`` seconds is judged as one that raised.
    """
    ctx = ToolsContext(target, formatter)
    prefix = [user_message(target, "Which tools do you have?")]
    try:
        with within(deadline, lambda: f"format_tools for {target}"):
            ctx.schema_params = formatter.format_tools(target, TOOLSET_FOR_SCHEMAS, "auto")
        ctx.schema_request = capture_request(target, prefix, ctx.schema_params)
    except Exception as error:  # noqa: BLE001 - the formatter or the SDK may raise anything: a finding
        ctx.schema_error = f"{type(error).__name__}: {error}"
    for label, choice in CHOICES.items():
        try:
            with within(deadline, lambda: f"format_tools for {target} with tool_choice {label}"):  # noqa: B023
                params = formatter.format_tools(target, SCENARIO_TOOLS, choice)
        except Exception as error:  # noqa: BLE001 - any raise is judged; ValueError or NotImplementedError is clear
            ctx.choices[label] = (None, f"{type(error).__name__}: {error}", None)
            if isinstance(error, (ValueError, NotImplementedError)):
                ctx.refused_clearly.add(label)
            continue
        ctx.choices[label] = (params, None, capture_request(target, prefix, params))
    return ctx


def _counterexample(ctx: RoundTripContext, problems: list[str]) -> str:
    scenario = ctx.scenario
    turn_lines = []
    for item in scenario.turn.items:
        if isinstance(item, ToolCallItem):
            verdict = json.dumps(thaw(item.arguments), ensure_ascii=False) if item.valid else f"ERROR {item.error!r}"
            turn_lines.append(
                f"  call {item.replay_name} id={item.call_id!r} -> {verdict} {dict(item.provider_metadata)}"
            )
        elif isinstance(item, ReasoningItem):
            turn_lines.append(
                f"  reasoning {item.text[:40]!r} signature={item.signature!r} redacted={bool(item.redacted_data)} "
                f"{dict(item.provider_metadata)}"
            )
        else:
            turn_lines.append(f"  text {item.text!r}" + (f" signature={item.signature!r}" if item.signature else ""))
    results = ", ".join(f"{r.call_key}{' (error)' if r.is_error else ''}" for r in scenario.results)
    # default=repr: a formatter may hand the SDK bytes (Bedrock blobs), which JSON cannot show.
    sent = (
        json.dumps(ctx.messages, ensure_ascii=False, default=repr)[:1500]
        if ctx.messages is not None
        else "(formatter raised)"
    )
    return "\n".join(
        [
            f"scenario: {scenario.name} (target {scenario.target}): {scenario.description}",
            "turn:",
            *turn_lines,
            f"results given (completion order): {results or 'none'}",
            f"formatter output: {sent}",
            "violation: " + problems[0],
        ]
    )


def run_roundtrip_conformance(
    formatter: Any,
    *,
    targets: Sequence[str] | None = None,
    profile: str | Profile = "ci",
    seed: int = 0,
    scenarios: Sequence[RoundTripScenario] | None = None,
    checks: Sequence[Check[Any]] | None = None,
    target_label: str = "",
    on_progress: Callable[[str], None] | None = None,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
) -> Report:
    """Check a round-trip formatter on every scenario and target; the same ``Report`` as the handler checks.

    ``targets`` defaults to the formatter's ``targets`` (or all). Besides the built-in scenarios,
    ``profile`` adds generated ones per target (dev 2, ci 6, deep 40), reproducible with ``seed``.
    A formatter call that takes longer than ``deadline`` seconds is stopped and judged as a raise
    (None or 0: no deadline).
    """
    adapter = as_formatter(formatter, target_label)
    chosen = resolve_profile(profile)
    wanted = tuple(targets) if targets is not None else adapter.targets
    unknown = [t for t in wanted if t not in FOLLOWUP_TARGETS]
    if unknown:
        raise ValueError(f"unknown targets {unknown}; expected some of {', '.join(FOLLOWUP_TARGETS)}")
    check_list = list(ROUNDTRIP_CHECKS if checks is None else checks)
    report = Report(target=target_label or f"round-trip formatter {adapter.label}", profile=chosen.name, seed=seed)
    started = time.perf_counter()
    results = _fresh_results(check_list, adapter)
    if scenarios is None:
        generated_count = max(2, chosen.examples_per_scenario // 10) if chosen.name != "deep" else 40
        scenario_list = builtin_scenarios(wanted)
        for target in wanted:
            scenario_list += random_scenarios(target, generated_count, seed)
    else:
        scenario_list = [s for s in scenarios if s.target in wanted]
    followup_checks = [c for c in check_list if not c.requires]
    tool_checks = [c for c in check_list if c.requires and results[c.id].status != "skipped"]
    _run_followup_checks(
        adapter, scenario_list, followup_checks, results, report, on_progress=on_progress, deadline=deadline
    )
    if tool_checks:
        _run_tool_checks(adapter, wanted, tool_checks, results, report, deadline=deadline)
    for result in results.values():
        if result.status == "passed" and result.examples_run == 0:
            result.skip("applied to no scenario of these targets (or the formatter raised on all of them)")
    report.results = [results[check.id] for check in check_list]
    for result in report.results:
        # The report renderer groups verdicts by target when one report covers several.
        if hasattr(result, "target"):
            result.target = report.target
    report.seconds = time.perf_counter() - started
    return report


def _fresh_results(check_list: Sequence[Check[Any]], adapter: FormatterAdapter) -> dict[str, CheckResult]:
    """One result per check; those needing ``format_tools`` are skipped if the formatter lacks it."""
    results = {check.id: CheckResult(check) for check in check_list}
    for check in check_list:
        if "format_tools" in check.requires and not adapter.formats_tools:
            results[check.id].status = "skipped"
            results[check.id].skipped_reason = "formatter does not declare: format_tools"
    return results


def _run_followup_checks(
    adapter: FormatterAdapter,
    scenario_list: Sequence[RoundTripScenario],
    followup_checks: Sequence[Check[Any]],
    results: dict[str, CheckResult],
    report: Report,
    *,
    on_progress: Callable[[str], None] | None,
    deadline: float | None,
) -> None:
    """Every scenario through the formatter and the SDK, judged by each follow-up check."""
    for done, scenario in enumerate(scenario_list):
        if on_progress:
            on_progress(ProgressStep(f"{scenario.target}/{scenario.name}", done, len(scenario_list)))
        ctx = evaluate_scenario(adapter, scenario, deadline=deadline)
        report.scenarios += 1
        report.examples += 1
        for check in followup_checks:
            result = results[check.id]
            try:
                problems = check.run(ctx)
            except NotApplicable:
                continue
            result.scenarios_run += 1
            result.examples_run += 1
            if problems:
                where = f"{scenario.target}/{scenario.name}"
                result.fail(f"[{where}] {problems[0]}", _counterexample(ctx, problems), scenario=where)


def _run_tool_checks(
    adapter: FormatterAdapter,
    wanted: Sequence[str],
    tool_checks: Sequence[Check[Any]],
    results: dict[str, CheckResult],
    report: Report,
    *,
    deadline: float | None,
) -> None:
    """``format_tools`` once per target (the schema toolset and every tool_choice), judged by each tool check."""
    for target in wanted:
        tools_ctx = evaluate_tools(adapter, target, deadline=deadline)
        report.examples += 1 + len(CHOICES)
        for check in tool_checks:
            result = results[check.id]
            result.scenarios_run += 1
            result.examples_run += 1
            problems = check.run(tools_ctx)
            if problems:
                text = f"target: {target}\n" + "\n".join(f"violation: {p}" for p in problems[:5])
                result.fail(f"[{target}] {problems[0]}", text, scenario=target)
