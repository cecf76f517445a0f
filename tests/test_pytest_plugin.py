"""The pytest plugin and base class, exercised in a scratch project with pytester."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conformance.handler.checks import CHECKS

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")

ROOT = Path(__file__).resolve().parents[1]

REFERENCE_SUBCLASS = """
import pytest
from conformance import Capabilities
from conformance.pytest_plugin import HandlerConformanceTests
from reference_impl import ApiToolCallStreamingResponseHandler

class TestReference(HandlerConformanceTests):
    profile = "dev"
    capabilities = Capabilities(reasoning=False)

    def handler_factory(self, **callbacks):
        return ApiToolCallStreamingResponseHandler(**callbacks)
"""


def test_subclass_runs_one_test_per_check_and_skips_by_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_reference=REFERENCE_SUBCLASS)
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(CHECKS) - 1, skipped=1)
    result.stdout.fnmatch_lines(["*reasoning_conserved: declared without reasoning (--no-reasoning)*"])


def test_unmarked_override_is_rejected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_override="""
from conformance.pytest_plugin import HandlerConformanceTests

class TestSilenced(HandlerConformanceTests):
    def test_text_conserved(self):
        pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*replaces the conformance check 'text_conserved'*xfail*"])
    assert result.ret != 0


def test_override_with_xfail_reason_is_allowed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_override=REFERENCE_SUBCLASS
        + """
    @pytest.mark.xfail(reason="we buffer text on purpose", strict=True)
    def test_text_conserved(self):
        raise AssertionError("departure documented")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(CHECKS) - 2, skipped=1, xfailed=1)


def test_command_line_handler_option_reports_violations(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        broken_handler="""
from reference_impl import ApiToolCallStreamingResponseHandler

class Broken(ApiToolCallStreamingResponseHandler):
    def get_all_events(self):
        return self._all_events  # not a copy

def make(**callbacks):
    return Broken(**callbacks)
"""
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--toolcall-handler",
        "broken_handler:make",
        "--toolcall-profile",
        "dev",
        "-m",
        "toolcall_conformance",
    )
    result.assert_outcomes(passed=len(CHECKS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*test_get_all_returns_copies*"])


def test_unimportable_factory_stops_with_a_clear_message(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--toolcall-handler", "no_such_module_xyz:make")
    result.stdout.fnmatch_lines(["*cannot import module 'no_such_module_xyz'*"])
    assert result.ret != 0


def test_cassette_dir_option_runs_converter_checks_on_user_recordings(pytester: pytest.Pytester) -> None:
    from conformance.converter import CONVERTER_CHECKS
    from conformance.wire.cases import bundled_cassette_dir

    recordings = pytester.mkdir("recordings")
    for name in ("single_call.yaml", "single_call.expected.json"):
        (recordings / name).write_bytes((bundled_cassette_dir() / "anthropic" / name).read_bytes())
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--toolcall-cassette-dir", str(recordings), "--toolcall-profile", "dev"
    )
    result.assert_outcomes(passed=len(CONVERTER_CHECKS))


def test_converter_base_class_reports_a_broken_converter(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_my_converter="""
from conformance.pytest_plugin import ConverterConformanceTests
from reference_impl.converters import converter_for


class ForgetsIds:
    def __init__(self, inner):
        self._inner = inner
        self.api_errors = inner.api_errors

    def _strip(self, chunks):
        for chunk in chunks:
            for delta in chunk.tool_calls or ():
                delta.call_id = None
        return chunks

    def convert(self, event):
        return self._strip(self._inner.convert(event))

    def finish(self):
        return self._strip(self._inner.finish())

    def fail(self, error):
        return self._strip(self._inner.fail(error))


class TestForgetsIds(ConverterConformanceTests):
    apis = ("openai-chat",)
    profile = "dev"

    def converter_factory(self, api, **options):
        return ForgetsIds(converter_for(api, **options))
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*test_converter_outcome_matches*", "*call id None, the provider sent*"])
    assert result.ret == 1


# -- FormatterConformanceTests and --toolcall-formatter (round trips) ------------------------------

FORMATTER_SUBCLASSES = """
import pytest
from conformance.pytest_plugin import FormatterConformanceTests
from reference_impl.followup import ReferenceFormatter
from tests.mutants.formatter_mutants import FORMATTER_MUTANTS

COMPLETION_ORDER = next(m for m in FORMATTER_MUTANTS if m.name == "COMPLETION_ORDER_RESULTS")


class TestReferenceFormatter(FormatterConformanceTests):
    profile = "dev"

    @pytest.fixture
    def formatter(self):
        return ReferenceFormatter()


class TestCompletionOrderMutant(FormatterConformanceTests):
    profile = "dev"
    targets = ("anthropic", "openai-chat")

    @pytest.fixture
    def formatter(self):
        return COMPLETION_ORDER.factory()
"""


def _roundtrip_ids() -> list[str]:
    from conformance.roundtrip import ROUNDTRIP_CHECKS

    return [check.id for check in ROUNDTRIP_CHECKS]


@pytest.fixture(scope="module", autouse=True)
def _sdk_modules_loaded() -> None:
    """Import every SDK module the round-trip checks use before any in-process pytester run.

    pytester removes the modules a run imported when it ends; the SDKs import request types lazily,
    and a re-import after removal breaks pydantic's generic models ("Could not find the generic base
    class"). That is an artefact of running pytest inside pytest, not something users meet.
    """
    from conformance.roundtrip import run_roundtrip_conformance
    from reference_impl.followup import ReferenceFormatter

    assert run_roundtrip_conformance(ReferenceFormatter(), profile="dev").conformant


def test_formatter_base_class_passes_the_reference_and_catches_a_mutant(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(str(ROOT))  # tests.mutants
    pytester.makepyfile(test_formatters=FORMATTER_SUBCLASSES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    checks = _roundtrip_ids()
    for check_id in checks:
        result.stdout.fnmatch_lines([f"*TestReferenceFormatter::test_{check_id} PASSED*"])
    result.stdout.fnmatch_lines(
        [
            "*TestCompletionOrderMutant::test_results_adjacent_in_call_order FAILED*",
            "*results must follow in call order, not completion order*",
        ]
    )
    # The mutant class only targets anthropic and openai-chat: the Responses-only check cannot apply
    # there and must say so as a skip, never as a pass.
    result.stdout.fnmatch_lines(["*TestCompletionOrderMutant::test_responses_item_ids_valid SKIPPED*"])
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] + outcomes["failed"] + outcomes["skipped"] == 2 * len(checks)
    assert outcomes["skipped"] == 1
    assert 1 <= outcomes["failed"] < len(checks)
    assert result.ret == 1


def test_formatter_fixture_may_be_parametrized_and_each_param_gets_its_own_run(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(str(ROOT))
    pytester.makepyfile(
        test_param="""
import pytest
from conformance.pytest_plugin import FormatterConformanceTests
from reference_impl.followup import ReferenceFormatter
from tests.mutants.formatter_mutants import FORMATTER_MUTANTS

MUTANT = next(m for m in FORMATTER_MUTANTS if m.name == "COMPLETION_ORDER_RESULTS")


class TestBoth(FormatterConformanceTests):
    profile = "dev"
    targets = ("anthropic",)

    @pytest.fixture(params=["reference", "mutant"])
    def formatter(self, request):
        return ReferenceFormatter() if request.param == "reference" else MUTANT.factory()
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.stdout.fnmatch_lines(
        [
            "*test_results_adjacent_in_call_order?reference? PASSED*",
            "*test_results_adjacent_in_call_order?mutant? FAILED*",
        ]
    )


def test_formatter_without_format_tools_skips_the_tool_checks_by_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bare="""
import pytest
from conformance.pytest_plugin import FormatterConformanceTests
from reference_impl.followup import format_followup


@pytest.fixture
def formatter():  # a conftest-style fixture works as well as one in the class
    def bare(target, turn, results):
        return format_followup(target, turn, results)
    return bare


class TestBare(FormatterConformanceTests):
    profile = "dev"
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=len(_roundtrip_ids()) - 2, skipped=2)
    result.stdout.fnmatch_lines(["*tool_schemas_accepted: formatter does not declare: format_tools*"])


def test_formatter_base_class_without_fixture_is_a_setup_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_missing="""
from conformance.pytest_plugin import FormatterConformanceTests

class TestMissing(FormatterConformanceTests):
    profile = "dev"
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*fixture 'formatter' not found*"])
    result.assert_outcomes(errors=len(_roundtrip_ids()))


def test_unmarked_formatter_check_override_is_rejected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_override="""
from conformance.pytest_plugin import FormatterConformanceTests

class TestSilenced(FormatterConformanceTests):
    def test_provider_ids_byte_exact(self):
        pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*replaces the round-trip check 'provider_ids_byte_exact'*xfail*"])
    assert result.ret != 0


def test_command_line_formatter_option_reports_violations(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(str(ROOT))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--toolcall-formatter",
        "tests.mutants.formatter_mutants:completion_order_results",
        "--toolcall-profile",
        "dev",
        "-m",
        "toolcall_conformance",
    )
    result.stdout.fnmatch_lines(["*TestToolcallFormatterConformance::test_results_adjacent_in_call_order*"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 1 and outcomes["passed"] + outcomes["failed"] == len(_roundtrip_ids())
    # Only the class asked for is collected: no handler or converter checks ran.
    assert "TestToolcallConformance" not in result.stdout.str()


def test_formatter_ini_key_runs_the_reference(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ntoolcall_formatter = reference_impl.followup:ReferenceFormatter\ntoolcall_profile = dev\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(_roundtrip_ids()))


def test_unusable_formatter_option_stops_with_a_clear_message(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--toolcall-formatter", "json:__doc__")
    result.stdout.fnmatch_lines(["*'json:__doc__' names a str, not a round-trip formatter*"])
    assert result.ret != 0


def test_the_example_database_is_opt_in_and_replays_what_a_run_saved(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(str(ROOT))
    database = pytester.path / "toolcall-db"
    argv = ["-p", "no:cacheprovider", "--toolcall-profile", "dev"]
    argv += ["--toolcall-handler", "tests.mutants.api_handler_mutants:NameConcat", "-k", "tool_names_whole"]
    # Default: no database anywhere, so the seed alone reproduces the run.
    without = pytester.runpytest(*argv)
    assert without.ret == 1
    assert "example database" not in without.stdout.str()
    assert not database.exists()
    with_database = pytester.runpytest(*argv, "--toolcall-database", str(database))
    assert with_database.ret == 1
    with_database.stdout.fnmatch_lines([f"*example database {database}*"])
    assert any(path.is_file() for path in database.rglob("*")), "the failing inputs were not saved"


def test_the_printed_rerun_command_reruns_the_same_failing_test(pytester: pytest.Pytester) -> None:
    # Catches a re-run line that omits the options choosing the target: pasted back, it would
    # select nothing (no handler given: every generated test deselected) instead of the failure.
    pytester.syspathinsert(str(ROOT))
    argv = ["-p", "no:cacheprovider", "--toolcall-profile", "dev", "--toolcall-no-reasoning"]
    argv += ["--toolcall-handler", "tests.mutants.api_handler_mutants:NameConcat", "-k", "tool_names_whole"]
    first = pytester.runpytest(*argv)
    assert first.ret == 1
    line = next(text for text in first.stdout.lines if text.strip().startswith("re-run: pytest"))
    assert "--toolcall-handler tests.mutants.api_handler_mutants:NameConcat" in line
    assert "--toolcall-no-reasoning" in line
    again = pytester.runpytest("-p", "no:cacheprovider", *shlex.split(line.strip().removeprefix("re-run: pytest")))
    again.assert_outcomes(failed=1)


# -- stacks ----------------------------------------------------------------------------------------


def test_stack_base_class_passes_a_correct_stack_and_fails_its_planted_bug(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_my_stack="""
from conformance.pytest_plugin import StackConformanceTests
from conformance.stack import StackCapabilities
from examples.stacks import anthropic_stack


class TestMyStack(StackConformanceTests):
    profile = "dev"

    def stack_factory(self):
        return anthropic_stack.stack


class TestMyStackWithItsPlantedBug(StackConformanceTests):
    profile = "dev"
    stack_capabilities = StackCapabilities(apis=("anthropic",))

    def stack_factory(self):
        return anthropic_stack.stack_ignoring_the_end
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*TestMyStackWithItsPlantedBug*test_stack_outcome_matches*",
            "*stream_cut_after_arguments*",
            "*ran_wrong*",
            "*re-run: pytest*--toolcall-profile dev --toolcall-seed 0*",
        ]
    )


def test_unmarked_stack_check_override_is_rejected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_override="""
from conformance.pytest_plugin import StackConformanceTests


class TestMine(StackConformanceTests):
    def test_stack_byte_split_invariant(self):
        pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*replaces the stack check 'stack_byte_split_invariant'*"])


def test_command_line_stack_option_with_recordings_runs_the_stack_checks_only(pytester: pytest.Pytester) -> None:
    from conformance.stack import STACK_CHECKS
    from conformance.wire.cases import bundled_cassette_dir

    recordings = pytester.mkdir("recordings")
    for name in ("single_call.yaml", "single_call.expected.json"):
        (recordings / name).write_bytes((bundled_cassette_dir() / "anthropic" / name).read_bytes())
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--toolcall-stack",
        "examples.stacks.anthropic_stack:stack_ignoring_the_end",
        "--toolcall-cassette-dir",
        str(recordings),
        "--toolcall-profile",
        "dev",
        "-v",
    )
    result.assert_outcomes(passed=len(STACK_CHECKS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*TestToolcallStackConformance::test_stack_outcome_matches FAILED*"])
    assert "TestToolcallConverterConformance" not in result.stdout.str()


def test_stack_ini_key_and_format_option(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntoolcall_stack = examples.stacks.anthropic_stack:stack\ntoolcall_profile = dev\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result = pytester.runpytest("-p", "no:cacheprovider", "--toolcall-format", "gemini")
    result.stdout.fnmatch_lines(["*the stack does not declare gemini (it declares apis: anthropic)*"])
    assert result.ret != 0


def test_unusable_stack_option_stops_with_a_clear_message(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--toolcall-stack", "tests.stack_targets:two_arguments")
    result.stdout.fnmatch_lines(["*--toolcall-stack tests.stack_targets:two_arguments(api, pieces) can be called*"])
    assert result.ret == 4


def test_a_scenario_prints_in_the_chunk_notation() -> None:
    # What hypothesis shows for a falsifying example: one line a reader can follow, not a dataclass dump.
    from conformance.handler.scenarios import BUILTIN_SCENARIOS

    scenario = next(s for s in BUILTIN_SCENARIOS if s.name == "late_id_and_late_name")
    assert repr(scenario) == (
        "Scenario('late_id_and_late_name' (built-in): tool[0] '{\"path\": ' | tool[0 name='read_'] None | "
        "tool[0 id='call_late' name='file'] '\"a.py\"}'; expected: read_file({'path': 'a.py'}) id='call_late')"
    )
