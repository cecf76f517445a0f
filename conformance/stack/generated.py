"""The generated search at byte level: turns drawn from the input space, rendered as each wire API's body.

A stack reads bytes, so the suite's generated turns reach it as bodies: each drawn turn (text,
reasoning and tool calls, ids sometimes absent, arguments cut at arbitrary characters, and how the
stream ends: normally, at the token limit, with an in-band error or cut short) is rendered by
``conformance.turns.render.render_body`` for one API the stack runs (OpenAI Chat Completions also in
the dialects OpenAI-compatible servers send), then judged like a recording: whole, then cut at drawn
byte offsets (``conformance.stack.runner``).

What the stack must finish with comes from the turn's own definition (names, ids, argument text,
text, reasoning), never from a library; the stop reason and an in-band error are the SDK's own
reading of the rendered body, the rule the bundled corpus follows (``conformance.corpus.writer``).
A body the SDK cannot read is left out (nothing independent says how it ended; the dialects the
SDK misreads are covered by the bundled cassettes, with their documented exemptions), as is a body
drawn twice: ``N`` turns per API give at most ``N`` bodies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hypothesis import strategies as st

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.expected import expected_from_turn
from conformance.turns.generate import logical_turns
from conformance.turns.model import Call, Reasoning, Text, Turn
from conformance.turns.render import render_body
from conformance.wire import Outcome, SdkAccumulatorError, derive_may_run, sdk_outcome
from conformance.wire.bodies import Body
from conformance.wire.shapes import observed

__all__ = ["GeneratedBody", "describe_turn", "generated_body", "generated_turns"]

# How a drawn stream ends; a normal end first, so the search starts (and a counterexample reads) plain.
_ENDINGS = ("stop", "length", "error", "cut")
# The OpenAI-compatible dialects a named server has been seen sending (docs/realism.md), by the
# reviewed shape each one renders.
_DIALECT_SHAPES = {
    "no_index": "no_index",
    "null_index": "null_index",
    "entry_without_function": "entry_without_function",
    "null_content_first_chunk": "null_content_first_chunk",
    "index_always_zero": "index_always_zero",
    "empty_string_continuations": "empty_string_continuation_fields",
    "null_continuations": "null_continuation_fields",
    "id_on_every_chunk": "id_restated",
    "id_late": "id_late",
    "name_restated": "name_restated",
    "whole_call_per_chunk": "whole_call_per_chunk",
}
# Where a call without an id is a stream a server sends (docs/realism.md, no_id: Gemini native,
# vLLM's OpenAI-compatible server; Ollama's native API before ids); every other API requires one.
IDS_MAY_BE_ABSENT = frozenset({"gemini", "openai-chat", "ollama"})  # ollama: never sent (below)
OBSERVED_DIALECTS: tuple[str, ...] = tuple(
    name for name, shape in _DIALECT_SHAPES.items() if name in OPENAI_COMPAT_DIALECTS and observed(shape)
)


# The order dialects are applied in: whole calls are gathered by index before the indices are
# rewritten (index_always_zero after it would put two calls in one chunk), and the index is taken
# off last (every other rewrite finds a call by its index).
_DIALECT_ORDER = (
    "whole_call_per_chunk",
    *(name for name in OBSERVED_DIALECTS if name not in ("whole_call_per_chunk", "no_index")),
    "no_index",
)


@dataclass(frozen=True)
class GeneratedBody:
    """One drawn turn rendered for one API: its name in reports, the body and what it must come to."""

    name: str  # "generated/openai-chat/007": the API, then its place among the drawn bodies (smallest first)
    turn: Turn
    dialects: tuple[str, ...]
    body: Body
    expected: Outcome

    def numbered(self, number: int) -> GeneratedBody:
        """The same body named by its place among the drawn ones (``--save-failures`` writes it there)."""
        name = f"generated/{self.body.api}/{number:03d}"
        return replace(self, name=name, body=replace(self.body, source=name))

    @property
    def path(self) -> Path:
        """Where a report says it came from (it is never on disk until ``--save-failures`` writes it)."""
        return Path(self.name)


@st.composite
def generated_turns(draw: st.DrawFn, api: str, *, with_reasoning: bool = True) -> tuple[Turn, tuple[str, ...]]:
    """A turn and how it ends, and (OpenAI Chat) the observed dialects it is rendered in."""
    turn = draw(logical_turns(max_items=4, with_reasoning=with_reasoning))
    turn = replace(turn, ending=draw(st.sampled_from(_ENDINGS)))
    dialects: tuple[str, ...] = ()
    if api == "openai-chat":
        drawn = draw(st.lists(st.sampled_from(OBSERVED_DIALECTS), max_size=2, unique=True))
        dialects = tuple(sorted(drawn, key=_DIALECT_ORDER.index))
    if api not in IDS_MAY_BE_ABSENT or "index_always_zero" in dialects:
        # Every call gets an id where the API requires one (a Responses function_call without a
        # call_id is no stream OpenAI sends), and with every call on index 0 (only an id on each
        # tells them apart: Ollama sends one on each; without, two calls and one are the same bytes).
        items = tuple(
            replace(item, call_id=item.call_id or f"call_g{position}") if isinstance(item, Call) else item
            for position, item in enumerate(turn.items)
        )
        turn = replace(turn, items=items)
    if api == "ollama":
        # The ollama SDK's ToolCall has no id (newer servers send one; the SDK drops it): a turn
        # whose ids no SDK-based stack can see would only find that.
        items = tuple(replace(item, call_id=None) if isinstance(item, Call) else item for item in turn.items)
        turn = replace(turn, items=items)
    return turn, dialects


def generated_body(api: str, turn: Turn, dialects: Sequence[str] = ()) -> GeneratedBody | None:
    """``turn`` rendered for ``api`` with its expected outcome; None when the SDK cannot read the body
    (then nothing independent says how it ended) or the dialects do not apply to this turn."""
    try:
        data = render_body(turn, api, dialects)
    except ValueError:
        return None  # a dialect that needs what the turn lacks
    expected = expected_from_turn(turn, api)
    try:
        read = sdk_outcome(api, data)
    except SdkAccumulatorError:
        return None
    expected.finish_reason = read.finish_reason
    expected.error = read.error or expected.error
    name = f"generated/{api}"
    return GeneratedBody(name, turn, tuple(dialects), Body(api, data, name), derive_may_run(expected))


def describe_turn(turn: Turn, dialects: Sequence[str] = ()) -> str:
    """The turn as one line a report shows: its items with their streamed pieces, and how it ended."""
    parts = []
    for item in turn.items:
        if isinstance(item, Call):
            parts.append(f"call {item.name} id={item.call_id!r} args {list(item.argument_pieces)!r}")
        elif isinstance(item, Text):
            parts.append(f"text {list(item.pieces)!r}")
        elif isinstance(item, Reasoning):
            parts.append(f"reasoning {list(item.pieces)!r}")
    rendered = f"; rendered with {', '.join(dialects)}" if dialects else ""
    return " + ".join(parts or ["(nothing)"]) + f"; ends: {turn.ending}{rendered}"
