"""The handler-target options ``run`` and ``rerun`` share: which target, its capabilities, adapter, deadline.

Capability flags come from ``conformance.handler.CAPABILITY_OPTIONS``, so the CLI, the pytest
plugin and ``Capabilities`` always offer the same names. A flag that would change nothing for the
chosen target is refused (exit 2) rather than silently ignored.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, replace
from typing import Any

import reference_impl
from conformance.cli.common import UsageError, import_attribute, load_factory
from conformance.handler import (
    CAPABILITY_OPTIONS,
    DEFAULT_DEADLINE_SECONDS,
    Capabilities,
    HandlerAdapter,
    default_scenarios,
    idle_capabilities,
)
from conformance.handler.capabilities import TEXT_FORMATS
from conformance.stack import StackFactoryError, StackTarget, as_stack

__all__ = ["HandlerTarget", "add_capability_options", "handler_target", "load_stack", "resolve_target"]

REFERENCE_HANDLER = "reference_impl:ApiToolCallStreamingResponseHandler"


def add_capability_options(parser: argparse.ArgumentParser) -> None:
    """The capability flags, ``--text-format``, ``--text-lag``, ``--adapter`` and ``--deadline``."""
    group = parser.add_argument_group("what the handler supports (a check that needs more is skipped, by name)")
    for option in CAPABILITY_OPTIONS:
        if option.valued:
            group.add_argument(option.flag, dest=option.field, metavar=option.metavar, help=option.help)
        else:
            group.add_argument(option.flag, dest=option.field, action="store_true", help=option.help)
    group.add_argument(
        "--text-format",
        choices=TEXT_FORMATS,
        help="the handler parses tool calls embedded in text in this format (checked on text scenarios)",
    )
    group.add_argument(
        "--text-lag",
        metavar="N|none",
        help="the most text characters the handler holds back before emitting them (default 0; 'none': no bound)",
    )
    group.add_argument(
        "--adapter",
        metavar="MODULE:OBJECT",
        help="a HandlerAdapter for a handler that is not seed-shaped (chunks in, events and invocations out)",
    )
    group.add_argument(
        "--deadline",
        type=deadline_seconds,
        metavar="SECONDS",
        default=DEFAULT_DEADLINE_SECONDS,
        help=(
            f"stop the target (handler or accumulator and its factory, converter, formatter, stack, bridge) when "
            f"it takes longer than this on one input (default "
            f"{DEFAULT_DEADLINE_SECONDS:g}; 0: none)"
        ),
    )


@dataclass(frozen=True)
class HandlerTarget:
    """A handler or accumulator named on the command line, with everything needed to run it again."""

    factory: Any
    spec: str
    kind: str  # "handler" or "accumulator"
    capabilities: Capabilities
    adapter: HandlerAdapter | None
    adapter_spec: str | None
    deadline: float | None

    def saved(self) -> dict[str, Any]:
        """What a saved counterexample records about its target (``rerun`` reads it back)."""
        document: dict[str, Any] = {"kind": self.kind, "spec": self.spec, "capabilities": self.capabilities.declared()}
        if self.adapter_spec:
            document["adapter"] = self.adapter_spec
        return document

    def command_line(self) -> str:
        """The ``run`` options that name this target again."""
        parts = [f"--{self.kind} {self.spec}"]
        parts += _capability_flags(self.capabilities)
        if self.adapter_spec:
            parts.append(f"--adapter {self.adapter_spec}")
        return " ".join(parts)


def _capability_flags(capabilities: Capabilities) -> list[str]:
    declared = capabilities.declared()
    flags = [
        f"{option.flag} {option.shown(declared[option.field])}" if option.valued else option.flag
        for option in CAPABILITY_OPTIONS
        if option.field in declared
    ]
    if "text_format" in declared:
        flags.append(f"--text-format {declared['text_format']}")
    if "text_lag_chars" in declared:
        flags.append(f"--text-lag {'none' if declared['text_lag_chars'] is None else declared['text_lag_chars']}")
    return flags


def _text_lag(value: str | None, text_format: str | None) -> int | None:
    if value is None:
        # A text parser must hold some text back (a tag may be starting); without a declared bound
        # there is no latency promise to check. A provider-native handler holds nothing back.
        return None if text_format is not None else 0
    if value.lower() == "none":
        return None
    try:
        lag = int(value)
    except ValueError:
        raise UsageError(f"--text-lag takes a number of characters or 'none', got {value!r}") from None
    if lag < 0:
        raise UsageError(f"--text-lag must be 0 or more, got {lag}")
    return lag


def capabilities_from_args(args: argparse.Namespace, *, accumulator: bool) -> Capabilities:
    """The ``Capabilities`` the flags describe (an accumulator has no events, callbacks or lifecycle)."""
    values: dict[str, Any] = {}
    for option in CAPABILITY_OPTIONS:
        given = getattr(args, option.field)
        if not option.valued:
            values[option.field] = given if option.field == "several_deltas_per_chunk" else not given
        elif given is not None:
            try:
                values[option.field] = option.value_of(given)
            except ValueError as error:
                raise UsageError(str(error)) from None
    capabilities = Capabilities(
        **values,
        text_format=args.text_format,
        text_lag_chars=_text_lag(args.text_lag, args.text_format),
    )
    if accumulator:
        capabilities = replace(capabilities, events=False, callbacks=False, lifecycle=False)
    return capabilities


def _refuse_idle_flags(args: argparse.Namespace, capabilities: Capabilities, *, accumulator: bool) -> None:
    """A capability flag that changes neither the checks nor the scenarios of this run is an error (exit 2).

    Such a flag can only mislead: whoever reads the command line believes the run was narrowed or
    widened. ``run_conformance`` notes the same of a ``Capabilities`` declaration from Python.
    """
    idle = set(idle_capabilities(capabilities))
    for option in CAPABILITY_OPTIONS:
        if getattr(args, option.field) and option.field in idle:
            raise UsageError(
                f"{option.flag} changes nothing for this target (no check or scenario depends on it here); remove it"
            )
    if args.text_lag is not None and not capabilities.has("events"):
        raise UsageError("--text-lag changes nothing for a final-result accumulator (it emits no text events)")


def load_adapter(spec: str | None) -> HandlerAdapter | None:
    """The ``HandlerAdapter`` named by ``MODULE:OBJECT`` (a class is instantiated), or None.

    Raises ``UsageError`` (exit 2) when it cannot be imported or built, or is not an adapter.
    """
    if spec is None:
        return None
    adapter = import_attribute(spec, "--adapter", "mypkg.adapters:MyAdapter", "MODULE:OBJECT")
    if isinstance(adapter, type):
        try:
            adapter = adapter()
        except Exception as error:
            raise UsageError(f"--adapter {spec}: constructing it raised {type(error).__name__}: {error}") from error
    missing = [m for m in ("to_handler_chunk", "observe_event", "observe_invocation") if not hasattr(adapter, m)]
    if missing:
        raise UsageError(f"--adapter {spec} is not a HandlerAdapter: it has no {', '.join(missing)}")
    result: HandlerAdapter = adapter
    return result


# The longest deadline accepted: a day. Beyond it the timer cannot be set on every platform
# (``inf`` overflowed it), and a run that long is not a deadline.
MAX_DEADLINE_SECONDS = 86_400.0


def deadline_seconds(text: str) -> float:
    """``--deadline``: 0 (no deadline) or a finite number of seconds up to a day.

    ``nan`` compared false with everything and so switched the deadline off; ``inf`` overflowed the
    timer: both are refused (argparse reports it with the option's name, exit 2).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if math.isnan(value) or value < 0 or value > MAX_DEADLINE_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be 0 (no deadline) or a number of seconds up to {MAX_DEADLINE_SECONDS:g}, got {text!r}"
        )
    return value


def resolve_target(spec: str | None, kind: str, args: argparse.Namespace) -> HandlerTarget:
    """The handler (or accumulator) target the options describe; the reference handler when ``spec`` is None."""
    accumulator = kind == "accumulator"
    capabilities = capabilities_from_args(args, accumulator=accumulator)
    _refuse_idle_flags(args, capabilities, accumulator=accumulator)
    if args.adapter and accumulator:
        raise UsageError("--adapter reads events; a final-result accumulator has none")
    if spec is None:
        factory: Any = reference_impl.ApiToolCallStreamingResponseHandler
        spec = REFERENCE_HANDLER
    else:
        factory = load_factory(spec, f"--{kind}")
    return HandlerTarget(
        factory=factory,
        spec=spec,
        kind=kind,
        capabilities=capabilities,
        adapter=load_adapter(args.adapter),
        adapter_spec=args.adapter,
        deadline=args.deadline or None,
    )


def handler_target(saved: dict[str, Any], *, deadline: float | None = DEFAULT_DEADLINE_SECONDS) -> HandlerTarget:
    """A target rebuilt from what a saved counterexample recorded (``HandlerTarget.saved``)."""
    kind = saved.get("kind", "handler")
    spec = saved.get("spec")
    if kind not in ("handler", "accumulator") or not isinstance(spec, str):
        raise UsageError(f"the saved target {saved!r} is not a handler or accumulator this version can re-run")
    try:
        capabilities = Capabilities.from_declared(dict(saved.get("capabilities") or {}))
    except (ValueError, TypeError) as error:
        raise UsageError(f"the saved target's capabilities cannot be read: {error}") from error
    adapter_spec = saved.get("adapter")
    return HandlerTarget(
        factory=load_factory(spec, f"the saved --{kind}"),
        spec=spec,
        kind=kind,
        capabilities=capabilities,
        adapter=load_adapter(adapter_spec),
        adapter_spec=adapter_spec,
        deadline=deadline,
    )


def load_stack(spec: str, option: str = "--stack") -> StackTarget:
    """The stack ``MODULE:FACTORY`` names (a stack, or a zero-argument factory of one; docs/stacks.md).

    Raises ``UsageError`` (exit 2) when it cannot be imported, is neither shape, its factory raises or
    its ``capabilities`` cannot be read.
    """
    target = import_attribute(spec, option, "mypkg.provider:make_stack", "MODULE:FACTORY")
    try:
        return as_stack(target, spec)
    except StackFactoryError as error:
        raise UsageError(f"{option} {error}") from error


def applicable_scenario_count(capabilities: Capabilities) -> int:
    """How many built-in scenarios apply to a target with ``capabilities`` (for progress lines)."""
    return len([s for s in default_scenarios(capabilities) if all(capabilities.has(n) for n in s.needs)])
