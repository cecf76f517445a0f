"""The result model every suite reports in: checks, their verdicts, reports and search profiles.

This is the ground floor of ``conformance``: the handler, converter and round-trip suites build
on it, and the reports, CLI and pytest plugin read it. It imports nothing else from the package.
"""

from conformance.verdict.check import (
    DEFAULT_COUNTEREXAMPLES,
    Check,
    CheckRegistry,
    CheckResult,
    Counterexample,
    NotApplicable,
    Status,
    signature,
)
from conformance.verdict.harm import HARMS, Harm, HarmVerdict, at_least, parse_harm, worst
from conformance.verdict.profiles import (
    PROFILES,
    Profile,
    example_database,
    register_hypothesis_profiles,
    resolve_profile,
    search_settings,
    the_same_search_in_every_process,
    use_example_database,
)
from conformance.verdict.progress import ProgressStep
from conformance.verdict.realism import Realism
from conformance.verdict.report import Report, describe_factory, merge_reports

__all__ = [
    "DEFAULT_COUNTEREXAMPLES",
    "HARMS",
    "PROFILES",
    "Check",
    "CheckRegistry",
    "CheckResult",
    "Counterexample",
    "Harm",
    "HarmVerdict",
    "NotApplicable",
    "Profile",
    "ProgressStep",
    "Realism",
    "Report",
    "Status",
    "at_least",
    "describe_factory",
    "example_database",
    "merge_reports",
    "parse_harm",
    "register_hypothesis_profiles",
    "resolve_profile",
    "search_settings",
    "signature",
    "the_same_search_in_every_process",
    "use_example_database",
    "worst",
]
