"""Where a run is: the step every runner hands its ``on_progress`` callback.

Every runner (handler, converter, round-trip, stack, and the bridge through them) takes
``on_progress: Callable[[str], None]`` and calls it as it starts each unit of work. The step is a
``ProgressStep``: the unit's name as a ``str`` (so ``on_progress=print`` still works), which also
says how many units are done before this one and how many there are in this phase
(``done`` / ``total``; the handler runner's phases are the search, then shrinking). The CLI's
progress line (``conformance.cli.run``) shows them with the elapsed time.
"""

from __future__ import annotations

__all__ = ["ProgressStep"]


class ProgressStep(str):
    """A step's name, and how far the run is: ``done`` units finished of ``total`` in this phase."""

    done: int
    total: int

    def __new__(cls, name: str, done: int, total: int) -> ProgressStep:
        step = super().__new__(cls, name)
        step.done = done
        step.total = total
        return step
