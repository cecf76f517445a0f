"""Targets that misbehave in ways the suite must bound: they never return, or refuse to be stopped.

Each is written to show one failure mode only; the tests in ``test_bad_inputs.py`` name them by
``tests.bad_targets:NAME``.
"""

from __future__ import annotations

import time
from typing import Any

import reference_impl
from reference_impl.converters import converter_for


def _forever() -> None:
    while True:
        time.sleep(0.01)


def never_built(**_callbacks: Any) -> Any:
    """A handler factory that never returns (a network call at construction, say)."""
    _forever()


class SwallowsTheDeadline:
    """A handler whose feed() loops forever and catches everything, the deadline's interruption too."""

    def __init__(self, **callbacks: Any) -> None:
        self._inner = reference_impl.ApiToolCallStreamingResponseHandler(**callbacks)

    def feed(self, chunk: Any) -> Any:
        while True:
            try:  # noqa: SIM105 - written as the users' code that does this is written
                time.sleep(0.01)
            except BaseException:  # noqa: BLE001 - the failure mode under test
                pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _StuckConverter:
    def __init__(self, api: str, **options: Any) -> None:
        self._inner = converter_for(api, **options)

    def convert(self, _event: Any) -> Any:
        _forever()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def stuck_converter(api: str, **options: Any) -> Any:
    """A converter whose convert() never returns."""
    return _StuckConverter(api, **options)


class StuckFormatter:
    """A round-trip formatter whose format_followup() never returns."""

    targets = ("openai-chat",)

    def format_followup(self, target: str, turn: Any, results: Any) -> Any:
        _forever()


def stuck_stack(api: str, pieces: Any, options: Any) -> Any:
    """A whole stack that never returns."""
    _forever()
