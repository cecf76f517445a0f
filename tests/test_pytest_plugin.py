"""The pytest plugin and base class, exercised in a scratch project with pytester."""

from __future__ import annotations

import pytest

from conformance.checks import CHECKS

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestRemovedIn10Warning")

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
    result.stdout.fnmatch_lines(["*reasoning_conserved: the handler does not declare reasoning support*"])


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
    result.stdout.fnmatch_lines(["*overrides conformance check 'text_conserved'*xfail*"])
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
    from conformance.cassettes import bundled_cassette_dir
    from conformance.converter_suite import CONVERTER_CHECKS

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
