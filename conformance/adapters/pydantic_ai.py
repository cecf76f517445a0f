"""pydantic-ai: the part start/delta/end events of ``OpenAIChatModel``'s ``StreamedResponse``.

What it maps. The production path, unchanged: an ``OpenAIChatModel`` over an ``AsyncOpenAI`` client
whose HTTP response is fed one ``ChunkResponse`` at a time as one Chat Completions SSE event
(``conformance.adapters.live``), streamed with ``pydantic_ai.direct.model_request_stream`` (the
public API for one model request). ``StreamedResponse`` runs pydantic-ai's parts manager; each event
it yields is translated one to one: ``PartStartEvent`` -> START (with the part's initial content
as CONTENT), ``PartDeltaEvent`` -> CONTENT, ``PartEndEvent`` -> END, with ``TextPart`` as text,
``ThinkingPart`` as reasoning and ``ToolCallPart`` as a tool call (START carries ``tool_name`` and
``tool_call_id`` as the part has them; END the part's final name and id, and its arguments parsed
by pydantic-ai's own ``ToolCallPart.args_as_dict(raise_if_invalid=True)``, or the error it raised).
Segment ids are the part indices. The calls that run are the ``ToolCallPart`` s of the final
``ModelResponse`` (``stream.get()``) whose arguments pydantic-ai parses, which is what an agent
run validates and executes; they are the invocations, reported when the stream ends.

What it cannot map. No callbacks, no ``reset()`` or second ``finalize()``: a ``StreamedResponse``
is an async iterator (the lifecycle and callback checks are skipped by name). The adapter records
the events it returns, so ``returned_events_are_all_events`` would judge the adapter and is
excluded. The request is not an agent run: tools are not executed and their schemas not
validated (a typed tool would also refuse arguments its schema rejects).

Through ``OpenAIChatModel`` rather than ``FunctionModel``: only the real model class has
pydantic-ai's text segmentation (``FunctionModel`` merges all text into one part), finish reasons
and in-band errors.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.adapters.events import Event, EventLog, Invocation, argument_text
from conformance.adapters.live import LiveStream
from conformance.handler.capabilities import Capabilities
from reference_impl.types import ChunkResponse

__all__ = ["ADAPTER", "PydanticAIHandler", "make_handler"]

CAPABILITIES = Capabilities(callbacks=False, lifecycle=False, wire_dialects=True)

ADAPTER = AdapterInfo(
    name="pydantic-ai",
    distributions=("pydantic-ai-slim", "openai"),
    imports=("pydantic_ai", "openai"),
    kind="handler",
    factory="conformance.adapters.pydantic_ai:make_handler",
    capabilities=CAPABILITIES,
    summary="part start/delta/end events of OpenAIChatModel's StreamedResponse (model_request_stream), fed one "
    "SSE event at a time through the openai SDK",
    excluded={
        "returned_events_are_all_events": "the adapter keeps the log of the events it returns: nothing of "
        "pydantic-ai to judge",
    },
)

_KINDS = {"TextPart": "text", "ThinkingPart": "reasoning", "ToolCallPart": "tool_call"}


def _parse(part: Any) -> tuple[Any, str | None]:
    """The part's arguments as pydantic-ai parses them for a tool, or why it cannot."""
    try:
        return part.args_as_dict(raise_if_invalid=True), None
    except (ValueError, AssertionError) as error:
        return None, f"{type(error).__name__}: {error}"


class PydanticAIHandler(EventLog):
    """A handler target over pydantic-ai's streamed part events (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._stream = LiveStream(self._consume)
        self._response: Any = None
        self._kinds: dict[str, str] = {}
        self._finalized = False

    async def _consume(self, client: Any, emit: Any) -> None:
        from pydantic_ai.direct import model_request_stream
        from pydantic_ai.messages import ModelRequest, UserPromptPart
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        model = OpenAIChatModel("gpt-conformance", provider=OpenAIProvider(openai_client=client))
        async with model_request_stream(model, [ModelRequest(parts=[UserPromptPart("conformance")])]) as stream:
            async for event in stream:
                emit(event)
            self._response = stream.get()

    def _translate(self, items: list[Any]) -> list[Event]:
        events: list[Event] = []
        for item in items:
            kind = type(item).__name__
            if kind == "PartStartEvent":
                events += self._start(item)
            elif kind == "PartDeltaEvent":
                events += self._delta(item)
            elif kind == "PartEndEvent":
                events += self._end(item)
        return events

    def _start(self, event: Any) -> list[Event]:
        segment_type = _KINDS.get(type(event.part).__name__)
        if segment_type is None:
            return []
        segment = f"part-{event.index}"
        self._kinds[segment] = segment_type
        if segment_type == "tool_call":
            start = Event.start(segment, segment_type, tool_name=event.part.tool_name, call_id=event.part.tool_call_id)
            text = argument_text(event.part.args)
        else:
            start = Event.start(segment, segment_type)
            text = event.part.content or ""
        return [start, Event.content(segment, segment_type, text)] if text else [start]

    def _delta(self, event: Any) -> list[Event]:
        segment = f"part-{event.index}"
        segment_type = self._kinds.get(segment)
        if segment_type is None:
            return []
        delta = event.delta
        text = argument_text(delta.args_delta) if segment_type == "tool_call" else (delta.content_delta or "")
        return [Event.content(segment, segment_type, text)] if text else []

    def _end(self, event: Any) -> list[Event]:
        segment = f"part-{event.index}"
        segment_type = self._kinds.get(segment)
        if segment_type is None:
            return []
        if segment_type != "tool_call":
            return [Event.end(segment, segment_type)]
        part = event.part
        if type(part).__name__ != "ToolCallPart":  # the END of a tool part carries another kind of part
            wrong = f"the PartEndEvent of this tool call part carries a {type(part).__name__}"
            return [Event.end(segment, segment_type, tool_name=None, call_id=None, error=wrong, raw_arguments="")]
        arguments, error = _parse(part)
        if error is not None:
            return [
                Event.end(
                    segment,
                    segment_type,
                    tool_name=part.tool_name,
                    call_id=part.tool_call_id,
                    error=error,
                    raw_arguments=argument_text(part.args),
                )
            ]
        return [
            Event.end(segment, segment_type, tool_name=part.tool_name, call_id=part.tool_call_id, arguments=arguments)
        ]

    def feed(self, chunk: ChunkResponse) -> list[Event]:
        """Send one chunk to the model as one SSE event; return the part events pydantic-ai yielded for it."""
        if self._finalized:
            raise RuntimeError("feed() after finalize()")
        return self.add(self._translate(self._stream.feed(chunk)))

    def finalize(self) -> list[Event]:
        """End the response; return the last part events and record the calls pydantic-ai would run."""
        if self._finalized:
            return []
        self._finalized = True
        events = self.add(self._translate(self._stream.close()))
        for part in getattr(self._response, "parts", None) or []:
            if type(part).__name__ == "ToolCallPart":
                arguments, error = _parse(part)
                if error is None:
                    self.invocations.append(Invocation(part.tool_call_id, part.tool_name, arguments))
        return events

    def reset(self) -> None:
        """Not part of pydantic-ai (declared ``lifecycle=False``): start a fresh response."""
        self.__init__()  # type: ignore[misc]


def make_handler() -> PydanticAIHandler:
    """A fresh handler (``toolcall-conformance run --handler conformance.adapters.pydantic_ai:make_handler``)."""
    return PydanticAIHandler()
