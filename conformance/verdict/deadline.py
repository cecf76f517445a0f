"""A deadline for the code under test: what stops a target that never returns.

Every target kind runs the user's code on the main thread under ``deadline(seconds)``: when the
time passes, ``TargetHung`` is raised inside that code (SIGALRM; POSIX only, main thread only,
elsewhere the deadline is not enforced). It is a ``BaseException`` so that the target's own
``except Exception`` cannot swallow it.

A target can still swallow it (``except BaseException`` in a loop) and run on. The deadline does
not depend on its cooperation: a watchdog thread ends the whole process (``os._exit``, which no
code can catch) when the target is still inside its deadline ``HARD_STOP_GRACE`` times later,
after printing which input it hung on. The run then ends with exit code 2 and no report: there
is no way to take the main thread back from code that refuses to stop.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["DEFAULT_DEADLINE_SECONDS", "HARD_STOP_EXIT", "DeadlineExceeded", "TargetHung", "deadline", "within"]

# How long one run of the code under test (a handler over one scenario, a stack over one body) may take.
DEFAULT_DEADLINE_SECONDS = 10.0


# A target still running this many deadlines after its start (at least HARD_STOP_MIN_SECONDS
# more) swallowed the interruption: the process is ended.
HARD_STOP_GRACE = 2.0
HARD_STOP_MIN_SECONDS = 2.0
HARD_STOP_EXIT = 2  # "the suite could not run to the end" (conformance.cli.common.EXIT_USAGE)


class TargetHung(BaseException):
    """Raised inside the target when its deadline passes (not swallowed by ``except Exception``)."""


class DeadlineExceeded(Exception):
    """``TargetHung`` as the runners that record whatever the target raises as a finding see it
    (``within``): a converter or formatter that never returns is judged like one that raised."""


class _Watchdog:
    """One daemon thread for the whole process: it ends the process when an armed deadline is long past.

    Arming is two assignments (no thread per run: a handler run takes microseconds).
    """

    def __init__(self) -> None:
        self.expiry: float | None = None
        self.what: Callable[[], str] | None = None
        self.seconds = 0.0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def arm(self, seconds: float, what: Callable[[], str] | None) -> None:
        self.what, self.seconds = what, seconds
        self.expiry = time.monotonic() + seconds + max(HARD_STOP_MIN_SECONDS, HARD_STOP_GRACE * seconds)
        with self._lock:
            # Not alive in a process forked after it started (threads do not survive a fork): start one there.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name="toolcall-conformance deadline", daemon=True)
                self._thread.start()

    def disarm(self) -> None:
        self.expiry = None

    def _watch(self) -> None:
        while True:
            expiry = self.expiry
            now = time.monotonic()
            if expiry is None or now < expiry:
                time.sleep(min(0.25, max(0.01, (expiry or now + 0.25) - now)))
                continue
            try:
                where = self.what() if self.what is not None else "one input"
            except Exception as error:  # noqa: BLE001 - describing the input must not keep the process alive
                where = f"one input (it could not be described: {type(error).__name__})"
            sys.stderr.write(
                f"\ntoolcall-conformance: error: the target did not stop at its deadline ({self.seconds:g} s) on "
                f"{where}, and was still running long after: it caught the interruption (an `except "
                "BaseException:` or a bare `except:` around its work?). The process was ended; nothing after "
                "this input was judged and no report was written. Fix the target so that it lets "
                "BaseException through, or re-run with a larger --deadline if the work is only slow.\n"
            )
            sys.stderr.flush()
            os._exit(HARD_STOP_EXIT)


_WATCHDOG = _Watchdog()


@contextlib.contextmanager
def deadline(seconds: float | None, what: Callable[[], str] | None = None) -> Iterator[None]:
    """Raise ``TargetHung`` inside the running code after ``seconds`` (None or 0: no deadline).

    ``what`` describes the input being run (called only if the process must be ended: see the
    module's docstring). A NaN or infinite ``seconds`` is a ``ValueError``: NaN would switch the
    deadline off unnoticed.
    """
    if seconds is not None and not math.isfinite(seconds):
        raise ValueError(f"a deadline must be a finite number of seconds (0 or None: none), got {seconds!r}")
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
    _WATCHDOG.arm(float(seconds or 0), what)
    try:
        yield
    finally:
        _WATCHDOG.disarm()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def within(seconds: float | None, what: Callable[[], str] | None = None) -> Iterator[None]:
    """``deadline``, with an overrun raised as ``DeadlineExceeded`` (an ``Exception``) once the
    target's code is left, for callers whose ``except Exception`` turns a raise into a finding."""
    try:
        with deadline(seconds, what):
            yield
    except TargetHung as hung:
        del hung
        raise DeadlineExceeded(f"did not return within the deadline ({seconds:g} s)") from None
