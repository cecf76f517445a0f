"""The base classes users subclass: one test per check, against a handler, converter or formatter."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.converter import CONVERTER_CHECKS, run_converter_conformance
from conformance.handler import CAPABILITY_OPTIONS, Capabilities, HandlerAdapter, TargetError
from conformance.handler.checks import CHECKS
from conformance.handler.runner import run_conformance
from conformance.roundtrip import ROUNDTRIP_CHECKS, run_roundtrip_conformance
from conformance.verdict import Check, Report
from conformance.wire.cases import bundled_cassette_dir

__all__ = [
    "AccumulatorConformanceTests",
    "ConverterConformanceTests",
    "FormatterConformanceTests",
    "HandlerConformanceTests",
    "capabilities_from_config",
]

MARKER = "toolcall_conformance"


def _check_test(check: Check[Any]) -> Callable[..., None]:
    check_id = check.id

    def test(self: Any, toolcall_conformance_report: Report) -> None:
        result = next(r for r in toolcall_conformance_report.results if r.check.id == check_id)
        if result.status == "skipped":
            pytest.skip(f"{check_id}: {result.skipped_reason}")
        if result.status == "failed":
            detail = result.counterexample or result.message
            pytest.fail(f"{result.check.title}\n{detail}\nhow to fix: {result.check.how_to_fix}", pytrace=False)

    test.__name__ = f"test_{check_id}"
    test.__doc__ = check.title
    return test


def _install_check_tests(cls: type, checks: Sequence[Check[Any]]) -> None:
    """One ``test_<check_id>`` method per check, each marked ``toolcall_conformance``."""
    for check in checks:
        setattr(cls, f"test_{check.id}", pytest.mark.toolcall_conformance(_check_test(check)))


def _reject_unmarked_overrides(cls: type, checks: Any, kind: str) -> None:
    """A subclass may override a check's test only to xfail it, with a reason: departures are said aloud."""
    for check in checks:
        override = cls.__dict__.get(f"test_{check.id}")
        marks = getattr(override, "pytestmark", []) if override is not None else []
        if override is not None and not any(m.name == "xfail" and m.kwargs.get("reason") for m in marks):
            raise TypeError(
                f"{cls.__name__}.test_{check.id} overrides {kind} check {check.id!r}; mark the override "
                f'@pytest.mark.xfail(reason="...") to say why your implementation departs from the contract'
            )


def _profile_and_seed(cls: Any, config: pytest.Config) -> tuple[str, int]:
    """The class attribute, else the command-line option, else the ini key, else ``ci`` / 0."""
    profile = cls.profile or config.getoption("toolcall_profile") or config.getini("toolcall_profile") or "ci"
    seed_option = cls.seed if cls.seed is not None else config.getoption("toolcall_seed")
    seed = int(seed_option) if seed_option is not None else int(config.getini("toolcall_seed") or 0)
    return str(profile), seed


def capabilities_from_config(config: pytest.Config) -> Capabilities:
    """The capabilities the ``--toolcall-*`` options and ``toolcall_*`` ini keys declare (CLI names)."""
    values: dict[str, Any] = {}
    for option in CAPABILITY_OPTIONS:
        default = getattr(Capabilities(), option.field)
        given = config.getoption("toolcall_" + option.field, default=None)
        ini = str(config.getini(option.ini_key) or "").strip().lower()
        if given:
            values[option.field] = not default
        elif ini:
            if ini not in ("true", "false", "1", "0", "yes", "no"):
                raise pytest.UsageError(f"ini key {option.ini_key} must be true or false, got {ini!r}")
            values[option.field] = ini in ("true", "1", "yes")
    text_format = (
        config.getoption("toolcall_text_format", default=None) or config.getini("toolcall_text_format") or None
    )
    lag = config.getoption("toolcall_text_lag", default=None) or config.getini("toolcall_text_lag") or None
    if text_format:
        values["text_format"] = text_format
        values["text_lag_chars"] = None
    if lag:
        values["text_lag_chars"] = None if str(lag).lower() == "none" else int(lag)
    try:
        return Capabilities(**values)
    except (TypeError, ValueError) as error:
        raise pytest.UsageError(f"toolcall-conformance capabilities: {error}") from error


def _run_target(cls: Any, config: pytest.Config, factory: Any, capabilities: Capabilities, label: str) -> Report:
    profile, seed = _profile_and_seed(cls, config)
    logging.disable(logging.CRITICAL)
    try:
        return run_conformance(
            factory,
            capabilities=capabilities,
            profile=profile,
            seed=seed,
            adapter=getattr(cls, "adapter", None),
            target=label,
        )
    except TargetError as error:
        raise pytest.UsageError(f"toolcall-conformance cannot run {label}: {error}") from error
    finally:
        logging.disable(logging.NOTSET)


class HandlerConformanceTests:
    """Base class: one test per conformance check, against ``handler_factory``.

    ``capabilities`` (None: the ``--toolcall-no-*`` options and ``toolcall_*`` ini keys), ``adapter``
    (a ``HandlerAdapter`` for a handler that is not seed-shaped), ``profile`` and ``seed`` are class
    attributes; the same names as the command line's flags.
    """

    capabilities: ClassVar[Capabilities | None] = None
    adapter: ClassVar[HandlerAdapter | None] = None
    profile: ClassVar[str | None] = None  # None: the --toolcall-profile option (default "ci")
    seed: ClassVar[int | None] = None

    def handler_factory(self, **callbacks: Any) -> Any:
        """Return a fresh handler; receives on_segment_event / on_tool_invocation keyword arguments."""
        raise NotImplementedError("override handler_factory() to return a fresh handler")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_unmarked_overrides(cls, CHECKS, "conformance")

    @pytest.fixture(scope="class")
    @classmethod
    def toolcall_conformance_report(cls, request: pytest.FixtureRequest) -> Report:
        capabilities = cls.capabilities or capabilities_from_config(request.config)
        return _run_target(cls, request.config, cls().handler_factory, capabilities, cls.__name__)


_install_check_tests(HandlerConformanceTests, CHECKS)


class AccumulatorConformanceTests:
    """Base class: one test per check that applies to a final-result accumulator (``add``/``result``).

    Override ``accumulator_factory()``; event checks are skipped by name (an accumulator has no events).
    """

    capabilities: ClassVar[Capabilities | None] = None
    profile: ClassVar[str | None] = None
    seed: ClassVar[int | None] = None

    def accumulator_factory(self) -> Any:
        """Return a fresh accumulator with ``add(chunk)`` and ``result()``."""
        raise NotImplementedError("override accumulator_factory() to return a fresh accumulator")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_unmarked_overrides(cls, CHECKS, "conformance")

    @pytest.fixture(scope="class")
    @classmethod
    def toolcall_conformance_report(cls, request: pytest.FixtureRequest) -> Report:
        declared = cls.capabilities or capabilities_from_config(request.config)
        capabilities = replace(declared, events=False, callbacks=False, lifecycle=False)
        return _run_target(cls, request.config, cls().accumulator_factory, capabilities, cls.__name__)


_install_check_tests(AccumulatorConformanceTests, CHECKS)


class ConverterConformanceTests:
    """Base class: one test per converter check, over recordings with expectations.

    Override ``converter_factory(api, **options)``; set ``cassette_dirs`` to your recordings (the
    bundled cassettes are always included) and ``apis`` to the wire APIs your converter speaks.
    """

    cassette_dirs: ClassVar[tuple[Path, ...]] = ()
    apis: ClassVar[tuple[str, ...] | None] = None
    profile: ClassVar[str | None] = None
    seed: ClassVar[int | None] = None

    def converter_factory(self, api: str, **options: Any) -> Any:
        """Return a fresh converter for ``api`` (options come from cassette metadata)."""
        raise NotImplementedError("override converter_factory(api, **options)")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_unmarked_overrides(cls, CONVERTER_CHECKS, "converter")

    @pytest.fixture(scope="class")
    @classmethod
    def toolcall_conformance_report(cls, request: pytest.FixtureRequest) -> Iterator[Report]:
        instance = cls()
        config = request.config
        extra = [Path(p) for p in (config.getoption("toolcall_cassette_dir") or [])]
        extra += [Path(p) for p in config.getini("toolcall_cassette_dirs")]
        profile, seed = _profile_and_seed(cls, config)
        logging.disable(logging.CRITICAL)
        try:
            yield run_converter_conformance(
                instance.converter_factory,
                [bundled_cassette_dir(), *cls.cassette_dirs, *extra],
                profile=profile,
                seed=seed,
                target=cls.__name__,
                apis=list(cls.apis) if cls.apis else None,
            )
        finally:
            logging.disable(logging.NOTSET)


_install_check_tests(ConverterConformanceTests, CONVERTER_CHECKS)


# One round-trip report per test class (and per parameter of a parametrized ``formatter`` fixture),
# computed on its first test (see FormatterConformanceTests).
_FORMATTER_REPORTS: weakref.WeakKeyDictionary[type, dict[str, Report]] = weakref.WeakKeyDictionary()


class FormatterConformanceTests:
    """Base class: one test per round-trip check (``conformance.roundtrip``), against a ``formatter`` fixture.

    Provide a fixture named ``formatter`` (in the class, or in a ``conftest.py``) returning your
    round-trip formatter: an object with ``format_followup(target, turn, results)`` and optionally
    ``format_tools(target, tools, choice)``, a class or zero-argument factory returning one, or a bare
    ``format_followup`` function. Set ``targets`` to check only some provider targets (default: the
    formatter's own ``targets``, or all). The checks run once per class (once per parameter of a
    parametrized ``formatter`` fixture), when its first test sets up; a check that needs
    ``format_tools`` is skipped by name for a formatter without it. Overriding a ``test_<check_id>``
    requires ``@pytest.mark.xfail(reason=...)``, as for the handler checks.
    """

    targets: ClassVar[tuple[str, ...] | None] = None
    profile: ClassVar[str | None] = None  # None: the --toolcall-profile option (default "ci")
    seed: ClassVar[int | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_unmarked_overrides(cls, ROUNDTRIP_CHECKS, "round-trip")

    @pytest.fixture
    def toolcall_conformance_report(self, request: pytest.FixtureRequest, formatter: Any) -> Report:
        # Function scope, cached per class (and per parameter of a parametrized ``formatter``): a
        # class-scoped fixture could not use a function-scoped ``formatter``, the natural way to write one.
        cls = type(self)
        callspec = getattr(request.node, "callspec", None)
        per_class = _FORMATTER_REPORTS.setdefault(cls, {})
        key = callspec.id if callspec is not None else ""
        if key in per_class:
            return per_class[key]
        config = request.config
        profile, seed = _profile_and_seed(cls, config)
        logging.disable(logging.CRITICAL)
        try:
            report = run_roundtrip_conformance(
                formatter,
                targets=cls.targets,
                profile=profile,
                seed=seed,
                target_label=f"{cls.__name__}[{key}]" if key else cls.__name__,
            )
        finally:
            logging.disable(logging.NOTSET)
        per_class[key] = report
        return report


_install_check_tests(FormatterConformanceTests, ROUNDTRIP_CHECKS)
