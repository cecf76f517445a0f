"""toolcall-conformance: check any streaming tool-call handler against the SegmentEvent contract.

The public entry points::

    from conformance import run_conformance, Capabilities
    report = run_conformance(my_handler_factory, profile="ci")
    assert report.conformant, report

The command line (``toolcall-conformance run``) and the pytest plugin are built on the same call.
"""

from conformance.checks import CHECKS, Capabilities, Check, check_by_id
from conformance.observe import HandlerAdapter, ObservedEvent, ObservedInvocation, Transcript, drive
from conformance.runner import PROFILES, CheckResult, Report, run_conformance
from conformance.scenarios import BUILTIN_SCENARIOS, ExpectedCall, ExpectedOutcome, Scenario

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
]
