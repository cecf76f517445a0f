"""The base classes users subclass: one test per check, against a handler, converter, formatter or stack."""

from __future__ import annotations

import logging
import shlex
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.converter import CONVERTER_CHECKS, run_converter_conformance
from conformance.handler import CAPABILITY_OPTIONS, Capabilities, HandlerAdapter, TargetError
from conformance.handler.capabilities import CapabilityOption
from conformance.handler.checks import CHECKS
from conformance.handler.runner import run_conformance
from conformance.handler.sharded import ShardedRun
from conformance.pytest_plugin.sharing import shared_report
from conformance.roundtrip import ROUNDTRIP_CHECKS, run_roundtrip_conformance
from conformance.stack import (
    STACK_CHECKS,
    Stack,
    StackCapabilities,
    StackFactoryError,
    declared_capabilities,
    run_stack_conformance,
)
from conformance.verdict import Check, Counterexample, Harm, Report, parse_harm
from conformance.wire.cases import bundled_cassette_dir

__all__ = [
    "AccumulatorConformanceTests",
    "ConverterConformanceTests",
    "FormatterConformanceTests",
    "HandlerConformanceTests",
    "StackConformanceTests",
    "capabilities_from_config",
    "fail_on_threshold",
]

MARKER = "toolcall_conformance"


# Options that say what runs (given on the command line, they belong in the re-run command too).
_VALUE_OPTIONS = (
    "handler",
    "accumulator",
    "adapter",
    "converter",
    "formatter",
    "stack",
    "text_format",
    "text_lag",
    "database",
)


def _rerun_options(config: pytest.Config) -> str:
    """The ``--toolcall-*`` options of this session that choose the target and its capabilities."""
    words: list[str] = []
    for name in _VALUE_OPTIONS:
        value = config.getoption("toolcall_" + name, default=None)
        if value:
            words += [f"--toolcall-{name.replace('_', '-')}", str(value)]
    for option in CAPABILITY_OPTIONS:
        value = config.getoption("toolcall_" + option.field, default=None)
        if value and option.valued:
            words += [option.pytest_option, str(value)]
        elif value:
            words.append(option.pytest_option)
    for flag in ("realistic",):
        if config.getoption("toolcall_" + flag, default=False):
            words.append("--toolcall-" + flag)
    for api in config.getoption("toolcall_format", default=None) or ():
        words += ["--toolcall-format", api]
    for directory in config.getoption("toolcall_cassette_dir", default=None) or ():
        words += ["--toolcall-cassette-dir", directory]
    return "".join(f" {shlex.quote(word)}" for word in words)


def _check_test(check: Check[Any]) -> Callable[..., None]:
    check_id = check.id

    def test(self: Any, toolcall_conformance_report: Report, request: pytest.FixtureRequest) -> None:
        report = toolcall_conformance_report
        result = next(r for r in report.results if r.check.id == check_id)
        if result.status == "skipped":
            pytest.skip(f"{check_id}: {result.skipped_reason}")
        if result.status == "failed":
            threshold = fail_on_threshold(self, request.config)
            if threshold is not None and result not in report.gate(threshold):
                pytest.xfail(
                    f"{check_id}: a finding below the --toolcall-fail-on {threshold.value} gate "
                    f"({result.harm.value if result.harm else 'not classified'}): {result.message}"
                )
            detail = "\n".join(_with_finding(c) for c in result.counterexamples) or result.message
            rerun = (
                f"re-run: pytest '{request.node.nodeid}'{_rerun_options(request.config)} "
                f"--toolcall-profile {report.profile} --toolcall-seed {report.seed}"
            )
            pytest.fail(
                f"{result.check.title}\n"
                f"failed in {result.failing_examples} of {result.examples_run} runs "
                f"(profile {report.profile}, seed {report.seed})\n"
                f"{detail}\nhow to fix: {result.check.how_to_fix}\n{rerun}",
                pytrace=False,
            )

    test.__name__ = f"test_{check_id}"
    test.__doc__ = check.title
    return test


def _with_finding(counterexample: Counterexample) -> str:
    """A counterexample's text with its harm and realism, as the terminal report shows them."""
    lines = [counterexample.text]
    if counterexample.harm is not None:
        lines.append(f"harm: {counterexample.harm.harm.value}: {counterexample.harm.why}")
    if counterexample.realism is not None:
        lines.append(f"realism: {counterexample.realism.describe()}")
    if len(counterexample.recordings) > 1:
        lines.append(f"the same failure on: {', '.join(counterexample.recordings[1:])}")
    return "\n".join(lines)


def fail_on_threshold(test_class: Any, config: pytest.Config) -> Harm | None:
    """The ``--fail-on`` gate of a check test: the class's ``fail_on``, else ``--toolcall-fail-on`` or the
    ini key ``toolcall_fail_on`` (None: every finding fails its test)."""
    value = getattr(test_class, "fail_on", None) or config.getoption("toolcall_fail_on", default=None)
    value = value or config.getini("toolcall_fail_on")
    if not value:
        return None
    return value if isinstance(value, Harm) else parse_harm(str(value))


def _install_check_tests(cls: type, checks: Sequence[Check[Any]]) -> None:
    """One ``test_<check_id>`` method per check, each marked ``toolcall_conformance``."""
    for check in checks:
        setattr(cls, f"test_{check.id}", pytest.mark.toolcall_conformance(_check_test(check)))


def _reject_unmarked_overrides(cls: type, checks: Any, kind: str) -> None:
    """A subclass may override a check's test only to xfail it, with a reason: departures are said aloud.

    Anything else under a check's test name (a plain method, ``None``, a constant) is rejected when
    the class is defined; an accepted override's xfail is made strict, so a fixed departure is noticed.
    """
    for check in checks:
        name = f"test_{check.id}"
        if name not in cls.__dict__:
            continue
        override = cls.__dict__[name]
        marks = getattr(override, "pytestmark", []) if callable(override) else []
        xfails = [m for m in marks if m.name == "xfail" and m.kwargs.get("reason")]
        if not callable(override) or not xfails:
            what = "replaces" if callable(override) else f"sets to {override!r}"
            raise TypeError(
                f"{cls.__name__}.{name} {what} the {kind} check {check.id!r}; override it only with a method marked "
                f'@pytest.mark.xfail(reason="...") saying why your implementation departs from the contract '
                "(or declare a capability to skip it by name)"
            )
        override.pytestmark = [m for m in marks if m.name != "xfail"] + [
            pytest.mark.xfail(reason=xfails[0].kwargs["reason"], strict=True).mark
        ]


def profile_and_seed(config: pytest.Config, cls: Any = None) -> tuple[str, int]:
    """The class attribute, else ``--toolcall-profile`` / ``--toolcall-seed``, else the ini keys, else
    (for the seed) ``--hypothesis-seed``, else ``ci`` / 0."""
    profile = (
        getattr(cls, "profile", None)
        or config.getoption("toolcall_profile", default=None)
        or config.getini("toolcall_profile")
        or "ci"
    )
    for candidate in (
        getattr(cls, "seed", None),
        config.getoption("toolcall_seed", default=None),
        config.getini("toolcall_seed") or None,
        config.getoption("hypothesis_seed", default=None),
    ):
        if candidate is not None:
            try:
                return str(profile), int(candidate)
            except ValueError:
                raise pytest.UsageError(
                    f"toolcall-conformance: the seed must be an integer, got {candidate!r}"
                ) from None
    return str(profile), 0


def _configured_formats(config: pytest.Config) -> list[str] | None:
    """``--toolcall-format`` (repeatable) or the ``toolcall_format`` ini key: the wire APIs a converter speaks
    (or a stack is run on)."""
    given = list(config.getoption("toolcall_format", default=None) or []) or list(config.getini("toolcall_format"))
    return given or None


def _declared(config: pytest.Config, option: CapabilityOption) -> tuple[bool, Any]:
    """(True, value) when the option or its ini key declares ``option``'s capability, else (False, None)."""
    given = config.getoption("toolcall_" + option.field, default=None)
    ini = str(config.getini(option.ini_key) or "").strip().lower()
    if option.valued:
        text = given if given is not None else ini
        if not text:
            return False, None
        try:
            return True, option.value_of(str(text))
        except ValueError as error:
            where = option.pytest_option if given is not None else f"ini key {option.ini_key}"
            raise pytest.UsageError(f"toolcall-conformance: {where}: {error}") from None
    if given:
        return True, not getattr(Capabilities(), option.field)
    if not ini:
        return False, None
    if ini not in ("true", "false", "1", "0", "yes", "no"):
        raise pytest.UsageError(f"ini key {option.ini_key} must be true or false, got {ini!r}")
    return True, ini in ("true", "1", "yes")


def capabilities_from_config(config: pytest.Config) -> Capabilities:
    """The capabilities the ``--toolcall-*`` options and ``toolcall_*`` ini keys declare (CLI names)."""
    values: dict[str, Any] = {}
    for option in CAPABILITY_OPTIONS:
        declared, value = _declared(config, option)
        if declared:
            values[option.field] = value
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
    profile, seed = profile_and_seed(config, cls)

    realistic = bool(
        getattr(cls, "realistic", False)
        or config.getoption("toolcall_realistic", default=False)
        or str(config.getini("toolcall_realistic") or "").strip().lower() in ("true", "1", "yes")
    )
    options: dict[str, Any] = {
        "capabilities": capabilities,
        "profile": profile,
        "seed": seed,
        "adapter": getattr(cls, "adapter", None),
        "target": label,
        "realistic": realistic,
    }

    def whole() -> Report:
        return run_conformance(factory, **options)

    sharded = ShardedRun(factory, **options)

    def quietly(compute: Callable[[], Report]) -> Report:
        logging.disable(logging.CRITICAL)
        try:
            return compute()
        except TargetError as error:
            raise pytest.UsageError(f"toolcall-conformance cannot run {label}: {error}") from error
        finally:
            logging.disable(logging.NOTSET)

    key = f"{cls.__module__}.{cls.__qualname__}-{profile}-{seed}" + ("-realistic" if realistic else "")
    return quietly(lambda: shared_report(config, key, whole, sharded))


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
        extra = _cassette_dirs(config)
        profile, seed = profile_and_seed(config, cls)
        logging.disable(logging.CRITICAL)
        try:
            yield run_converter_conformance(
                instance.converter_factory,
                [bundled_cassette_dir(), *cls.cassette_dirs, *extra],
                profile=profile,
                seed=seed,
                target=cls.__name__,
                apis=list(cls.apis) if cls.apis else _configured_formats(config),
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
        profile, seed = profile_and_seed(config, cls)
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


def _cassette_dirs(config: pytest.Config) -> list[Path]:
    """``--toolcall-cassette-dir`` (repeatable) and the ``toolcall_cassette_dirs`` ini key."""
    extra = [Path(p) for p in (config.getoption("toolcall_cassette_dir") or [])]
    return extra + [Path(p) for p in config.getini("toolcall_cassette_dirs")]


class StackConformanceTests:
    """Base class: one test per stack check (``conformance.stack``), against the stack ``stack_factory()`` returns.

    A stack gets a recording's response body in byte pieces and returns its final result:
    ``stack(api, pieces, options) -> result`` (docs/stacks.md). What it runs comes from the class
    attribute ``stack_capabilities``, else the stack's own ``capabilities`` attribute, else every wire
    API; ``--toolcall-format`` (or the ini key ``toolcall_format``) restricts it further. Every recording
    with an expectation is run, whole and byte-split: the bundled ones, ``cassette_dirs`` and
    ``--toolcall-cassette-dir`` / ini ``toolcall_cassette_dirs``. ``profile``, ``seed`` and ``fail_on``
    as for the other base classes. The stack is built once per class and closed after the run when it
    has a ``close()`` method. Overriding a ``test_<check_id>`` requires ``@pytest.mark.xfail(reason=...)``.
    """

    stack_capabilities: ClassVar[StackCapabilities | None] = None
    cassette_dirs: ClassVar[tuple[Path, ...]] = ()
    profile: ClassVar[str | None] = None
    seed: ClassVar[int | None] = None

    def stack_factory(self) -> Stack:
        """Return the stack to check: a callable ``stack(api, pieces, options) -> final result``."""
        raise NotImplementedError("override stack_factory() to return your stack(api, pieces, options)")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _reject_unmarked_overrides(cls, STACK_CHECKS, "stack")

    @pytest.fixture(scope="class")
    @classmethod
    def toolcall_conformance_report(cls, request: pytest.FixtureRequest) -> Iterator[Report]:
        config = request.config
        stack = cls().stack_factory()
        try:
            declared = cls.stack_capabilities or declared_capabilities(stack) or StackCapabilities()
            capabilities = declared.restricted_to(_configured_formats(config))
        except (StackFactoryError, ValueError) as error:
            raise pytest.UsageError(f"toolcall-conformance cannot run {cls.__name__}: {error}") from error
        profile, seed = profile_and_seed(config, cls)
        logging.disable(logging.CRITICAL)
        try:
            yield run_stack_conformance(
                stack,
                [bundled_cassette_dir(), *cls.cassette_dirs, *_cassette_dirs(config)],
                capabilities=capabilities,
                profile=profile,
                seed=seed,
                target=cls.__name__,
            )
        finally:
            logging.disable(logging.NOTSET)
            close = getattr(stack, "close", None)
            if callable(close):
                close()


_install_check_tests(StackConformanceTests, STACK_CHECKS)
