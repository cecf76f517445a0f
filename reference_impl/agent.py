"""Detection events and a minimal agent loop on top of them (seed 003).

The split seed 003 asks for: the LLM layer *detects* tool calls and emits events; an agent layer
subscribes and *executes*. Here the detection point is the handler's ``on_tool_invocation``
callback (and ``on_segment_event`` for rejected calls); ``ToolEventBus.handler_callbacks()``
returns both, ready to pass to a handler or a ``TurnRecorder``::

    bus = ToolEventBus()
    bus.subscribe(ToolEventType.DETECTED, lambda event: print("model wants", event.name, event.arguments))
    handler = ApiToolCallStreamingResponseHandler(**bus.handler_callbacks(api="openai-chat"))

Events: ``DETECTED`` (a valid call, as soon as the handler produces its invocation),
``REJECTED`` (a call whose END carries an error: it must be answered, never executed) and
``COMPLETED`` (published by the agent when a tool finished, failed or timed out). A listener that
raises is logged and cannot disturb the stream or other listeners.

``Agent`` is the smallest loop that is still correct: stream a turn through ``TurnRecorder``;
start each detected call at once on a thread pool (calls run in parallel; a tool registered with
``parallel=False`` runs on its own serial lane, in call order); give each call its own timeout;
answer invalid calls, unknown tools, exceptions and timeouts with error results; keep results in
call order; format the follow-up with ``format_followup``; repeat until the model answers without
calling a tool (or ``max_turns``). A turn that ended abnormally (truncated, provider error) stops
the run: its calls were never executable and replaying it would be wrong.

``SdkModelClient`` sends each request through the real SDK (``openai``, ``anthropic``,
``google-genai``); ``SdkModelClient.offline(api, bodies)`` does it against an in-process
``httpx2.MockTransport`` that serves recorded response bodies in order and records every request
JSON (``ReplayTransport.requests``): the offline multi-turn demo and tests use it.
"""

from __future__ import annotations

import concurrent.futures
import enum
import itertools
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

import httpx2

from reference_impl.followup import (
    WIRE_API,
    FinishedTurn,
    ToolCallItem,
    ToolResult,
    TurnRecorder,
    format_followup,
    invalid_call_message,
    user_message,
)
from reference_impl.frozen import thaw
from reference_impl.tools import ToolChoice, ToolDefinition, tool_params
from reference_impl.types import SegmentEvent, SegmentEventType, SegmentType, ToolInvocation

__all__ = [
    "Agent",
    "AgentError",
    "AgentRun",
    "AgentStep",
    "AgentTool",
    "HandlerCallbacks",
    "ModelClient",
    "RecordedRequest",
    "ReplayTransport",
    "SdkModelClient",
    "ToolEvent",
    "ToolEventBus",
    "ToolEventType",
    "ToolExecution",
    "sdk_client",
]

logger = logging.getLogger("reference_impl.agent")


# -- detection events -----------------------------------------------------------------------------


class ToolEventType(enum.Enum):
    DETECTED = "tool_detected"
    REJECTED = "tool_rejected"
    COMPLETED = "tool_completed"


@dataclass(frozen=True)
class ToolEvent:
    """One tool-call event. ``stream_id`` names the stream (turn) it belongs to.

    DETECTED: ``name``, ``call_id`` (the invocation id: the provider's id, else the segment id),
    ``arguments``. REJECTED: ``error`` and ``raw_arguments`` instead of arguments. COMPLETED:
    ``result`` (and ``error`` when the tool failed or timed out).
    """

    type: ToolEventType
    stream_id: str
    api: str
    name: str
    call_id: str
    arguments: Mapping[str, Any] | None = None
    error: str | None = None
    raw_arguments: str | None = None
    result: ToolResult | None = None
    invocation: ToolInvocation | None = None


Listener = Callable[[ToolEvent], None]


class HandlerCallbacks(TypedDict):
    """The handler keyword arguments ``ToolEventBus.handler_callbacks`` returns (``**`` them into a handler)."""

    on_tool_invocation: Callable[[ToolInvocation], None]
    on_segment_event: Callable[[SegmentEvent], None]


class ToolEventBus:
    """A small synchronous, thread-safe publish/subscribe bus for tool events."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[ToolEventType, list[Listener]] = {kind: [] for kind in ToolEventType}

    def subscribe(self, event_type: ToolEventType, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event of ``event_type``; returns a function that unsubscribes."""
        if not isinstance(event_type, ToolEventType):
            raise TypeError(f"event_type must be a ToolEventType, got {event_type!r}")
        with self._lock:
            self._listeners[event_type].append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners[event_type]:
                    self._listeners[event_type].remove(listener)

        return unsubscribe

    def publish(self, event: ToolEvent) -> None:
        """Deliver ``event`` to its listeners in subscription order; a raising listener is logged and skipped."""
        with self._lock:
            listeners = list(self._listeners[event.type])
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("a %s listener raised; the other listeners still run", event.type.value)

    def handler_callbacks(self, api: str, stream_id: str | None = None) -> HandlerCallbacks:
        """``on_tool_invocation`` and ``on_segment_event`` for a handler, publishing DETECTED / REJECTED.

        DETECTED is published from ``on_tool_invocation``, the handler's detection point (only
        valid calls become invocations). REJECTED is published for a tool-call END carrying an
        error, read from ``on_segment_event``.
        """
        stream = stream_id or uuid.uuid4().hex

        def on_tool_invocation(invocation: ToolInvocation) -> None:
            self.publish(
                ToolEvent(
                    ToolEventType.DETECTED,
                    stream,
                    api,
                    invocation.name,
                    invocation.id,
                    arguments=invocation.arguments,
                    invocation=invocation,
                )
            )

        def on_segment_event(event: SegmentEvent) -> None:
            if event.segment_type is not SegmentType.TOOL_CALL or event.event_type is not SegmentEventType.END:
                return
            metadata = event.metadata
            if "error" not in metadata:
                return
            self.publish(
                ToolEvent(
                    ToolEventType.REJECTED,
                    stream,
                    api,
                    metadata.get("tool_name") or "",
                    metadata.get("call_id") or event.segment_id,
                    error=str(metadata.get("error")),
                    raw_arguments=str(metadata.get("raw_arguments", "")),
                )
            )

        return HandlerCallbacks(on_tool_invocation=on_tool_invocation, on_segment_event=on_segment_event)


# -- talking to the model through the real SDKs ----------------------------------------------------


class ModelClient(Protocol):
    """Streams one model turn: ``api`` says which converter reads the SDK objects it yields."""

    api: str

    def stream(self, messages: list[dict[str, Any]], tool_params: Mapping[str, Any]) -> Iterable[Any]: ...


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    url: str
    json: Any


class ReplayTransport:
    """An ``httpx2.MockTransport`` that serves response bodies in order and records each request's JSON."""

    def __init__(self, bodies: Sequence[bytes], *, pieces: int | None = None) -> None:
        self.bodies = list(bodies)
        self.requests: list[RecordedRequest] = []
        self._piece_size = pieces
        self._lock = threading.Lock()
        self.transport = httpx2.MockTransport(self._respond)

    def _respond(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            position = len(self.requests)
            try:
                payload = json.loads(request.content) if request.content else None
            except ValueError:
                payload = request.content.decode("utf-8", "replace")
            self.requests.append(RecordedRequest(request.method, str(request.url), payload))
        if position >= len(self.bodies):
            return httpx2.Response(
                500,
                json={
                    "error": {
                        "message": f"offline replay: request #{position + 1} but only {len(self.bodies)} recorded "
                        "responses; the agent called the model more often than the cassette did",
                        "type": "replay_exhausted",
                    }
                },
            )
        body = self.bodies[position]
        size = self._piece_size or len(body) or 1
        pieces = [body[i : i + size] for i in range(0, len(body), size)]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_Pieces(pieces))


class _Pieces(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A streaming response body served in the given pieces (sync and async clients alike)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


_OFFLINE_KEY = "offline-test-key-not-a-secret"
_DEFAULT_MODELS = {
    "openai-chat": "gpt-test",
    "openai-responses": "gpt-test",
    "anthropic": "claude-test-model",
    "gemini": "gemini-test",
}


class SdkModelClient:
    """A ``ModelClient`` over a real SDK client (``openai.OpenAI``, ``anthropic.Anthropic``, ``genai.Client``).

    ``request_options`` are extra keyword arguments of every request (Gemini: extra
    ``GenerateContentConfig`` fields), e.g. ``{"max_tokens": 2048, "thinking": {...}}`` for Anthropic.
    Gemini's automatic function calling is always disabled: the agent executes tools, not the SDK.
    """

    def __init__(
        self, api: str, client: Any, *, model: str | None = None, request_options: Mapping[str, Any] | None = None
    ) -> None:
        if api not in _DEFAULT_MODELS:
            raise ValueError(f"unknown wire API {api!r}; expected one of {', '.join(_DEFAULT_MODELS)}")
        self.api = api
        self.client = client
        self.model = model or _DEFAULT_MODELS[api]
        self.request_options = dict(request_options or {})

    @classmethod
    def offline(
        cls,
        api: str,
        bodies: Sequence[bytes],
        *,
        model: str | None = None,
        request_options: Mapping[str, Any] | None = None,
        pieces: int | None = None,
    ) -> tuple[SdkModelClient, ReplayTransport]:
        """A client for ``api`` whose SDK talks to a ``ReplayTransport`` serving ``bodies`` (no network)."""
        replay = ReplayTransport(bodies, pieces=pieces)
        return cls(api, sdk_client(api, replay.transport), model=model, request_options=request_options), replay

    def stream(self, messages: list[dict[str, Any]], tool_params: Mapping[str, Any]) -> Iterator[Any]:
        params = {**tool_params}
        if self.api == "openai-chat":
            yield from self.client.chat.completions.create(
                model=self.model, messages=messages, stream=True, **params, **self.request_options
            )
        elif self.api == "openai-responses":
            yield from self.client.responses.create(
                model=self.model, input=messages, stream=True, **params, **self.request_options
            )
        elif self.api == "anthropic":
            options = {"max_tokens": 1024, **self.request_options}
            yield from self.client.messages.create(
                model=self.model, messages=messages, stream=True, **params, **options
            )
        else:
            from google.genai import types

            config = types.GenerateContentConfig(
                **params,
                **self.request_options,
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            )
            yield from self.client.models.generate_content_stream(model=self.model, contents=messages, config=config)


def sdk_client(api: str, transport: httpx2.MockTransport) -> Any:
    """A real SDK client for ``api`` whose HTTP goes to ``transport`` (an httpx2 transport), with no retries."""
    if api in ("openai-chat", "openai-responses"):
        import openai

        return openai.OpenAI(
            api_key=_OFFLINE_KEY,
            base_url="https://api.openai.com/v1",
            max_retries=0,
            http_client=httpx2.Client(transport=transport),
        )
    if api == "anthropic":
        import anthropic

        return anthropic.Anthropic(
            api_key=_OFFLINE_KEY,
            base_url="https://api.anthropic.com",
            max_retries=0,
            http_client=httpx2.Client(transport=transport),
        )
    if api == "gemini":
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            httpx_client=httpx2.Client(transport=transport),
            httpx_async_client=httpx2.AsyncClient(transport=transport),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=_OFFLINE_KEY, http_options=options)
    raise ValueError(f"no SDK client for {api!r}")


# -- tools and their execution ----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentTool:
    """A tool the agent may run: its definition, the function (called with the arguments as keywords),
    a timeout in seconds, and whether it may run in parallel with other calls.

    The timeout counts from the moment the call is detected (and submitted). A ``parallel=False``
    tool runs on a serial lane, one call at a time in call order; its wait behind earlier serial
    calls is added to its budget. Parallel calls beyond ``Agent(max_workers=...)`` wait for a
    worker within their own budget. A timed-out call is answered with an error; its thread cannot
    be interrupted and finishes on its own.
    """

    definition: ToolDefinition
    function: Callable[..., Any]
    timeout: float = 30.0
    parallel: bool = True

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError(f"tool {self.definition.name!r}: function must be callable")
        if not self.timeout > 0:
            raise ValueError(f"tool {self.definition.name!r}: timeout must be positive, got {self.timeout!r}")

    @property
    def name(self) -> str:
        return self.definition.name


@dataclass(frozen=True)
class ToolExecution:
    """What happened to one call: the result sent back, how long it took, whether it ran at all."""

    call: ToolCallItem
    result: ToolResult
    seconds: float = 0.0
    executed: bool = False
    timed_out: bool = False


@dataclass(frozen=True)
class AgentStep:
    """One model turn and what the agent did with it."""

    turn: FinishedTurn
    executions: tuple[ToolExecution, ...]
    followup: tuple[dict[str, Any], ...]
    stream_id: str = ""  # the stream_id of this turn's ToolEvents


@dataclass
class AgentRun:
    """The whole run: every step, the final history, the final answer and why the loop stopped."""

    steps: list[AgentStep] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    final_text: str = ""
    stopped: str = ""  # "answered" | "max_turns" | "stream_error"

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        return [call for step in self.steps for call in step.turn.tool_calls]


class AgentError(RuntimeError):
    """The agent could not continue (the model client failed)."""


@dataclass
class _Pending:
    future: concurrent.futures.Future[Any]
    submitted: float
    timeout: float
    budget: float  # seconds from submission: its own timeout plus the serial calls queued before it


class Agent:
    """The minimal loop: stream, execute detected calls, send results back, until the model answers.

    ``api`` is the wire API the ``model`` speaks; ``target`` (default: ``api``) is the follow-up
    format, e.g. ``"deepseek"`` for an OpenAI-compatible thinking model. ``bus``: publish events
    to a shared bus (one is created otherwise; see ``Agent.bus``).
    """

    def __init__(
        self,
        model: ModelClient,
        tools: Sequence[AgentTool],
        *,
        target: str | None = None,
        bus: ToolEventBus | None = None,
        tool_choice: ToolChoice | str | None = "auto",
        max_turns: int = 8,
        max_workers: int = 8,
        formatter: Callable[[str, FinishedTurn, Sequence[ToolResult]], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.model = model
        self.api = model.api
        self.target = target or model.api
        if WIRE_API.get(self.target) != self.api:
            raise ValueError(f"target {self.target!r} is not sent over the {self.api!r} wire API")
        self.tools = {tool.name: tool for tool in tools}
        if len(self.tools) != len(tools):
            raise ValueError("two agent tools share a name")
        self.bus = bus or ToolEventBus()
        self.tool_choice = tool_choice
        self.max_turns = max_turns
        self.max_workers = max_workers
        self.formatter = formatter or format_followup
        self._params = tool_params(self.target, [tool.definition for tool in tools], tool_choice)
        self._stream_ids = itertools.count(1)

    def run(self, prompt: str | Sequence[dict[str, Any]]) -> AgentRun:
        """Run the loop from a user prompt (or a prepared history in the target's format)."""
        history = [user_message(self.target, prompt)] if isinstance(prompt, str) else [dict(m) for m in prompt]
        run = AgentRun(history=history)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="agent-tool")
        serial = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-tool-serial")
        try:
            for turn_number in range(1, self.max_turns + 1):
                stream_id = f"turn-{turn_number}-{next(self._stream_ids)}-{uuid.uuid4().hex[:6]}"
                turn, executions = self._turn(history, turn_number, stream_id, pool, serial)
                if turn.error is not None:
                    run.steps.append(AgentStep(turn, (), (), stream_id))
                    run.stopped = "stream_error"
                    run.final_text = turn.text
                    return run
                if not turn.tool_calls:
                    followup = self.formatter(self.target, turn, [])
                    history += followup
                    run.steps.append(AgentStep(turn, (), tuple(followup), stream_id))
                    run.final_text = turn.text
                    run.stopped = "answered"
                    return run
                followup = self.formatter(self.target, turn, [execution.result for execution in executions])
                history += followup
                run.steps.append(AgentStep(turn, tuple(executions), tuple(followup), stream_id))
            run.stopped = "max_turns"
            return run
        finally:
            # A timed-out tool cannot be interrupted; its thread is left to finish on its own.
            pool.shutdown(wait=False, cancel_futures=True)
            serial.shutdown(wait=False, cancel_futures=True)

    # -- one turn ------------------------------------------------------------------------------

    def _turn(
        self,
        history: list[dict[str, Any]],
        turn_number: int,
        stream_id: str,
        pool: concurrent.futures.ThreadPoolExecutor,
        serial: concurrent.futures.ThreadPoolExecutor,
    ) -> tuple[FinishedTurn, list[ToolExecution]]:
        pending: dict[str, list[_Pending]] = {}
        serial_queue = [0.0]  # the timeouts of serial calls already queued this turn

        def on_detected(event: ToolEvent) -> None:
            # Execution starts at detection, not at the end of the stream.
            if event.stream_id != stream_id or event.invocation is None:
                return
            tool = self.tools.get(event.name)
            if tool is None:
                return  # answered with an error below; nothing to run
            budget = tool.timeout
            if tool.parallel:
                future = pool.submit(_call_tool, tool, event.invocation)
            else:
                # The serial lane runs one call at a time; a call's wait behind earlier serial calls
                # does not count against its own timeout (but is bounded by theirs).
                budget += serial_queue[0]
                serial_queue[0] += tool.timeout
                future = serial.submit(_call_tool, tool, event.invocation)
            job = _Pending(future, time.monotonic(), tool.timeout, budget)
            pending.setdefault(event.call_id, []).append(job)

        unsubscribe = self.bus.subscribe(ToolEventType.DETECTED, on_detected)
        try:
            recorder = TurnRecorder(self.api, **self.bus.handler_callbacks(self.api, stream_id))
            try:
                turn = recorder.record(self.model.stream(history, self._params))
            except Exception as error:
                raise AgentError(f"the {self.api} model call of turn {turn_number} failed: {error}") from error
        finally:
            unsubscribe()
        executions = [self._collect(call, pending, stream_id) for call in turn.tool_calls]
        return turn, executions

    def _collect(self, call: ToolCallItem, pending: dict[str, list[_Pending]], stream_id: str) -> ToolExecution:
        if not call.valid:
            execution = ToolExecution(call, ToolResult.failure(call, invalid_call_message(call)))
        elif call.name not in self.tools:
            known = ", ".join(sorted(self.tools)) or "none"
            message = f"Error: there is no tool named {call.name!r} (available: {known}); the call was not executed."
            execution = ToolExecution(call, ToolResult.failure(call, message))
        else:
            queue = pending.get(call.key) or []
            job = queue.pop(0) if queue else None
            execution = self._await(call, job)
        self.bus.publish(
            ToolEvent(
                ToolEventType.COMPLETED,
                stream_id,
                self.api,
                call.name,
                call.key,
                arguments=call.arguments,
                error=str(execution.result.output) if execution.result.is_error else None,
                result=execution.result,
            )
        )
        return execution

    def _await(self, call: ToolCallItem, job: _Pending | None) -> ToolExecution:
        if job is None:  # pragma: no cover - every valid call of a known tool was submitted at detection
            return ToolExecution(call, ToolResult.failure(call, "Error: the call was detected but never started."))
        remaining = job.budget - (time.monotonic() - job.submitted)
        try:
            output = job.future.result(timeout=max(remaining, 0.0))
        except concurrent.futures.TimeoutError:
            never_started = job.future.cancel()
            message = (
                f"Error: {call.name} could not start within {job.budget:g} s (earlier calls were still running)."
                if never_started
                else f"Error: {call.name} did not finish within {job.timeout:g} s and was abandoned."
            )
            failure = ToolResult.failure(call, message)
            return ToolExecution(call, failure, job.budget, executed=not never_started, timed_out=True)
        except Exception as error:  # noqa: BLE001 - user tool code (see below)
            # The user's tool function may raise anything: the exception becomes the call's error result.
            seconds = time.monotonic() - job.submitted
            message = f"Error: {call.name} raised {type(error).__name__}: {error}"
            return ToolExecution(call, ToolResult.failure(call, message), seconds, executed=True)
        return ToolExecution(call, ToolResult.ok(call, output), time.monotonic() - job.submitted, executed=True)


def _call_tool(tool: AgentTool, invocation: ToolInvocation) -> Any:
    output = tool.function(**thaw(invocation.arguments))
    if isinstance(output, str):
        return output
    # Results travel as JSON: anything else is made JSON-safe here, in the tool's own thread.
    return json.loads(json.dumps(output, ensure_ascii=False, default=str))
