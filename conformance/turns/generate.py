"""Hypothesis generators for logical turns and what renders from them (wire bodies, byte splits, text formats).

The implementation behind the public ``conformance.strategies`` namespace; every value is
generated from scratch, so expectations computed from it never come from code under test.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.turns.render import render_sse
from conformance.turns.text_formats import TEXT_FORMATS, render_call

__all__ = [
    "TOOL_NAMES",
    "argument_objects",
    "byte_splits",
    "dialect_bodies",
    "json_values",
    "logical_turns",
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
