"""How real an input is: every shape in it observed from a named server (with evidence), or not.

A finding carries the ``Realism`` of its minimal counterexample, so a maintainer sees first what
their users hit. The reviewed list of shapes and their evidence lives in
``conformance.wire.shapes``; this module only holds the verdict's shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Realism", "RealismLevel"]

RealismLevel = Literal["observed", "theoretical"]


@dataclass(frozen=True)
class Realism:
    """The realism of one input.

    ``shapes`` are the input's shapes (ids of ``conformance.wire.shapes.SHAPES``); ``theoretical``
    the ones no server has been seen to send (empty: the input is ``observed``); ``evidence`` one
    line per observed shape saying who sends it and where that was seen.
    """

    shapes: tuple[str, ...] = ()
    theoretical: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()

    @property
    def level(self) -> RealismLevel:
        return "theoretical" if self.theoretical else "observed"

    def describe(self) -> str:
        """One line for a report: the level and what makes it so."""
        if self.theoretical:
            return f"theoretical: no server has been seen sending {', '.join(self.theoretical)}"
        if not self.shapes:
            return "observed: a plain stream every server sends"
        return f"observed: {'; '.join(self.evidence) or ', '.join(self.shapes)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "shapes": list(self.shapes),
            "theoretical": list(self.theoretical),
            "evidence": list(self.evidence),
        }
