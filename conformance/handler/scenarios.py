"""Logical scenarios: a chunk sequence plus an outcome checked by hand, independent of any handler.

A ``Scenario``'s ``expected`` is written from the wire data (what the provider sent), never by
running a handler. The built-in scenarios below each reproduce one bug class of the taxonomy at
the ``ChunkResponse`` level; cassette-backed scenarios arrive through ``conformance.cassettes``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reference_impl.types import ChunkResponse, StreamError, ToolCallDelta

__all__ = ["BUILTIN_SCENARIOS", "ExpectedCall", "ExpectedOutcome", "Scenario"]


@dataclass(frozen=True)
class ExpectedCall:
    """One tool call the stream contains, in wire order. ``arguments`` is None when the call must not run.

    Calls that share one wire index with different provider ids carry the same ``conflict_group``:
    each may run as itself (as described here) or not run and be answered by an error (its own
    error END, or one error for the whole index); merging them or losing one silently is wrong.
    """

    name: str | None
    call_id: str | None
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    conflict_group: int | None = None

    @property
    def valid(self) -> bool:
        return self.arguments is not None

    @property
    def null_arguments(self) -> bool:
        """The provider sent ``null`` as the arguments: rejecting the call and running it with {} both conform.

        (``null`` is how some providers say "no arguments"; taxonomy A12 and policy 5 of its appendix 4.)
        """
        return self.arguments is None and self.raw_arguments.strip() == "null"


@dataclass(frozen=True)
class ExpectedOutcome:
    """What the stream says, written from the wire data: its calls in wire order, its text and reasoning."""

    tool_calls: tuple[ExpectedCall, ...] = ()
    text: str = ""
    reasoning: str = ""

    def describe(self) -> str:
        """``get_weather({'city': 'Paris'}) id='call_1'; text 'Hi'``: the outcome on one line."""
        calls = [
            f"{c.name}({c.arguments if c.valid else 'ERROR: ' + repr(c.raw_arguments)}) id={c.call_id!r}"
            for c in self.tool_calls
        ]
        return ("; ".join(calls) or "no tool calls") + (f"; text {self.text!r}" if self.text else "")


@dataclass(frozen=True)
class Scenario:
    """A named chunk sequence with its hand-checked outcome. ``source`` says where it came from."""

    name: str
    chunks: tuple[ChunkResponse, ...]
    expected: ExpectedOutcome
    description: str = ""
    source: str = "built-in"
    tags: frozenset[str] = field(default_factory=frozenset)
    # How the stream is rendered on an OpenAI-compatible Chat Completions wire, for targets that read
    # one (``Capabilities.wire_dialects``): byte-level shapes of ``conformance.wire.shapes`` such as
    # ``no_index``. They change the bytes, never what the stream says.
    wire_dialects: frozenset[str] = field(default_factory=frozenset)

    def __repr__(self) -> str:
        # In the suite's chunk notation, not a 25-line dataclass dump: what hypothesis prints for a
        # falsifying example (``Falsifying example: test(scenario=...)``) and what a failure shows.
        from conformance.handler.fragment import describe_chunks

        return (
            f"Scenario({self.name!r} ({self.source}): {describe_chunks(self.chunks)}; "
            f"expected: {self.expected.describe()})"
        )

    @property
    def needs(self) -> frozenset[str]:
        """The capabilities a target must have for this scenario to apply (from its content and tags)."""
        needed = set(self.tags)
        if any(chunk.reasoning for chunk in self.chunks):
            needed.add("reasoning")
        if any(chunk.error is not None for chunk in self.chunks):
            needed.add("stream_errors")
        if any(len({d.index for d in chunk.tool_calls or ()}) < len(chunk.tool_calls or ()) for chunk in self.chunks):
            needed.add("several_deltas_per_chunk")
        return frozenset(needed)

    @property
    def abnormal(self) -> bool:
        """The stream ends abnormally (``ChunkResponse.error``): none of its calls may run (rule R13)."""
        return any(chunk.error is not None for chunk in self.chunks)


def _tc(index: int, call_id: str | None = None, name: str | None = None, args: str | None = None) -> ChunkResponse:
    return ChunkResponse(tool_calls=[ToolCallDelta(index, call_id, name, args)])


def _split(text: str, *cuts: int) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _call(index: int, call_id: str | None, name: str, args_text: str, cuts: Sequence[int]) -> list[ChunkResponse]:
    pieces = _split(args_text, *cuts)
    first = [_tc(index, call_id, name, pieces[0])]
    return first + [_tc(index, args=piece) for piece in pieces[1:]]


_WEATHER = json.dumps({"city": "Paris", "unit": "celsius"})
_UNICODE = json.dumps({"q": 'naïve café ☕ 𝄞 "quoted" \\ back', "n": 12345678901234567890}, ensure_ascii=True)

BUILTIN_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "single_call_split_args",
        tuple(_call(0, "call_1", "get_weather", _WEATHER, (3, 11, 20))),
        ExpectedOutcome((ExpectedCall("get_weather", "call_1", {"city": "Paris", "unit": "celsius"}),)),
        "One call whose arguments arrive in four pieces (INV-CONCAT, D01).",
    ),
    Scenario(
        "text_then_two_parallel_calls_interleaved",
        (
            ChunkResponse(content="Let me check "),
            ChunkResponse(content="both."),
            _tc(0, "call_a", "get_weather", '{"city"'),
            _tc(1, "call_b", "get_time", '{"tz": '),
            _tc(0, args=': "Oslo"}'),
            _tc(1, args='"UTC"}'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("get_weather", "call_a", {"city": "Oslo"}),
                ExpectedCall("get_time", "call_b", {"tz": "UTC"}),
            ),
            text="Let me check both.",
        ),
        "Parallel calls whose deltas interleave (B02, INV-INTERLEAVE).",
    ),
    Scenario(
        "unicode_escapes_split_inside_escape",
        tuple(_call(0, "call_u", "search", _UNICODE, (9, 10, 14, 40, 41))),
        ExpectedOutcome(
            (ExpectedCall("search", "call_u", json.loads(_UNICODE)),),
        ),
        "\\u escapes and a surrogate pair split across deltas; a big integer (H05, H06).",
    ),
    Scenario(
        "late_id_and_late_name",
        (
            _tc(0, args='{"path": '),
            _tc(0, name="read_"),
            _tc(0, name="file", call_id="call_late", args='"a.py"}'),
        ),
        ExpectedOutcome((ExpectedCall("read_file", "call_late", {"path": "a.py"}),)),
        "Arguments before the name, the name in two pieces, the id on the last delta (A07, A08, B04).",
    ),
    Scenario(
        "empty_id_and_name_on_continuations",
        (
            _tc(0, "call_e", "lookup", '{"k"'),
            _tc(0, "", "", ': "v"}'),
        ),
        ExpectedOutcome((ExpectedCall("lookup", "call_e", {"k": "v"}),)),
        "Continuation deltas with '' id and name must not overwrite (A05).",
    ),
    Scenario(
        "name_restated_every_chunk",
        (
            _tc(0, "call_r", "get_weather", '{"city":'),
            _tc(0, "call_r", "get_weather", ' "Rome"}'),
        ),
        ExpectedOutcome((ExpectedCall("get_weather", "call_r", {"city": "Rome"}),)),
        "The full name and id restated on each chunk (A06).",
    ),
    Scenario(
        "no_argument_call",
        (_tc(0, "call_n", "list_files", ""), ChunkResponse(content="", is_complete=True)),
        ExpectedOutcome((ExpectedCall("list_files", "call_n", {}),)),
        "A call with empty arguments means {} (D02).",
    ),
    Scenario(
        "truncated_arguments_are_rejected",
        tuple(_call(0, "call_t", "ui_show", '{"surface_type": "card", "data": ', (5,))),
        ExpectedOutcome(
            (ExpectedCall("ui_show", "call_t", None, '{"surface_type": "card", "data": '),),
        ),
        "Truncated JSON must never become {} (D03).",
    ),
    Scenario(
        "two_objects_in_one_buffer_rejected",
        (_tc(0, "call_m", "lookup", '{"entity":"A"}{"entity":"B"}'),),
        ExpectedOutcome((ExpectedCall("lookup", "call_m", None, '{"entity":"A"}{"entity":"B"}'),)),
        "Several JSON values in one call are neither merged nor half-kept (D08).",
    ),
    Scenario(
        "non_object_arguments_rejected",
        (_tc(0, "call_l", "f", "[1, 2]"),),
        ExpectedOutcome((ExpectedCall("f", "call_l", None, "[1, 2]"),)),
        "A JSON array is not an arguments object (D05).",
    ),
    Scenario(
        "reasoning_then_text_then_call_then_text",
        (
            ChunkResponse(reasoning="The user wants "),
            ChunkResponse(reasoning="the weather."),
            ChunkResponse(content="Checking."),
            _tc(0, "call_w", "get_weather", '{"city": "Lima"}'),
            ChunkResponse(content=" Done."),
        ),
        ExpectedOutcome(
            (ExpectedCall("get_weather", "call_w", {"city": "Lima"}),),
            text="Checking. Done.",
            reasoning="The user wants the weather.",
        ),
        "Text after a tool call opens a new segment; order follows the wire (C04, C05).",
    ),
    Scenario(
        "same_tool_twice_same_provider_id",
        (
            _tc(0, "call_dup", "ping", '{"n": 1}'),
            _tc(1, "call_dup", "ping", '{"n": 2}'),
        ),
        ExpectedOutcome(
            (ExpectedCall("ping", "call_dup", {"n": 1}), ExpectedCall("ping", "call_dup", {"n": 2})),
        ),
        "Two calls sharing a provider id stay two calls (B06).",
    ),
    Scenario(
        "truncated_by_max_tokens",
        (
            _tc(0, "call_x", "write_file", '{"path": "x.py", "content": "def f():\\n'),
            ChunkResponse(finish_reason="length", error=StreamError("truncated", "finish_reason=length")),
        ),
        ExpectedOutcome(
            (ExpectedCall("write_file", "call_x", None, '{"path": "x.py", "content": "def f():\\n'),),
        ),
        "A stream cut by max tokens never executes the open call (F06).",
    ),
    Scenario(
        "error_after_parsable_arguments",
        (
            _tc(0, "call_p", "delete_rows", '{"table": "users"'),
            _tc(0, args="}"),
            ChunkResponse(error=StreamError("provider_error", "overloaded_error: Overloaded")),
        ),
        ExpectedOutcome((ExpectedCall("delete_rows", "call_p", None, '{"table": "users"}'),)),
        "The stream fails after arguments that happen to parse: the interrupted turn must not run (F07, F08).",
    ),
    Scenario(
        "content_and_tool_delta_in_one_chunk",
        (
            ChunkResponse(content="Sure: ", tool_calls=[ToolCallDelta(0, "call_c", "calc", '{"x": 1')]),
            ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta="}")], is_complete=True),
        ),
        ExpectedOutcome((ExpectedCall("calc", "call_c", {"x": 1}),), text="Sure: "),
        "Text and a tool delta share a chunk; the terminal chunk carries the last delta (F02).",
    ),
    Scenario(
        "call_without_any_id",
        (
            ChunkResponse(content="Let me look."),
            _tc(0, name="search", args='{"q": '),
            _tc(0, args='"tides"}'),
        ),
        ExpectedOutcome((ExpectedCall("search", None, {"q": "tides"}),), text="Let me look."),
        "A provider that sends no call id at all (Gemini 2.5): the call must still run once (B05).",
    ),
    Scenario(
        "name_never_arrives",
        (_tc(0, "call_nameless", None, '{"a": 1}'),),
        ExpectedOutcome((ExpectedCall(None, "call_nameless", None, '{"a": 1}'),)),
        "A call whose name never arrives is reported as an error, not dropped and not run.",
    ),
    Scenario(
        "conflicting_ids_on_one_index",
        (
            _tc(0, "call_1", "add", '{"a": 1}'),
            _tc(0, "call_2", "mul", '{"b": 2}'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("add", "call_1", {"a": 1}, '{"a": 1}', conflict_group=0),
                ExpectedCall("mul", "call_2", {"b": 2}, '{"b": 2}', conflict_group=0),
            )
        ),
        "A second id on an occupied index is a new call or a protocol error, never a silent merge (B01).",
    ),
    Scenario(
        "second_id_after_a_no_argument_call_on_its_index",
        (
            _tc(0, "call_0", "f", ""),
            _tc(0, "call_1", "g", '{"a": 1}'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("f", "call_0", {}, "", conflict_group=0),
                ExpectedCall("g", "call_1", {"a": 1}, '{"a": 1}', conflict_group=0),
            )
        ),
        "A no-argument call, then a second id on its index: merged, the arguments still parse, so only the id "
        "change tells the calls apart (B01; Ollama sends every call on index 0).",
    ),
    Scenario(
        "every_parallel_call_on_index_zero",
        (
            _tc(0, "call_w", "get_weather", '{"city": '),
            _tc(0, args='"Oslo"}'),
            _tc(0, "call_t", "get_time", '{"tz": '),
            _tc(0, args='"UTC"}'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("get_weather", "call_w", {"city": "Oslo"}, '{"city": "Oslo"}', conflict_group=0),
                ExpectedCall("get_time", "call_t", {"tz": "UTC"}, '{"tz": "UTC"}', conflict_group=0),
            )
        ),
        "Servers that put every parallel call on index 0 with distinct ids (A02, B01): never run f({}) and lose g.",
    ),
    Scenario(
        "sparse_indices",
        (
            _tc(1, "call_a", "get_weather", '{"city": "Rome"}'),
            _tc(3, "call_b", "get_time", '{"tz": "CET"}'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("get_weather", "call_a", {"city": "Rome"}, '{"city": "Rome"}'),
                ExpectedCall("get_time", "call_b", {"tz": "CET"}, '{"tz": "CET"}'),
            )
        ),
        "Indices that start at 1 and skip numbers (Anthropic block / Responses output indices leaked: A03).",
    ),
    Scenario(
        "later_calls_streamed_too",
        (
            *_call(0, "call_1", "write_file", '{"path": "a.py", "content": "x = 1"}', (9, 20)),
            *_call(1, "call_2", "write_file", '{"path": "b.py", "content": "y = 2"}', (9, 20)),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("write_file", "call_1", {"path": "a.py", "content": "x = 1"}),
                ExpectedCall("write_file", "call_2", {"path": "b.py", "content": "y = 2"}),
            )
        ),
        "Every call's arguments stream as they arrive, not only the first call's (C07).",
    ),
    Scenario(
        "idless_call_then_call_with_id_then_text_and_reasoning",
        (
            _tc(0, None, "get_weather", "{}"),
            _tc(1, "call_1", "get_weather", "{}"),
            ChunkResponse(content="00"),
            ChunkResponse(reasoning="0"),
        ),
        ExpectedOutcome(
            (ExpectedCall("get_weather", None, {}, "{}"), ExpectedCall("get_weather", "call_1", {}, "{}")),
            text="00",
            reasoning="0",
        ),
        "A call without an id (Gemini-style servers) before one with an id, then text and reasoning: each call "
        "starts once, in wire order, and is never announced under the other's position (openai-agents).",
    ),
    Scenario(
        "text_and_reasoning_inside_an_open_call",
        (
            _tc(0, "call_s", "search", '{"q": '),
            ChunkResponse(reasoning="thinking aloud"),
            ChunkResponse(content="(one moment)"),
            _tc(0, args='"tides"}'),
        ),
        ExpectedOutcome(
            (ExpectedCall("search", "call_s", {"q": "tides"}, '{"q": "tides"}'),),
            text="(one moment)",
            reasoning="thinking aloud",
        ),
        "Reasoning and text arrive between two deltas of an open call; the call still completes (C05).",
    ),
    Scenario(
        "no_argument_call_then_streamed_calls",
        (
            _tc(0, None, "read_theme", None),
            *_call(1, None, "set_color", '{"color": "red"}', (5,)),
            *_call(2, None, "set_color", '{"color": "blue"}', (5,)),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("read_theme", None, {}),
                ExpectedCall("set_color", None, {"color": "red"}),
                ExpectedCall("set_color", None, {"color": "blue"}),
            )
        ),
        "A complete no-argument call, then streamed calls (Gemini): calls keep wire order (R10, G06, G07).",
    ),
    Scenario(
        "length_cut_after_parsable_arguments",
        (
            _tc(0, "call_d", "delete_rows", '{"table": "users"}'),
            ChunkResponse(finish_reason="length", error=StreamError("truncated", "finish_reason=length")),
        ),
        ExpectedOutcome((ExpectedCall("delete_rows", "call_d", None, '{"table": "users"}'),)),
        "The token limit cut the turn after arguments that happen to parse: the turn is incomplete (F06).",
    ),
    Scenario(
        "non_object_json_arguments_rejected",
        (
            _tc(0, "call_n", "f", "null"),
            _tc(1, "call_s", "g", '"just a string"'),
        ),
        ExpectedOutcome(
            (
                ExpectedCall("f", "call_n", None, "null"),
                ExpectedCall("g", "call_s", None, '"just a string"'),
            )
        ),
        "null and a JSON string are valid JSON but not an arguments object (D05, A12).",
    ),
)
