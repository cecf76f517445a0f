"""OpenAI Responses API stream events -> ``ChunkResponse``.

Input: the events of ``client.responses.create(stream=True)`` or ``client.responses.stream()``
(sync or async; the helper's extra ``snapshot`` fields are not needed), or plain dicts.

Tool calls are ``function_call`` output items. ``response.output_item.added`` registers the item
in the ``ToolCallTracker`` under its ``id`` (``fc_...``) with its ``output_index`` as an alias;
argument events are routed by whichever of ``item_id`` / ``output_index`` they carry, so
``ToolCallDelta.index`` is dense even though ``output_index`` counts messages and reasoning items
(taxonomy A03) and interleaved calls stay apart. ``call_id`` is the item's ``call_id``, the id a
``function_call_output`` must echo, never the item id (A13); the item id travels in
``provider_metadata={"item_id": ...}`` on the call's first delta.

Terminal snapshots (A15): ``function_call_arguments.done``, ``output_item.done`` and the output of
``response.completed`` are reconciled with what was streamed: a part that no delta delivered (LM
Studio sends no deltas at all) is emitted once as a last delta; a snapshot that contradicts the
streamed text is recorded in ``problems`` (the streamed text cannot be taken back). Arguments
already present on ``output_item.added`` are treated as such a snapshot, not as a delta. A delta
for an item never added starts a nameless call rather than being dropped.

End: ``response.completed`` (finish_reason ``"completed"``), ``response.incomplete`` (finish_reason
``incomplete_details.reason``; ``max_output_tokens`` is ``truncated``, anything else
``provider_error``), ``response.failed`` (``"failed"``, ``provider_error``). An ``error`` event is
held until ``response.failed`` or the end of the stream and then reported as ``provider_error``.
Reasoning: ``response.reasoning_summary_text.delta`` and ``response.reasoning_text.delta``; text:
``response.output_text.delta`` and ``response.refusal.delta``. Provider-executed tool items
(``web_search_call``...) go to ``server_tool_calls``; client tool items that are not JSON
function calls (``custom_tool_call``, ``computer_call``...) are counted in ``unknown_events``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    describe_error,
    get_field,
    text_or_none,
)
from reference_impl.tracker import ProviderKey, ToolCallTracker, TrackedCall, TrackerError
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["OpenAIResponsesConverter"]

_SERVER_ITEM_TYPES = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "tool_search_call",
        "tool_search_output",
    }
)
_PLAIN_ITEM_TYPES = frozenset({"message", "reasoning"})
_SERVER_EVENT_PREFIXES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_",
    "response.tool_search_call.",
)
# Known events that carry nothing this converter emits (their content arrives in other events).
_QUIET_EVENTS = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
    }
)


def _key(value: Any) -> ProviderKey | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and value):
        return value
    return None


class OpenAIResponsesConverter(StreamConverter):
    """Responses API ``ResponseStreamEvent`` stream -> ``ChunkResponse``."""

    api: ClassVar[str] = "openai-responses"
    _sdk_errors = ("openai", ("APIError",), ("APIConnectionError",))

    def __init__(self) -> None:
        super().__init__()
        self.tracker = ToolCallTracker()
        self._pending_error: StreamError | None = None
        self._added_arguments: dict[int, str] = {}
        self._anonymous = 0

    # -- dispatch --------------------------------------------------------------------------------

    def _convert(self, event: Any) -> list[ChunkResponse]:
        kind = get_field(event, "type")
        pieces = ChunkAssembler()
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            pieces.content(text_or_none(get_field(event, "delta")))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            pieces.reasoning(text_or_none(get_field(event, "delta")))
        elif kind == "response.output_item.added":
            self._item_added(event, pieces)
        elif kind == "response.function_call_arguments.delta":
            self._arguments_delta(event, pieces)
        elif kind == "response.function_call_arguments.done":
            self._arguments_done(event, pieces)
        elif kind == "response.output_item.done":
            self._item_done(get_field(event, "item"), get_field(event, "output_index"), pieces)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            return self._response_end(kind, get_field(event, "response"), pieces)
        elif kind == "error":
            # Held: ``response.failed`` usually follows and carries the final status.
            self._pending_error = StreamError("provider_error", describe_error(event))
        else:
            self._other_event(kind)
        return pieces.build()

    def _other_event(self, kind: Any) -> None:
        if kind in _QUIET_EVENTS:
            return
        if isinstance(kind, str) and kind.startswith(_SERVER_EVENT_PREFIXES):
            self.ignored["server tool progress event"] += 1
        else:
            self._unknown(f"event {kind!r}")

    def _arguments_done(self, event: Any, pieces: ChunkAssembler) -> None:
        call = self._call_for(get_field(event, "item_id"), get_field(event, "output_index"), pieces)
        if call is not None:
            self._reconcile(call, None, get_field(event, "name"), get_field(event, "arguments"), pieces)

    # -- items -----------------------------------------------------------------------------------

    def _item_added(self, event: Any, pieces: ChunkAssembler) -> None:
        item = get_field(event, "item")
        item_type = get_field(item, "type")
        output_index = get_field(event, "output_index")
        if item_type == "function_call":
            call = self._start(get_field(item, "id"), output_index, item, pieces)
            arguments = get_field(item, "arguments")
            if call is not None and isinstance(arguments, str) and arguments:
                # Not emitted now: deltas may restate it. It is the snapshot if no later one comes.
                self._added_arguments[call.index] = arguments
        elif item_type in _SERVER_ITEM_TYPES:
            self.server_tool_calls.append(
                {"type": item_type, "id": get_field(item, "id"), "output_index": output_index}
            )
        elif item_type not in _PLAIN_ITEM_TYPES:
            self._unknown(f"output item {item_type!r}")

    def _item_done(self, item: Any, output_index: Any, pieces: ChunkAssembler) -> None:
        if get_field(item, "type") != "function_call":
            return
        call = self._lookup(get_field(item, "id"), output_index)
        if call is None:
            self._problem(f"function_call item {get_field(item, 'id')!r} completed without output_item.added")
            call = self._start(get_field(item, "id"), output_index, item, pieces)
            if call is None:
                return
        self._reconcile(call, get_field(item, "call_id"), get_field(item, "name"), get_field(item, "arguments"), pieces)

    def _start(self, item_id: Any, output_index: Any, item: Any, pieces: ChunkAssembler) -> TrackedCall | None:
        item_key, index_key = _key(item_id), _key(output_index)
        primary = item_key if item_key is not None else index_key
        if primary is None:
            self._anonymous += 1
            primary = f"anonymous item #{self._anonymous}"
        aliases = [index_key] if index_key is not None and index_key != primary else []
        call_id = text_or_none(get_field(item, "call_id"))
        name = text_or_none(get_field(item, "name"))
        try:
            call = self.tracker.start_call(primary, call_id=call_id, name=name, aliases=aliases)
        except TrackerError as error:
            self._problem(f"cannot start function_call item {primary!r}: {error}")
            return None
        metadata = {"item_id": item_key} if isinstance(item_key, str) else None
        pieces.tool(ToolCallDelta(call.index, call.call_id, call.name, provider_metadata=metadata))
        return call

    def _lookup(self, item_id: Any, output_index: Any) -> TrackedCall | None:
        for key in (_key(item_id), _key(output_index)):
            if key is not None:
                call = self.tracker.lookup(key)
                if call is not None:
                    return call
        return None

    def _call_for(self, item_id: Any, output_index: Any, pieces: ChunkAssembler) -> TrackedCall | None:
        call = self._lookup(item_id, output_index)
        if call is None:
            self._problem(
                f"function-call arguments for item {item_id!r} (output_index {output_index!r}) before "
                "output_item.added; started a call without name or id"
            )
            call = self._start(item_id, output_index, None, pieces)
        return call

    # -- arguments -------------------------------------------------------------------------------

    def _arguments_delta(self, event: Any, pieces: ChunkAssembler) -> None:
        call = self._call_for(get_field(event, "item_id"), get_field(event, "output_index"), pieces)
        fragment = get_field(event, "delta")
        if call is not None and isinstance(fragment, str) and fragment:
            self._append(call, fragment, pieces)

    def _append(self, call: TrackedCall, fragment: str, pieces: ChunkAssembler) -> None:
        try:
            self.tracker.append_arguments(call.keys[0], fragment)
        except TrackerError as error:
            self._problem(f"argument delta dropped: {error}")
            return
        pieces.tool(ToolCallDelta(call.index, arguments_delta=fragment))

    def _reconcile(self, call: TrackedCall, call_id: Any, name: Any, arguments: Any, pieces: ChunkAssembler) -> None:
        """Adopt a late call id / name and emit the part of a terminal snapshot no delta delivered."""
        new_id = text_or_none(call_id) if call.call_id is None else None
        new_name = text_or_none(name) if call.name is None else None
        if new_id is not None or new_name is not None:
            try:
                self.tracker.update_call(call.keys[0], call_id=new_id, name=new_name)
            except TrackerError as error:  # pragma: no cover - guarded by the checks above
                self._problem(str(error))
                new_id = new_name = None
        suffix = None
        if not call.completed:
            added_snapshot = self._added_arguments.pop(call.index, None)
            snapshot = arguments if isinstance(arguments, str) and arguments else added_snapshot
            self.tracker.complete_call(call.keys[0], final_arguments=snapshot)
            suffix = call.unstreamed_suffix or None
            if call.arguments_mismatch:
                self._problem(
                    f"tool call #{call.index} ({call.call_id}): the final arguments snapshot does not extend the "
                    "streamed deltas; the streamed text was already emitted and is kept"
                )
        if new_id is not None or new_name is not None or suffix is not None:
            pieces.tool(ToolCallDelta(call.index, new_id, new_name, suffix))

    # -- the end ---------------------------------------------------------------------------------

    def _response_end(self, kind: str, response: Any, pieces: ChunkAssembler) -> list[ChunkResponse]:
        for position, item in enumerate(get_field(response, "output") or ()):
            self._item_done(item, position, pieces)
        for call in self.tracker.open_calls():
            if call.index in self._added_arguments:
                self._reconcile(call, None, None, None, pieces)
        self._read_usage(get_field(response, "usage"))
        reason, error = self._ending(kind, response)
        return self._terminal(pieces, finish_reason=reason, error=self._pending_error or error)

    def _read_usage(self, usage: Any) -> None:
        if usage is None:
            return
        prompt = as_count(get_field(usage, "input_tokens"))
        completion = as_count(get_field(usage, "output_tokens"))
        if prompt is not None or completion is not None:
            self._usage = TokenUsage(prompt or 0, completion or 0, as_count(get_field(usage, "total_tokens")))

    @staticmethod
    def _ending(kind: str, response: Any) -> tuple[str, StreamError | None]:
        """The finish reason and the error (if any) of a terminal event, before any held error event."""
        status = text_or_none(get_field(response, "status"))
        if kind == "response.completed":
            return status or "completed", None
        if kind == "response.incomplete":
            details = get_field(response, "incomplete_details")
            reason = text_or_none(get_field(details, "reason")) or status or "incomplete"
            if reason == "max_output_tokens":
                return reason, StreamError("truncated", "response.incomplete: max_output_tokens")
            return reason, StreamError("provider_error", f"response.incomplete: {reason}")
        detail = get_field(response, "error")
        return status or "failed", StreamError(
            "provider_error", describe_error(detail) if detail else "response.failed"
        )

    def _finish(self) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        if self._pending_error is not None:
            return self._terminal(pieces, finish_reason=None, error=self._pending_error)
        return self._incomplete(pieces, "response.completed, response.incomplete or response.failed")
