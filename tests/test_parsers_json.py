"""The ``json`` text format: tool calls written as JSON values (tool, tool_calls, name/args, lists)."""

from __future__ import annotations

import json

import pytest
from test_parsers_support import chunkings, pieces_of, run, splits

from reference_impl import ChunkResponse, SegmentEventType, SegmentType
from reference_impl.handlers.parsing import ParsingStreamingResponseHandler

TOOL = '{"tool": {"function": "lookup", "parameters": {"q": "paris"}}}'
NAME_ARGS = '{"name": "lookup", "args": {"q": "paris"}}'
TOOL_CALLS = (
    '{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{\\"x\\": 1}"}}, '
    '{"function": {"name": "b", "arguments": {"y": [1, {"z": null}]}}}]}'
)


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (TOOL, [("lookup", {"q": "paris"})]),
        (NAME_ARGS, [("lookup", {"q": "paris"})]),
        (TOOL_CALLS, [("a", {"x": 1}), ("b", {"y": [1, {"z": None}]})]),
        ('[{"name": "a", "args": {}}, {"name": "b", "args": {"k": "v"}}]', [("a", {}), ("b", {"k": "v"})]),
        ('[{"tool": {"function": "a", "parameters": {}}}, {"name": "b", "args": {}}]', [("a", {}), ("b", {})]),
        ('{"tool": {"parameters": {"late": true}, "function": "f"}}', [("f", {"late": True})]),
        ('{"tool": {"function": "f"}}', [("f", {})]),
        ('{"tool_calls": [{"function": {"name": "f", "arguments": ""}}]}', [("f", {})]),
        ('{"\\u0074ool": {"function": "f", "parameters": {}}}', [("f", {})]),
        (
            '{\n  "name": "f",\n  "args": {\n    "a": "}]\\" [[SEG_END]] </tool>"\n  }\n}',
            [("f", {"a": '}]" [[SEG_END]] </tool>'})],
        ),
        (
            '{"name": "f", "args": {"u": "\\u00e9\\ud83d\\ude00\\n", "n": -1.5e3, "b": [true, false, null]}}',
            [("f", {"u": "é😀\n", "n": -1500.0, "b": [True, False, None]})],
        ),
    ],
)
def test_each_shape_gives_its_calls_under_any_split(text: str, calls: list[tuple[str, dict[str, object]]]) -> None:
    wrapped = f"Before. {text} After."
    for pieces in chunkings(wrapped):
        outcome = run("json", pieces)
        assert outcome.calls == calls
        assert outcome.text == "Before.  After."
        assert outcome.everything == wrapped
        assert "".join(tool.content for tool in outcome.tools) == text


def test_segments_partition_the_json_value_and_start_when_the_name_is_known() -> None:
    outcome = run("json", [TOOL_CALLS])
    first, second = outcome.tools
    assert first.content.startswith('{"tool_calls": [{"id": "call_1"')
    assert first.content.endswith("}}, ")  # the separator belongs to the earlier segment
    assert second.content.startswith('{"function": {"name": "b"')
    assert second.content.endswith("]}")  # the envelope's tail belongs to the last segment
    assert first.end == {"tool_name": "a", "call_id": None, "arguments": {"x": 1}}
    assert [i.id for i in outcome.invocations] == [first.segment_id, second.segment_id]


def test_start_comes_as_soon_as_the_name_is_known_and_content_streams() -> None:
    handler = ParsingStreamingResponseHandler("json")
    events = handler.feed(ChunkResponse(content='Hi {"tool": {"function": "lookup"'))
    assert [(e.event_type, e.segment_type) for e in events][-2:] == [
        (SegmentEventType.START, SegmentType.TOOL_CALL),
        (SegmentEventType.CONTENT, SegmentType.TOOL_CALL),
    ]
    assert events[-2].metadata["tool_name"] == "lookup"
    assert events[-1].delta == '{"tool": {"function": "lookup"'
    events = handler.feed(ChunkResponse(content=', "parameters": {"q": '))
    assert [e.delta for e in events] == [', "parameters": {"q": ']
    # name/args: the name precedes the commit point, so START comes with the opener
    handler = ParsingStreamingResponseHandler("json")
    events = handler.feed(ChunkResponse(content='{"name": "f", "args": {'))
    assert events[0].event_type is SegmentEventType.START
    assert events[0].metadata["tool_name"] == "f"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '{"name": "Bob", "age": 3}',
        '{"name": "f", "args": 5}',
        '{"name": "f", "args": "{}"}',
        '{"name": 5, "args": {}}',
        '{"tool": "hammer"}',
        '{"tool_calls": {"function": {"name": "f"}}}',
        '{"result": {"name": "x", "args": {}}, "note": {"tool": {"function": "y"}}}',
        '{"args": {}, "name": "f"}',
        "[1, 2]",
        '[{"a": 1}, {"name": "f", "args": {}}]',
        '[{"tool_calls": [{"function": {"name": "f"}}]}]',
        "[]",
        "{}",
        "[link](https://example.com) and [1]",
        'Use {curly} braces and {"quoted" words}.',
        '{"tool" is the key}',
        "{",
        "[",
        '{"name": "f"',
        '{"tool":',
        '{"name": "f", "args":',
    ],
)
def test_json_without_a_tool_shape_and_incomplete_openers_stay_text(text: str) -> None:
    for pieces in chunkings(text):
        outcome = run("json", pieces)
        assert outcome.tools == []
        assert outcome.text == text


def test_a_non_tool_json_value_is_released_before_it_ends() -> None:
    handler = ParsingStreamingResponseHandler("json")
    events = handler.feed(ChunkResponse(content='Data: {"a": {"name": "x", "args": {"k"'))
    assert "".join(e.delta for e in events) == 'Data: {"a": {"name": "x", "args": {"k"'
    events = handler.feed(ChunkResponse(content=': 1}}} then {"name": "f", "args": {}}'))
    handler.finalize()
    assert [(i.name, dict(i.arguments)) for i in handler.get_all_invocations()] == [("f", {})]


def test_after_a_syntax_error_the_offending_character_is_examined_again() -> None:
    outcome = run("json", ['{"name": "x", {"name": "f", "args": {}}'])
    assert outcome.calls == [("f", {})]
    assert outcome.text == '{"name": "x", '


def test_several_calls_in_one_chunk_are_all_found() -> None:
    text = f"{TOOL}{NAME_ARGS} and {TOOL_CALLS}!"
    outcome = run("json", [text])
    assert [name for name, _ in outcome.calls] == ["lookup", "lookup", "a", "b"]
    assert outcome.text_segments == [" and ", "!"]


def test_double_encoded_string_arguments_are_an_error_not_unwrapped() -> None:
    inner = json.dumps(json.dumps({"city": "Paris"}))
    text = '{"tool_calls": [{"function": {"name": "w", "arguments": ' + json.dumps(inner) + "}}]}"
    [tool] = run("json", [text]).tools
    assert "must be a JSON object, got a string" in tool.end["error"]
    assert tool.end["raw_arguments"] == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"tool_calls": [{"function": {"name": "f", "arguments": "{\\"a\\": "}}]}', "truncated arguments"),
        ('{"tool_calls": [{"function": {"name": "f", "arguments": "{} {}"}}]}', "trailing data"),
        ('{"tool": {"function": "f", "parameters": [1]}}', "must be a JSON object, got an array"),
        ('{"tool": {"function": "f", "parameters": null}}', "got null"),
        ('{"tool": {"parameters": {}}}', "has no name"),
        ('{"tool": {"function": 3, "parameters": {}}}', "not a string"),
        ('{"tool": {"function": "", "parameters": {}}}', "empty"),
        ('{"tool_calls": []}', "contains no tool call"),
        ('{"tool_calls": [1]}', "has no name"),
        ('[{"name": "a", "args": {}, "tool": {"function": "b"}}]', "more than one tool name"),
        ('[{"name": "a", "args": {}, "args": {}}]', "more than one arguments value"),
    ],
)
def test_bad_calls_end_in_an_error_with_the_raw_block_and_no_invocation(text: str, message: str) -> None:
    outcome = run("json", [text])
    assert outcome.calls == []
    [tool] = outcome.tools
    assert message in tool.end["error"]
    assert tool.end["raw_arguments"] == text == tool.content
    assert "arguments" not in tool.end


def test_errors_say_where() -> None:
    [tool] = run("json", ['{"tool": {"function": "f", "parameters": {"a": tru}}}']).tools
    assert "invalid JSON" in tool.end["error"]
    assert "offset 47 of the tool block" in tool.end["error"]


def test_a_syntax_error_in_a_block_extends_the_block_to_its_balancing_bracket() -> None:
    text = '{"tool": {"function": "f", "parameters": {"a": 1,, "s": "}}}"}}} after'
    for pieces in chunkings(text):
        outcome = run("json", pieces)
        [tool] = outcome.tools
        assert tool.name == "f"
        assert "invalid JSON" in tool.end["error"]
        assert tool.content == text[: -len(" after")]
        assert outcome.text == " after"


def test_a_syntax_error_after_a_complete_call_keeps_that_call() -> None:
    text = '{"tool_calls": [{"function": {"name": "a", "arguments": {}}} x {"function": {}}]} after'
    outcome = run("json", [text])
    assert outcome.calls == [("a", {})]
    first, rest = outcome.tools
    assert first.ok
    assert rest.name is None
    assert "invalid JSON" in rest.end["error"]
    assert outcome.text == " after"


def test_an_unterminated_block_is_an_error_and_the_text_before_it_is_kept() -> None:
    text = 'Sure.{"name": "bash", "args": {"cmd": "ls'
    for pieces in chunkings(text):
        outcome = run("json", pieces)
        assert outcome.text == "Sure."
        assert outcome.calls == []
        [tool] = outcome.tools
        assert tool.name == "bash"
        assert "unterminated" in tool.end["error"]
        assert tool.end["raw_arguments"] == text[len("Sure.") :]


def test_an_unterminated_envelope_errors_its_last_call_only() -> None:
    text = '{"tool_calls": [{"function": {"name": "a", "arguments": {}}}, {"function": {"name": "b", "arguments": {}}}'
    outcome = run("json", [text])
    assert outcome.calls == [("a", {})]
    assert "unterminated" in outcome.tools[1].end["error"]


def test_a_block_committed_before_its_name_still_gets_a_segment_at_the_end() -> None:
    outcome = run("json", ['{"tool_calls": ['])
    [tool] = outcome.tools
    assert tool.name is None
    assert "unterminated" in tool.end["error"]


def test_markup_in_a_fenced_code_block_is_text() -> None:
    text = f"Example:\n```json\n{TOOL}\n```\nand for real: {NAME_ARGS}"
    for pieces in chunkings(text):
        outcome = run("json", pieces)
        assert outcome.calls == [("lookup", {"q": "paris"})]
        assert outcome.text == text[: -len(NAME_ARGS)]


def test_the_opener_split_at_every_character_never_leaks_into_text() -> None:
    text = f"preface {NAME_ARGS}"
    for pieces in splits(text):
        outcome = run("json", pieces)
        assert outcome.text == "preface "
        assert outcome.calls == [("lookup", {"q": "paris"})]


def test_held_text_is_released_past_max_holdback_chars() -> None:
    assert run("json", [""]).handler.max_holdback_chars == 256
    long_name = "n" * 300
    text = '{"name": "' + long_name + '", "args": {}}'
    handler = ParsingStreamingResponseHandler("json")
    handler.feed(ChunkResponse(content=text[:256]))
    assert not any(e.segment_type is SegmentType.TEXT for e in handler.get_all_events())
    events = handler.feed(ChunkResponse(content=text[256:300]))
    assert "".join(e.delta for e in events) == text[:300]
    handler.feed(ChunkResponse(content=text[300:]))
    handler.finalize()
    assert handler.get_all_invocations() == []
    # whitespace counts too
    outcome = run("json", ["{" + " " * 300 + '"tool": {"function": "f"}}'])
    assert outcome.tools == []


def test_an_opener_of_exactly_max_holdback_chars_is_accepted() -> None:
    text = '{"name": "f", "args": {}}'
    commit_at = len('{"name": "f", "args": {')
    for pieces in chunkings(text):
        assert run("json", pieces, max_holdback_chars=commit_at).calls == [("f", {})]
        outcome = run("json", pieces, max_holdback_chars=commit_at - 1)
        assert outcome.calls == []
        assert outcome.text == text


def test_one_character_chunks_of_large_arguments() -> None:
    value = {"content": 'line with "quotes" and \\ backslashes {}[] \u00e9\n' * 300}
    text = json.dumps({"name": "write", "args": value})
    outcome = run("json", pieces_of(text, 1))
    assert outcome.calls == [("write", value)]
