"""The reference implementation as the matrix's first column: its API handler, and its stack.

The reference stack is what ``toolcall-conformance replay`` runs: the SDK's events through the
reference converter for the wire API (with the recording's converter options) into the reference
handler, read back as an ``Outcome`` (``conformance.wire.replay.outcome_from_events``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.handler.capabilities import Capabilities
from conformance.stack import StackCapabilities
from conformance.wire import Outcome, iter_sdk_events
from conformance.wire.replay import outcome_from_events

__all__ = ["REFERENCE_CAPABILITIES", "REFERENCE_STACK_CAPABILITIES", "reference_handler", "reference_stack"]

REFERENCE_CAPABILITIES = Capabilities()
REFERENCE_STACK_CAPABILITIES = StackCapabilities(converter_options=True)


def reference_handler(**callbacks: Any) -> Any:
    """A fresh ``ApiToolCallStreamingResponseHandler``."""
    from reference_impl import ApiToolCallStreamingResponseHandler

    return ApiToolCallStreamingResponseHandler(**callbacks)


def reference_stack(api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Outcome:
    """The SDK's events -> the reference converter -> the reference handler -> the outcome."""
    from reference_impl import ApiToolCallStreamingResponseHandler
    from reference_impl.converters import converter_for, iter_chunks

    converter = converter_for(api, **dict(options))
    chunks = list(iter_chunks(converter, iter_sdk_events(api, pieces)))
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in chunks:
        if getattr(handler, "is_finalized", False):
            break
        handler.feed(chunk)
    handler.finalize()
    return outcome_from_events(api, chunks, handler.get_all_events())
