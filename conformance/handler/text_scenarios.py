"""Built-in scenarios for handlers that parse tool calls embedded in text (xml, json, sentinel).

``text_scenarios(fmt)`` gives scenarios whose expected outcome is the logical content (prose
outside the blocks, the calls' names and arguments), written in the format of
``conformance.turns.text_formats``; the suite re-fragments their text at arbitrary points like any
other scenario. Together they spell out rule R16 (``contract.py``): what a text-format parser
must do that R1-R15, written for provider-native calls, leave open.
"""

from __future__ import annotations

from conformance.handler.scenarios import ExpectedCall, ExpectedOutcome, Scenario
from conformance.turns.text_formats import render_call
from reference_impl.types import ChunkResponse

__all__ = ["text_scenarios"]


def _chunks(*pieces: str) -> tuple[ChunkResponse, ...]:
    return tuple(ChunkResponse(content=piece) for piece in pieces)


def _split_into(text: str, size: int) -> tuple[ChunkResponse, ...]:
    return _chunks(*(text[i : i + size] for i in range(0, len(text), size)))


def text_scenarios(fmt: str) -> tuple[Scenario, ...]:
    """Built-in scenarios for ``fmt``, with hand-checked expectations."""
    weather = {"city": "Paris", "unit": "celsius"}
    note = {"path": "notes/a.md", "content": 'He said "hi" & left <quickly> — naïve café 東京'}
    call_w = render_call(fmt, "get_weather", weather)
    call_n = render_call(fmt, "write_note", note)
    unterminated = call_w[: len(call_w) - 3]
    code = f"```\n{call_w}\n```"
    scenarios = [
        Scenario(
            f"{fmt}_prose_call_prose",
            _split_into(f"Let me check. {call_w} Done.", 7),
            ExpectedOutcome((ExpectedCall("get_weather", None, weather),), text="Let me check.  Done."),
            "Prose, a call, prose: the opener and closer are split across chunks (E01, E02).",
            source=f"built-in ({fmt})",
        ),
        Scenario(
            f"{fmt}_two_calls_one_chunk",
            _chunks(f"A{call_w}B{call_n}C"),
            ExpectedOutcome(
                (ExpectedCall("get_weather", None, weather), ExpectedCall("write_note", None, note)), text="ABC"
            ),
            "Two complete calls in one chunk are both found (E09).",
            source=f"built-in ({fmt})",
        ),
        Scenario(
            f"{fmt}_markup_in_code_fence_is_text",
            _split_into(f"Example:\n{code}\nThat was an example.", 5),
            ExpectedOutcome((), text=f"Example:\n{code}\nThat was an example."),
            "Tool markup inside a fenced code block is text, not a call (E06).",
            source=f"built-in ({fmt})",
        ),
        Scenario(
            f"{fmt}_unterminated_block",
            _split_into(f"Calling {unterminated}", 6),
            ExpectedOutcome((ExpectedCall("get_weather", None, None, unterminated),), text="Calling "),
            "A begun block that never closes is an error, never a call and never silent (E08).",
            source=f"built-in ({fmt})",
        ),
        Scenario(
            f"{fmt}_one_character_chunks",
            _split_into(f"x{call_n}y", 1),
            ExpectedOutcome((ExpectedCall("write_note", None, note),), text="xy"),
            "One-character chunks, multi-byte characters and escapes inside arguments (E01-E03).",
            source=f"built-in ({fmt})",
        ),
    ]
    prose = " ".join(f"Sentence number {n} of a long answer, streamed word by word." for n in range(40))
    scenarios.append(
        Scenario(
            f"{fmt}_long_prose_then_call",
            _split_into(f"{prose} {call_w}", 9),
            ExpectedOutcome((ExpectedCall("get_weather", None, weather),), text=f"{prose} "),
            "Long prose before a call must stream within the declared hold-back, not wait for the call (E03, E04).",
            source=f"built-in ({fmt})",
        )
    )
    partial_opener = {"xml": "<tool na", "json": '{"too', "sentinel": "[[SEG_STA"}[fmt]
    scenarios.append(
        Scenario(
            f"{fmt}_incomplete_opener_at_end",
            _split_into(f"The answer is 42 {partial_opener}", 4),
            ExpectedOutcome((), text=f"The answer is 42 {partial_opener}"),
            "Text held back as a possible opener is released as text when the stream ends (E04).",
            source=f"built-in ({fmt})",
        )
    )
    if fmt == "json":
        scenarios.append(
            Scenario(
                "json_plain_json_stays_text",
                _split_into('Config: {"theme": "dark", "size": 3} ok', 4),
                ExpectedOutcome((), text='Config: {"theme": "dark", "size": 3} ok'),
                "A JSON object in prose that has no tool shape stays text (E10).",
                source="built-in (json)",
            )
        )
    return tuple(scenarios)
