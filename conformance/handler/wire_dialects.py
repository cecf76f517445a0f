"""The wire dialect of the run in progress, for targets that render chunks to an OpenAI-compatible wire.

A generated stream may say how it is rendered on the wire (``Scenario.wire_dialects``: no
``index`` key, ``"index": null``, id-only entries without ``function``, a first chunk with
``"content": null``). Only a target that renders chunks into bytes can honour that; it declares
``Capabilities.wire_dialects`` and reads ``current_wire_dialects()`` while it renders. The runner
sets the dialects around every run (``rendering_dialects``), including the runs a re-run of a
saved counterexample makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current_wire_dialects", "rendering_dialects"]

_DIALECTS: ContextVar[frozenset[str]] = ContextVar("toolcall_conformance_wire_dialects", default=frozenset())


def current_wire_dialects() -> frozenset[str]:
    """The dialects the stream being run is rendered in (empty: OpenAI's own shape)."""
    return _DIALECTS.get()


@contextmanager
def rendering_dialects(dialects: frozenset[str]) -> Iterator[None]:
    """Run the body with ``dialects`` as the current wire dialects."""
    token = _DIALECTS.set(frozenset(dialects))
    try:
        yield
    finally:
        _DIALECTS.reset(token)
