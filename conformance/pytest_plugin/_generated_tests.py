"""Collected only when pytest runs with ``--toolcall-handler``, ``--toolcall-converter``,
``--toolcall-cassette-dir``, ``--toolcall-formatter`` or ``--toolcall-stack`` (or their ini keys);
each class is kept only when its option is given."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.cli import UsageError, load_adapter, load_factory, load_formatter
from conformance.cli.targets import load_stack
from conformance.pytest_plugin import (
    AccumulatorConformanceTests,
    ConverterConformanceTests,
    FormatterConformanceTests,
    HandlerConformanceTests,
    StackConformanceTests,
)
from conformance.stack import Stack


def _spec(config: pytest.Config, name: str) -> str:
    value: str = config.getoption(name) or config.getini(name)
    return value


class TestToolcallConformance(HandlerConformanceTests):
    """The conformance checks against the factory named on the command line."""

    _factory: Any = None

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _bind_factory(cls, request: pytest.FixtureRequest) -> None:
        spec = _spec(request.config, "toolcall_handler")
        try:
            cls._factory = staticmethod(load_factory(spec))
            cls.adapter = load_adapter(_spec(request.config, "toolcall_adapter") or None)
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)

    def handler_factory(self, **callbacks: Any) -> Any:
        return self._factory(**callbacks)


class TestToolcallAccumulatorConformance(AccumulatorConformanceTests):
    """The conformance checks against the accumulator factory named on the command line."""

    _factory: Any = None

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _bind_factory(cls, request: pytest.FixtureRequest) -> None:
        try:
            cls._factory = staticmethod(
                load_factory(_spec(request.config, "toolcall_accumulator"), "--toolcall-accumulator")
            )
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)

    def accumulator_factory(self) -> Any:
        return self._factory()


class TestToolcallConverterConformance(ConverterConformanceTests):
    """The converter checks against --toolcall-converter (default: the reference converters)."""

    _factory: Any = None

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _bind_factory(cls, request: pytest.FixtureRequest) -> None:
        spec = _spec(request.config, "toolcall_converter")
        if not spec:
            from reference_impl.converters import converter_for

            cls._factory = staticmethod(converter_for)
            return
        try:
            cls._factory = staticmethod(load_factory(spec))
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)

    def converter_factory(self, api: str, **options: Any) -> Any:
        return self._factory(api, **options)


class TestToolcallFormatterConformance(FormatterConformanceTests):
    """The round-trip checks against the formatter named by --toolcall-formatter (or the ini key)."""

    @pytest.fixture
    def formatter(self, request: pytest.FixtureRequest) -> Any:
        try:
            return load_formatter(_spec(request.config, "toolcall_formatter"), "--toolcall-formatter")
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)


class TestToolcallStackConformance(StackConformanceTests):
    """The stack checks against the stack named by --toolcall-stack (or the ini key toolcall_stack)."""

    _spec: str = ""

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _bind_factory(cls, request: pytest.FixtureRequest) -> None:
        cls._spec = _spec(request.config, "toolcall_stack")

    def stack_factory(self) -> Stack:
        try:
            return load_stack(self._spec, "--toolcall-stack").stack
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)
