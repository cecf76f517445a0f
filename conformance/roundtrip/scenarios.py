"""Round-trip scenarios: a finished turn and its tool results, built per target (built-in and generated)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.turns import fake_signature
from reference_impl.followup import (
    FOLLOWUP_TARGETS,
    WIRE_API,
    FinishedTurn,
    ReasoningItem,
    TextItem,
    ToolCallItem,
    ToolResult,
)
from reference_impl.tools import ToolDefinition

__all__ = [
    "LIST_TASKS",
    "READ_FILE",
    "ROUNDTRIP_SCENARIOS",
    "SCENARIO_TOOLS",
    "TIME",
    "TOOLSET_FOR_SCHEMAS",
    "WEATHER",
    "RoundTripScenario",
    "builtin_scenarios",
    "random_scenarios",
]


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
READ_FILE = ToolDefinition(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_TASKS = ToolDefinition("list_tasks", "List open tasks (no arguments).")
SCENARIO_TOOLS = (WEATHER, TIME, READ_FILE, LIST_TASKS)

# Tool names that differ only in '-' vs '_' (G12): a sanitising formatter collides them.
TOOLSET_FOR_SCHEMAS = (
    WEATHER,
    TIME,
    ToolDefinition(
        "get-time",
        "Local time, another service (a distinct tool that a name sanitiser would merge with get_time).",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolDefinition(
        "search_docs",
        "Search the docs.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "filters": {
                    "type": "object",
                    "properties": {"lang": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                    "additionalProperties": False,
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["query"],
        },
    ),
    LIST_TASKS,
)


@dataclass(frozen=True)
class RoundTripScenario:
    """A finished turn and its results, for one target. ``results`` are in completion order."""

    name: str
    target: str
    description: str
    turn: FinishedTurn
    results: tuple[ToolResult, ...]
    tools: tuple[ToolDefinition, ...] = SCENARIO_TOOLS
    taxonomy: tuple[str, ...] = ()

    def output_of(self, call: ToolCallItem) -> ToolResult | None:
        for result in self.results:
            if result.call_key == call.key:
                return result
        return None


_SEGMENTS = iter(range(1, 1_000_000))


def _segment() -> str:
    return f"seg-rt-{next(_SEGMENTS)}"


def _provider_ids(target: str) -> bool:
    return target in ("openai-chat", "deepseek", "openai-responses", "anthropic", "bedrock-converse", "cohere-v2")


def _id_for(target: str, n: int, style: str = "plain") -> str | None:
    if style == "odd":  # G11: ids that must survive byte-exact
        return {
            "openai-chat": f"functions.read_file:{n}",
            "deepseek": f"call_0{n}_XyZ.a-b:{n}",
            "openai-responses": "call_" + "Lm9" * 18 + str(n),
            "anthropic": f"toolu_01{n}" + "AbCd" * 12,
            "gemini": f"functions.get_time:{n}",
            "ollama": f"call_{n}:ollama.v1",
            "bedrock-converse": f"tooluse_{n}" + "Xy-9_" * 10,
            "cohere-v2": f"read_file_{n}:" + "q7Lx.v2" * 6,
        }[target]
    if not _provider_ids(target):
        return None
    return {
        "openai-chat": f"call_{n}Qm7LxV2pT9rZ",
        "deepseek": f"call_0{n}_c4a8e1f0b2d3",
        "openai-responses": f"call_{n}Wx81KpQ0",
        "anthropic": f"toolu_01{n}XbR3mN8kQwE5",
        "bedrock-converse": f"tooluse_{n}Kq7LxV2pT9rZaB",
        "cohere-v2": f"get_weather_{n}q7lxv2pt9rza",
    }[target]


def _call(
    target: str,
    n: int,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    raw: str | None = None,
    error: str | None = None,
    signed: bool = False,
    id_style: str = "plain",
) -> ToolCallItem:
    call_id = _id_for(target, n, id_style)
    metadata: dict[str, Any] = {}
    if target == "openai-responses":
        metadata["item_id"] = f"fc_{n}68b2a9e0c1d4f5" + ("e7" * 12 if id_style == "odd" else "")
    if target == "gemini" and signed:
        metadata["thought_signature"] = fake_signature(f"call-{n}-{name}")
    text = raw if raw is not None else json.dumps(arguments, ensure_ascii=False)
    return ToolCallItem(
        name, call_id, arguments, raw_arguments=text, error=error, provider_metadata=metadata, segment_id=_segment()
    )


def _reasoning(target: str, n: int, text: str) -> ReasoningItem | None:
    """Reasoning as ``target`` streams it (None where the target replays none)."""
    if target in ("anthropic", "bedrock-converse"):
        return ReasoningItem(text, signature=fake_signature(f"thinking-{n}"))
    if target == "openai-responses":
        return ReasoningItem(
            text,
            provider_metadata={
                "item_id": f"rs_{n}68b2a9e0aa11",
                "summary": [text],
                "encrypted_content": fake_signature(f"encrypted-{n}") * 2,
            },
        )
    if target == "gemini":
        return ReasoningItem(text, signature=fake_signature(f"thought-{n}") if n > 1 else None)
    if target in ("deepseek", "ollama", "cohere-v2"):  # Cohere: the tool plan
        return ReasoningItem(text)
    return None


def _turn(target: str, *items: Any) -> FinishedTurn:
    return FinishedTurn(tuple(item for item in items if item is not None), api=WIRE_API[target])


def _parallel_out_of_order(target: str) -> RoundTripScenario:
    weather = _call(target, 1, "get_weather", {"city": "Paris", "unit": "celsius"}, signed=True)
    clock = _call(target, 2, "get_time", {"timezone": "Europe/Paris"})
    turn = _turn(target, _reasoning(target, 1, "Weather and time: two independent calls."),
                 TextItem("I'll look both up."), weather, clock)  # fmt: skip
    results = (ToolResult.ok(clock, "14:05 CET"), ToolResult.ok(weather, {"temp_c": 18, "sky": "cloudy"}))
    return RoundTripScenario(
        "parallel_results_out_of_order",
        target,
        "Two parallel calls; get_time finishes first. Results must follow in call order with exact ids.",
        turn,
        results,
        taxonomy=("G01", "G06", "G07"),
    )


def _interleaved_reasoning(target: str) -> RoundTripScenario:
    first = _call(target, 1, "read_file", {"path": "notes/todo.md"}, signed=True)
    second = _call(target, 2, "get_weather", {"city": "Zürich"})
    # Redacted thinking: Anthropic's opaque data; Bedrock's redactedContent bytes (base64 in the request JSON).
    redacted_data = {
        "anthropic": fake_signature("redacted") * 3,
        "bedrock-converse": fake_signature("redacted-reasoning"),
    }
    redacted = ReasoningItem(redacted_data=redacted_data[target]) if target in redacted_data else None
    text_signature = fake_signature("text-part") if target == "gemini" else None
    turn = _turn(
        target,
        _reasoning(target, 1, "Read the notes first."),
        TextItem("Reading your notes.", signature=text_signature),
        first,
        _reasoning(target, 2, "The notes mention Zürich; check its weather."),
        redacted,
        second,
    )
    results = (
        ToolResult.ok(first, "- pack for Zürich\n- 東京 in May ☕"),
        ToolResult.ok(second, {"temp_c": 4, "sky": "snow"}),
    )
    return RoundTripScenario(
        "interleaved_reasoning",
        target,
        "Reasoning, text and calls interleaved, with signatures; the block order and every signature must survive.",
        turn,
        results,
        taxonomy=("G07", "G08", "G09", "G10"),
    )


def _invalid_arguments(target: str) -> RoundTripScenario:
    good = _call(target, 1, "get_weather", {"city": "Oslo"})
    truncated = _call(
        target,
        2,
        "read_file",
        None,
        raw='{"path": "notes/to',
        error="truncated arguments: the JSON ends before the object is complete (at offset 18 of 18)",
    )
    doubled = _call(
        target, 3, "get_time", None, raw='{"timezone": "UTC"}{"timezone": "CET"}', error="extra data after the object"
    )
    turn = _turn(target, TextItem("Checking."), good, truncated, doubled)
    # The agent answered the doubled call itself; the truncated one is left to the formatter.
    results = (ToolResult.failure(doubled, "Error: two JSON objects in one call."), ToolResult.ok(good, "2 °C"))
    return RoundTripScenario(
        "invalid_arguments_answered",
        target,
        "One valid call and two invalid ones (truncated, two objects): all replayed with valid arguments, "
        "each invalid one answered with an error (one result synthesised by the formatter).",
        turn,
        results,
        taxonomy=("G04", "G06", "D03", "D08"),
    )


def _tool_only(target: str) -> RoundTripScenario:
    call = _call(target, 1, "list_tasks", {}, raw="")
    turn = _turn(target, call)
    return RoundTripScenario(
        "tool_only_no_arguments",
        target,
        "A turn with no text and one no-argument call (empty argument text): no empty text, arguments {}.",
        turn,
        (ToolResult.ok(call, []),),
        taxonomy=("G05", "D02"),
    )


def _odd_ids(target: str) -> RoundTripScenario:
    first = _call(target, 3, "read_file", {"path": "a.txt"}, id_style="odd")
    second = _call(target, 4, "get_time", {"timezone": "Asia/Tokyo"}, id_style="odd")
    turn = _turn(target, first, second)
    results = (ToolResult.ok(second, "08:00"), ToolResult.ok(first, "hello"))
    return RoundTripScenario(
        "provider_id_formats",
        target,
        "Ids with dots, colons and 60+ characters (Kimi functions.name:idx, long Responses ids): byte-exact.",
        turn,
        results,
        taxonomy=("G11", "G01"),
    )


def _same_tool_no_ids(target: str) -> RoundTripScenario:
    calls = [
        ToolCallItem(
            "get_weather", None, {"city": city}, raw_arguments=json.dumps({"city": city}), segment_id=_segment()
        )
        for city in ("Paris", "Tokyo")
    ]
    turn = _turn(target, TextItem("Two cities."), *calls)
    results = (ToolResult.ok(calls[1], "25 °C"), ToolResult.ok(calls[0], "18 °C"))
    return RoundTripScenario(
        "same_tool_twice_without_ids",
        target,
        "Two calls of one tool and no provider ids (the Gemini API's usual case): results pair by position.",
        turn,
        results,
        taxonomy=("G06", "B05"),
    )


_BUILDERS: tuple[Callable[[str], RoundTripScenario], ...] = (
    _parallel_out_of_order,
    _interleaved_reasoning,
    _invalid_arguments,
    _tool_only,
    _odd_ids,
    _same_tool_no_ids,
)


def builtin_scenarios(targets: Sequence[str] = FOLLOWUP_TARGETS) -> list[RoundTripScenario]:
    """Every built-in scenario for every target in ``targets``."""
    return [builder(target) for target in targets for builder in _BUILDERS]


ROUNDTRIP_SCENARIOS: tuple[RoundTripScenario, ...] = tuple(builtin_scenarios())


def random_scenarios(target: str, count: int, seed: int) -> list[RoundTripScenario]:
    """``count`` generated scenarios: 1-4 calls, random validity, signatures, id shapes and result order."""
    rng = random.Random(f"{seed}:{target}")
    scenarios = []
    names = ("get_weather", "get_time", "read_file", "list_tasks")
    for number in range(count):
        items: list[Any] = []
        calls: list[ToolCallItem] = []
        for position in range(rng.randint(1, 4)):
            if rng.random() < 0.4:
                items.append(_reasoning(target, position + 1, f"step {position} ünïcode ☕"))
            if rng.random() < 0.4:
                items.append(TextItem(rng.choice(["ok", "Let me see…", "東京"])))
            valid = rng.random() < 0.75
            name = rng.choice(names)
            arguments = {"q": rng.choice(["x", "Zürich", 'a"quote', ""]), "n": rng.randint(0, 9)} if valid else None
            call = _call(
                target,
                10 * number + position,
                name,
                arguments,
                raw=None if valid else rng.choice(['{"q": "x', "", "[1, 2]", "{}{}"]),
                error=None if valid else "invalid arguments",
                signed=position == 0,
                id_style=rng.choice(["plain", "odd"]),
            )
            calls.append(call)
            items.append(call)
        results = [
            ToolResult.ok(call, rng.choice(["done", {"rows": [1, 2]}, "☕"])) if call.valid
            else ToolResult.failure(call, "Error: refused")
            for call in calls
            if call.valid or rng.random() < 0.5
        ]  # fmt: skip
        rng.shuffle(results)
        scenarios.append(
            RoundTripScenario(
                f"generated_{seed}_{number}",
                target,
                "generated: random calls, validity, ids, signatures and completion order",
                _turn(target, *items),
                tuple(results),
                taxonomy=("G01", "G03", "G04", "G06", "G07", "G08"),
            )
        )
    return scenarios
