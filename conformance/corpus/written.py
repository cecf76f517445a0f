"""The bundled cassette corpus: the scenario definitions (``conformance.corpus.writer`` writes them).

Every scenario is a logical ``Turn`` written by hand (its tool calls, text and ending are the
hand-checked expectation) rendered into one wire API, optionally through OpenAI-compatible dialect
rewrites. ``write_corpus`` renders each one, replays it through the real SDK, folds it with the
SDK's own accumulator, and refuses to write a cassette whose SDK view disagrees with the
definition (for dialects the OpenAI accumulator is known to mishandle, the disagreement is
recorded in the metadata instead: the definition is then the only oracle).

Regenerate with ``python -m conformance.corpus cassettes``. These cassettes are *written*, not
recorded: their metadata says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn, fake_signature, split_evenly
from conformance.wire.outcome import (
    ExpectedToolCall,
    Outcome,
    decode_expected_arguments,
)

__all__ = ["API_URLS", "CORPUS", "CUT_ERROR", "SDK_ACCUMULATOR_MISHANDLES", "CorpusScenario", "expected_from_turn"]

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

# What the expectation says when a stream stops without its terminal event: the SDKs raise nothing
# (the connection just ends), so the definition says it; a converter must surface it (taxonomy F07).
CUT_ERROR = "incomplete: the stream ended without its terminal event"

API_URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1/models/gemini-test:streamGenerateContent?alt=sse",
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
    # Why the SDK's own accumulator cannot confirm this non-dialect scenario (the definition is then
    # the only oracle), e.g. it folds only argument deltas and the arguments come in .done alone.
    sdk_accumulator_mishandles: str = ""

    @property
    def folder(self) -> str:
        return "openai-compatible" if self.dialects or self.sse_comments else self.api


def expected_from_turn(turn: Turn, api: str) -> Outcome:
    """The hand-checked outcome of a scenario, straight from its definition."""
    outcome = Outcome(api)
    for item in turn.items:
        if isinstance(item, Call):
            outcome.tool_calls.append(
                ExpectedToolCall(item.name, item.call_id, decode_expected_arguments(item.arguments), item.arguments)
            )
        elif isinstance(item, Text):
            outcome.text += item.text
        elif isinstance(item, Reasoning):
            outcome.reasoning += item.text
        # A ServerCall ran at the provider: it is never a client tool call, text or reasoning.
    if turn.ending == "cut":
        outcome.error = CUT_ERROR
    return outcome


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


def _base_turns(api: str) -> list[tuple[str, Turn, str, tuple[str, ...]]]:
    ids = {
        "openai-chat": ("call_Q1w2E3r4T5y6", "call_A9s8D7f6G5h4"),
        "openai-responses": ("call_Rz1Rz1Rz1", "call_Rz2Rz2Rz2"),
        "anthropic": ("toolu_01AbCdEfGh", "toolu_01IjKlMnOp"),
        "gemini": ("g8c1su3s", "h2k9wq7e"),
    }[api]
    first, second = ids
    turns: list[tuple[str, Turn, str, tuple[str, ...]]] = [
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
    ]
    turns.append(
        (
            "stream_cut_after_arguments",
            Turn((_call("write_file", json.dumps({"path": "a.py", "content": "x = 1"}), first),), ending="cut"),
            "The connection ends after a call's complete arguments but before any finish signal: the turn is "
            "incomplete and the call, although its JSON parses, must not run.",
            ("F07",),
        )
    )
    if api != "gemini":
        # Gemini sends whole argument objects, so truncated argument text cannot occur on its wire.
        turns += [
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
    if api in ("openai-responses", "anthropic"):
        server = {"openai-responses": "ws_0", "anthropic": "srvtoolu_01WxYz"}[api]
        turns.append(
            (
                "server_tool_then_client_call",
                Turn(
                    (
                        ServerCall("web_search", split_evenly(json.dumps({"query": "weather Paris"}), 8), server),
                        Text(("Found a forecast; checking the live value.",)),
                        _call("get_weather", _WEATHER, first),
                    )
                ),
                "A provider-executed web search (server_tool_use / web_search_call and its result), then a "
                "client call: only the client call may come out.",
                ("A19",),
            )
        )
    if api == "anthropic":
        turns.append(
            (
                "usage_with_cache_tokens",
                Turn(
                    (Text(("Checking.",)), _call("get_weather", _WEATHER, first)),
                    extras={"anthropic_cache_tokens": (96, 2048)},
                ),
                "Prompt caching: message_start reports cache writes and reads beside input_tokens, and message_delta "
                "restates every count cumulatively; the usage is the last snapshot, never a sum.",
                ("F05",),
            )
        )
    if api == "openai-responses":
        turns.append(
            (
                "arguments_only_in_done",
                Turn((_call("get_weather", _WEATHER, first),), extras={"responses_arguments_only_in_done": True}),
                "No function_call_arguments.delta at all: the arguments come only in .done and output_item.done "
                "(Codex Spark, Copilot, LM Studio).",
                ("A15",),
            )
        )
    if api == "gemini":
        turns += [
            (
                "truncated_max_tokens",
                Turn((Text(("The forecast for the week: Monday ", "sunny, Tuesday")),), ending="length"),
                "finishReason MAX_TOKENS in the middle of the answer: the turn is truncated, not complete.",
                ("F06",),
            ),
            (
                "error_after_text",
                Turn((Text(("Checking",)),), ending="error"),
                "An in-band error object after some text.",
                ("F08",),
            ),
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
    return turns


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


# Base scenarios the SDK's accumulator cannot confirm: {(api, name): why}.
_SDK_MISHANDLES = {
    ("openai-responses", "arguments_only_in_done"): (
        "the Responses stream helper's running snapshot folds only function_call_arguments.delta, so it "
        "sees no arguments; they exist only in .done, output_item.done and response.completed"
    ),
    ("gemini", "restated_call_same_id"): (
        "google-genai has no stream accumulator and the plain fold of its parts counts every functionCall part, "
        "so it reads the restatement as a second call"
    ),
}


def _all() -> tuple[CorpusScenario, ...]:
    scenarios: list[CorpusScenario] = []
    for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        scenarios += [
            CorpusScenario(
                name,
                api,
                turn,
                description,
                quirks=quirks,
                sdk_accumulator_mishandles=_SDK_MISHANDLES.get((api, name), ""),
            )
            for name, turn, description, quirks in _base_turns(api)
        ]
    return tuple(scenarios + _dialect_scenarios())


CORPUS: tuple[CorpusScenario, ...] = _all()
