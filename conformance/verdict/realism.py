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
    line per observed shape saying who sends it and where that was seen; ``together`` the servers
    seen sending each of them (not necessarily in one stream: a server's versions and settings
    differ; empty while ``shapes`` are observed: each was seen, from different servers); ``api``
    the wire API whose servers count ("": any, for a provider-agnostic stream).
    """

    shapes: tuple[str, ...] = ()
    theoretical: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    together: tuple[str, ...] = ()
    api: str = ""

    @property
    def level(self) -> RealismLevel:
        return "theoretical" if self.theoretical else "observed"

    def describe(self) -> str:
        """One line for a report: the level and what makes it so."""
        if self.theoretical:
            return f"theoretical: no server has been seen sending {', '.join(self.theoretical)}"
        if not self.shapes:
            return "observed: a plain stream every server sends"
        if len(self.shapes) > 1 and self.together:
            missing = [line for line in self.evidence if "; no " in line]
            note = f" ({'; '.join(missing)})" if missing else ""
            return f"observed: {', '.join(self.shapes)}, each seen from {self.together[0]}{note}"
        shown = "; ".join(self.evidence) or ", ".join(self.shapes)
        if len(self.shapes) == 1:
            return f"observed: {shown}"
        return f"observed: {shown}; each seen, from different servers (none is known to send all of them)"

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "shapes": list(self.shapes),
            "theoretical": list(self.theoretical),
            "evidence": list(self.evidence),
            "together": list(self.together),
            "api": self.api or None,
        }
