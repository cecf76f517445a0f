"""openai-agents: the Responses-shaped events ``OpenAIChatCompletionsModel.stream_response`` yields.

What it maps. The production path of every non-Responses model of OpenAI's Agents SDK, unchanged:
an ``OpenAIChatCompletionsModel`` over an ``AsyncOpenAI`` client whose HTTP response is fed one
``ChunkResponse`` at a time as one Chat Completions SSE event (``conformance.adapters.live``), and
its public ``Model.stream_response`` (what ``Runner.run_streamed`` calls each turn), which folds the
chunks with the SDK's ``ChatCmplStreamHandler``. Its events are translated one to one:
``response.output_item.added`` -> START (a ``function_call`` item with its ``name`` and ``call_id``,
a ``message`` item as text, a ``reasoning`` item as reasoning), ``response.function_call_arguments
.delta`` / ``response.output_text.delta`` / ``response.reasoning_*text.delta`` -> CONTENT,
``response.output_item.done`` -> END (a call with its final name and id). Segment ids are the item
type and its ``output_index``.

What it cannot map. Which calls run: the model layer hands argument text to the Runner unparsed,
and the Runner decides (its function tools ``json.loads`` and validate the text; unknown tools and
calls without an id stop the run). The adapter does not run the Runner, so it reports no
invocations and declares ``invocations=False``: the checks that judge them (``invalid_arguments_flagged``,
``invocations_match_stream``) are skipped by name, and a finding's harm reads what the model layer
hands on (an END with arguments) as what runs; the direct reproductions cover the Runner. So that calls can be
matched, an END carries the text decoded with ``json.loads`` (``arguments``) or why it is not an
object (``error``). No callbacks, no ``reset()`` (an async iterator); ``returned_events_are_all_events``
would judge the adapter's own log and is excluded.

The client's base URL is not ``api.openai.com``: openai-agents requires a finish reason only from
the official endpoint, and every other OpenAI-compatible server gets the lenient path measured here.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.arguments import decode_arguments
from conformance.adapters.base import AdapterInfo
from conformance.adapters.events import Event, EventLog, argument_text
from conformance.adapters.live import LiveStream
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.handler.capabilities import Capabilities
from reference_impl.types import ChunkResponse

__all__ = ["ADAPTER", "OpenAIAgentsHandler", "make_handler"]

CAPABILITIES = Capabilities(callbacks=False, lifecycle=False, invocations=False, wire_dialects=True)

ADAPTER = AdapterInfo(
    name="openai-agents",
    distributions=("openai-agents", "openai"),
    imports=("agents", "openai"),
    kind="handler",
    factory="conformance.adapters.openai_agents:make_handler",
    capabilities=CAPABILITIES,
    summary="Responses-shaped events of OpenAIChatCompletionsModel.stream_response (ChatCmplStreamHandler), fed "
    "one SSE event at a time through the openai SDK",
    excluded={
        "returned_events_are_all_events": "the adapter keeps the log of the events it returns: nothing of "
        "openai-agents to judge",
    },
    # It reads chunks through the openai SDK's types. Not index_always_zero: its documentation has
    # other providers' OpenAI-compatible endpoints used through this model.
    outside_target={"no_index": INDEX_REQUIRED, "null_index": INDEX_REQUIRED},
)

_SEGMENT_TYPES = {"function_call": "tool_call", "message": "text", "reasoning": "reasoning"}
_DELTAS = {
    "response.function_call_arguments.delta": "function_call",
    "response.output_text.delta": "message",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.reasoning_text.delta": "reasoning",
}


def _call_end(segment: str, item: Any) -> Event:
    raw = argument_text(item.arguments)
    arguments = decode_arguments(raw)
    if isinstance(arguments, dict):
        return Event.end(segment, "tool_call", tool_name=item.name, call_id=item.call_id, arguments=arguments)
    return Event.end(
        segment, "tool_call", tool_name=item.name, call_id=item.call_id, error=arguments, raw_arguments=raw
    )


class OpenAIAgentsHandler(EventLog):
    """A handler target over openai-agents' streamed model events (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._stream = LiveStream(self._consume)
        self._finalized = False

    async def _consume(self, client: Any, emit: Any) -> None:
        from agents import ModelSettings, OpenAIChatCompletionsModel
        from agents.models.interface import ModelTracing

        model = OpenAIChatCompletionsModel(model="gpt-conformance", openai_client=client)
        async for event in model.stream_response(
            system_instructions=None,
            input="conformance",
            model_settings=ModelSettings(),
            tools=[],
            output_schema=None,
            handoffs=[],
            tracing=ModelTracing.DISABLED,
        ):
            emit(event)

    def _translate(self, items: list[Any]) -> list[Event]:
        events: list[Event] = []
        for item in items:
            kind = getattr(item, "type", "")
            if kind in ("response.output_item.added", "response.output_item.done"):
                segment_type = _SEGMENT_TYPES.get(item.item.type)
                if segment_type is None:
                    continue
                segment = f"{item.item.type}-{item.output_index}"
                if kind == "response.output_item.added":
                    metadata = (
                        {"tool_name": item.item.name, "call_id": item.item.call_id}
                        if segment_type == "tool_call"
                        else {}
                    )
                    events.append(Event.start(segment, segment_type, **metadata))
                elif segment_type == "tool_call":
                    events.append(_call_end(segment, item.item))
                else:
                    events.append(Event.end(segment, segment_type))
            elif kind in _DELTAS and item.delta:
                source = _DELTAS[kind]
                events.append(Event.content(f"{source}-{item.output_index}", _SEGMENT_TYPES[source], item.delta))
        return events

    def feed(self, chunk: ChunkResponse) -> list[Event]:
        """Send one chunk to the model as one SSE event; return the events openai-agents yielded for it."""
        if self._finalized:
            raise RuntimeError("feed() after finalize()")
        return self.add(self._translate(self._stream.feed(chunk)))

    def finalize(self) -> list[Event]:
        """End the response; return the last events (the items' ENDs come with ``response.completed``)."""
        if self._finalized:
            return []
        self._finalized = True
        return self.add(self._translate(self._stream.close()))

    def reset(self) -> None:
        """Not part of openai-agents (declared ``lifecycle=False``): start a fresh response."""
        self.__init__()  # type: ignore[misc]


def make_handler() -> OpenAIAgentsHandler:
    """A fresh handler (``toolcall-conformance run --handler conformance.adapters.openai_agents:make_handler``)."""
    return OpenAIAgentsHandler()
