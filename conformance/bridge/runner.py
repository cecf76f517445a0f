"""``run_bridge``: the suite against a target in another process, reached over the JSON-lines bridge.

The bridge is another way to reach the same targets, not another suite: a delta-level target is
checked by ``run_conformance`` through ``BridgeHandlerFactory``, a byte-level one by
``run_stack_conformance`` through ``BridgeStack``, with the same checks, scenarios, counts and
report as an in-process target.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path

from conformance.bridge.delta import BridgeHandlerFactory
from conformance.bridge.process import DEFAULT_TIMEOUT, BridgeProcess
from conformance.bridge.protocol import BridgeBroken, Hello
from conformance.bridge.stack import BridgeStack
from conformance.handler import Capabilities, Scenario, TargetError, run_conformance
from conformance.stack import StackCapabilities, run_stack_conformance
from conformance.verdict import DEFAULT_COUNTEREXAMPLES, Profile, Report
from conformance.wire import bundled_cassette_dir
from conformance.wire.numbers import numbers_note

__all__ = ["handler_target", "run_bridge", "stack_target"]


def handler_target(process: BridgeProcess) -> tuple[BridgeHandlerFactory, Capabilities]:
    """The handler factory and capabilities of a started delta-level ``process`` (for ``run_conformance``)."""
    hello = _started(process, "delta")
    capabilities = hello.handler_capabilities()
    return BridgeHandlerFactory(process, accumulator=not capabilities.events), capabilities


def stack_target(process: BridgeProcess) -> tuple[BridgeStack, StackCapabilities]:
    """The stack and capabilities of a started byte-level ``process`` (for ``run_stack_conformance``)."""
    hello = _started(process, "bytes")
    return BridgeStack(process), hello.stack_capabilities()


def _started(process: BridgeProcess, level: str) -> Hello:
    hello = process.hello or process.start()
    if hello.level != level:
        raise BridgeBroken(f"{process.command!r} is a {hello.level}-level target, not a {level}-level one")
    return hello


def run_bridge(
    command: Sequence[str] | str,
    *,
    profile: str | Profile = "ci",
    seed: int = 0,
    cassette_dirs: Iterable[Path] = (),
    extra_scenarios: Sequence[Scenario] = (),
    scenarios: Sequence[Scenario] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    cwd: str | PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    keep_counterexamples: int | None = DEFAULT_COUNTEREXAMPLES,
    shrink: bool = True,
    apis: Sequence[str] | None = None,
    generated: int | None = None,
) -> Report:
    """Start ``command`` once, read what it declares, and run the checks of its level against it.

    A delta-level target gets the handler checks (built-in scenarios, re-fragmentations, generated
    streams, plus ``extra_scenarios``; with ``scenarios``, exactly those, as ``rerun`` does); a
    byte-level one the stack checks over the bundled
    recordings plus ``cassette_dirs`` (only those of ``apis`` when given, which the target must
    declare), then ``generated`` turns per API rendered to bytes (``run_stack_conformance``: None
    by profile, 0 none). ``timeout`` bounds every answer; ``shrink`` as for
    ``run_conformance``. Raises ``TargetError``
    (exit code 2) when the target cannot be run: it does not start, breaks the protocol, gives no
    answer in time or keeps exiting; the message quotes the line that was wrong.
    """
    try:
        process = BridgeProcess(command, cwd=cwd, env=env, timeout=timeout)
    except BridgeBroken as broken:  # an empty command, an unbalanced quote
        raise broken.to_target_error() from None
    try:
        hello = process.start()
        label = f"bridge: {hello.describe()} [{process.command}]"
        if hello.level == "delta":
            if list(cassette_dirs) or apis or generated is not None:
                raise TargetError(
                    "recordings and generated bodies (--cassette-dir, --format, --generated) are for byte-level "
                    "targets; this one is delta-level"
                )
            factory, capabilities = handler_target(process)
            report = run_conformance(
                factory,
                capabilities=capabilities,
                profile=profile,
                seed=seed,
                extra_scenarios=extra_scenarios,
                scenarios=scenarios,
                target=label,
                on_progress=on_progress,
                deadline=None,  # every answer has the bridge's own deadline
                keep_counterexamples=keep_counterexamples,
                shrink=shrink,
            )
        else:
            if extra_scenarios or scenarios is not None:
                raise TargetError("chunk scenarios are for delta-level targets; this one is byte-level")
            stack, declared = stack_target(process)
            try:
                stack_capabilities = declared.restricted_to(apis)
            except ValueError as error:
                raise TargetError(f"--format: {error}") from error
            report = run_stack_conformance(
                stack,
                [bundled_cassette_dir(), *cassette_dirs],
                capabilities=stack_capabilities,
                profile=profile,
                seed=seed,
                target=label,
                on_progress=on_progress,
                generated=generated,
            )
    except BridgeBroken as broken:
        raise broken.to_target_error() from None
    finally:
        process.close()
    report.notes = _say_who_declared(report.notes) + _notes(process, hello)
    report.target_spec = {
        "kind": "bridge",
        "command": process.command,
        "level": hello.level,
        "target": dict(hello.target),
        "capabilities": dict(hello.capabilities),
    }
    return report


def _notes(process: BridgeProcess, hello: Hello) -> list[str]:
    notes = [f"bridge: {process.requests} requests to one process ({hello.describe()})"]
    if process.restarts:
        notes.append(
            f"bridge: the target process exited {process.restarts} times while serving a request and was "
            "restarted; each such request is reported as a crash of the target"
        )
    return notes


def _say_who_declared(notes: list[str]) -> list[str]:
    """The suite's note on numbers compared as doubles, naming the hello as what declared them."""
    return [numbers_note("the target's hello") if note == numbers_note() else note for note in notes]
