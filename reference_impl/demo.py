"""The offline multi-turn demo: the reference agent against scripted model responses, through the real SDKs.

A *multi-turn cassette* (vcrpy format, ``toolcall_conformance.kind: multiturn``) holds every model
response of a conversation in order and the request the SDK sent before each. ``run_multiturn_cassette``
serves the responses to the reference ``Agent`` through an in-process ``httpx2.MockTransport``
(no network, no key), so the agent streams each turn through the reference converter and handler,
executes the tools it detects, sends the results back and continues until the model answers;
``run_demo`` prints what happened (``toolcall-conformance demo``). The bundled cassettes are
written by ``conformance.corpus.multiturn`` with the deterministic tools defined here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_impl.agent import Agent, AgentRun, AgentTool, SdkModelClient, ToolEvent, ToolEventBus, ToolEventType
from reference_impl.tools import ToolDefinition

__all__ = [
    "DEMO_APIS",
    "DEMO_PROMPT",
    "DEMO_REQUEST_OPTIONS",
    "DEMO_URLS",
    "MultiTurnCassette",
    "demo_cassette",
    "demo_results_sent",
    "demo_tools",
    "load_multiturn_cassette",
    "multiturn_cassette_paths",
    "run_demo",
    "run_multiturn_cassette",
]

DEMO_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")

# The demo tools' schemas; the bundled cassettes' request bodies were captured with them.
WEATHER = ToolDefinition(
    "get_weather",
    "Current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"],
    },
)
TIME = ToolDefinition(
    "get_time",
    "Local time in an IANA time zone.",
    {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
)

# Where each wire API keeps the conversation in its request JSON.
_HISTORY_KEY = {"openai-responses": "input", "gemini": "contents"}

DEMO_PROMPT = "What's the weather in Paris right now, and what time is it there?"


def _demo_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    table = {"Paris": (18, "cloudy"), "Tokyo": (25, "clear"), "Zürich": (4, "snow")}
    celsius, sky = table.get(city, (20, "unknown"))
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": city, "temperature": temperature, "unit": unit, "sky": sky}


def _demo_time(timezone: str) -> str:
    offsets = {"Europe/Paris": "+01:00", "Asia/Tokyo": "+09:00", "UTC": "+00:00"}
    return f"2026-11-21T14:05:00{offsets.get(timezone, '+00:00')} ({timezone})"


def demo_tools() -> list[AgentTool]:
    """The deterministic tools the multi-turn cassettes were written with (same inputs, same outputs)."""
    return [AgentTool(WEATHER, _demo_weather, timeout=5.0), AgentTool(TIME, _demo_time, timeout=5.0)]


DEMO_REQUEST_OPTIONS: dict[str, dict[str, Any]] = {
    "anthropic": {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}},
}
DEMO_URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1/models/gemini-test:streamGenerateContent?alt=sse",
}


@dataclass(frozen=True)
class MultiTurnCassette:
    """A multi-turn cassette: every model response in order, and the request the SDK sent before each."""

    path: Path
    api: str
    name: str
    prompt: str
    requests: tuple[Any, ...]
    responses: tuple[bytes, ...]
    metadata: Mapping[str, Any]


def run_multiturn_cassette(
    cassette: MultiTurnCassette,
    *,
    tools: Sequence[AgentTool] | None = None,
    pieces: int | None = None,
    bus: ToolEventBus | None = None,
) -> tuple[AgentRun, list[Any]]:
    """Run the reference agent against a cassette's responses, offline; return the run and the requests sent.

    ``pieces``: serve each response body in pieces of that many bytes; ``bus``: publish the tool
    events there (to watch detections).
    """
    model, replay = SdkModelClient.offline(
        cassette.api, cassette.responses, request_options=DEMO_REQUEST_OPTIONS.get(cassette.api), pieces=pieces
    )
    agent = Agent(model, list(tools) if tools is not None else demo_tools(), bus=bus)
    run = agent.run(cassette.prompt)
    return run, [request.json for request in replay.requests]


def load_multiturn_cassette(path: str | Path) -> MultiTurnCassette:
    """Read a multi-turn cassette written by ``write_multiturn_cassettes`` (or recorded the same way)."""
    import yaml

    path = Path(path)
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    metadata = document.get("toolcall_conformance") or {}
    interactions = document.get("interactions") or []
    if metadata.get("kind") != "multiturn" or not interactions:
        raise ValueError(f"{path}: not a multi-turn cassette (toolcall_conformance.kind must be 'multiturn')")
    requests = []
    responses = []
    for interaction in interactions:
        body = interaction["request"].get("body")
        requests.append(json.loads(body) if isinstance(body, str) and body else None)
        text = interaction["response"]["body"]["string"]
        responses.append(text.encode("utf-8") if isinstance(text, str) else bytes(text))
    return MultiTurnCassette(
        path,
        metadata["api"],
        metadata.get("scenario", path.stem),
        metadata.get("prompt", DEMO_PROMPT),
        tuple(requests),
        tuple(responses),
        metadata,
    )


def multiturn_cassette_paths(directory: Path) -> list[Path]:
    """Every multi-turn cassette under ``directory`` (``<directory>/<api>/<name>.yaml``)."""
    return sorted(p for p in directory.rglob("*.yaml") if p.is_file())


DEMO_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def _short(value: Any, limit: int = 110) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def demo_results_sent(api: str, request: Mapping[str, Any], previous: Mapping[str, Any]) -> list[str]:
    """The tool results a request added to the history (compared with the previous request), one line each."""
    key = _HISTORY_KEY.get(api, "messages")
    new_entries = list(request.get(key) or [])[len(previous.get(key) or []) :]
    lines = []
    for entry in new_entries:
        if api == "openai-chat" and entry.get("role") == "tool":
            lines.append(f"role=tool tool_call_id={entry['tool_call_id']}: {_short(entry['content'])}")
        elif api == "openai-responses" and entry.get("type") == "function_call_output":
            lines.append(f"function_call_output call_id={entry['call_id']}: {_short(entry['output'])}")
        elif api == "anthropic" and entry.get("role") == "user" and isinstance(entry.get("content"), list):
            for block in entry["content"]:
                if block.get("type") == "tool_result":
                    flag = " is_error" if block.get("is_error") else ""
                    lines.append(f"tool_result tool_use_id={block['tool_use_id']}{flag}: {_short(block['content'])}")
        elif api == "gemini" and entry.get("role") == "user":
            for part in entry.get("parts") or []:
                response = part.get("functionResponse")
                if response:
                    ident = f" id={response['id']}" if response.get("id") else ""
                    lines.append(f"functionResponse name={response['name']}{ident}: {_short(response['response'])}")
    return lines


def demo_cassette(path: Path, *, chunk_bytes: int | None = None, write: Callable[[str], object] = print) -> bool:
    """Run one multi-turn cassette through the reference agent and print what happened; True if it answered."""
    cassette = load_multiturn_cassette(path)
    write(f"=== {cassette.api} / {cassette.name}  ({path})")
    write(f"user: {cassette.prompt}")
    bus = ToolEventBus()
    events: list[ToolEvent] = []
    bus.subscribe(ToolEventType.DETECTED, events.append)
    bus.subscribe(ToolEventType.REJECTED, events.append)
    run, requests = run_multiturn_cassette(cassette, pieces=chunk_bytes, bus=bus)
    for number, step in enumerate(run.steps, start=1):
        write(f" turn {number}:")
        for event in events:
            if event.stream_id != step.stream_id:
                continue
            if event.type is ToolEventType.DETECTED:
                write(f"  [bus] detected {event.name}({_short(dict(event.arguments or {}))}) id={event.call_id}")
            else:
                write(f"  [bus] rejected {event.name or '?'} id={event.call_id}: {event.error}")
        if step.turn.reasoning:
            write(f"  reasoning: {_short(step.turn.reasoning)}")
        if step.turn.text:
            write(f"  text: {step.turn.text}")
        for execution in step.executions:
            call = execution.call
            shown = _short(dict(call.arguments)) if call.arguments is not None else f"INVALID {call.raw_arguments!r}"
            status = "error result" if execution.result.is_error else f"ran in {execution.seconds * 1000:.0f} ms"
            write(f"  tool called: {call.name}({shown}) provider id={call.call_id or '-'} -> {status}")
        if step.executions and number < len(requests):
            write("  sent back (read from the JSON of the next request the SDK sent):")
            for line in demo_results_sent(cassette.api, requests[number], requests[number - 1]):
                write(f"    {line}")
    write(f"final answer: {run.final_text}   [{run.stopped}; {len(requests)} requests]\n")
    return run.stopped == "answered"


def run_demo(
    cassette_dir: Path,
    api: str | None = None,
    *,
    chunk_bytes: int | None = None,
    write: Callable[[str], object] = print,
) -> int:
    """The offline multi-turn demo over every cassette under ``cassette_dir`` (or one wire API's).

    Returns 0 when every run ended in an answer, 1 when one did not, 2 when there was nothing to run.
    """
    paths = [p for p in multiturn_cassette_paths(cassette_dir) if api is None or p.parent.name == api]
    paths.sort(key=lambda p: (DEMO_APIS.index(p.parent.name) if p.parent.name in DEMO_APIS else 9, p.name))
    if not paths:
        write("no multi-turn cassettes found")
        return 2
    results = [demo_cassette(path, chunk_bytes=chunk_bytes, write=write) for path in paths]
    return 0 if all(results) else 1
