"""The terminal summary of a ``Report``: one line per check, then each failure with its counterexamples."""

from __future__ import annotations

from conformance.verdict import HARMS, CheckResult, Counterexample, Report

__all__ = ["failure_lines", "render_terminal"]

_MARKS = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}


def _count(result: CheckResult) -> str:
    """How often a failing check failed: runs and scenarios, as the suite counted them."""
    runs = f"{result.failing_examples} of {result.examples_run} runs"
    scenarios = f"{len(result.failing_scenarios)} of {result.scenarios_run} scenarios"
    distinct = len(result.counterexamples)
    kinds = f"; {distinct} distinct failures shown" if distinct > 1 else ""
    return f"failed in {runs} ({scenarios}){kinds}"


def _unjudged(result: CheckResult) -> str:
    """A pass over fewer runs than were made: the others crashed, hung or could not be read."""
    return (
        f"{result.not_judged} runs not judged: the target crashed, hung or was unreadable there "
        "(reported by no_crash, finishes_within_deadline, events_readable or converter_outcome_matches)"
    )


def _harms(result: CheckResult) -> str:
    """The failing runs per harm, worst first (``harm: ran_wrong in 3 runs, stream_shape in 1``)."""
    parts = [f"{harm.value} in {result.harms[harm.value]} runs" for harm in HARMS if harm.value in result.harms]
    if result.unclassified:
        parts.append(f"not classified in {result.unclassified} runs")
    return "harm: " + ", ".join(parts) if parts else "harm: not classified"


def _finding(counterexample: Counterexample) -> list[str]:
    """What one finding does to the user, how real its input is, and every other recording that
    fails the same way, under its counterexample."""
    lines = []
    if counterexample.harm is not None:
        lines.append(f"  harm:     {counterexample.harm.harm.value}: {counterexample.harm.why}")
    if counterexample.realism is not None:
        lines.append(f"  realism:  {counterexample.realism.describe()}")
    others = counterexample.recordings[1:]
    if others:
        lines.append(f"  the same failure on {len(others)} more recording{'s' if len(others) > 1 else ''}:")
        lines += [f"    {name}" for name in others]
    return lines


def failure_lines(result: CheckResult, where: str = "") -> list[str]:
    """One failing check as the terminal shows it: title, why, counts, harm, counterexamples, how to fix
    (the JUnit report's failure text too, so a CI dashboard says what the terminal says)."""
    lines = [
        "",
        f"--- {result.check.id}{where}: {result.check.title}",
        f"why it matters: {result.check.rationale}",
        _count(result),
        _harms(result),
    ]
    if result.consequences:
        caused = ", ".join(f"{check} ({count} runs)" for check, count in sorted(result.consequences.items()))
        lines.append(f"also failed only because of this: {caused}")
    for number, counterexample in enumerate(result.counterexamples, start=1):
        heading = "minimal counterexample" if len(result.counterexamples) == 1 else f"counterexample {number}"
        if len(counterexample.recordings) > 1:
            heading += f" ({len(counterexample.recordings)} recordings fail this way)"
        lines += [f"{heading}:", *("  " + line for line in counterexample.text.splitlines())]
        lines += _finding(counterexample)
    if not result.counterexamples and result.message:
        lines.append(f"violation: {result.message}")
    if result.not_judged:
        lines.append(_unjudged(result))
    lines.append(f"how to fix: {result.check.how_to_fix}")
    return lines


def render_terminal(report: Report, *, verbose: bool = False) -> str:
    """A summary grouped by target and check, then every failure with its smallest counterexamples."""
    lines = [
        f"toolcall-conformance: {report.target}",
        f"profile {report.profile}, seed {report.seed}: {report.scenarios} scenarios, "
        f"{report.examples} runs in {report.seconds:.1f}s",
        "",
    ]
    width = max((len(result.check.id) for result in report.results), default=10)
    targets = list(dict.fromkeys(result.target for result in report.results))
    for target in targets:
        if len(targets) > 1:
            lines.append(f"{target}:")
        for result in (r for r in report.results if r.target == target):
            detail = result.skipped_reason if result.status == "skipped" else result.check.title
            if result.status == "passed" and result.not_judged:
                detail += f" [{_unjudged(result)}]"
            if result.status == "failed":
                detail += f" [{result.harm.value if result.harm else 'harm not classified'}]"
            lines.append(f"  {_MARKS[result.status]}  {result.check.id.ljust(width)}  {detail}")
        if len(targets) > 1:
            lines.append("")
    failed = report.by_status("failed")
    for result in failed:
        lines += failure_lines(result, f" [{result.target}]" if len(targets) > 1 else "")
    if report.notes:
        lines += ["", "consider:", *(f"  - {note}" for note in report.notes)]
    if report.stopped:
        lines += ["", f"STOPPED EARLY: {report.stopped}"]
    lines += [
        "",
        f"{len(report.by_status('passed'))} passed, {len(failed)} failed, {len(report.by_status('skipped'))} skipped",
        _verdict(report),
    ]
    return "\n".join(lines)


def _verdict(report: Report) -> str:
    """The last line: conformant, failing, or failing only below the ``--fail-on`` gate."""
    if report.conformant:
        return "CONFORMANT" if not report.stopped else "INCOMPLETE (stopped early)"
    if report.fail_on is None or not report.passes:
        return "NOT CONFORMANT"
    below = len(report.by_status("failed"))
    return (
        f"NOT CONFORMANT, but the gate passes: no finding at or above --fail-on {report.fail_on.value} "
        f"({below} failing checks below it)"
    )
