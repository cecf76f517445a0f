"""The ``openai`` and ``@anthropic-ai/sdk`` npm packages' tool runners at byte level, over the bridge.

Each column (``conformance.adapters.openai_node``, ``conformance.adapters.anthropic_node``) runs
briefly at profile dev on the bundled recordings; the failing recordings must be exactly the ones
listed here, each either a defect reproduced by a script under ``tests/repro_node_sdks/`` (exit 1
while the defect is present) or an input shape the adapter declares outside the SDK's target.
The hand-built bodies below check what runs, with expectations written from the bytes sent.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.adapters.anthropic_node import ADAPTER as ANTHROPIC_ADAPTER
from conformance.adapters.anthropic_node import open_stack_target as open_anthropic
from conformance.adapters.node import NODE_SDKS, NodeStackTarget
from conformance.adapters.openai_node import ADAPTER as OPENAI_ADAPTER
from conformance.adapters.openai_node import open_stack_target as open_openai
from conformance.stack import run_stack_conformance
from conformance.wire import bundled_cassette_dir
from tests.bridge_targets.node import NODE, ROOT, needs_node

REPRO_DIR = ROOT / "tests" / "repro_node_sdks"
# Recording -> the script showing what openai-node does with an input shape outside its target (not a
# defect: exit 1 and a `SHOWN:` line while the behaviour is there).
OPENAI_SHOWN = {
    "openai-chat/no_argument_call.yaml": "openai_empty_arguments_refused_by_json_parse.mjs",
    "openai-compatible/dialect_index_always_zero.yaml": "openai_calls_on_index_zero_are_merged.mjs",
    "openai-compatible/dialect_no_index.yaml": "openai_tool_deltas_without_index_raise.mjs",
    "openai-compatible/dialect_message_and_delta.yaml": (
        "openai_chunk_message_field_replaces_the_accumulated_message.mjs"
    ),
}
SHOWN_SCRIPTS = sorted(OPENAI_SHOWN.values())
# The defect reproductions: every other script of the folder (none at the pinned versions: each
# failing recording is outside the SDK's target; add a `DEFECT:` script and its test when one is not).
SCRIPTS = sorted(path.name for path in REPRO_DIR.glob("[a-z]*.mjs") if path.name not in SHOWN_SCRIPTS)

needs_node_sdks = pytest.mark.skipif(
    not all((NODE_SDKS / "node_modules" / name / "package.json").is_file() for name in ("openai", "@anthropic-ai/sdk")),
    reason="needs the Node SDKs installed: run `npm ci` in examples/bridge/node-sdks",
)

# Recording -> why it fails for openai-node (the pinned openai 7.59.0): its defect script, or "" when
# outside the SDK's target (ADAPTER.outside_target: arguments_empty, object_arguments, index_always_zero,
# no_index, message_and_delta, the last: a chunk choice's `message` field replaces the accumulated message).
OPENAI_FAILING = {
    "openai-compatible/dialect_message_and_delta.yaml": "",
    "openai-chat/no_argument_call.yaml": "",
    "openai-compatible/dialect_object_arguments.yaml": "",
    "openai-compatible/dialect_index_always_zero.yaml": "",
    "openai-compatible/dialect_no_index.yaml": "",
}


def failing_recordings(target: NodeStackTarget) -> set[str]:
    report = run_stack_conformance(
        target.stack, [bundled_cassette_dir()], capabilities=target.capabilities, profile="dev", seed=0, generated=0
    )
    split = next(r for r in report.results if r.check.id == "stack_byte_split_invariant")
    assert split.status == "passed" and split.examples_run >= 100
    outcome = next(r for r in report.results if r.check.id == "stack_outcome_matches")
    return set(outcome.failing_scenarios)


@pytest.fixture(scope="module")
def openai_target() -> Iterator[NodeStackTarget]:
    with open_openai() as target:
        yield target


@pytest.fixture(scope="module")
def anthropic_target() -> Iterator[NodeStackTarget]:
    with open_anthropic() as target:
        yield target


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def anthropic_body(stop_reason: str, *, stop: bool = True) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"city": '}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
    ]
    if stop:
        events.append({"type": "message_stop"})
    return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events)


@needs_node
@needs_node_sdks
def test_the_hellos_declare_the_adapters_capabilities(
    openai_target: NodeStackTarget, anthropic_target: NodeStackTarget
) -> None:
    assert openai_target.capabilities == OPENAI_ADAPTER.capabilities
    assert anthropic_target.capabilities == ANTHROPIC_ADAPTER.capabilities
    assert OPENAI_ADAPTER.version == "7.59.0" and ANTHROPIC_ADAPTER.version == "1.14.0"


@needs_node
@needs_node_sdks
def test_openai_node_fails_exactly_the_listed_recordings(openai_target: NodeStackTarget) -> None:
    assert failing_recordings(openai_target) == set(OPENAI_FAILING)
    for script in filter(None, OPENAI_FAILING.values()):
        assert script in SCRIPTS


@needs_node
@needs_node_sdks
def test_anthropic_node_fails_no_recording(anthropic_target: NodeStackTarget) -> None:
    assert failing_recordings(anthropic_target) == set()


@needs_node
@needs_node_sdks
def test_openai_runner_runs_a_finished_call_and_not_a_truncated_one(openai_target: NodeStackTarget) -> None:
    function = {"name": "get_weather", "arguments": '{"city": '}
    call = {"index": 0, "id": "call_1", "type": "function", "function": function}
    rest = {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}
    start = chat_chunk({"role": "assistant", "tool_calls": [call]})
    finished = sse(start, chat_chunk(rest), chat_chunk({}, "tool_calls"))
    result = openai_target.stack("openai-chat", [finished[:50], finished[50:]], {})
    assert [(c["call_id"], c["name"], c.get("arguments")) for c in result["calls"]] == [
        ("call_1", "get_weather", {"city": "Paris"})
    ]
    assert result["error"] is None and result["finish_reason"] == "tool_calls"
    truncated = sse(start, chat_chunk({}, "length"))
    result = openai_target.stack("openai-chat", [truncated], {})
    assert result["error"] is not None
    assert all("arguments" not in c for c in result["calls"])


@needs_node
@needs_node_sdks
def test_anthropic_runner_runs_only_a_tool_use_turn(anthropic_target: NodeStackTarget) -> None:
    result = anthropic_target.stack("anthropic", [anthropic_body("tool_use")], {})
    assert [(c["call_id"], c["name"], c.get("arguments")) for c in result["calls"]] == [
        ("toolu_1", "get_weather", {"city": "Paris"})
    ]
    assert result["error"] is None
    for body in (anthropic_body("max_tokens"), anthropic_body("tool_use", stop=False)):
        result = anthropic_target.stack("anthropic", [body], {})
        assert result["error"] is not None
        assert [c.get("arguments") for c in result["calls"]] == [None]


def test_there_is_a_reproduction_per_defect() -> None:
    assert {script for script in OPENAI_FAILING.values() if script} == set(SCRIPTS)
    for recording, script in OPENAI_SHOWN.items():
        assert OPENAI_FAILING[recording] == "" and (REPRO_DIR / script).is_file()
        assert recording.removesuffix(".yaml") in (REPRO_DIR / script).read_text(encoding="utf-8")


@needs_node
@needs_node_sdks
@pytest.mark.parametrize("script", SHOWN_SCRIPTS)
def test_the_reproduction_shows_the_behaviour(script: str) -> None:
    done = subprocess.run([str(NODE), script], cwd=REPRO_DIR, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "SHOWN: " in done.stdout, f"{script}:\n{done.stdout}\n{done.stderr}"


@needs_node
@needs_node_sdks
def test_run_stack_takes_a_node_column_factory(capsys: pytest.CaptureFixture[str]) -> None:
    # `run --stack conformance.adapters.anthropic_node:open_stack_target` was refused (exit 2: the
    # target it returns could not be called as a stack): a Node column now runs like any stack.
    from conformance.cli import main

    code = main(["run", "--stack", "conformance.adapters.anthropic_node:open_stack_target", "--profile", "dev"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 passed, 0 failed" in out and out.rstrip().endswith("CONFORMANT")
