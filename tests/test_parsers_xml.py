"""The ``xml`` text format: ``<tool name="..."><arguments><arg name="k">v</arg></arguments></tool>``."""

from __future__ import annotations

from typing import Any

import pytest
from test_parsers_support import chunkings, pieces_of, run, splits

from reference_impl import SegmentEventType, SegmentType

CALL = '<tool name="lookup"><arguments><arg name="q">paris</arg></arguments></tool>'


def only_call(text: str, pieces: list[str] | None = None) -> tuple[str, dict[str, Any]]:
    outcome = run("xml", pieces if pieces is not None else [text])
    assert len(outcome.calls) == 1, outcome.tools
    return outcome.calls[0]


def error_of(text: str) -> str:
    outcome = run("xml", [text])
    assert outcome.calls == []
    [tool] = outcome.tools
    assert "arguments" not in tool.end
    assert tool.end["raw_arguments"] == tool.content
    error: str = tool.end["error"]
    return error


def test_call_with_text_around_it_gives_one_segment_each_and_the_raw_block_as_content() -> None:
    text = f"Let me check. {CALL} Done."
    outcome = run("xml", [text])
    assert outcome.calls == [("lookup", {"q": "paris"})]
    assert outcome.text_segments == ["Let me check. ", " Done."]
    [tool] = outcome.tools
    assert tool.name == "lookup"
    assert tool.content == CALL  # opener and closer included
    assert tool.end == {"tool_name": "lookup", "call_id": None, "arguments": {"q": "paris"}}
    start = next(e for e in outcome.events if e.segment_type is SegmentType.TOOL_CALL)
    assert dict(start.metadata) == {"tool_name": "lookup", "call_id": None}
    assert outcome.invocations[0].id == tool.segment_id
    assert outcome.everything == text


def test_start_is_emitted_as_soon_as_the_opener_is_complete_and_ends_the_text_segment() -> None:
    from reference_impl.handlers.parsing import ParsingStreamingResponseHandler
    from reference_impl.types import ChunkResponse

    handler = ParsingStreamingResponseHandler("xml")
    events = handler.feed(ChunkResponse(content='Hi <tool name="f">'))
    assert [(e.event_type, e.segment_type) for e in events] == [
        (SegmentEventType.START, SegmentType.TEXT),
        (SegmentEventType.CONTENT, SegmentType.TEXT),
        (SegmentEventType.END, SegmentType.TEXT),
        (SegmentEventType.START, SegmentType.TOOL_CALL),
        (SegmentEventType.CONTENT, SegmentType.TOOL_CALL),
    ]
    assert events[-1].delta == '<tool name="f">'
    events = handler.feed(ChunkResponse(content='<arg name="a">1</arg>'))
    assert [e.delta for e in events] == ['<arg name="a">1</arg>']  # streams as it arrives


def test_arguments_wrapper_is_optional() -> None:
    assert only_call('<tool name="f"><arg name="a">1</arg><arg name="b">2</arg></tool>') == ("f", {"a": "1", "b": "2"})


def test_no_arguments_is_an_empty_object() -> None:
    assert only_call('<tool name="f"></tool>') == ("f", {})
    assert only_call('<tool name="f"><arguments></arguments></tool>') == ("f", {})
    assert only_call('<tool name="f"><arguments/></tool>') == ("f", {})
    assert only_call('<tool name="f"/>') == ("f", {})
    assert only_call('<tool name="f" />') == ("f", {})


def test_nested_args_make_objects_and_items_make_lists() -> None:
    text = (
        '<tool name="f"><arguments>\n'
        '  <arg name="obj"><arg name="x">1</arg><arg name="deep"><arg name="y">2</arg></arg></arg>\n'
        '  <arg name="list"><item>a</item> <item>b</item></arg>\n'
        '  <arg name="objects"><item><arg name="k">v</arg></item><item><arg name="k">w</arg></item></arg>\n'
        '  <arg name="lists"><item><item>1</item><item>2</item></item></arg>\n'
        '  <arg name="empty"></arg><arg name="short"/><arg name="items"><item/><item></item></arg>\n'
        "</arguments></tool>"
    )
    assert only_call(text) == (
        "f",
        {
            "obj": {"x": "1", "deep": {"y": "2"}},
            "list": ["a", "b"],
            "objects": [{"k": "v"}, {"k": "w"}],
            "lists": [["1", "2"]],
            "empty": "",
            "short": "",
            "items": ["", ""],
        },
    )


def test_string_values_keep_their_whitespace_exactly() -> None:
    assert only_call('<tool name="f"><arg name="s">  two\n lines\t</arg><arg name="w"> </arg></tool>') == (
        "f",
        {"s": "  two\n lines\t", "w": " "},
    )


def test_entities_are_decoded_in_values_and_names() -> None:
    text = (
        '<tool name="a&amp;b"><arg name="k&quot;1">&lt;div&gt; &amp;&amp; &quot;q&quot; &apos;s&apos; '
        "&#65;&#x42;&#x1F600;</arg></tool>"
    )
    assert only_call(text) == ("a&b", {'k"1': "<div> && \"q\" 's' AB\U0001f600"})


@pytest.mark.parametrize(
    "value",
    [
        "a < b",
        "x<y",
        "<b>bold</b>",
        "<args>",
        "<argument>",
        "</ tool>",
        "<arg>no name, <arg\n>",
        "<tool>",
        "<tool name='inner'>",
        'if (a < b && c > d) { x = "<div>"; }',
        "&foo; &amp &#; &#0; &#xD800; &#x110000; &#xZZ; & ; &&",
        "&" + "a" * 13 + ";",
        "<",
        "&",
        "trailing <",
        "a <= b",
        "x << 2",
    ],
)
def test_a_less_than_or_ampersand_that_starts_no_known_tag_or_entity_is_literal(value: str) -> None:
    text = f'<tool name="code"><arg name="src">{value}</arg></tool>'
    for pieces in chunkings(text):
        assert only_call(text, pieces) == ("code", {"src": value})


def test_an_escaped_closing_tag_stays_in_the_value() -> None:
    assert only_call('<tool name="f"><arg name="doc">write &lt;/tool> to close</arg></tool>') == (
        "f",
        {"doc": "write </tool> to close"},
    )


def test_tag_and_attribute_names_are_case_insensitive_and_quotes_and_spaces_are_tolerated() -> None:
    text = "<TOOL   NAME = 'f' ><Arguments><ARG Name='k'>v</Arg><arg\n name=\"it's\">x</ARG ></ARGUMENTS ></Tool >"
    assert only_call(text) == ("f", {"k": "v", "it's": "x"})


@pytest.mark.parametrize("text", [CALL, f"preface {CALL} after", f"{CALL}{CALL}", f"a{CALL}b{CALL}c"])
def test_any_split_gives_the_same_result(text: str) -> None:
    expected = run("xml", [text])
    for pieces in chunkings(text):
        outcome = run("xml", pieces)
        assert outcome.calls == expected.calls
        assert outcome.text == expected.text
        assert [t.content for t in outcome.tools] == [t.content for t in expected.tools]
        assert outcome.everything == text


def test_a_split_opener_never_leaks_into_text() -> None:
    text = f"preface {CALL}"
    for pieces in splits(text):
        outcome = run("xml", pieces)
        assert outcome.text == "preface "
        assert outcome.calls == [("lookup", {"q": "paris"})]


def test_a_split_closer_never_leaks_into_the_arguments() -> None:
    text = '<tool name="f"><arg name="a">x</arg></tool>after'
    for pieces in splits(text):
        outcome = run("xml", pieces)
        assert outcome.calls == [("f", {"a": "x"})]
        assert outcome.text == "after"


def test_several_calls_in_one_chunk_are_all_found() -> None:
    text = '<tool name="a"><arg name="n">1</arg></tool><tool name="b"></tool> and <tool name="c"/>!'
    outcome = run("xml", [text])
    assert outcome.calls == [("a", {"n": "1"}), ("b", {}), ("c", {})]
    assert outcome.text_segments == [" and ", "!"]


def test_detection_does_not_depend_on_line_position() -> None:
    outcome = run("xml", [f"Of course. {CALL}"])
    assert outcome.text == "Of course. "
    assert len(outcome.calls) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Use the <tool> tag to invoke tools; e.g. <answer>42</answer>.",
        "a < b is true; 5 <",
        '<toolbox name="x">',
        '<tool id="x">',
        "<tool\n>",
        '<tool name="x"',
        "</tool>",
        "<t",
        "<",
        "<tool name=x>",
        '<tool name="a<b">',
    ],
)
def test_markup_that_is_not_a_complete_opener_is_text(text: str) -> None:
    for pieces in chunkings(text):
        outcome = run("xml", pieces)
        assert outcome.text == text
        assert outcome.tools == []


def test_an_incomplete_opener_at_end_of_stream_is_text() -> None:
    outcome = run("xml", ["Sure.", ' <tool name="lookup"'])
    assert outcome.text == 'Sure. <tool name="lookup"'
    assert outcome.tools == []


def test_a_double_less_than_still_finds_the_opener() -> None:
    outcome = run("xml", [f"<<{CALL}"])
    assert outcome.text == "<<"
    assert len(outcome.calls) == 1
    # and the failing character of a broken opener can itself start one
    outcome = run("xml", [f'<tool name="x{CALL}'])
    assert outcome.text == '<tool name="x'
    assert len(outcome.calls) == 1


def test_an_unterminated_block_is_an_error_with_its_raw_text_and_no_invocation() -> None:
    text = 'Sure.<tool name="bash"><arg name="cmd">ls'
    for pieces in chunkings(text):
        outcome = run("xml", pieces)
        assert outcome.text == "Sure."
        assert outcome.calls == []
        [tool] = outcome.tools
        assert tool.name == "bash"
        assert tool.end["raw_arguments"] == '<tool name="bash"><arg name="cmd">ls'
        assert "unterminated" in tool.end["error"]
        assert "cmd" in tool.end["error"]  # says what is still open


def test_markup_in_a_fenced_code_block_is_text() -> None:
    text = f"Here is the syntax:\n```xml\n{CALL}\n```\nDone."
    for pieces in chunkings(text):
        outcome = run("xml", pieces)
        assert outcome.text == text
        assert outcome.tools == []


def test_a_fence_split_across_chunks_still_counts_and_calls_after_it_are_found() -> None:
    outcome = run("xml", ["Syntax:\n`", f"``xml\n{CALL}\n``", f"`\nNow for real: {CALL}"])
    assert len(outcome.calls) == 1
    assert outcome.text == f"Syntax:\n```xml\n{CALL}\n```\nNow for real: "


def test_a_fence_closes_only_with_a_run_at_least_as_long() -> None:
    text = f"````\n```\n{CALL}\n````\n{CALL}"
    outcome = run("xml", [text])
    assert len(outcome.calls) == 1
    assert outcome.text == f"````\n```\n{CALL}\n````\n"


def test_inline_double_backticks_do_not_open_a_fence() -> None:
    outcome = run("xml", [f"use ``x`` then {CALL}"])
    assert len(outcome.calls) == 1


def test_held_text_is_released_past_max_holdback_chars() -> None:
    outcome = run("xml", ["x"])
    assert outcome.handler.max_holdback_chars == 256
    long_opener = '<tool name="' + "n" * 300
    from reference_impl.handlers.parsing import ParsingStreamingResponseHandler
    from reference_impl.types import ChunkResponse

    handler = ParsingStreamingResponseHandler("xml")
    handler.feed(ChunkResponse(content=long_opener[:256]))
    assert not any(e.segment_type is SegmentType.TEXT for e in handler.get_all_events())  # still held
    events = handler.feed(ChunkResponse(content=long_opener[256:]))
    assert "".join(e.delta for e in events) == long_opener  # released before the stream ends
    handler.feed(ChunkResponse(content='">body</tool>'))
    handler.finalize()
    assert handler.get_all_invocations() == []


def test_an_opener_of_exactly_max_holdback_chars_is_accepted() -> None:
    opener = '<tool name="abc">'
    assert only_call(opener + "</tool>") == ("abc", {})
    for pieces in chunkings(opener + "</tool>"):
        outcome = run("xml", pieces, max_holdback_chars=len(opener))
        assert outcome.calls == [("abc", {})]
        outcome = run("xml", pieces, max_holdback_chars=len(opener) - 1)
        assert outcome.calls == []
        assert outcome.text == opener + "</tool>"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("hello", "text outside an <arg>"),
        ('<arg name="a">x<arg name="b">y</arg></arg>', "mixes"),
        ('<arg name="a"><arg name="b">y</arg>x</arg>', "mixes"),
        ('<arg name="a"><item>1</item><arg name="b">y</arg></arg>', "mixes"),
        ('<arg name="a">1</arg><arg name="a">2</arg>', "duplicate argument name 'a'"),
        ("<item>1</item>", "<item> outside"),
        ('<arg name="a">1</item>', "unexpected </item>"),
        ("</arg>", "unexpected </arg>"),
        ('<arg name="a">1', "still open"),
        ("<arguments><arguments></arguments></arguments>", "<arguments> is allowed once"),
        ('<arguments><arg name="a">1</arg></arguments><arg name="a">2</arg>', "duplicate"),
    ],
)
def test_malformed_blocks_end_in_an_error_that_says_what_and_where(body: str, message: str) -> None:
    error = error_of(f'<tool name="f">{body}</tool>')
    assert message in error
    assert "offset" in error


def test_a_closing_tool_tag_inside_a_value_ends_the_block() -> None:
    outcome = run("xml", ['<tool name="f"><arg name="a">x</tool>y</arg></tool>'])
    [tool] = outcome.tools
    assert "still open" in tool.end["error"]
    assert outcome.text == "y</arg></tool>"


def test_an_empty_name_begins_a_block_that_ends_in_an_error() -> None:
    outcome = run("xml", ['<tool name=""><arg name="a">1</arg></tool>'])
    [tool] = outcome.tools
    assert tool.name is None
    assert "empty name" in tool.end["error"]
    assert outcome.calls == []


def test_one_character_chunks_of_a_long_value() -> None:
    value = "x &lt; y " * 200
    text = f'<tool name="w"><arg name="v">{value}</arg></tool>'
    outcome = run("xml", pieces_of(text, 1))
    assert outcome.calls == [("w", {"v": "x < y " * 200})]
