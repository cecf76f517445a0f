"""agno: an ``agno.agent.Agent`` on ``OpenAIChat`` (or ``Claude``), streamed, whose tools record the calls they get.

What it maps. The production path, unchanged. ``OpenAIChat`` builds its own ``openai.OpenAI`` client
(``get_client()``), here with ``client_params={"http_client": httpx2.Client(MockTransport)}`` (openai 3.x
runs on httpx2; agno's own ``http_client`` field only takes a plain ``httpx.Client``); ``Claude`` takes the
anthropic SDK's httpx2 client in its ``http_client`` field. The first request is answered with the body
in exactly the given reads. ``Agent.run(..., stream=True)`` drives agno's whole turn: the model's
``invoke_stream`` (``chat.completions.create(stream=True)``; ``messages.stream()`` for Claude) ->
``_parse_provider_response_delta`` per chunk -> ``Model._populate_stream_data`` (tool-call deltas
collected) -> ``parse_tool_calls`` (OpenAIChat: deltas folded by ``index``; Claude: one call per
``content_block_stop`` of a ``tool_use`` block, with the input the SDK parsed) ->
``Model.get_function_calls_to_run`` (``get_function_call``: name lookup, ``json.loads`` of the arguments)
-> ``run_function_calls``. That loop is the layer that decides what runs. The agent then asks the model
again with the tool results; the adapter answers that second request with a plain text turn, so the
run ends after one tool round.

The tools. An application offers the model its tools; a recording carries no tool definitions, so the
adapter registers one recording ``Function`` (any arguments, no schema) under every name the body spells
(every string ``"name"`` value of its JSON events). Each returns a unique token, so the tool message agno
writes for a call (``tool_call_id``) tells which recorded execution it was.

What it reports. The calls of the first assistant message (``RunOutput.messages``), in agno's order,
with the arguments the tool function received when it ran (agno rewrites string values ``"true"``,
``"false"``, ``"null"`` and ``"none"`` before calling), else agno's error text; that message's text and
reasoning. agno mints a ``uuid4`` for a call without an id (``_populate_assistant_message_from_stream_data``):
an id the body does not carry is reported as None, as the stack contract asks. A run that ends in
``RunErrorEvent`` (agno's surfacing of a provider error) is raised. What it cannot map: agno keeps no
finish or stop reason of a streamed turn, so none is reported (not judged).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "AgnoStack", "make_stack"]

ADAPTER = AdapterInfo(
    name="agno",
    distributions=("agno", "openai", "anthropic"),
    imports=("agno", "openai", "anthropic"),
    kind="stack",
    factory="conformance.adapters.agno:make_stack",
    capabilities=StackCapabilities(apis=("openai-chat", "anthropic"), text=True, reasoning=True),
    summary="Agent.run(stream=True) on OpenAIChat over the openai SDK's own client, tools recording their calls",
    outside_target={
        "object_arguments": "OpenAIChat reads the openai SDK's `ChoiceDeltaToolCallFunction.arguments`, typed `str` "
        "(JSON text), and concatenates it as text (agno/models/openai/chat.py, parse_tool_calls): a JSON object there "
        "is not a value the SDK's types admit, and no server has been seen sending one",
    },
    environment={"AGNO_TELEMETRY": "false"},
)

# The second request of the run (the agent asks again once the tools ran): a plain text answer, so the
# agent's loop ends there.
_AFTER_TOOLS = (
    b'data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"done"},"finish_reason":null}]}\n\n'
    b'data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
_AFTER_TOOLS_ANTHROPIC = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant",'
    b'"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"done"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":1}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
_TOKEN = "agno-conformance-ran#"


def _names(value: Any, found: dict[str, None]) -> None:
    """Every string ``"name"`` value in a decoded JSON event (the tool names the application offers)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "name" and isinstance(item, str) and item:
                found[item] = None
            else:
                _names(item, found)
    elif isinstance(value, list):
        for item in value:
            _names(item, found)


def _tool_names(body: bytes) -> list[str]:
    """The names the body spells, read from its ``data:`` lines (lines that are not JSON are skipped)."""
    found: dict[str, None] = {}
    for line in body.decode("utf-8", errors="replace").splitlines():
        if line.startswith("data:"):
            try:
                _names(json.loads(line[5:]), found)
            except ValueError:
                continue
    return list(found)


class AgnoStack:
    """The stack: one fresh ``Agent`` per body (no state kept between calls)."""

    capabilities = ADAPTER.capabilities

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        """Run one agent turn on the body in ``pieces`` and report its first assistant message's calls."""
        del options  # no server profile (see capabilities)
        import httpx2
        from agno.agent import Agent
        from agno.tools.function import Function

        served = list(pieces)
        body = b"".join(served)
        requests = 0

        def respond(request: Any) -> Any:
            nonlocal requests
            del request
            requests += 1
            after = _AFTER_TOOLS_ANTHROPIC if api == "anthropic" else _AFTER_TOOLS
            content: Iterator[bytes] = iter(served) if requests == 1 else iter([after])
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=content)

        executed: list[dict[str, Any]] = []

        def recorder(**kwargs: Any) -> str:
            executed.append(dict(kwargs))
            return f"{_TOKEN}{len(executed) - 1}"

        tools = [
            Function(
                name=name,
                description="records its call",
                parameters={"type": "object", "properties": {}},
                entrypoint=recorder,
                skip_entrypoint_processing=True,
            )
            for name in _tool_names(body)
        ]
        with httpx2.Client(transport=httpx2.MockTransport(respond)) as http_client:
            agent = Agent(model=_model(api, http_client), tools=tools, telemetry=False)
            output: Any = None
            for event in agent.run("go", stream=True, yield_run_output=True):
                if type(event).__name__ == "RunErrorEvent":
                    raise RuntimeError(f"agno RunErrorEvent: {event.content}")
                output = event
        return _read(output, body, executed)


def _model(api: str, http_client: Any) -> Any:
    """agno's model class for ``api``, building its SDK client over ``http_client`` (no retries)."""
    if api == "anthropic":
        from agno.models.anthropic import Claude

        # Claude's own http_client field takes the anthropic SDK's client type (httpx2 in anthropic 2.x)
        return Claude(
            id="claude-conformance", api_key="offline", client_params={"max_retries": 0}, http_client=http_client
        )
    from agno.models.openai import OpenAIChat

    # OpenAIChat's http_client field only takes a plain httpx.Client; client_params reach openai.OpenAI as they are
    return OpenAIChat(id="m", api_key="offline", max_retries=0, client_params={"http_client": http_client})


def _on_the_wire(call_id: Any, body: bytes) -> bool:
    """Whether the body carries ``call_id`` as a JSON string (raw UTF-8 or ``\\u``-escaped)."""
    if not isinstance(call_id, str):
        return False
    spellings = {json.dumps(call_id).encode(), json.dumps(call_id, ensure_ascii=False).encode()}
    return any(spelling in body for spelling in spellings)


def _read(output: Any, body: bytes, executed: list[dict[str, Any]]) -> dict[str, Any]:
    """The first assistant message's calls, each with what ran (from its tool message) or agno's error."""
    messages = list(getattr(output, "messages", None) or [])
    assistant = next((m for m in messages if m.role == "assistant"), None)
    if assistant is None:
        return {"tool_calls": [], "text": "", "reasoning": ""}
    results: dict[str, list[str]] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id is not None:
            results.setdefault(message.tool_call_id, []).append(str(message.content))
    calls = []
    for tool_call in assistant.tool_calls or []:
        call_id = tool_call.get("id")
        function = tool_call.get("function") or {}
        pending = results.get(call_id, [])
        outcome = pending.pop(0) if pending else "agno wrote no tool result for this call"
        call: dict[str, Any] = {
            # agno mints a uuid4 for a call the wire gave no id: not the provider's id
            "call_id": call_id if _on_the_wire(call_id, body) else None,
            "name": function.get("name"),
            "raw_arguments": function.get("arguments"),
        }
        if outcome.startswith(_TOKEN):
            call["arguments"] = executed[int(outcome.removeprefix(_TOKEN))]
        else:
            call["error"] = outcome
        calls.append(call)
    return {
        "tool_calls": calls,
        "text": assistant.content or "",
        "reasoning": assistant.reasoning_content or "",
    }


def make_stack() -> AgnoStack:
    """The stack the suite runs (``run --stack conformance.adapters.agno:make_stack``)."""
    return AgnoStack()
