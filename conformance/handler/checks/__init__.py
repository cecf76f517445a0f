"""The handler checks, in report order: robustness, lifecycle, text, then tool calls.

Each check is a function registered with its id, title, rationale, how-to-fix, taxonomy classes
and the contract rule it enforces (``conformance.handler.contract``) right above it. A check
returns violation messages for one run (empty: conforms) or raises ``NotApplicable`` when the run
holds nothing it can judge.
"""

# Importing the check modules registers their checks; this order is the report order.
# isort: off
from conformance.handler.checks import robustness, lifecycle, text, calls  # noqa: F401

# isort: on
from dataclasses import replace

from conformance.handler.capabilities import Capabilities
from conformance.handler.checks.context import HANDLER_CHECKS, TARGET_TITLES, CallMatch, CheckContext
from conformance.handler.checks.robustness import ROBUSTNESS
from conformance.verdict import Check

__all__ = ["CHECKS", "HANDLER_CHECKS", "ROBUSTNESS", "CallMatch", "CheckContext", "check_by_id", "for_target"]

CHECKS: tuple[Check[CheckContext], ...] = HANDLER_CHECKS.all()


def check_by_id(check_id: str) -> Check[CheckContext]:
    """Look a handler check up by its stable id."""
    return HANDLER_CHECKS.by_id(check_id)


def for_target(check: Check[CheckContext], capabilities: Capabilities) -> Check[CheckContext]:
    """``check`` as a report on a target with ``capabilities`` shows it: its title names the bound
    the target declared (``arguments_stream_incrementally``: ``args_lag``); other checks are unchanged."""
    title = TARGET_TITLES.get(check.id)
    return check if title is None else replace(check, title=title(capabilities))
