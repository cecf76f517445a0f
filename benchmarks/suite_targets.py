"""``toolcall-conformance run`` (no target: the whole reference implementation) as pytest tests, one per target.

Not collected by the project's own test run (``testpaths = ["tests"]``); ``benchmarks/bench_suite.py``
runs it explicitly, without and with ``-n 2`` (pytest-xdist), to show how the same work spreads
over cores::

    python -m pytest benchmarks/suite_targets.py -q -p no:cacheprovider [-n 2]

Each test makes exactly the calls ``conformance.cli`` makes for one target (same scenarios,
capabilities, profile and seed); the converter and round-trip targets are split by wire API and
by provider target so that the work can be shared out. The profile comes from
``TOOLCALL_BENCH_PROFILE`` (default ``ci``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from conformance.converter import run_converter_conformance
from conformance.handler.capabilities import Capabilities
from conformance.handler.runner import run_conformance
from conformance.handler.scenarios import BUILTIN_SCENARIOS
from conformance.handler.text_scenarios import text_scenarios
from conformance.roundtrip import run_roundtrip_conformance
from conformance.turns.text_formats import TEXT_FORMATS
from conformance.wire import WIRE_APIS
from conformance.wire.cases import bundled_cassette_dir
from reference_impl import ApiToolCallStreamingResponseHandler, ParsingStreamingResponseHandler
from reference_impl.converters import converter_for
from reference_impl.followup import ReferenceFormatter
from reference_impl.tools import TOOL_TARGETS

PROFILE = os.environ.get("TOOLCALL_BENCH_PROFILE", "ci")
SEED = 0


@pytest.fixture(autouse=True)
def _quiet_handlers() -> Iterator[None]:
    # As the CLI does: the handlers run thousands of times and log every anomaly they survive.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _assert_conformant(report: Any) -> None:
    failed = [result.check.id for result in report.by_status("failed")]
    assert report.conformant, f"{report.target}: failed checks {failed}"


def test_api_handler() -> None:
    report = run_conformance(
        ApiToolCallStreamingResponseHandler,
        capabilities=Capabilities(),
        profile=PROFILE,
        seed=SEED,
        target="ApiToolCallStreamingResponseHandler",
        scenarios=list(BUILTIN_SCENARIOS),
    )
    _assert_conformant(report)


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_text_parser(fmt: str) -> None:
    lag = ParsingStreamingResponseHandler(fmt).max_holdback_chars
    report = run_conformance(
        partial(ParsingStreamingResponseHandler, fmt),
        capabilities=Capabilities(text_format=fmt, text_lag_chars=lag),
        profile=PROFILE,
        seed=SEED,
        target=f"ParsingStreamingResponseHandler({fmt!r})",
        scenarios=text_scenarios(fmt),
    )
    _assert_conformant(report)


@pytest.mark.parametrize("api", WIRE_APIS)
def test_converter(api: str) -> None:
    report = run_converter_conformance(
        converter_for, [bundled_cassette_dir()], profile=PROFILE, seed=SEED, target=f"converter {api}", apis=[api]
    )
    _assert_conformant(report)


@pytest.mark.parametrize("target", TOOL_TARGETS)
def test_round_trip_formatter(target: str) -> None:
    report = run_roundtrip_conformance(
        ReferenceFormatter(), targets=[target], profile=PROFILE, seed=SEED, target_label=f"round-trip {target}"
    )
    _assert_conformant(report)


def xml_parser(**callbacks: Any) -> ParsingStreamingResponseHandler:
    """The reference xml parser as a handler factory, for ``run --handler benchmarks.suite_targets:xml_parser``."""
    return ParsingStreamingResponseHandler("xml", **callbacks)


def xml_parser_lag() -> int:
    """The hold-back the reference xml parser declares (its ``max_holdback_chars``)."""
    return ParsingStreamingResponseHandler("xml").max_holdback_chars
