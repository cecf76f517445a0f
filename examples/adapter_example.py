"""A handler with shapes of its own, checked through a ``HandlerAdapter``.

``TupleHandler`` stands for a library whose handler takes chunks as plain dicts (its own wire
type) and reports events as ``(kind, segment_id, segment_type, data)`` tuples and invocations as
``(id, name, arguments)`` tuples: nothing the suite reads by duck typing. ``TupleAdapter``
translates at the boundary, in both directions:

    toolcall-conformance run --handler examples.adapter_example:TupleHandler \\
        --adapter examples.adapter_example:TupleAdapter
    pytest --toolcall-handler examples.adapter_example:TupleHandler \\
        --toolcall-adapter examples.adapter_example:TupleAdapter

(or ``adapter = TupleAdapter()`` on a ``HandlerConformanceTests`` subclass, or
``run_conformance(TupleHandler, adapter=TupleAdapter())``). Without the adapter the suite cannot
read the tuples and says so (``events_readable``), it does not guess.

The handler itself delegates to the reference handler: the example is about the adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.handler import ObservedEvent, ObservedInvocation
from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse, SegmentEvent, ToolInvocation
from reference_impl.types import StreamError, ToolCallDelta

EventTuple = tuple[str, str, str, dict[str, Any]]
InvocationTuple = tuple[str, str, dict[str, Any]]

_KINDS = {"SEGMENT_START": "start", "SEGMENT_CONTENT": "content", "SEGMENT_END": "end"}


def _as_tuple(event: SegmentEvent) -> EventTuple:
    kind = _KINDS[event.event_type.value]
    data = dict(event.payload.get("metadata", {})) if kind != "content" else {"text": event.payload.get("delta", "")}
    return kind, event.segment_id, event.segment_type.value, data


class TupleHandler:
    """Takes dict chunks; gives tuple events and tuple invocations (and passes tuples to its callbacks)."""

    def __init__(
        self,
        on_segment_event: Callable[[EventTuple], None] | None = None,
        on_tool_invocation: Callable[[InvocationTuple], None] | None = None,
    ) -> None:
        self._inner = ApiToolCallStreamingResponseHandler(
            on_segment_event=(lambda event: on_segment_event(_as_tuple(event))) if on_segment_event else None,
            on_tool_invocation=(
                (lambda invocation: on_tool_invocation((invocation.id, invocation.name, invocation.arguments)))
                if on_tool_invocation
                else None
            ),
        )

    def feed(self, chunk: dict[str, Any]) -> list[EventTuple]:
        calls = [
            ToolCallDelta(call["index"], call.get("id"), call.get("name"), call.get("arguments"))
            for call in chunk.get("tool_calls", [])
        ]
        error = chunk.get("error")
        converted = ChunkResponse(
            content=chunk.get("text", ""),
            reasoning=chunk.get("thinking"),
            tool_calls=calls or None,
            is_complete=chunk.get("done", False),
            finish_reason=chunk.get("finish_reason"),
            error=StreamError(error["kind"], error["message"]) if error else None,
        )
        return [_as_tuple(event) for event in self._inner.feed(converted)]

    def finalize(self) -> list[EventTuple]:
        return [_as_tuple(event) for event in self._inner.finalize()]

    def get_all_events(self) -> list[EventTuple]:
        return [_as_tuple(event) for event in self._inner.get_all_events()]

    def get_all_invocations(self) -> list[InvocationTuple]:
        invocations: list[ToolInvocation] = self._inner.get_all_invocations()
        return [(invocation.id, invocation.name, invocation.arguments) for invocation in invocations]

    def reset(self) -> None:
        self._inner.reset()


class TupleAdapter:
    """The suite's chunks in as the handler's dicts; its tuples out as the suite's observations."""

    def to_handler_chunk(self, chunk: ChunkResponse) -> dict[str, Any]:
        return {
            "text": chunk.content,
            "thinking": chunk.reasoning,
            "tool_calls": [
                {"index": d.index, "id": d.call_id, "name": d.name, "arguments": d.arguments_delta}
                for d in chunk.tool_calls or ()
            ],
            "done": chunk.is_complete,
            "finish_reason": chunk.finish_reason,
            "error": {"kind": chunk.error.kind, "message": chunk.error.message} if chunk.error else None,
        }

    def observe_event(self, event: EventTuple) -> ObservedEvent:
        kind, segment_id, segment_type, data = event
        if kind == "content":
            return ObservedEvent(kind, segment_id, segment_type, {}, data["text"])
        return ObservedEvent(kind, segment_id, segment_type, data, "")

    def observe_invocation(self, invocation: InvocationTuple) -> ObservedInvocation:
        identifier, name, arguments = invocation
        return ObservedInvocation(identifier, name, arguments)
