"""The OpenAI-compatible dialects issue 18 asked for, rendered to bytes: the byte-level shape is there,
and the stream still says what the turn says (read by the real SDK's decoder and a faithful converter).

Expected calls come from the turn itself; the byte-level shapes are read by hand-picked JSON paths.
"""

from __future__ import annotations

import json

import pytest

from conformance.turns.model import Call, Text, Turn
from conformance.turns.render import render_body
from conformance.wire.bodies import Body
from conformance.wire.replay import replay_body
from conformance.wire.stream_shapes import chat_body_shapes

TURN = Turn(
    (
        Text(("Checking ",)),
        Call("get_weather", ('{"city": ', '"Oslo"}'), "call_w"),
        Call("get_time", ('{"tz": "UTC"}',), "call_t"),
    )
)


def _payloads(body: bytes) -> list[dict[str, object]]:
    lines = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ") and line != "data: [DONE]"]
    return [json.loads(line) for line in lines]


def _entries(payloads: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for p in payloads for c in p.get("choices", []) for e in (c["delta"].get("tool_calls") or [])]  # type: ignore[union-attr,index,attr-defined]


@pytest.mark.parametrize(
    ("dialect", "shown"),
    [
        ("no_index", lambda entries, _: all("index" not in e for e in entries)),
        ("null_index", lambda entries, _: all(e["index"] is None for e in entries)),
        ("entry_without_function", lambda entries, _: any("function" not in e and e.get("id") for e in entries)),
        ("null_content_first_chunk", lambda _, payloads: payloads[0]["choices"][0]["delta"]["content"] is None),
    ],
)
def test_a_dialect_shows_on_the_wire_and_changes_nothing_the_stream_says(dialect: str, shown: object) -> None:
    body = render_body(TURN, "openai-chat", (dialect,))
    payloads = _payloads(body)
    assert shown(_entries(payloads), payloads)  # type: ignore[operator]
    assert dialect in chat_body_shapes(payloads)
    outcome = replay_body(Body("openai-chat", body, f"<{dialect}>")).outcome
    calls = [(c.name, c.call_id, c.arguments) for c in outcome.tool_calls]
    assert calls == [("get_weather", "call_w", {"city": "Oslo"}), ("get_time", "call_t", {"tz": "UTC"})]
    assert outcome.text == "Checking "


@pytest.mark.parametrize(
    ("cassette", "shape"),
    [
        ("dialect_id_on_every_chunk", "id_restated"),
        ("dialect_name_restated", "name_restated"),
        ("dialect_empty_string_continuations", "empty_string_continuation_fields"),
        ("dialect_whole_call_per_chunk", "whole_call_per_chunk"),
        ("openrouter_sse_comments", "sse_comments"),
    ],
)
def test_a_restated_or_whole_call_is_read_from_the_bytes(cassette: str, shape: str) -> None:
    # The reference converter drops a restated id or name and an empty continuation field, so the
    # chunks it makes cannot show them: a finding on such a body named only arguments_fragmented.
    from conformance.wire import bundled_cassette_dir, load_body
    from conformance.wire.stream_shapes import recording_realism

    body = load_body(bundled_cassette_dir() / "openai-compatible" / f"{cassette}.yaml")
    assert shape in recording_realism(body).shapes


def test_a_new_id_on_an_index_is_a_new_call_not_a_restatement() -> None:
    payloads = _payloads(render_body(TURN, "openai-chat", ("index_always_zero",)))
    shapes = chat_body_shapes(payloads)
    assert "index_always_zero" in shapes
    assert not shapes & {"id_restated", "name_restated"}


def test_a_dialect_that_changes_no_byte_is_not_part_of_the_inputs_realism() -> None:
    # pydantic-ai: a finding was called theoretical for entry_without_function, drawn for a stream
    # the cut had left without any id-only delta: no byte was rendered that way.
    from conformance.wire.stream_shapes import stream_realism
    from reference_impl.types import ChunkResponse, ToolCallDelta

    whole = (ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "get_weather", "{}")]),)
    assert "entry_without_function" not in stream_realism(whole, frozenset({"entry_without_function"})).shapes
    id_only = (*whole, ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0")]))
    assert "entry_without_function" in stream_realism(id_only, frozenset({"entry_without_function"})).shapes
    text = (ChunkResponse(content="hi"),)
    shapes = stream_realism(text, frozenset({"no_index", "null_content_first_chunk"})).shapes
    assert "null_content_first_chunk" in shapes
    assert "no_index" not in shapes


def test_a_target_that_renders_bytes_never_saw_a_stream_without_its_terminal_chunk() -> None:
    # The wire renderer ends a normal stream with its finish chunk and [DONE]: a finding on a library
    # fed that way named NVIDIA NIM's missing terminal marker as part of its input.
    from conformance import Capabilities
    from conformance.handler.runner import _realism
    from conformance.handler.scenarios import ExpectedOutcome, Scenario
    from reference_impl.types import ChunkResponse, ToolCallDelta

    chunks = (ChunkResponse(tool_calls=[ToolCallDelta(0, "call_0", "get_weather", "{}")]),)
    scenario = Scenario("s", chunks, ExpectedOutcome(()))
    assert "no_terminal_marker" in _realism(chunks, scenario, Capabilities()).shapes
    assert "no_terminal_marker" not in _realism(chunks, scenario, Capabilities(wire_dialects=True)).shapes
