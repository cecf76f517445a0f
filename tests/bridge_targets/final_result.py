"""A final-result accumulator (``add(chunk)``, ``result()``) built on the reference handler, for the bridge tests."""

from __future__ import annotations

from typing import Any

from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse


class FinalResult:
    """The calls and text the reference handler ends a stream with, as a final result."""

    def __init__(self) -> None:
        self.handler = ApiToolCallStreamingResponseHandler()

    def add(self, chunk: ChunkResponse) -> None:
        self.handler.feed(chunk)

    def result(self) -> dict[str, Any]:
        self.handler.finalize()
        calls: list[dict[str, Any]] = []
        text = ""
        for event in self.handler.get_all_events():
            kind, segment = event.event_type.name, event.segment_type.value
            if segment == "text" and kind == "CONTENT":
                text += event.payload["delta"]
            elif segment == "tool_call" and kind == "END":
                metadata = dict(event.payload["metadata"])
                call = {
                    "call_id": metadata.get("call_id"),
                    "name": metadata.get("tool_name"),
                    "raw_arguments": metadata.get("raw_arguments", ""),
                }
                if metadata.get("error"):
                    call["error"] = metadata["error"]
                else:
                    call["arguments"] = metadata["arguments"]
                calls.append(call)
        return {"tool_calls": calls, "text": text}
