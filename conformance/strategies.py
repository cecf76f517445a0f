"""Public hypothesis strategies for streaming tool calls.

Build your own properties from the same generators the suite uses::

    from hypothesis import given
    from conformance import strategies as tcs

    @given(tcs.scenarios())
    def test_my_handler(scenario):
        ...  # scenario.chunks to feed, scenario.expected to compare with

Layers, each usable on its own:

* ``argument_objects()``: JSON objects for tool arguments (unicode incl. astral characters and
  surrogate pairs, escapes, quotes and backslashes, deep nesting, big integers, empty objects);
* ``logical_turns()``: what the model "said" (text, reasoning, parallel calls) as a ``render.Turn``;
* ``scenarios()``: a turn as a ``ChunkResponse`` stream with its expected outcome, computed from
  the generated values (never from a handler);
* ``fragmentations(chunks)``: the same logical stream cut anywhere, with parallel calls
  interleaved, ids and names moved to later deltas, text and tool deltas sharing chunks;
* ``wire_bodies(api)`` / ``dialect_bodies()``: a turn rendered as a provider SSE body (OpenAI-compatible
  dialects included), and ``byte_splits(body)``: that body cut at arbitrary byte offsets;
* ``text_format_responses(fmt)``: prose and calls rendered in the xml / json / sentinel text formats.

All of them shrink towards short, plain inputs, so a failure is reported with the smallest split.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

from conformance.fragment import refragmented
from conformance.render import OPENAI_COMPAT_DIALECTS, Call, Reasoning, Text, Turn, render_sse
from conformance.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.text_formats import TEXT_FORMATS, render_call
from reference_impl.types import ChunkResponse, ToolCallDelta

__all__ = [
    "argument_objects",
    "byte_splits",
    "dialect_bodies",
    "fragmentations",
    "json_values",
    "logical_turns",
    "scenarios",
    "text_format_responses",
    "wire_bodies",
]

TOOL_NAMES = ("get_weather", "read_file", "search", "f", "do-it", "Run_Shell_Command2")

# Characters that break naive handling: quotes, backslashes, control characters, markers that look
# like closers, multi-byte and astral characters (surrogate pairs once escaped).
_TRICKY = st.sampled_from(['"', "\\", "\n", "\t", "\u2028", "}", "]", "</tool>", "[[SEG_END]]", "é", "東", "🌦", "𝄞"])
_TEXT = st.one_of(st.text(max_size=12), _TRICKY, st.lists(_TRICKY, max_size=4).map("".join))


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value: strings with tricky characters, big and small numbers, nesting."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        _TEXT,
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)),
        max_leaves=max_leaves,
    )


def argument_objects() -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects as tool arguments, including {} and deeply nested ones."""
    nested = st.integers(1, 60).map(_nest)
    return st.one_of(st.just({}), st.dictionaries(_TEXT, json_values(), max_size=5), nested)


def _nest(depth: int) -> dict[str, Any]:
    value: Any = "bottom"
    for level in range(depth):
        value = {"level": level, "next": value} if level % 2 else [value]
    return {"deep": value}


@st.composite
def _argument_text(draw: st.DrawFn, arguments: dict[str, Any]) -> str:
    ensure_ascii = draw(st.booleans())
    separators = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    return json.dumps(arguments, ensure_ascii=ensure_ascii, separators=separators)


def _pieces(text: str) -> st.SearchStrategy[tuple[str, ...]]:
    if not text:
        return st.just(("",))
    return st.lists(st.integers(0, len(text)), max_size=8).map(
        lambda cuts: tuple(text[a:b] for a, b in itertools.pairwise([0, *sorted(cuts), len(text)]))
    )


@st.composite
def logical_turns(draw: st.DrawFn, *, max_items: int = 6, with_reasoning: bool = True) -> Turn:
    """A model turn: text, reasoning and tool calls in order (call ids unique, sometimes absent)."""
    kinds = ["text", "call"] + (["reasoning"] if with_reasoning else [])
    items: list[Text | Reasoning | Call] = []
    for position in range(draw(st.integers(0, max_items))):
        kind = draw(st.sampled_from(kinds))
        if kind == "call":
            arguments_text = draw(_argument_text(draw(argument_objects())))
            call_id = draw(st.one_of(st.none(), st.just(f"call_{position}")))
            items.append(Call(draw(st.sampled_from(TOOL_NAMES)), draw(_pieces(arguments_text)), call_id))
        else:
            text = draw(st.text(min_size=1, max_size=20))
            pieces = draw(_pieces(text))
            items.append(Text(pieces) if kind == "text" else Reasoning(pieces))
    return Turn(tuple(items))


def turn_to_chunks(turn: Turn) -> list[ChunkResponse]:
    """A turn as the ``ChunkResponse`` stream a correct converter would produce."""
    chunks: list[ChunkResponse] = []
    index = 0
    for item in turn.items:
        if isinstance(item, Call):
            deltas = [ToolCallDelta(index, item.call_id, item.name, item.argument_pieces[0] or None)]
            deltas += [ToolCallDelta(index, arguments_delta=piece) for piece in item.argument_pieces[1:] if piece]
            chunks += [ChunkResponse(tool_calls=[delta]) for delta in deltas]
            index += 1
        elif isinstance(item, Text):
            chunks += [ChunkResponse(content=piece) for piece in item.pieces if piece]
        elif isinstance(item, Reasoning):
            chunks += [ChunkResponse(reasoning=piece) for piece in item.pieces if piece]
    return chunks


def turn_outcome(turn: Turn) -> ExpectedOutcome:
    """The expected outcome, from the turn's own values (independent of any handler)."""
    calls = []
    for item in turn.items:
        if isinstance(item, Call):
            arguments = json.loads(item.arguments) if item.arguments.strip() else {}
            calls.append(ExpectedCall(item.name, item.call_id, arguments, item.arguments))
    text = "".join(item.text for item in turn.items if isinstance(item, Text))
    reasoning = "".join(item.text for item in turn.items if isinstance(item, Reasoning))
    return ExpectedOutcome(tuple(calls), text, reasoning)


def scenarios(*, max_items: int = 6, with_reasoning: bool = True) -> st.SearchStrategy[Scenario]:
    """Generated scenarios: a logical turn as chunks, with its expected outcome."""
    return logical_turns(max_items=max_items, with_reasoning=with_reasoning).map(
        lambda turn: Scenario("generated", tuple(turn_to_chunks(turn)), turn_outcome(turn), source="generated")
    )


def fragmentations(chunks: list[ChunkResponse]) -> st.SearchStrategy[list[ChunkResponse]]:
    """The same logical stream re-cut anywhere (see ``conformance.fragment``)."""
    return refragmented(chunks)


def wire_bodies(api: str) -> st.SearchStrategy[bytes]:
    """A generated turn rendered as ``api``'s SSE body (Gemini needs valid arguments: it has no deltas)."""
    return logical_turns().map(lambda turn: render_sse(turn, api))


@st.composite
def dialect_bodies(draw: st.DrawFn) -> tuple[Turn, tuple[str, ...], bytes]:
    """A turn rendered for an OpenAI-compatible server with a random set of wire quirks."""
    turn = draw(logical_turns())
    dialects = tuple(draw(st.lists(st.sampled_from(sorted(OPENAI_COMPAT_DIALECTS)), max_size=3, unique=True)))
    return turn, dialects, render_sse(turn, "openai-chat", dialects)


@st.composite
def byte_splits(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """``body`` cut at arbitrary byte offsets (inside UTF-8 sequences, inside ``\\n\\n``; empty pieces too)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=30)))
    pieces = [body[a:b] for a, b in itertools.pairwise([0, *cuts, len(body)])]
    if draw(st.booleans()):
        pieces.insert(draw(st.integers(0, len(pieces))), b"")
    return pieces


@st.composite
def text_format_responses(draw: st.DrawFn, fmt: str) -> tuple[str, list[tuple[str, dict[str, Any]]], str]:
    """(full text, calls as (name, arguments), prose outside the calls) in a text format.

    xml values are strings, so xml calls get string-valued arguments.
    """
    if fmt not in TEXT_FORMATS:
        raise ValueError(f"unknown text format {fmt!r}; expected one of {', '.join(TEXT_FORMATS)}")
    prose_alphabet = st.characters(exclude_characters="<[{`&\\", exclude_categories=["Cs"])
    parts: list[str] = []
    prose: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            text = draw(st.text(prose_alphabet, max_size=20))
            parts.append(text)
            prose.append(text)
        else:
            name = draw(st.sampled_from(TOOL_NAMES))
            values = st.text(prose_alphabet, max_size=10) if fmt == "xml" else json_values(6)
            arguments = draw(st.dictionaries(st.text(prose_alphabet, min_size=1, max_size=8), values, max_size=3))
            parts.append(render_call(fmt, name, arguments))
            calls.append((name, arguments))
    return "".join(parts), calls, "".join(prose)
