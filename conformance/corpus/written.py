"""The bundled cassette corpus: the scenario definitions (``conformance.corpus.writer`` writes them).

Every scenario is a logical ``Turn`` written by hand (its tool calls, text and ending are the
hand-checked expectation) rendered into one of the eight wire APIs, optionally through
OpenAI-compatible dialect rewrites, wherever the wire can express it (Ollama and Gemini send whole
calls: nothing to truncate or split). ``write_corpus`` renders each one, replays it through the
real SDK or client library, reads it with the SDK's own accumulator (or the stated plain fold of
a library that has none), and refuses to write a cassette whose reading disagrees with the
definition, except for the cases in ``conformance.corpus.exemptions``, one reviewed list, where
the SDK's reading differs in exactly the documented way.

Regenerate with ``python -m conformance.corpus cassettes``. These cassettes are *written*, not
recorded: their metadata says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.turns.expected import CUT_ERROR, INVALID_ARGUMENTS, expected_from_turn
from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn, fake_signature, split_evenly
from conformance.wire.apis import WIRE_APIS

__all__ = [
    "API_URLS",
    "CORPUS",
    "CUT_ERROR",
    "INVALID_ARGUMENTS",
    "SDK_ACCUMULATOR_MISHANDLES",
    "CorpusScenario",
    "expected_from_turn",
]

# Dialects whose rendering the OpenAI SDK's ChatCompletionStreamState folds wrongly or crashes on
# (measured: it concatenates restated names and ids, needs an integer index, reads snapshots as deltas).
SDK_ACCUMULATOR_MISHANDLES = frozenset(
    {
        "no_index",
        "index_always_zero",
        "null_continuations",
        "id_on_every_chunk",
        "name_restated",
        "cumulative_arguments",
        "object_arguments",
    }
)


API_URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1/models/gemini-test:streamGenerateContent?alt=sse",
    "ollama": "http://localhost:11434/api/chat",
    "bedrock-converse": "https://bedrock-runtime.us-east-1.amazonaws.com/model/model-under-test/converse-stream",
    "bedrock-invoke": "https://bedrock-runtime.us-east-1.amazonaws.com/model/model-under-test/invoke-with-response-stream",
    "cohere-v2": "https://api.cohere.com/v2/chat",
}


@dataclass(frozen=True)
class CorpusScenario:
    name: str
    api: str
    turn: Turn
    description: str
    dialects: tuple[str, ...] = ()
    quirks: tuple[str, ...] = ()  # taxonomy classes / QUIRKS.md items this reproduces
    sse_comments: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def folder(self) -> str:
        return "openai-compatible" if self.dialects or self.sse_comments else self.api

    @property
    def key(self) -> str:
        """``folder/name``: where the cassette lives under ``cassettes/``, and its key in the exemption list."""
        return f"{self.folder}/{self.name}"


# -- the scenarios ------------------------------------------------------------------------------

_WEATHER = json.dumps({"city": "Paris", "unit": "celsius"})
_TIME = json.dumps({"tz": "Europe/Oslo"})
_UNICODE = json.dumps({"q": 'Zürich ☕ 東京 🌦 "quoted" back\\slash', "tab": "a\tb", "emoji": "𝄞"}, ensure_ascii=True)
_UNICODE_RAW = json.dumps({"q": "Zürich ☕ 東京 🌦", "note": "naïve café"}, ensure_ascii=False)
_LONG = json.dumps(
    {"path": "notes/long.md", "content": "\n".join(f"line {n}: the quick brown fox" for n in range(120))}
)
_NESTED = json.dumps(
    {"filter": {"and": [{"field": "age", "gt": 30}, {"or": [{"tag": "a"}, {"tag": "b"}]}]}, "limit": 10}
)


def _call(name: str, args: str, call_id: str | None, size: int = 7, **extra: Any) -> Call:
    return Call(name, split_evenly(args, size), call_id, **extra)


_IDS = {
    "openai-chat": ("call_Q1w2E3r4T5y6", "call_A9s8D7f6G5h4"),
    "openai-responses": ("call_Rz1Rz1Rz1", "call_Rz2Rz2Rz2"),
    "anthropic": ("toolu_01AbCdEfGh", "toolu_01IjKlMnOp"),
    "gemini": ("g8c1su3s", "h2k9wq7e"),
    # ollama-python's ToolCall model keeps no id (the server sends one only in recent versions):
    # a converter fed by the library can never see one, so these calls have none.
    "ollama": (None, None),
    "bedrock-converse": ("tooluse_kR3mQ9xWv2LpT7", "tooluse_Zt8nB4cYh1DsF6"),
    "bedrock-invoke": ("toolu_bdrk_01AbCdEfGh", "toolu_bdrk_01IjKlMnOp"),
    "cohere-v2": ("call_7k2m9q4v1ps3", "call_3n8w5r2t6yb9"),
}
# Whole-call APIs: each call arrives complete (a JSON object), so argument text cannot be truncated,
# cut or streamed in fragments on their wire.
_WHOLE_CALLS = frozenset({"gemini", "ollama"})
# Base scenarios a wire cannot express: {api: names}. Ollama sends every call whole, as an object
# its server parsed: no fragments to split, no absent arguments (``{}``).
_NOT_EXPRESSIBLE = {
    "ollama": frozenset(
        {"no_argument_call", "long_arguments_many_deltas", "unicode_escapes_split", "raw_unicode_split"}
    )
}
_SERVER_TOOL_IDS = {"openai-responses": "ws_0", "anthropic": "srvtoolu_01WxYz", "bedrock-converse": "tooluse_srv01Nq",
                    "bedrock-invoke": "srvtoolu_bdrk_01Wx"}  # fmt: skip


def _base_turns(api: str) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    first, second = _IDS[api]
    turns = _common_turns(api, first, second)
    turns += _whole_call_endings(api) if api in _WHOLE_CALLS else _streamed_call_endings(first)
    if api in _SERVER_TOOL_IDS:
        turns.append(_server_tool(_SERVER_TOOL_IDS[api], first))
    if api in ("anthropic", "bedrock-invoke", "bedrock-converse"):
        turns.append(_cache_tokens(first))
    specific = _API_SPECIFIC.get(api)
    if specific is not None:
        turns += specific(first)
    skipped = _NOT_EXPRESSIBLE.get(api, frozenset())
    return [turn for turn in turns if turn[0] not in skipped]


def _common_turns(api: str, first: str | None, second: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "single_call",
            Turn((_call("get_weather", _WEATHER, first),)),
            "One call, arguments over several deltas.",
            ("D01",),
        ),
        (
            "parallel_two_tools",
            Turn((_call("get_weather", _WEATHER, first), _call("get_time", _TIME, second))),
            "Two different tools called in parallel.",
            ("A02", "B02"),
        ),
        (
            "same_tool_twice",
            Turn((_call("get_weather", _WEATHER, first), _call("get_weather", json.dumps({"city": "Oslo"}), second))),
            "The same tool twice in one turn; calls must not collapse by name.",
            ("A04", "B06"),
        ),
        (
            "no_argument_call",
            Turn((Call("list_files", ("",), first),)),
            "A call with no arguments at all means {}.",
            ("D02", "A12"),
        ),
        (
            "empty_object_arguments",
            Turn((Call("list_files", ("{}",), first),)),
            "Explicit {} arguments in one fragment.",
            ("D02",),
        ),
        (
            "long_arguments_many_deltas",
            Turn((_call("write_file", _LONG, first, size=9),)),
            "Long arguments over hundreds of deltas.",
            ("C07",),
        ),
        (
            "unicode_escapes_split",
            Turn((_call("search", _UNICODE, first, size=3),)),
            "\\u escapes, surrogate pairs and \\t split across deltas.",
            ("H05", "H06"),
        ),
        (
            "raw_unicode_split",
            Turn((_call("search", _UNICODE_RAW, first, size=2),)),
            "Raw multi-byte UTF-8 in arguments, split every two characters.",
            ("H02",),
        ),
        (
            "nested_arguments",
            Turn((_call("query", _NESTED, first, size=11),)),
            "Deeply nested object and array arguments.",
            (),
        ),
        (
            "text_before_and_after_call",
            Turn((Text(("Let me check ", "the weather.")), _call("get_weather", _WEATHER, first), Text(("Done.",)))),
            "Text, a call, then more text: segments must follow the wire.",
            ("C04",),
        ),
        (
            "reasoning_then_call",
            Turn(
                (
                    Reasoning(("The user wants ", "the weather in Paris."), signature=fake_signature("thinking")),
                    _call(
                        "get_weather",
                        _WEATHER,
                        first,
                        thought_signature=fake_signature("call") if api == "gemini" else None,
                    ),
                )
            ),
            "Reasoning (thinking / summary / thought parts) before the call.",
            ("C05", "G07", "G08"),
        ),
        (
            "text_only",
            Turn((Text(("Paris is ", "the capital ", "of France.")),)),
            "No tool call at all: nothing may be invented.",
            (),
        ),
        (
            "stream_cut_after_arguments",
            Turn((_call("write_file", json.dumps({"path": "a.py", "content": "x = 1"}), first),), ending="cut"),
            "The connection ends after a call's complete arguments but before any finish signal: the turn is "
            "incomplete and the call, although its JSON parses, must not run.",
            ("F07",),
        ),
    ]


def _streamed_call_endings(first: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "truncated_max_tokens",
            Turn(
                (
                    Text(("Writing the file.",)),
                    Call("write_file", ('{"path": "x.py", ', '"content": "def f():\\n'), first),
                ),
                ending="length",
            ),
            "Generation stopped by the token limit inside a call: it must not run.",
            ("F06", "D03"),
        ),
        (
            "error_event_mid_call",
            Turn((Text(("Working",)), Call("write_file", ('{"path": ', '"a.py"'), first)), ending="error"),
            "An in-band error event after HTTP 200, in the middle of a call.",
            ("F08",),
        ),
        (
            "stream_cut_mid_call",
            Turn((Call("write_file", ('{"path": "a.py", ', '"content": "x'), first),), ending="cut"),
            "The connection ends with no terminal event in the middle of a call.",
            ("F07",),
        ),
    ]


def _whole_call_endings(api: str) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    stop = "finishReason MAX_TOKENS" if api == "gemini" else "done_reason length"
    return [
        (
            "truncated_max_tokens",
            Turn((Text(("The forecast for the week: Monday ", "sunny, Tuesday")),), ending="length"),
            f"{stop} in the middle of the answer: the turn is truncated, not complete.",
            ("F06",),
        ),
        (
            "error_after_text",
            Turn((Text(("Checking",)),), ending="error"),
            "An in-band error object after some text.",
            ("F08",),
        ),
    ]


def _server_tool(server_id: str, first: str | None) -> tuple[str, Turn, str, tuple[str, ...]]:
    return (
        "server_tool_then_client_call",
        Turn(
            (
                ServerCall("web_search", split_evenly(json.dumps({"query": "weather Paris"}), 8), server_id),
                Text(("Found a forecast; checking the live value.",)),
                _call("get_weather", _WEATHER, first),
            )
        ),
        "A provider-executed tool (server_tool_use / web_search_call / Bedrock server toolUse, and its result), "
        "then a client call: only the client call may come out.",
        ("A19",),
    )


def _cache_tokens(first: str | None) -> tuple[str, Turn, str, tuple[str, ...]]:
    return (
        "usage_with_cache_tokens",
        Turn(
            (Text(("Checking.",)), _call("get_weather", _WEATHER, first)),
            extras={"anthropic_cache_tokens": (96, 2048)},
        ),
        "Prompt caching: cache writes and reads are reported beside the input tokens (Anthropic restates every "
        "count cumulatively in message_delta); the usage is the last snapshot, never a sum.",
        ("F05",),
    )


def _responses_only(first: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "arguments_only_in_done",
            Turn((_call("get_weather", _WEATHER, first),), extras={"responses_arguments_only_in_done": True}),
            "No function_call_arguments.delta at all: the arguments come only in .done and output_item.done "
            "(Codex Spark, Copilot, LM Studio).",
            ("A15",),
        )
    ]


def _ollama_only(_first: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "think_tags_in_content",
            Turn(
                (
                    Text(("<think>", "The user wants the weather.", "</think>", "Checking.")),
                    _call("get_weather", _WEATHER, None),
                )
            ),
            "A thinking model not asked to think streams <think>...</think> inside content (escaped \\u003c by Go): "
            "it stays text for the wire converter (telling it apart is a text parser's job), then a whole call.",
            ("C05",),
        )
    ]


def _cohere_only(first: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "reasoning_as_thinking_content",
            Turn(
                (Reasoning(("The user wants ", "the weather in Paris.")), _call("get_weather", _WEATHER, first)),
                extras={"cohere_thinking_content": True},
            ),
            "A reasoning model streams its thinking as a thinking content block (not a tool plan), then the call.",
            ("C05",),
        )
    ]


def _gemini_only(first: str | None) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    return [
        (
            "restated_call_same_id",
            Turn(
                (_call("get_weather", _WEATHER, first, thought_signature=fake_signature("call")),),
                extras={"gemini_restate_calls": True},
            ),
            "The complete call is sent again in a later chunk with the same id and no signature: one call.",
            ("B08", "G07"),
        ),
        (
            "parallel_calls_one_chunk",
            Turn(
                (
                    _call("get_weather", _WEATHER, None, thought_signature=fake_signature("batch")),
                    _call("get_weather", json.dumps({"city": "Rome"}), None),
                ),
                extras={"gemini_calls_share_chunk": True},
            ),
            "Two calls of one tool in one chunk, no ids (Gemini 2.5), signature only on the first.",
            ("A16", "A04", "G07"),
        ),
        (
            "usage_on_every_chunk",
            Turn(
                (
                    Reasoning(("Weather ", "in Paris.")),
                    Text(("Checking.",)),
                    _call("get_weather", _WEATHER, first, thought_signature=fake_signature("usage")),
                ),
                extras={"gemini_usage_every_chunk": True, "gemini_thoughts_tokens": 21},
            ),
            "Every chunk carries the running usageMetadata (cumulative, with thoughtsTokenCount): the usage is "
            "the last snapshot, never a sum.",
            ("F05", "G07"),
        ),
    ]


_API_SPECIFIC: dict[str, Callable[[str | None], list[tuple[str, Turn, str, tuple[str, ...]]]]] = {
    "openai-responses": _responses_only,
    "gemini": _gemini_only,
    "ollama": _ollama_only,
    "cohere-v2": _cohere_only,
}


def _dialect_scenarios() -> list[CorpusScenario]:
    pair = Turn(
        (
            Text(("Checking both.",)),
            _call("get_weather", _WEATHER, "call_dlA1"),
            _call("get_time", _TIME, "call_dlB2"),
        )
    )
    notes = {
        "no_index": ("Tool deltas carry no index (Mistral, Gemini's OpenAI endpoint).", ("A01",)),
        "index_always_zero": ("Every call on index 0 with changing ids (old Ollama, LiteLLM).", ("A02", "B01")),
        "empty_string_continuations": ("Continuations send id '' and name '' (DashScope, Volcengine).", ("A05",)),
        "null_continuations": ("Continuations send explicit nulls (Writer).", ("A05",)),
        "id_on_every_chunk": ("The id is repeated on every chunk (Bedrock via LiteLLM).", ("B03",)),
        "id_late": ("The id arrives on the call's last delta, not the first (DeepSeek V4, vLLM).", ("B04",)),
        "name_restated": ("The full name is restated on every chunk (MiniMax via NIM).", ("A06",)),
        "whole_call_per_chunk": ("Each call arrives whole in one chunk (xAI, Groq, Ollama).", ("B08", "C07")),
        "cumulative_arguments": ("Arguments are cumulative snapshots, not deltas (DeepSeek/Qianfan modes).", ("A09",)),
        "azure_empty_first_chunk": ("First chunk has choices: [] and blank id/model (Azure).", ("F04",)),
        "continuous_usage_stats": (
            "Every chunk carries the running usage, not only the last (vLLM continuous_usage_stats, SiliconFlow).",
            ("F03", "F05"),
        ),
        "finish_stop_with_tools": ("finish_reason 'stop' although tools were called (vLLM, Gemini compat).", ("F01",)),
        "tool_delta_with_finish": (
            "The last tool delta shares its chunk with finish_reason (Mistral, Ollama).",
            ("F02",),
        ),
        "message_and_delta": ("Each choice carries both message and delta (Writer).", ()),
    }
    scenarios = [
        CorpusScenario(f"dialect_{name}", "openai-chat", pair, description, (name,), quirks)
        for name, (description, quirks) in notes.items()
    ]
    scenarios += [
        CorpusScenario(
            "dialect_object_arguments",
            "openai-chat",
            pair,
            "Each call arrives whole with arguments as a JSON object, not a string (Ollama-style servers).",
            ("whole_call_per_chunk", "object_arguments"),
            ("A11",),
        ),
        CorpusScenario(
            "openrouter_sse_comments",
            "openai-chat",
            pair,
            "SSE comment lines (': OPENROUTER PROCESSING') before and between events.",
            quirks=("H03",),
            sse_comments=True,
        ),
        CorpusScenario(
            "deepseek_reasoning_content",
            "openai-chat",
            Turn(
                (Reasoning(("Need the ", "weather.")), Text(("\n\n",)), _call("get_weather", _WEATHER, "call_00_ds1"))
            ),
            "reasoning_content deltas, a blank content chunk, then the call (DeepSeek).",
            ("reasoning_content",),
            quirks=("C05", "G09"),
        ),
        CorpusScenario(
            "interleaved_parallel_calls",
            "openai-chat",
            Turn(
                (_call("get_weather", _WEATHER, "call_ilA", size=4), _call("get_time", _TIME, "call_ilB", size=4)),
                interleave_calls=True,
            ),
            "Argument deltas of two parallel calls interleaved (never seen in recordings; allowed by the format).",
            ("interleaved",),
            quirks=("B02",),
        ),
    ]
    return scenarios


def _all() -> tuple[CorpusScenario, ...]:
    scenarios: list[CorpusScenario] = []
    for api in WIRE_APIS:
        scenarios += [
            CorpusScenario(name, api, turn, description, quirks=quirks)
            for name, turn, description, quirks in _base_turns(api)
        ]
    return tuple(scenarios + _dialect_scenarios())


CORPUS: tuple[CorpusScenario, ...] = _all()
