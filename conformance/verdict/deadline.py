"""A deadline for the code under test: what stops a target that never returns.

Every target kind runs the user's code on the main thread under ``deadline(seconds)``: when the
time passes, ``TargetHung`` is raised inside that code (SIGALRM; POSIX only, main thread only,
elsewhere the deadline is not enforced). It is a ``BaseException`` so that the target's own
``except Exception`` cannot swallow it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["DEFAULT_DEADLINE_SECONDS", "TargetHung", "deadline"]

# How long one run of the code under test (a handler over one scenario, a stack over one body) may take.
DEFAULT_DEADLINE_SECONDS = 10.0


class TargetHung(BaseException):
    """Raised inside the target when its deadline passes (not swallowed by ``except Exception``)."""


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise ``TargetHung`` inside the running code after ``seconds`` (None or 0: no deadline)."""
    usable = (
        seconds is not None
        and seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise TargetHung(f"the target did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(seconds or 0))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
