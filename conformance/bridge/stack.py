"""Byte level: a whole provider stack living in the target process.

``BridgeStack`` is a ``conformance.stack.Stack``: ``stack(api, pieces, options)`` sends the wire
API name and the response body in exactly those byte pieces (base64) and returns the final result
the target's own provider code produced (read by ``conformance.wire.final``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.bridge.process import BridgeProcess
from conformance.bridge.protocol import quote, raised_exception
from conformance.handler.observe import ObservationError

__all__ = ["BridgeStack"]


class BridgeStack:
    """A ``conformance.stack.Stack`` backed by one byte-level target process."""

    def __init__(self, process: BridgeProcess) -> None:
        self.process = process
        self.__name__ = self.__qualname__ = f"bridge:{process.command}"

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
        """The target's final result for the body of ``api`` served in ``pieces``."""
        answer = self.process.request(
            {
                "type": "stream",
                "api": api,
                "pieces": [base64.b64encode(piece).decode("ascii") for piece in pieces],
                "options": dict(options),
            }
        )
        if "raised" in answer:
            raise raised_exception(answer["raised"], quote(str(answer)))
        if "unreadable" in answer:
            raise ObservationError(str(answer["unreadable"]))
        return answer["ok"]
