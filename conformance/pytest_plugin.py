"""pytest integration: a base class to subclass, and a plugin with ``--toolcall-*`` options.

Subclass ``HandlerConformanceTests`` in your own test suite::

    from conformance.pytest_plugin import HandlerConformanceTests
    from conformance import Capabilities

    class TestMyHandler(HandlerConformanceTests):
        capabilities = Capabilities(reasoning=False)

        def handler_factory(self, **callbacks):
            return MyHandler(**callbacks)

Every check becomes one test (``test_<check_id>``): a violation fails with its minimal
counterexample, a check your capabilities rule out is *skipped* by name. To override a check you
must mark the override ``@pytest.mark.xfail(reason=...)``; an unmarked override is rejected when
the class is defined, so a check cannot be silenced by accident.

Round-trip formatters (``conformance.roundtrip``) have their own base class; provide a
``formatter`` fixture::

    from conformance.pytest_plugin import FormatterConformanceTests

    class TestMyFormatter(FormatterConformanceTests):
        @pytest.fixture
        def formatter(self):
            return MyFormatter()

Or run the suite on a factory without writing any test: ``pytest --toolcall-handler pkg.mod:factory``
(ini key ``toolcall_handler``; ``--toolcall-converter`` and ``--toolcall-formatter`` likewise), with
``--toolcall-profile`` and ``--toolcall-seed``. Every generated
test carries the ``toolcall_conformance`` marker. Under pytest-xdist each worker runs the suite for
the classes it was given; ``--dist loadscope`` keeps one class on one worker.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.cassettes import bundled_cassette_dir
from conformance.checks import CHECKS, Capabilities
from conformance.converter_suite import CONVERTER_CHECKS, run_converter_conformance
from conformance.roundtrip import ROUNDTRIP_CHECKS, run_roundtrip_conformance
from conformance.runner import PROFILES, Report, run_conformance

__all__ = ["ConverterConformanceTests", "FormatterConformanceTests", "HandlerConformanceTests"]

MARKER = "toolcall_conformance"


def _check_test(check_id: str) -> Callable[..., None]:
    def test(self: Any, toolcall_conformance_report: Report) -> None:
        result = next(r for r in toolcall_conformance_report.results if r.check.id == check_id)
        if result.status == "skipped":
            pytest.skip(f"{check_id}: {result.skipped_reason}")
        if result.status == "failed":
            detail = result.counterexample or result.message
            pytest.fail(f"{result.check.title}\n{detail}\nhow to fix: {result.check.how_to_fix}", pytrace=False)

    test.__name__ = f"test_{check_id}"
    test.__doc__ = next(c.title for c in (*CHECKS, *CONVERTER_CHECKS, *ROUNDTRIP_CHECKS) if c.id == check_id)
    return test


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


class HandlerConformanceTests:
    """Base class: one test per conformance check, against ``handler_factory``."""

    capabilities: ClassVar[Capabilities] = Capabilities()
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
    def toolcall_conformance_report(cls, request: pytest.FixtureRequest) -> Iterator[Report]:
        instance = cls()
        config = request.config
        profile, seed = _profile_and_seed(cls, config)
        logging.disable(logging.CRITICAL)
        try:
            yield run_conformance(
                instance.handler_factory,
                capabilities=cls.capabilities,
                profile=profile,
                seed=seed,
                target=type(instance).__name__,
            )
        finally:
            logging.disable(logging.NOTSET)


for _check in CHECKS:
    setattr(HandlerConformanceTests, f"test_{_check.id}", pytest.mark.toolcall_conformance(_check_test(_check.id)))


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


for _check in CONVERTER_CHECKS:
    setattr(ConverterConformanceTests, f"test_{_check.id}", pytest.mark.toolcall_conformance(_check_test(_check.id)))


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


for _check in ROUNDTRIP_CHECKS:
    setattr(FormatterConformanceTests, f"test_{_check.id}", pytest.mark.toolcall_conformance(_check_test(_check.id)))


# -- the plugin ---------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolcall-conformance", "streaming tool-call conformance")
    group.addoption("--toolcall-handler", metavar="MODULE:FACTORY", help="run the conformance suite on this handler")
    group.addoption("--toolcall-profile", choices=sorted(PROFILES), help="search effort (default: ci)")
    group.addoption("--toolcall-seed", type=int, help="hypothesis seed for the conformance runs (default: 0)")
    group.addoption(
        "--toolcall-converter",
        metavar="MODULE:FACTORY",
        help="run the converter checks on this factory(api, **options)",
    )
    group.addoption(
        "--toolcall-formatter",
        metavar="MODULE:ATTR",
        help="run the round-trip checks on this formatter (object, class, factory or format_followup function)",
    )
    group.addoption(
        "--toolcall-cassette-dir",
        action="append",
        metavar="DIR",
        help="also run the converter checks on the recordings under DIR (repeatable)",
    )
    parser.addini("toolcall_handler", "handler factory (MODULE:FACTORY) to run the conformance suite on", default="")
    parser.addini("toolcall_profile", "conformance profile: dev, ci or deep", default="")
    parser.addini("toolcall_seed", "hypothesis seed for conformance runs", default="")
    parser.addini("toolcall_converter", "converter factory (MODULE:FACTORY) to run the converter checks on", default="")
    parser.addini("toolcall_formatter", "round-trip formatter (MODULE:ATTR) for the round-trip checks", default="")
    parser.addini("toolcall_cassette_dirs", "recording directories for the converter checks", type="paths", default=[])


def _wants_handler(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_handler") or config.getini("toolcall_handler"))


def _wants_converter(config: pytest.Config) -> bool:
    return bool(
        config.getoption("toolcall_converter")
        or config.getini("toolcall_converter")
        or config.getoption("toolcall_cassette_dir")
    )


def _wants_formatter(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_formatter") or config.getini("toolcall_formatter"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the generated test classes the command line asked for (the others are deselected)."""
    unwanted = set()
    if not _wants_handler(config):
        unwanted.add("TestToolcallConformance")
    if not _wants_converter(config):
        unwanted.add("TestToolcallConverterConformance")
    if not _wants_formatter(config):
        unwanted.add("TestToolcallFormatterConformance")
    dropped = [
        item
        for item in items
        if item.path.name == "_generated_tests.py" and getattr(getattr(item, "cls", None), "__name__", "") in unwanted
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a toolcall-conformance contract check")
    if _wants_handler(config) or _wants_converter(config) or _wants_formatter(config):
        # Collect the generated test module alongside whatever the user asked for.
        config.args.append(str(Path(__file__).with_name("_generated_tests.py")))
