"""smolagents: ``ToolCallingAgent`` over ``OpenAIServerModel.generate_stream``, the path of an agent built with
``stream_outputs=True`` on an OpenAI-compatible server.

What it maps. Each body is served, offline, to the ``openai.OpenAI`` client ``OpenAIServerModel`` builds
itself (``client_kwargs={"http_client": httpx2.Client(transport=MockTransport(...))}``). A
``ToolCallingAgent(stream_outputs=True)`` then runs one action step, all in smolagents' own code:
``generate_stream`` turns the SDK's chunks into ``ChatMessageStreamDelta`` s,
``agglomerate_stream_deltas`` folds them into one ``ChatMessage``, ``_step_stream`` decodes each call's
arguments with ``parse_json_if_needed`` (a string that is not JSON stays a string) and
``process_tool_calls`` yields a ``ToolCall`` per call, keys them by id and hands each kept one to
``execute_tool_call(name, arguments or {})``. ``agent.run(task, stream=True, max_steps=1)`` sets the run up
(system prompt, task) and returns its step loop unstarted; the adapter runs the loop's one action step,
``agent._step_stream(ActionStep(...))``, as ``_run_stream`` does (it re-raises ``AgentGenerationError``,
keeps any other ``AgentError`` in the step), rather than through ``_run_stream``, which yields the step
from a ``finally`` before re-raising and would then ask the model for a final answer.

The one piece replaced is ``execute_tool_call``, where the application's tools live (the suite's bodies
carry no tool definitions). The override stands for an application that has a tool of every name the
turn uses, whose inputs are the keys of the call's arguments: a call runs when it reaches
``execute_tool_call`` with a name and a ``dict``. A call that reaches it with a string (arguments that
did not decode: the real method hands the text to the tool only when the tool has one string input,
``validate_tool_arguments``) or with no name (no tool is named ``""``), or that never reaches it (a
second call under the same id), is reported with an ``error``. So a text that is not JSON never counts
as run here, although an application whose tool has one string input would run it with that text
(``tests/test_repro_smolagents.py`` shows it on merged calls): the verdicts err on smolagents' side.

What it reads: the ``ToolCall`` s ``process_tool_calls`` yields, in wire order (their id, ``""`` when
the wire had none, is reported as None), which of them ``execute_tool_call`` ran (the ``ToolOutput``
carrying each), and the step's ``ChatMessage.content``. An exception out of the step
(``AgentGenerationError``: the SDK's ``APIError`` on an in-band error, smolagents' own ``ValueError``s)
is raised as it is. A turn without calls ends the step with ``AgentParsingError`` (the agent expected a
call); that is the agent's next-step business, so such a turn is read as its text and no calls.

What it cannot map. smolagents reads no ``finish_reason`` and no reasoning (``reasoning_content`` is
not part of its deltas): the stack declares no reasoning and reports no finish reason. A raw argument
text is reconstructed (``json.dumps`` of the decoded object) where smolagents kept only the object.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Sequence
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "make_stack"]

ADAPTER = AdapterInfo(
    name="smolagents",
    distributions=("smolagents", "openai"),
    imports=("smolagents", "openai"),
    kind="stack",
    factory="conformance.adapters.smolagents:make_stack",
    capabilities=StackCapabilities(apis=("openai-chat",), text=True, reasoning=False),
    summary="ToolCallingAgent(stream_outputs=True) on OpenAIServerModel: generate_stream, agglomerate_stream_deltas, "
    "parse_json_if_needed and process_tool_calls, replayed from the bundled Chat Completions recordings",
    outside_target={
        "object_arguments": "generate_stream hands the SDK's own `ChoiceDeltaToolCallFunction` (whose `arguments` is "
        "typed `Optional[str]`, JSON text) to agglomerate_stream_deltas, which joins argument fragments by string "
        "concatenation: a JSON object there is not a value the types it reads admit (no named server streams one on "
        "the Chat wire: the shape is theoretical)",
    },
)


class _Ran:
    """What the stand-in ``execute_tool_call`` returns for a call the application's tool would run."""

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def __str__(self) -> str:
        return "ran"


class _Refused:
    """What the stand-in ``execute_tool_call`` returns for a call no tool of the application would run."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def _agent_class() -> Any:
    """``ToolCallingAgent`` with ``execute_tool_call`` standing for the application's tools (module docstring)."""
    from smolagents import ToolCallingAgent

    class _Agent(ToolCallingAgent):  # type: ignore[misc]  # smolagents is untyped
        def execute_tool_call(self, tool_name: str, arguments: Any) -> Any:
            # The real method looks the name up among the agent's tools and validates the arguments
            # against the tool's inputs; here every named tool exists and takes the call's keys.
            if not tool_name:
                return _Refused(f"no tool is named {tool_name!r}")
            if not isinstance(arguments, dict):
                return _Refused(f"the arguments are not a JSON object: {arguments!r}")
            return _Ran(arguments)

    return _Agent


def _offline_model(pieces: Sequence[bytes]) -> Any:
    """An ``OpenAIServerModel`` whose own ``openai.OpenAI`` client is answered with ``pieces``, offline."""
    import httpx2
    from smolagents import OpenAIServerModel

    served = list(pieces)

    def respond(request: Any) -> Any:
        del request
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

    http_client = httpx2.Client(transport=httpx2.MockTransport(respond))
    return OpenAIServerModel(
        model_id="offline",
        api_base="http://offline.invalid/v1",
        api_key="offline",
        client_kwargs={"max_retries": 0, "http_client": http_client},
        retry=False,
    )


class SmolagentsStack:
    """The suite's stack: one ``ToolCallingAgent`` step per body (see the module docstring)."""

    capabilities = ADAPTER.capabilities

    def __init__(self) -> None:
        from smolagents.agents import ToolOutput
        from smolagents.memory import ActionStep, ToolCall
        from smolagents.monitoring import Timing
        from smolagents.utils import AgentError, AgentGenerationError

        self._agent_class = _agent_class()
        self._types = (ToolCall, ToolOutput, ActionStep, Timing, AgentGenerationError, AgentError)

    def __call__(self, api: str, pieces: Sequence[bytes], options: Any) -> dict[str, Any]:
        """Run one agent step on a server that streams ``pieces``; the calls it ran, those it did not, the text."""
        del api, options  # one wire API (capabilities), no server profile
        from rich.console import Console
        from smolagents.monitoring import AgentLogger, LogLevel

        tool_call_type, tool_output_type, action_step_type, timing_type, generation_error, agent_error = self._types
        # A logger writing nowhere: the step renders its stream with rich's Live on the logger's console.
        logger = AgentLogger(level=LogLevel.OFF, console=Console(file=io.StringIO()))
        agent = self._agent_class(tools=[], model=_offline_model(pieces), stream_outputs=True, logger=logger)
        # ``run(stream=True)`` sets the step up (system prompt, task) and returns its step loop unstarted; the
        # loop's one action step is run as the loop runs it, so that an exception out of the step reaches us
        # (the loop re-raises it only after yielding the step from a ``finally``).
        agent.run("offline", stream=True, max_steps=1)
        step = action_step_type(step_number=1, timing=timing_type(start_time=time.time()))
        calls: list[Any] = []
        outputs: dict[int, Any] = {}
        try:
            for event in agent._step_stream(step):  # noqa: SLF001 - what _run_stream runs (module docstring)
                if isinstance(event, tool_call_type):
                    calls.append(event)
                elif isinstance(event, tool_output_type):
                    outputs[id(event.tool_call)] = event.output
        except generation_error:
            raise  # the loop re-raises these: the run ends
        except agent_error as error:
            step.error = error  # the loop keeps these in the step and goes on to the next one
        message = step.model_output_message
        text = message.content if message is not None and isinstance(message.content, str) else ""
        return {"calls": [_reported(call, outputs.get(id(call))) for call in calls], "text": text}


def _reported(call: Any, output: Any) -> dict[str, Any]:
    """One ``ToolCall`` as the suite reads it: ``arguments`` when ``execute_tool_call`` ran it, else ``error``."""
    raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    reported: dict[str, Any] = {"call_id": call.id or None, "name": call.name, "raw_arguments": raw}
    if isinstance(output, _Ran):
        reported["arguments"] = output.arguments
    elif isinstance(output, _Refused):
        reported["error"] = output.reason
    else:
        reported["error"] = f"never executed: process_tool_calls keeps one call per id, and another has {call.id!r}"
    return reported


def make_stack() -> SmolagentsStack:
    """The stack the suite runs (``run --stack conformance.adapters.smolagents:make_stack``)."""
    return SmolagentsStack()
