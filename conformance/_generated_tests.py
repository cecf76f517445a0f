"""Collected only when pytest runs with ``--toolcall-handler`` (or the ``toolcall_handler`` ini key)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.cli import UsageError, load_factory
from conformance.pytest_plugin import HandlerConformanceTests


class TestToolcallConformance(HandlerConformanceTests):
    """The conformance checks against the factory named on the command line."""

    _factory: Any = None

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _bind_factory(cls, request: pytest.FixtureRequest) -> None:
        spec = request.config.getoption("toolcall_handler") or request.config.getini("toolcall_handler")
        try:
            cls._factory = staticmethod(load_factory(spec))
        except UsageError as error:
            pytest.exit(f"toolcall-conformance: {error}", returncode=4)

    def handler_factory(self, **callbacks: Any) -> Any:
        return type(self)._factory(**callbacks)
