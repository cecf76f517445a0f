"""haystack-ai: ``Agent`` over ``OpenAIChatGenerator`` streaming, the tool loop deciding which calls run.

What it maps. Haystack's production path for a streamed tool-calling turn, unchanged: an
``OpenAIChatGenerator`` whose ``openai.OpenAI`` client is served the recording's body offline (the
generator builds its client in ``warm_up()`` only when it has none; here it is given one on
``httpx2.MockTransport``, as openai 3.x runs on ``httpx2``), with a ``streaming_callback`` set, so
that haystack's own ``_convert_chat_completion_chunk_to_streaming_chunk`` turns each SDK chunk into a
``StreamingChunk`` and ``_convert_streaming_chunks_to_chat_message`` builds the ``ChatMessage``
(calls keyed by ``index``; malformed argument JSON is dropped from the message with a logged warning).
What decides what runs is haystack 3.x's ``Agent`` (``haystack.components.agents``; the 2.x
``ToolInvoker`` component is gone and its logic lives in ``Agent``'s ``_run_tool``): it is run for one
step (``max_agent_steps=1``, so no second request is made) with one haystack ``Tool`` per tool name
on the wire, whose function records the keyword arguments it was invoked with and does nothing else.

The result: every call of the Agent's assistant ``ChatMessage``, in its order, with the arguments its
tool function actually received when it ran (read back through the tool result message, whose
``origin`` is the ``ToolCall``), else an ``error`` saying why not (the tool result's error text, or
that the Agent did not reach the tools); the message's text and its ``finish_reason`` (haystack's
normalised value). An exception out of ``Agent.run`` (the SDK raises ``APIError`` on an in-band
error) reaches the suite as it is.

What it cannot map. ``ChatMessage`` keeps no raw argument text (calls carry none) and a call dropped
for malformed JSON leaves no trace in it (it is absent from the result, as it is from the Agent's
view). A ``ToolCall`` without a provider id has ``id == ""`` (haystack's accumulator starts every call
with ``""``): it is reported as ``None``, the suite's "the wire had none". ``OpenAIChatGenerator``
reads no ``reasoning_content`` (the stack declares no reasoning). Tools are declared for exactly the
names the body's ``function.name`` fields carry (a recording has no tool definitions; the model was
offered the tools it names): a name the accumulator builds that no tool has (two fragments
concatenated) is then haystack's own "tool not found", as it would be for an application.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "HaystackStack", "make_stack"]

# Haystack sends anonymous usage telemetry unless told not to; nothing of a replay may leave the machine.
_ENVIRONMENT = {"HAYSTACK_TELEMETRY_ENABLED": "False"}

ADAPTER = AdapterInfo(
    name="haystack-ai",
    distributions=("haystack-ai", "openai"),
    imports=("haystack", "openai"),
    kind="stack",
    factory="conformance.adapters.haystack:make_stack",
    capabilities=StackCapabilities(apis=("openai-chat",), text=True, reasoning=False),
    summary="Agent (one step, recording tools) over OpenAIChatGenerator with a streaming_callback: haystack's "
    "own StreamingChunk conversion and ChatMessage accumulation, on the openai SDK replayed offline",
    environment=_ENVIRONMENT,
    recordings_excluded={
        "openai-chat/truncated_max_tokens.yaml": "legitimate: the turn stopped at the token limit mid-arguments; "
        "haystack surfaces it (the reply's meta finish_reason `length`, a logged truncation warning, and the Agent's "
        "documented exit_reason `length`: 'the model returned an incomplete reply') and, by design, skips a call "
        "whose argument JSON does not parse with a logged warning ('This tool call will be skipped. To always "
        "generate a valid JSON, set `tools_strict` to `True`'; haystack/components/generators/utils.py, kept when "
        "its maintainers fixed empty arguments in deepset-ai/haystack#9639): nothing runs, and the caller is told "
        "the turn is incomplete (reproduced: tests/test_repro_haystack.py::"
        "test_truncated_call_is_skipped_and_the_turn_says_length)",
    },
    outside_target={
        # It reads chunks through the openai SDK's types (ChoiceDeltaToolCall.index is a required int).
        "no_index": INDEX_REQUIRED,
        "null_index": INDEX_REQUIRED,
        "object_arguments": "`ChoiceDeltaToolCall.function.arguments` is typed `str` (JSON text) in the openai SDK "
        "haystack reads chunks through: a JSON object there is not a value those types admit",
        "index_always_zero": "haystack keys a streamed call by its `index` ('We use the index of the tool_call to "
        "track the tool call across chunks since the ID is not always provided', generators/utils.py), the OpenAI "
        "convention; Ollama, the server seen putting every call on index 0, accepted that as its own bug and fixed "
        "it (https://github.com/ollama/ollama/issues/15457, closed by ollama/ollama#15467)",
        "name_restated": "OpenAIChatGenerator 'completes chats using OpenAI's large language models' (its "
        "docstring); OpenAI sends a call's name once, on its first delta, and haystack appends each name delta, "
        "which reads that stream exactly; the servers seen restating it treat that as their bug (vLLM: "
        "https://github.com/vllm-project/vllm/issues/44098; llama.cpp fixed it in ggml-org/llama.cpp#13800)",
    },
)

_PROMPT = "replay"


def _tool_names(pieces: Sequence[bytes]) -> list[str]:
    """Every ``function.name`` string a ``tool_calls`` entry of the body carries, in order of first sight.

    The application offers the model the tools it calls; a recording holds no tool definitions, so
    the names on the wire stand for them. Each value is taken as sent, never joined with another.
    """
    names: dict[str, None] = {}
    for line in b"".join(pieces).decode("utf-8", errors="replace").splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[len("data:") :])
        except ValueError:
            continue
        choices = event.get("choices") if isinstance(event, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            entries = delta.get("tool_calls") if isinstance(delta, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                function = entry.get("function") if isinstance(entry, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                if isinstance(name, str) and name:
                    names[name] = None
    return list(names)


class _Recorder:
    """The tools' shared log: each invocation's tool name and keyword arguments, under a returned token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the Agent runs a step's tools on a thread pool
        self.invocations: list[tuple[str, dict[str, Any]]] = []

    def tool(self, name: str) -> Any:
        """A haystack ``Tool`` named ``name`` that records its arguments and returns its invocation token."""
        from haystack.tools.tool import Tool

        def record(**kwargs: Any) -> str:
            with self._lock:
                self.invocations.append((name, dict(kwargs)))
                return f"invocation {len(self.invocations) - 1}"

        # A permissive schema: argument validation is the model's side, not what is measured here.
        parameters = {"type": "object", "properties": {}, "additionalProperties": True}
        return Tool(name=name, description="a recorded tool", parameters=parameters, function=record)


def _offline_client(pieces: Sequence[bytes]) -> Any:
    """An ``openai.OpenAI`` whose every request is answered with the body in exactly ``pieces``, offline."""
    import httpx2
    import openai

    served = list(pieces)

    def respond(request: Any) -> Any:
        del request
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

    transport = httpx2.MockTransport(respond)
    client = httpx2.Client(transport=transport)
    return openai.OpenAI(api_key="offline", base_url="http://offline.test/v1", max_retries=0, http_client=client)


class HaystackStack:
    """The stack the suite runs: one Agent step over ``OpenAIChatGenerator`` per call (see the module docstring)."""

    capabilities = ADAPTER.capabilities

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        """Serve the body to haystack and report the calls its Agent ran, the text and the finish reason."""
        del api, options  # one wire API (see capabilities), no server profile
        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.dataclasses import ChatMessage
        from haystack.utils import Secret

        recorder = _Recorder()
        tools = [recorder.tool(name) for name in _tool_names(pieces)]
        generator = OpenAIChatGenerator(api_key=Secret.from_token("offline"), model="gpt-conformance", max_retries=0)
        generator.client = _offline_client(pieces)  # warm_up() keeps a client it already has
        try:
            # The streaming callback is what makes the generator stream; its chunks are not read here.
            agent = Agent(chat_generator=generator, tools=tools or None, max_agent_steps=1)
            outcome = agent.run([ChatMessage.from_user(_PROMPT)], streaming_callback=lambda chunk: None)
        finally:
            generator.close()
        return _result(outcome, recorder)

    def close(self) -> None:
        """Nothing held between calls."""


def _result(outcome: Mapping[str, Any], recorder: _Recorder) -> dict[str, Any]:
    """The suite's final result from the Agent's messages and the tools' log."""
    messages: list[Any] = list(outcome.get("messages") or [])
    replies = [m for m in messages if m.is_from("assistant")]
    if not replies:
        return {"tool_calls": [], "text": ""}
    reply = replies[0]
    results = [m.tool_call_result for m in messages if m.tool_call_result is not None]
    calls: list[dict[str, Any]] = []
    for tool_call in reply.tool_calls:
        call: dict[str, Any] = {"call_id": tool_call.id or None, "name": tool_call.tool_name}
        result = next((r for r in results if r.origin is tool_call), None)
        if result is None:
            call["error"] = f"not run by the Agent (exit reason {outcome.get('exit_reason')!r})"
        elif result.error:
            call["error"] = f"the Agent reported a tool error: {result.result}"
        else:
            token = str(result.result).removeprefix("invocation ")
            call["arguments"] = recorder.invocations[int(token)][1]
        calls.append(call)
    return {"tool_calls": calls, "text": reply.text or "", "finish_reason": reply.meta.get("finish_reason")}


def make_stack() -> HaystackStack:
    """The stack the suite runs (``run --stack conformance.adapters.haystack:make_stack``)."""
    for key, value in _ENVIRONMENT.items():
        os.environ.setdefault(key, value)
    # Haystack logs every malformed call it drops, every step budget reached and every tool it cannot
    # find (a warning or an error); the result carries all of it, and thousands of replays would bury
    # the report under these lines.
    logging.getLogger("haystack").setLevel(logging.CRITICAL)
    return HaystackStack()
