"""Handler selection from the tool-call format setting (seed 000 sections 9.1 and 10)."""

from __future__ import annotations

import pytest

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    PassThroughStreamingResponseHandler,
    SegmentEvent,
    StreamingResponseHandler,
    ToolCallDelta,
    ToolInvocation,
)
from reference_impl.factory import (
    DEFAULT_TOOL_CALL_FORMAT,
    STREAM_PARSER_ENV_VAR,
    TOOL_CALL_FORMATS,
    UnknownToolCallFormatError,
    create_streaming_handler,
    resolve_tool_call_format,
)

ENV = STREAM_PARSER_ENV_VAR


# -- resolve_tool_call_format ------------------------------------------------------------------


def test_env_var_name_is_the_seeds() -> None:
    assert STREAM_PARSER_ENV_VAR == "AUTOBYTEUS_STREAM_PARSER"
    assert set(TOOL_CALL_FORMATS) == {"xml", "json", "sentinel", "api_tool_call"}


def test_default_is_xml_as_in_seed_section_9() -> None:
    assert DEFAULT_TOOL_CALL_FORMAT == "xml"
    assert resolve_tool_call_format(env={}) == "xml"
    assert resolve_tool_call_format(None, env={"UNRELATED": "json"}) == "xml"


@pytest.mark.parametrize("value", ["xml", "json", "sentinel", "api_tool_call"])
def test_every_valid_value_is_accepted_from_argument_and_env(value: str) -> None:
    assert resolve_tool_call_format(value, env={}) == value
    assert resolve_tool_call_format(env={ENV: value}) == value


@pytest.mark.parametrize(
    ("raw", "expected"), [(" XML ", "xml"), ("Json", "json"), ("\tAPI_Tool_Call\n", "api_tool_call")]
)
def test_values_are_case_insensitive_and_stripped(raw: str, expected: str) -> None:
    assert resolve_tool_call_format(raw, env={}) == expected
    assert resolve_tool_call_format(env={ENV: raw}) == expected


def test_explicit_argument_wins_over_env() -> None:
    assert resolve_tool_call_format("sentinel", env={ENV: "json"}) == "sentinel"
    # Even a bad env value is never consulted when the argument decides.
    assert resolve_tool_call_format("json", env={ENV: "native"}) == "json"


@pytest.mark.parametrize("blank", ["", "   ", "\n"])
def test_set_but_empty_env_var_counts_as_unset(blank: str) -> None:
    assert resolve_tool_call_format(env={ENV: blank}) == DEFAULT_TOOL_CALL_FORMAT


def test_reads_os_environ_when_env_is_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "Sentinel")
    assert resolve_tool_call_format() == "sentinel"
    monkeypatch.delenv(ENV)
    assert resolve_tool_call_format() == DEFAULT_TOOL_CALL_FORMAT
    monkeypatch.setenv(ENV, "native")
    with pytest.raises(UnknownToolCallFormatError, match=ENV):
        resolve_tool_call_format()


def test_an_explicit_env_mapping_shields_from_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "json")
    assert resolve_tool_call_format(env={}) == DEFAULT_TOOL_CALL_FORMAT


@pytest.mark.parametrize("spelling", ["native", "NATIVE", " Native "])
def test_native_from_argument_says_it_was_removed_and_names_the_replacement(spelling: str) -> None:
    with pytest.raises(UnknownToolCallFormatError) as info:
        resolve_tool_call_format(spelling, env={})
    message = str(info.value)
    assert repr(spelling) in message
    assert "removed" in message
    assert "use 'api_tool_call'" in message
    assert "argument" in message
    assert isinstance(info.value, ValueError)
    assert (info.value.value, info.value.source) == (spelling, "argument")


def test_native_from_env_names_the_variable() -> None:
    with pytest.raises(UnknownToolCallFormatError) as info:
        resolve_tool_call_format(env={ENV: "native"})
    message = str(info.value)
    assert f"environment variable {ENV}" in message
    assert "removed" in message
    assert "'api_tool_call'" in message
    assert info.value.source == f"environment variable {ENV}"


@pytest.mark.parametrize("bad", ["yaml", "xml json", "api-tool-call", "tool_call"])
def test_unknown_value_lists_valid_values_and_the_source(bad: str) -> None:
    for kwargs, source in [
        ({"value": bad, "env": {}}, "argument"),
        ({"env": {ENV: bad}}, f"environment variable {ENV}"),
    ]:
        with pytest.raises(UnknownToolCallFormatError) as info:
            resolve_tool_call_format(**kwargs)  # type: ignore[arg-type]
        message = str(info.value)
        assert message.startswith(f"unknown tool-call format {bad!r} (from the {source})")
        for valid in TOOL_CALL_FORMATS:
            assert repr(valid) in message


def test_explicit_empty_argument_is_an_error_not_the_default() -> None:
    with pytest.raises(UnknownToolCallFormatError, match=r"unknown tool-call format '' \(from the argument\)"):
        resolve_tool_call_format("", env={})


def test_non_string_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must be a str"):
        resolve_tool_call_format(1, env={})  # type: ignore[arg-type]


# -- create_streaming_handler ------------------------------------------------------------------


@pytest.mark.parametrize("parse_tool_calls", [True, False])
def test_api_tool_call_gives_the_api_handler_whatever_parse_tool_calls_says(parse_tool_calls: bool) -> None:
    handler = create_streaming_handler("api_tool_call", parse_tool_calls=parse_tool_calls, env={})
    assert type(handler) is ApiToolCallStreamingResponseHandler


@pytest.mark.parametrize("fmt", ["xml", "json", "sentinel", None])
def test_text_formats_without_tools_give_pass_through(fmt: str | None) -> None:
    handler = create_streaming_handler(fmt, parse_tool_calls=False, env={})
    assert type(handler) is PassThroughStreamingResponseHandler


_RENDERED_CALL = {
    "xml": '<tool name="lookup"><arguments><arg name="q">paris</arg></arguments></tool>',
    "json": '{"tool": {"function": "lookup", "parameters": {"q": "paris"}}}',
    "sentinel": '[[SEG_START {"type": "tool_call", "tool_name": "lookup"}]] {"q": "paris"} [[SEG_END]]',
}


def _invocations_for(handler: StreamingResponseHandler, text: str) -> list[tuple[str, dict[str, object]]]:
    handler.feed(ChunkResponse(content=f"Let me look. {text} Done."))
    handler.finalize()
    return [(invocation.name, dict(invocation.arguments)) for invocation in handler.get_all_invocations()]


@pytest.mark.parametrize("fmt", ["xml", "json", "sentinel"])
def test_text_formats_with_tools_give_the_parsing_handler_with_that_parser(fmt: str) -> None:
    from reference_impl.handlers.parsing import ParsingStreamingResponseHandler

    handler = create_streaming_handler(fmt.upper(), env={})
    assert type(handler) is ParsingStreamingResponseHandler
    # The parser really is the one asked for: its format becomes a call, and it is the only one that does.
    assert _invocations_for(handler, _RENDERED_CALL[fmt]) == [("lookup", {"q": "paris"})]
    for other, text in _RENDERED_CALL.items():
        if other != fmt:
            assert _invocations_for(create_streaming_handler(fmt, env={}), text) == []


def test_default_with_tools_is_the_xml_parsing_handler() -> None:
    from reference_impl.handlers.parsing import ParsingStreamingResponseHandler

    handler = create_streaming_handler(env={})
    assert type(handler) is ParsingStreamingResponseHandler
    assert _invocations_for(handler, _RENDERED_CALL["xml"]) == [("lookup", {"q": "paris"})]


def test_env_selects_the_handler() -> None:
    assert type(create_streaming_handler(env={ENV: "api_tool_call"})) is ApiToolCallStreamingResponseHandler
    assert type(create_streaming_handler("api_tool_call", env={ENV: "xml"})) is ApiToolCallStreamingResponseHandler


def test_env_selects_the_handler_through_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, " API_TOOL_CALL ")
    assert type(create_streaming_handler()) is ApiToolCallStreamingResponseHandler


def test_bad_format_errors_propagate_before_any_handler_is_built() -> None:
    with pytest.raises(UnknownToolCallFormatError, match="removed"):
        create_streaming_handler("native", env={})
    with pytest.raises(UnknownToolCallFormatError, match=ENV):
        create_streaming_handler(parse_tool_calls=False, env={ENV: "bogus"})


def test_callbacks_and_prefix_reach_the_api_handler() -> None:
    events: list[SegmentEvent] = []
    invocations: list[ToolInvocation] = []
    handler = create_streaming_handler(
        "api_tool_call",
        on_segment_event=events.append,
        on_tool_invocation=invocations.append,
        segment_id_prefix="turn7:",
        env={},
    )
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, call_id="call_1", name="f", arguments_delta="{}")]))
    handler.finalize()
    assert events == handler.get_all_events()
    assert all(event.segment_id.startswith("turn7:") for event in events)
    assert invocations == [ToolInvocation(id="call_1", name="f", arguments={})]


def test_callbacks_and_prefix_reach_the_pass_through_handler() -> None:
    events: list[SegmentEvent] = []
    handler = create_streaming_handler(
        "json", parse_tool_calls=False, on_segment_event=events.append, segment_id_prefix="p-", env={}
    )
    handler.feed(ChunkResponse(content="hello"))
    handler.finalize()
    assert [event.delta for event in events] == ["", "hello", ""]
    assert all(event.segment_id.startswith("p-") for event in events)


@pytest.mark.parametrize("fmt", ["xml", "json", "sentinel"])
def test_callbacks_and_prefix_reach_the_parsing_handler(fmt: str) -> None:
    events: list[SegmentEvent] = []
    invocations: list[ToolInvocation] = []
    handler = create_streaming_handler(
        fmt, on_segment_event=events.append, on_tool_invocation=invocations.append, segment_id_prefix="q-", env={}
    )
    handler.feed(ChunkResponse(content="plain text, no tool call"))
    handler.finalize()
    assert events
    assert events == handler.get_all_events()
    assert all(event.segment_id.startswith("q-") for event in events)
    assert invocations == []
