"""``toolcall-conformance run --bridge COMMAND``: the run options as ``run_bridge`` takes them.

The target declares its level and capabilities in its hello message, so the options that would
declare them on the command line (capability flags, ``--text-format``, ``--adapter``, ...) are
refused rather than silently ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from conformance.bridge.runner import run_bridge
from conformance.handler import CAPABILITY_OPTIONS, TargetError
from conformance.handler.scenario_files import ScenarioFileError, load_scenarios
from conformance.verdict import DEFAULT_COUNTEREXAMPLES, Report

__all__ = ["run_from_args"]


def _given(args: argparse.Namespace, name: str) -> Any:
    return getattr(args, name, None)


def _refused(args: argparse.Namespace) -> list[str]:
    """Options ``run`` has that a bridge target declares itself (or that name another target kind)."""
    given = [option.flag for option in CAPABILITY_OPTIONS if _given(args, option.field)]
    for flag, name in (
        ("--text-format", "text_format"),
        ("--text-lag", "text_lag"),
        ("--adapter", "adapter"),
        ("--target", "followup_targets"),
    ):
        if _given(args, name):
            given.append(flag)
    return given


def run_from_args(args: argparse.Namespace, on_progress: Callable[[str], None] | None = None) -> Report:
    """Run ``args.bridge`` with the ``run`` options that apply to it; ``TargetError`` when it cannot run."""
    refused = _refused(args)
    if refused:
        raise TargetError(
            f"not used with --bridge: {', '.join(refused)} (the target declares its capabilities in its hello message)"
        )
    try:
        scenarios = load_scenarios(_given(args, "scenario_dir") or [])
    except ScenarioFileError as error:
        raise TargetError(str(error)) from error
    deadline = _given(args, "deadline")
    return run_bridge(
        args.bridge,
        profile=args.profile,
        seed=args.seed,
        cassette_dirs=_given(args, "cassette_dir") or [],
        extra_scenarios=scenarios,
        timeout=deadline or None,
        on_progress=on_progress,
        keep_counterexamples=None if _given(args, "all_counterexamples") else DEFAULT_COUNTEREXAMPLES,
        apis=_given(args, "format") or None,
        generated=_given(args, "generated"),
    )
