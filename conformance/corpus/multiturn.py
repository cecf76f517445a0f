"""The multi-turn cassettes of the offline demo: scripted model turns, and the writer that captures them.

Each ``MultiTurnScript`` is a conversation whose model side is written by hand, one ``Turn`` per
model response. ``write_multiturn_cassettes`` renders every response, runs the reference agent
against them offline (``reference_impl.demo``) and stores each request the real SDK sent beside
the response it got, so the committed cassettes are golden: ``tests/test_agent.py`` fails when a
regenerated one differs. Regenerate with ``python -m conformance.corpus.multiturn cassettes/multiturn``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from conformance.corpus.writer import dump_cassette
from conformance.corpus.written import expected_from_turn
from conformance.turns import Call, Reasoning, Text, Turn, fake_signature, render_sse
from conformance.wire import sdk_outcome
from reference_impl.agent import Agent, AgentRun, SdkModelClient
from reference_impl.demo import DEMO_PROMPT, DEMO_REQUEST_OPTIONS, DEMO_URLS, demo_tools
from reference_impl.frozen import thaw

__all__ = ["MULTITURN_SCRIPTS", "MultiTurnScript", "main", "multiturn_document", "write_multiturn_cassettes"]


@dataclass(frozen=True)
class MultiTurnScript:
    """A conversation the model side of which is written by hand: one ``Turn`` per model response."""

    name: str
    api: str
    description: str
    turns: tuple[Turn, ...]
    prompt: str = DEMO_PROMPT
    taxonomy: tuple[str, ...] = ()


def _weather_args(city: str = "Paris") -> tuple[str, ...]:
    return (f'{{"city": "{city}", ', '"unit": "celsius"}')


def _two_tools_script(api: str) -> MultiTurnScript:
    gemini = api == "gemini"
    reasoning: tuple[Any, ...] = ()
    if api == "anthropic":
        reasoning = (Reasoning(("The user wants two facts; ", "both tools can run at once."),
                               signature=fake_signature("multiturn-thinking-1")),)  # fmt: skip
    elif api == "openai-responses":
        reasoning = (Reasoning(("Two independent lookups: weather and local time.",)),)
    elif gemini:
        reasoning = (Reasoning(("Weather and time are independent; call both.",)),)
    calls = (
        Call(
            "get_weather",
            _weather_args(),
            None
            if gemini
            else {"anthropic": "toolu_01Wx8PqR4tYz", "openai-responses": "call_W7rKp2Xq"}.get(api, "call_W7rKp2Xq9Lm"),
            thought_signature=fake_signature("multiturn-call-1") if gemini else None,
        ),
        Call(
            "get_time",
            ('{"timezone": ', '"Europe/Paris"}'),
            None
            if gemini
            else {"anthropic": "toolu_01Tm3NvB6cDe", "openai-responses": "call_T4nVb8Cm"}.get(api, "call_T4nVb8Cm1Qz"),
        ),
    )
    first = Turn(
        (*reasoning, Text(("I'll check ", "both at once.")), *calls), extras={"gemini_calls_share_chunk": True}
    )
    answer = Turn((Text(("In Paris it is 18 °C and cloudy; ", "the local time is 14:05.")),))
    return MultiTurnScript(
        "weather_and_time",
        api,
        "Turn 1: reasoning, text and two parallel calls; turn 2: the answer built from both results.",
        (first, answer),
        taxonomy=("G01", "G02", "G06", "G07", "G08"),
    )


def _retry_script(api: str) -> MultiTurnScript:
    ids = {"anthropic": ("toolu_01Bad0Args", "toolu_01Good1Args"), "openai-responses": ("call_Bad0", "call_Good1")}
    bad_id, good_id = ids.get(api, ("call_Bad0Args", "call_Good1Args"))
    if api == "gemini":
        # Gemini sends whole argument objects: the model's mistake here is a tool that does not exist.
        first = Turn((Call("get_forecast", ('{"city": "Paris"}',), None),))
        retry = Turn((Call("get_weather", ('{"city": "Paris", "unit": "celsius"}',), None),))
        description = "Turn 1 calls an unknown tool (answered with an error), turn 2 retries correctly, turn 3 answers."
    else:
        first = Turn((Call("get_weather", ('{"city": "Paris", ', '"unit": "cels'), bad_id),))
        retry = Turn((Text(("Sorry, retrying.",)), Call("get_weather", _weather_args(), good_id)))
        description = (
            "Turn 1's call has truncated arguments (an error END, answered with an error result and replayed "
            "with {}), turn 2 retries with valid arguments, turn 3 answers."
        )
    answer = Turn((Text(("It is 18 °C and cloudy in Paris.",)),))
    return MultiTurnScript(
        "invalid_call_retry", api, description, (first, retry, answer), prompt="What's the weather in Paris?",
        taxonomy=("G04", "G06"),
    )  # fmt: skip


MULTITURN_SCRIPTS: tuple[MultiTurnScript, ...] = tuple(
    builder(api)
    for api in ("openai-chat", "openai-responses", "anthropic", "gemini")
    for builder in (_two_tools_script, _retry_script)
)


def _script_run(script: MultiTurnScript) -> tuple[list[bytes], AgentRun, list[Any]]:
    bodies = [render_sse(turn, script.api) for turn in script.turns]
    model, replay = SdkModelClient.offline(script.api, bodies, request_options=DEMO_REQUEST_OPTIONS.get(script.api))
    run = Agent(model, demo_tools()).run(script.prompt)
    return bodies, run, [request.json for request in replay.requests]


def multiturn_document(script: MultiTurnScript) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cassette (vcrpy format, one interaction per model call) and the last interaction's expectation."""
    bodies, run, requests = _script_run(script)
    if run.stopped != "answered" or len(requests) != len(bodies):
        raise RuntimeError(f"{script.api}/{script.name}: the reference agent did not finish the script ({run.stopped})")
    turns_metadata = []
    for turn in run.steps:
        turns_metadata.append(
            {
                "text": turn.turn.text,
                "tool_calls": [
                    {
                        "name": call.name,
                        "call_id": call.call_id,
                        "arguments": thaw(call.arguments) if call.valid else None,
                        "raw_arguments": call.raw_arguments,
                    }
                    for call in turn.turn.tool_calls
                ],
                "results_sent": [
                    {
                        "name": execution.call.name,
                        "call_id": execution.call.call_id,
                        "is_error": execution.result.is_error,
                    }
                    for execution in turn.executions
                ],
            }
        )

    last = script.turns[-1]
    expected = expected_from_turn(last, script.api)
    sdk = sdk_outcome(script.api, bodies[-1])
    expected.finish_reason = sdk.finish_reason
    metadata = {
        "origin": "written",
        "origin_note": (
            "model responses composed by conformance/corpus/multiturn.py (MULTITURN_SCRIPTS) to "
            "follow the documented wire "
            "format, not captured from a provider; each request body is what the real SDK sent when the reference "
            "agent ran offline against these responses"
        ),
        "kind": "multiturn",
        "api": script.api,
        "scenario": script.name,
        "description": script.description,
        "prompt": script.prompt,
        "taxonomy": list(script.taxonomy),
        "converter_options": {},
        "checked_with": {name: version(name) for name in ("openai", "anthropic", "google-genai", "httpx2")},
        "turns": turns_metadata,
        "expected_covers": "the last interaction (the one conformance.wire.load_body replays)",
    }
    interactions = [
        {
            "request": {
                "method": "POST",
                "uri": DEMO_URLS[script.api],
                "body": json.dumps(request, ensure_ascii=False, indent=2, sort_keys=True),
                "headers": {"content-type": ["application/json"]},
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["text/event-stream"]},
                "body": {"string": body.decode("utf-8")},
            },
        }
        for request, body in zip(requests, bodies, strict=True)
    ]
    document = {"toolcall_conformance": metadata, "interactions": interactions, "version": 1}
    expectation = {
        "source": "the last turn of the script (hand-checked), confirmed by the SDK's own stream accumulator",
        "expected": expected.to_json(),
    }
    if sdk.text != expected.text or [c.name for c in sdk.tool_calls] != [c.name for c in expected.tool_calls]:
        raise RuntimeError(f"{script.api}/{script.name}: the SDK accumulator disagrees with the script's last turn")
    return document, expectation


def write_multiturn_cassettes(directory: Path, scripts: Sequence[MultiTurnScript] = MULTITURN_SCRIPTS) -> list[Path]:
    """Render, run and write every script as ``<directory>/<api>/<name>.yaml`` (+ ``.expected.json``)."""
    written = []
    for script in scripts:
        document, expectation = multiturn_document(script)
        folder = directory / script.api
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{script.name}.yaml"
        path.write_text(dump_cassette(document), encoding="utf-8")
        expected_path = folder / f"{script.name}.expected.json"
        expected_path.write_text(json.dumps(expectation, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written += [path, expected_path]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m conformance.corpus.multiturn DIR``: regenerate the multi-turn cassettes under DIR."""
    parser = argparse.ArgumentParser(prog="python -m conformance.corpus.multiturn", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    paths = write_multiturn_cassettes(args.directory)
    print(f"wrote {len(paths) // 2} multi-turn cassettes under {args.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
