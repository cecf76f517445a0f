"""The handler suite: does a ``feed(chunk) -> events`` handler honour the SegmentEvent contract?

* ``scenarios`` / ``text_scenarios``: built-in chunk streams with hand-checked outcomes;
* ``generate`` / ``fragment``: generated turns, and any stream re-cut at arbitrary boundaries;
* ``observe`` / ``drive``: reading a handler's events by duck typing, and one recorded run of it;
* ``capabilities`` / ``checks``: what a handler declares, and the checks that judge a run;
* ``runner``: ``run_conformance``, the search behind the CLI, pytest and Python entry points;
* ``scenario_files``: saved counterexamples (``run --save-failures``, ``rerun``).
"""

from conformance.handler.capabilities import Capabilities
from conformance.handler.checks import CHECKS, HANDLER_CHECKS, CheckContext, check_by_id
from conformance.handler.drive import Transcript, drive
from conformance.handler.observe import HandlerAdapter, ObservedEvent, ObservedInvocation
from conformance.handler.runner import Counterexample, run_conformance
from conformance.handler.scenarios import BUILTIN_SCENARIOS, ExpectedCall, ExpectedOutcome, Scenario

__all__ = [
    "BUILTIN_SCENARIOS",
    "CHECKS",
    "HANDLER_CHECKS",
    "Capabilities",
    "CheckContext",
    "Counterexample",
    "ExpectedCall",
    "ExpectedOutcome",
    "HandlerAdapter",
    "ObservedEvent",
    "ObservedInvocation",
    "Scenario",
    "Transcript",
    "check_by_id",
    "drive",
    "run_conformance",
]
