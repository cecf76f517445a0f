"""toolcall-conformance: check any streaming tool-call handler against the SegmentEvent contract.

The public entry points::

    from conformance import run_conformance, Capabilities
    report = run_conformance(my_handler_factory, profile="ci")
    assert report.conformant, report

The command line (``toolcall-conformance run``) and the pytest plugin are built on the same call.
"""

from conformance.handler.capabilities import Capabilities
from conformance.handler.checks import CHECKS, check_by_id
from conformance.handler.drive import Transcript, drive
from conformance.handler.observe import HandlerAdapter, ObservedEvent, ObservedInvocation
from conformance.handler.runner import run_conformance, violations
from conformance.handler.scenarios import BUILTIN_SCENARIOS, ExpectedCall, ExpectedOutcome, Scenario
from conformance.verdict import PROFILES, Check, CheckResult, Report

__all__ = [
    "BUILTIN_SCENARIOS",
    "CHECKS",
    "PROFILES",
    "Capabilities",
    "Check",
    "CheckResult",
    "ExpectedCall",
    "ExpectedOutcome",
    "HandlerAdapter",
    "ObservedEvent",
    "ObservedInvocation",
    "Report",
    "Scenario",
    "Transcript",
    "check_by_id",
    "drive",
    "run_conformance",
    "violations",
]
