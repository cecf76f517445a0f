"""Detection events, the minimal agent loop, and offline multi-turn runs for each wire API (reference_impl.agent)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.corpus.multiturn import MULTITURN_SCRIPTS, multiturn_document
from conformance.roundtrip import wire_view
from conformance.turns.model import Call, Text, Turn, fake_signature
from conformance.turns.render import render_sse
from conformance.wire import bundled_cassette_dir
from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse, ToolCallDelta
from reference_impl.agent import (
    Agent,
    AgentError,
    AgentTool,
    SdkModelClient,
    ToolEvent,
    ToolEventBus,
    ToolEventType,
)
from reference_impl.demo import demo_tools, load_multiturn_cassette, multiturn_cassette_paths, run_multiturn_cassette
from reference_impl.tools import ToolDefinition

CASSETTES = multiturn_cassette_paths(bundled_cassette_dir() / "multiturn")
IDS = [f"{p.parent.name}/{p.stem}" for p in CASSETTES]


# -- the event bus ---------------------------------------------------------------------------------


def _event(kind: ToolEventType = ToolEventType.DETECTED, name: str = "f") -> ToolEvent:
    return ToolEvent(kind, "s1", "openai-chat", name, "call_1")


def test_bus_delivers_in_order_and_unsubscribes() -> None:
    bus = ToolEventBus()
    seen: list[str] = []
    unsubscribe = bus.subscribe(ToolEventType.DETECTED, lambda e: seen.append("first:" + e.name))
    bus.subscribe(ToolEventType.DETECTED, lambda e: seen.append("second:" + e.name))
    bus.subscribe(ToolEventType.COMPLETED, lambda e: seen.append("completed"))
    bus.publish(_event(name="a"))
    unsubscribe()
    unsubscribe()  # idempotent
    bus.publish(_event(name="b"))
    assert seen == ["first:a", "second:a", "second:b"]
    with pytest.raises(TypeError):
        bus.subscribe("tool_detected", print)  # type: ignore[arg-type]


def test_a_raising_listener_is_isolated(caplog: pytest.LogCaptureFixture) -> None:
    bus = ToolEventBus()
    seen: list[str] = []

    def broken(_event: ToolEvent) -> None:
        raise RuntimeError("listener bug")

    bus.subscribe(ToolEventType.DETECTED, broken)
    bus.subscribe(ToolEventType.DETECTED, lambda e: seen.append(e.name))
    bus.publish(_event())
    assert seen == ["f"]
    assert "listener raised" in caplog.text


def test_bus_is_thread_safe() -> None:
    bus = ToolEventBus()
    count = [0]
    lock = threading.Lock()

    def listener(_event: ToolEvent) -> None:
        with lock:
            count[0] += 1

    def work() -> None:
        for _ in range(200):
            unsubscribe = bus.subscribe(ToolEventType.REJECTED, lambda e: None)
            bus.publish(_event(ToolEventType.DETECTED))
            unsubscribe()

    bus.subscribe(ToolEventType.DETECTED, listener)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert count[0] == 800


def test_handler_callbacks_publish_detections_and_rejections() -> None:
    bus = ToolEventBus()
    events: list[ToolEvent] = []
    for kind in ToolEventType:
        bus.subscribe(kind, events.append)
    handler = ApiToolCallStreamingResponseHandler(**bus.handler_callbacks("openai-chat", stream_id="s-42"))
    handler.feed(
        ChunkResponse(
            tool_calls=[
                ToolCallDelta(0, "call_ok", "get_weather", '{"city": "Oslo"}'),
                ToolCallDelta(1, "call_bad", "get_time", '{"timezone": '),
            ]
        )
    )
    assert events == []  # detection happens when a call ends, not on its first fragment
    handler.finalize()
    assert [(e.type, e.call_id, e.stream_id) for e in events] == [
        (ToolEventType.DETECTED, "call_ok", "s-42"),
        (ToolEventType.REJECTED, "call_bad", "s-42"),
    ]
    assert events[0].arguments == {"city": "Oslo"} and events[0].invocation is not None
    assert events[1].raw_arguments == '{"timezone": ' and events[1].error


# -- the multi-turn cassettes, end to end ----------------------------------------------------------


def test_there_is_a_multiturn_cassette_pair_for_every_wire_api() -> None:
    assert {p.parent.name for p in CASSETTES} == {"openai-chat", "openai-responses", "anthropic", "gemini"}
    assert len(CASSETTES) == len(MULTITURN_SCRIPTS) == 8
    for path in CASSETTES:
        text = path.read_text(encoding="utf-8")
        assert "origin: written" in text and "kind: multiturn" in text and "checked_with:" in text


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_agent_runs_the_cassette_and_sends_what_was_recorded(path: Path) -> None:
    cassette = load_multiturn_cassette(path)
    run, requests = run_multiturn_cassette(cassette)
    assert run.stopped == "answered"
    assert run.final_text == cassette.metadata["turns"][-1]["text"]
    assert len(requests) == len(cassette.responses)
    # Golden: every request the SDK sent equals the one recorded in the cassette.
    assert requests == list(cassette.requests)


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_byte_boundaries_change_nothing(path: Path) -> None:
    cassette = load_multiturn_cassette(path)
    _, whole = run_multiturn_cassette(cassette)
    _, split = run_multiturn_cassette(cassette, pieces=7)
    assert split == whole


_PREFIX_KEY = {"openai-responses": "input", "gemini": "contents"}


@pytest.mark.parametrize("path", [p for p in CASSETTES if p.stem == "weather_and_time"], ids=lambda p: p.parent.name)
def test_turn_two_carries_the_streamed_ids_and_results_in_call_order(path: Path) -> None:
    cassette = load_multiturn_cassette(path)
    run, requests = run_multiturn_cassette(cassette)
    api = cassette.api
    first_turn = run.steps[0].turn
    view = wire_view(api, requests[1], prefix=1)
    assert not view.structure and not view.adjacency
    calls = first_turn.tool_calls
    assert [c.name for c in calls] == ["get_weather", "get_time"]
    assert [w.name for w in view.calls] == ["get_weather", "get_time"]
    weather = {"city": "Paris", "temperature": 18, "unit": "celsius", "sky": "cloudy"}
    clock = "2026-11-21T14:05:00+01:00 (Europe/Paris)"
    if api == "gemini":
        assert [w.id for w in view.calls] == [None, None]  # the Gemini API sent no ids; none is invented
        assert view.calls[0].signature == fake_signature("multiturn-call-1")
        assert view.calls[1].signature is None  # only the first parallel call had one (G07)
        assert [r.name for r in view.results] == ["get_weather", "get_time"]
        assert [r.content for r in view.results] == [{"output": weather}, {"output": clock}]
        return
    provider_ids = [c.call_id for c in calls]
    assert all(provider_ids)
    assert [w.id for w in view.calls] == provider_ids
    assert [r.id for r in view.results] == provider_ids
    if api == "openai-chat":
        assert all(isinstance(w.arguments, str) for w in view.calls)
        assert view.results[1].content == clock
    elif api == "openai-responses":
        assert [w.item_id for w in view.calls] == [c.provider_metadata["item_id"] for c in calls]
        assert all(w.item_id.startswith("fc_") and w.id.startswith("call_") for w in view.calls)
        reasoning = [b for b in view.blocks if b.kind == "reasoning"]
        assert reasoning and reasoning[0].key.startswith("rs_")
    else:  # anthropic
        assert view.blocks[0].kind == "reasoning"
        assert view.blocks[0].signature == fake_signature("multiturn-thinking-1")
        assert view.calls[0].arguments == {"city": "Paris", "unit": "celsius"}
        assert requests[1]["thinking"]["type"] == "enabled"


@pytest.mark.parametrize("path", [p for p in CASSETTES if p.stem == "invalid_call_retry"], ids=lambda p: p.parent.name)
def test_invalid_call_is_answered_with_an_error_and_the_model_retries(path: Path) -> None:
    cassette = load_multiturn_cassette(path)
    run, requests = run_multiturn_cassette(cassette)
    first = run.steps[0]
    assert len(first.executions) == 1
    execution = first.executions[0]
    assert execution.result.is_error and not execution.executed
    view = wire_view(cassette.api, requests[1], prefix=1)
    assert len(view.calls) == 1 and len(view.results) == 1
    if cassette.api == "gemini":
        assert view.calls[0].name == "get_forecast"
        assert "no tool named 'get_forecast'" in view.results[0].content["error"]
    else:
        assert view.calls[0].id == first.turn.tool_calls[0].call_id
        replayed = view.calls[0].arguments
        assert replayed in ("{}", {})  # never the raw, truncated text
        content = view.results[0].content
        assert "not executed" in content and '"unit": "cels' in content
        if cassette.api == "anthropic":
            assert view.results[0].is_error is True
    assert run.steps[1].executions[0].executed and not run.steps[1].executions[0].result.is_error


@pytest.mark.parametrize("script", MULTITURN_SCRIPTS, ids=lambda s: f"{s.api}/{s.name}")
def test_committed_cassettes_are_up_to_date(script: Any) -> None:
    path = next(p for p in CASSETTES if p.parent.name == script.api and p.stem == script.name)
    document, _expectation = multiturn_document(script)
    committed = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert committed["interactions"] == document["interactions"], (
        "regenerate with: python -m conformance.corpus.multiturn cassettes/multiturn"
    )
    assert committed["toolcall_conformance"]["turns"] == document["toolcall_conformance"]["turns"]


def test_demo_prints_tools_results_and_answers(capsys: pytest.CaptureFixture[str]) -> None:
    from examples.roundtrip_demo import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.count("final answer:") == 8
    for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        assert f"=== {api} / weather_and_time" in out
    assert "tool called: get_weather" in out and "tool called: get_time" in out
    assert "role=tool tool_call_id=call_W7rKp2Xq9Lm" in out
    assert "function_call_output call_id=call_T4nVb8Cm" in out
    assert "tool_result tool_use_id=toolu_01Bad0Args is_error" in out
    assert "functionResponse name=get_forecast" in out
    assert main(["--api", "gemini", "--chunk-bytes", "5"]) == 0
    assert capsys.readouterr().out.count("final answer:") == 2


# -- agent behaviour -------------------------------------------------------------------------------

SLOW = ToolDefinition("slow", "sleeps", {"type": "object", "properties": {"s": {"type": "number"}}})
ECHO = ToolDefinition("echo", "echoes")


def _agent(turns: list[Turn], tools: list[AgentTool], api: str = "openai-chat", **options: Any) -> tuple[Agent, Any]:
    model, replay = SdkModelClient.offline(api, [render_sse(turn, api) for turn in turns])
    return Agent(model, tools, **options), replay


def _calls(*calls: tuple[str, str, str]) -> Turn:
    return Turn(tuple(Call(name, (args,), call_id) for name, args, call_id in calls))


ANSWER = Turn((Text(("done",)),))


def test_independent_tools_run_in_parallel_and_results_stay_in_call_order() -> None:
    finished: list[str] = []

    def slow(s: float) -> str:
        time.sleep(s)
        finished.append(str(s))
        return f"slept {s}"

    turn = _calls(("slow", '{"s": 0.4}', "c1"), ("slow", '{"s": 0.1}', "c2"), ("slow", '{"s": 0.3}', "c3"))
    agent, replay = _agent([turn, ANSWER], [AgentTool(SLOW, slow)])
    started = time.monotonic()
    run = agent.run("go")
    elapsed = time.monotonic() - started
    assert elapsed < 0.75, f"three sleeps of 0.8 s in total took {elapsed:.2f} s: not parallel"
    assert finished == ["0.1", "0.3", "0.4"]  # completion order ...
    tool_messages = [m for m in replay.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3"]  # ... but call order on the wire
    assert [m["content"] for m in tool_messages] == ["slept 0.4", "slept 0.1", "slept 0.3"]
    assert run.stopped == "answered"


def test_serial_tools_run_one_at_a_time_in_call_order() -> None:
    active, peak, order = [0], [0], []
    lock = threading.Lock()

    def echo(n: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        order.append(n)
        with lock:
            active[0] -= 1
        return n

    turn = _calls(*((("echo", f'{{"n": {n}}}', f"c{n}")) for n in range(4)))
    agent, _ = _agent([turn, ANSWER], [AgentTool(ECHO, echo, parallel=False)])
    run = agent.run("go")
    assert peak[0] == 1 and order == [0, 1, 2, 3]
    assert [e.result.output for e in run.steps[0].executions] == [0, 1, 2, 3]


def test_per_tool_timeout_and_exceptions_become_error_results() -> None:
    release = threading.Event()

    def hangs(s: float) -> str:
        release.wait(5)
        return "too late"

    def fails() -> str:
        raise ConnectionError("upstream down")

    broken = ToolDefinition("broken")
    turn = _calls(("slow", '{"s": 1}', "c1"), ("broken", "{}", "c2"), ("nope", "{}", "c3"))
    agent, replay = _agent([turn, ANSWER], [AgentTool(SLOW, hangs, timeout=0.2), AgentTool(broken, fails)])
    try:
        started = time.monotonic()
        run = agent.run("go")
        assert time.monotonic() - started < 2
    finally:
        release.set()
    timed_out, failed, unknown = run.steps[0].executions
    assert timed_out.timed_out and timed_out.result.is_error and "within 0.2 s" in timed_out.result.output
    assert failed.result.is_error and "ConnectionError: upstream down" in failed.result.output
    assert unknown.result.is_error and not unknown.executed and "no tool named 'nope'" in unknown.result.output
    contents = [m["content"] for m in replay.requests[1].json["messages"] if m["role"] == "tool"]
    assert len(contents) == 3 and all(c.startswith("Error:") for c in contents)


def test_events_flow_detected_then_completed() -> None:
    bus = ToolEventBus()
    log: list[tuple[str, str]] = []
    for kind in ToolEventType:
        bus.subscribe(kind, lambda e: log.append((e.type.value, e.call_id)))
    turn = _calls(("echo", "{}", "c1"), ("echo", '{"x": ', "c2"))
    agent, _ = _agent([turn, ANSWER], [AgentTool(ECHO, lambda: "hi")], bus=bus)
    run = agent.run("go")
    assert log == [
        ("tool_detected", "c1"),
        ("tool_rejected", "c2"),
        ("tool_completed", "c1"),
        ("tool_completed", "c2"),
    ]
    assert run.steps[0].stream_id and run.steps[1].stream_id != run.steps[0].stream_id


def test_stream_error_stops_the_run_without_replaying_the_turn() -> None:
    cut = Turn((Call("echo", ('{"a": 1}',), "c1"),), ending="error")
    agent, replay = _agent([cut], [AgentTool(ECHO, lambda a: a)])
    run = agent.run("go")
    assert run.stopped == "stream_error"
    assert run.steps[0].turn.error is not None and run.steps[0].executions == ()
    assert len(replay.requests) == 1


def test_max_turns_and_an_exhausted_replay() -> None:
    loop = _calls(("echo", "{}", "c1"))
    agent, _ = _agent([loop, loop, loop], [AgentTool(ECHO, lambda: "again")], max_turns=2)
    assert agent.run("go").stopped == "max_turns"
    agent, replay = _agent([loop], [AgentTool(ECHO, lambda: "again")])
    run = agent.run("go")  # the second model call finds no recorded response: a provider error, not a hang
    assert run.stopped == "stream_error" and "replay" in (run.steps[-1].turn.error or "")
    assert len(replay.requests) == 2


@pytest.mark.parametrize("api", ["openai-responses", "anthropic", "gemini"])
def test_every_wire_api_round_trips_a_parallel_turn(api: str) -> None:
    gemini = api == "gemini"
    turn = Turn(
        (
            Call(
                "echo",
                ('{"n": 1}',),
                None if gemini else "id_1",
                thought_signature=fake_signature("s") if gemini else None,
            ),
            Call("echo", ('{"n": 2}',), None if gemini else "id_2"),
        )
    )
    agent, replay = _agent([turn, ANSWER], [AgentTool(ECHO, lambda n: n * 10)], api=api)
    run = agent.run("go")
    assert run.stopped == "answered" and run.final_text == "done"
    view = wire_view(api, replay.requests[1].json, prefix=1)
    outputs = [r.content for r in view.results]
    if gemini:
        assert outputs == [{"output": 10}, {"output": 20}]
    else:
        assert [r.id for r in view.results] == ["id_1", "id_2"]
        assert outputs == ["10", "20"]


def test_agent_configuration_errors() -> None:
    model, _ = SdkModelClient.offline("openai-chat", [])
    with pytest.raises(ValueError, match="wire API"):
        Agent(model, [], target="anthropic")
    with pytest.raises(ValueError, match="share a name"):
        Agent(model, [AgentTool(ECHO, print), AgentTool(ECHO, print)])
    with pytest.raises(ValueError):
        AgentTool(ECHO, print, timeout=0)
    with pytest.raises(TypeError):
        AgentTool(ECHO, "print")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SdkModelClient("bedrock", object())
    deepseek = Agent(model, demo_tools(), target="deepseek")
    assert deepseek.target == "deepseek"


def test_a_failing_model_client_raises_agent_error() -> None:
    class Broken:
        api = "openai-chat"

        def stream(self, messages: Any, tool_params: Any) -> Any:
            raise OSError("no route")

    with pytest.raises(AgentError, match="no route"):
        Agent(Broken(), []).run("go")
