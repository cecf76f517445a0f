"""The ``sentinel`` text format: ``[[SEG_START {"type": "tool_call", "tool_name": ...}]] {args} [[SEG_END]]``."""

from __future__ import annotations

import json

import pytest
from test_parsers_support import chunkings, pieces_of, run, splits

from reference_impl import ChunkResponse, SegmentType
from reference_impl.handlers.parsing import ParsingStreamingResponseHandler

HEADER = '[[SEG_START {"type": "tool_call", "tool_name": "lookup"}]]'
CALL = HEADER + ' {"q": "paris"} [[SEG_END]]'


def test_call_with_text_around_it() -> None:
    text = f"Let me check. {CALL} Done."
    outcome = run("sentinel", [text])
    assert outcome.calls == [("lookup", {"q": "paris"})]
    assert outcome.text_segments == ["Let me check. ", " Done."]
    [tool] = outcome.tools
    assert tool.content == CALL
    assert tool.end == {"tool_name": "lookup", "call_id": None, "arguments": {"q": "paris"}}
    assert outcome.everything == text


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (CALL, [("lookup", {"q": "paris"})]),
        ('[[SEG_START{"tool_name":"f","type":"tool_call","extra":[1]}]]{}[[SEG_END]]', [("f", {})]),
        ('[[SEG_START\n{\n  "type": "tool_call",\n  "tool_name": "f"\n}\n]]\n\n[[SEG_END]]', [("f", {})]),
        ('[[SEG_START {"type": "tool_call", "tool_name": "f\\u00e9]]}"}]]  [[SEG_END]]', [("f\u00e9]]}", {})]),
        (HEADER + ' {"a": "x [[SEG_END]] y"} [[SEG_END]]', [("lookup", {"a": "x [[SEG_END]] y"})]),
        (HEADER + ' {"a": "q\\" [[SEG_END]]"} [[SEG_END]]', [("lookup", {"a": 'q" [[SEG_END]]'})]),
        (HEADER + ' {"a": "back\\\\"}[[SEG_END]]', [("lookup", {"a": "back\\"})]),
        (HEADER + ' {"a": [1, {"b": "[[SEG_"}]}[[SEG_END]]', [("lookup", {"a": [1, {"b": "[[SEG_"}]})]),
        (HEADER + '{"t": "\tliteral tab"}[[SEG_END]]', [("lookup", {"t": "\tliteral tab"})]),
    ],
)
def test_calls_are_found_under_any_split(text: str, calls: list[tuple[str, dict[str, object]]]) -> None:
    wrapped = f"a{text}b"
    for pieces in chunkings(wrapped):
        outcome = run("sentinel", pieces)
        assert outcome.calls == calls
        assert outcome.text == "ab"
        assert outcome.everything == wrapped


def test_a_split_opener_or_closer_never_leaks() -> None:
    text = f"preface {CALL}after"
    for pieces in splits(text):
        outcome = run("sentinel", pieces)
        assert outcome.text == "preface after"
        assert outcome.calls == [("lookup", {"q": "paris"})]


def test_overlapping_brackets_still_find_the_markers() -> None:
    outcome = run("sentinel", [f"[[{CALL}"])
    assert outcome.text == "[["
    assert len(outcome.calls) == 1
    for pieces in chunkings(f"[{CALL}"):
        outcome = run("sentinel", pieces)
        assert outcome.text == "["
        assert len(outcome.calls) == 1
    # "[[[SEG_END]]" closes one character in: the "[" before it is part of the arguments
    [tool] = run("sentinel", [HEADER + "{}[[[SEG_END]]"]).tools
    assert "trailing data" in tool.end["error"]


def test_several_calls_in_one_chunk_are_all_found() -> None:
    second = '[[SEG_START {"type": "tool_call", "tool_name": "b"}]][[SEG_END]]'
    outcome = run("sentinel", [f"{CALL}{second} and {CALL}!"])
    assert [name for name, _ in outcome.calls] == ["lookup", "b", "lookup"]
    assert outcome.text_segments == [" and ", "!"]


@pytest.mark.parametrize(
    "text",
    [
        'The [[SEG_START {"type": "text"}]] marker opens a text segment [[SEG_END]].',
        '[[SEG_START {"type": "tool_call", "tool_name": "f"} ]x',
        '[[SEG_START {"type": "tool_call", "tool_name": "f"',
        "[[SEG_START not json]]",
        "[[SEG_START {not json}]] {} [[SEG_END]]",
        '[[SEG_START ["tool_call"]]] {} [[SEG_END]]',
        "[[SEG_STAR",
        "[[SEG_END]]",
        "[[link]] and [1] [[",
        "[",
    ],
)
def test_markers_that_do_not_open_a_tool_call_are_text(text: str) -> None:
    for pieces in chunkings(text):
        outcome = run("sentinel", pieces)
        assert outcome.tools == []
        assert outcome.text == text


def test_a_header_without_a_usable_tool_name_begins_a_block_that_ends_in_an_error() -> None:
    text = '[[SEG_START {"type": "tool_call"}]] {"a": 1} [[SEG_END]] after'
    outcome = run("sentinel", [text])
    [tool] = outcome.tools
    assert tool.name is None
    assert "tool_name" in tool.end["error"]
    assert outcome.calls == []
    assert outcome.text == " after"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"a": ', "truncated arguments"),
        ('{"a": 1} {"b": 2}', "trailing data"),
        ("[1, 2]", "must be a JSON object, got an array"),
        ('"text"', "got a string"),
        ("{'a': 1}", "invalid JSON arguments"),
        ("NaN", "invalid JSON"),
    ],
)
def test_bad_arguments_end_in_an_error_with_the_raw_block_and_no_invocation(arguments: str, message: str) -> None:
    text = f"{HEADER} {arguments} [[SEG_END]]"
    outcome = run("sentinel", [text])
    assert outcome.calls == []
    [tool] = outcome.tools
    assert message in tool.end["error"]
    assert f"the arguments start at offset {len(HEADER)}" in tool.end["error"]
    assert tool.end["raw_arguments"] == text
    assert "arguments" not in tool.end


def test_empty_arguments_are_an_empty_object() -> None:
    assert run("sentinel", [HEADER + "[[SEG_END]]"]).calls == [("lookup", {})]
    assert run("sentinel", [HEADER + " \n [[SEG_END]]"]).calls == [("lookup", {})]


def test_an_unterminated_block_is_an_error_and_the_text_before_it_is_kept() -> None:
    for text, where in [(f'Sure.{HEADER} {{"cmd": "ls', " inside a JSON string"), (f'Sure.{HEADER} {{"cmd": 1}}', "")]:
        for pieces in chunkings(text):
            outcome = run("sentinel", pieces)
            assert outcome.text == "Sure."
            assert outcome.calls == []
            [tool] = outcome.tools
            assert tool.end["error"].startswith(f"unterminated sentinel block: the stream ended{where} before")
            assert tool.end["raw_arguments"] == text[len("Sure.") :]


def test_an_incomplete_opener_at_end_of_stream_is_text() -> None:
    for cut in range(1, len(HEADER)):
        outcome = run("sentinel", ["Sure. ", HEADER[:cut]])
        assert outcome.text == "Sure. " + HEADER[:cut]
        assert outcome.tools == []


def test_markup_in_a_fenced_code_block_is_text() -> None:
    text = f"Format:\n```\n{CALL}\n```\nNow: {CALL}"
    for pieces in chunkings(text):
        outcome = run("sentinel", pieces)
        assert len(outcome.calls) == 1
        assert outcome.text == text[: -len(CALL)]


def test_held_text_is_released_past_max_holdback_chars() -> None:
    assert run("sentinel", [""]).handler.max_holdback_chars == 512
    header = "[[SEG_START " + json.dumps({"type": "tool_call", "tool_name": "f", "pad": "x" * 600}) + "]]"
    handler = ParsingStreamingResponseHandler("sentinel")
    handler.feed(ChunkResponse(content=header[:512]))
    assert not any(e.segment_type is SegmentType.TEXT for e in handler.get_all_events())
    events = handler.feed(ChunkResponse(content=header[512:520]))
    assert "".join(e.delta for e in events) == header[:520]
    handler.feed(ChunkResponse(content=header[520:] + "{}[[SEG_END]]"))
    handler.finalize()
    assert handler.get_all_invocations() == []


def test_an_opener_of_exactly_max_holdback_chars_is_accepted() -> None:
    text = HEADER + "{}[[SEG_END]]"
    for pieces in chunkings(text):
        assert run("sentinel", pieces, max_holdback_chars=len(HEADER)).calls == [("lookup", {})]
        outcome = run("sentinel", pieces, max_holdback_chars=len(HEADER) - 1)
        assert outcome.calls == []
        assert outcome.text == text


def test_one_character_chunks_of_large_arguments() -> None:
    value = {"content": 'a "[[SEG_END]]" \\ {} ' * 500}
    text = HEADER + json.dumps(value) + "[[SEG_END]]"
    assert run("sentinel", pieces_of(text, 1)).calls == [("lookup", value)]
