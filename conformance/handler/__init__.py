"""The handler suite: does a ``feed(chunk) -> events`` handler (or a final-result accumulator) honour the contract?

* ``contract``: the rules, each with where the design says it;
* ``scenarios`` / ``text_scenarios``: built-in chunk streams with hand-checked outcomes;
* ``generate`` / ``fragment``: streams from the whole input space, and any stream re-cut anywhere;
* ``observe`` / ``drive``: reading a target's events by duck typing, and one recorded run of it;
* ``capabilities`` / ``checks``: what a target declares, and the checks that judge a run;
* ``runner``: ``run_conformance``, the search behind the CLI, pytest and Python entry points;
* ``scenario_files``: saved counterexamples (``run --save-failures``, ``rerun``).
"""

from conformance.handler.capabilities import CAPABILITY_OPTIONS, Capabilities
from conformance.handler.checks import CHECKS, HANDLER_CHECKS, CheckContext, check_by_id
from conformance.handler.contract import RULES, Rule
from conformance.handler.drive import DEFAULT_DEADLINE_SECONDS, TargetError, Transcript, drive
from conformance.handler.observe import Accumulator, Handler, HandlerAdapter, ObservedEvent, ObservedInvocation
from conformance.handler.runner import (
    Counterexample,
    default_scenarios,
    idle_capabilities,
    plan,
    run_conformance,
    violations,
)
from conformance.handler.scenarios import BUILTIN_SCENARIOS, ExpectedCall, ExpectedOutcome, Scenario

__all__ = [
    "BUILTIN_SCENARIOS",
    "CAPABILITY_OPTIONS",
    "CHECKS",
    "DEFAULT_DEADLINE_SECONDS",
    "HANDLER_CHECKS",
    "RULES",
    "Accumulator",
    "Capabilities",
    "CheckContext",
    "Counterexample",
    "ExpectedCall",
    "ExpectedOutcome",
    "Handler",
    "HandlerAdapter",
    "ObservedEvent",
    "ObservedInvocation",
    "Rule",
    "Scenario",
    "TargetError",
    "Transcript",
    "check_by_id",
    "default_scenarios",
    "drive",
    "idle_capabilities",
    "plan",
    "run_conformance",
    "violations",
]
