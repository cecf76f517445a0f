"""Property tests for the text parsers: render a logical response, cut it anywhere, get it back.

A logical response is a list of items: prose, tool calls (arbitrary JSON-object arguments with
unicode, escapes, markers inside strings, deep nesting and ``{}``; for xml, string / object / list
values since xml values are strings), fenced code examples of tool calls, and (json) JSON values
without a tool shape. Each item is rendered in the format (with random whitespace, key order,
quoting, case, escaping and envelope), the rendering is cut into chunks at arbitrary points
(empty and one-character chunks included, reasoning on some chunks), and the handler's output is
compared with the *logical response*: the same invocations, TEXT equal to the rendered prose,
each tool segment's content equal to its rendered block, everything concatenated equal to the
input. The unfragmented stream is a second check, not the source of the expectations.

Prose alphabets are chosen so that prose can never complete an opener by itself (xml prose has
no ``=``, sentinel prose no ``{``, json prose no ``{``/``[``) and never contains backticks (fences
are their own items); prose still contains partial markers right before real calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_parsers_support import run

from reference_impl import ChunkResponse

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Rendered:
    """One item of a logical response, rendered: its text, whether that text is TEXT, its calls."""

    text: str
    is_text: bool
    calls: tuple[tuple[str, Any], ...] = ()


# -- values ------------------------------------------------------------------------------------------

TRICKY = [
    "</tool>",
    "[[SEG_END]]",
    "[[SEG_START",
    '"',
    "\\",
    "\\u0041",
    "}",
    "]",
    "{",
    "[",
    '<arg name="x">',
    "</arg>",
    "<item>",
    "&amp;",
    "&lt;",
    "&",
    "<",
    "```",
    "\n",
    "\t",
    "\r",
    "\u2028",
    "\x00",
    "\U0001f600",
    "é",
    " ",
]

strings = st.lists(st.text(max_size=6) | st.sampled_from(TRICKY), max_size=5).map("".join)
keys = strings | st.sampled_from(["tool", "name", "args", "function", "parameters", "arguments", "tool_calls"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False)
    | strings
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


@st.composite
def deep_value(draw: st.DrawFn) -> Any:
    """A scalar nested 10-80 levels deep in lists and one-key objects."""
    value: Any = draw(scalars)
    key = draw(keys)
    pattern = draw(st.integers(0, 2**16 - 1))
    for level in range(draw(st.integers(10, 80))):
        value = [value] if pattern >> (level % 16) & 1 else {key: value}
    return value


json_objects = st.dictionaries(keys, json_values | deep_value(), max_size=5)

xml_values = st.recursive(
    strings,
    lambda children: (
        st.lists(children, min_size=1, max_size=3) | st.dictionaries(keys, children, min_size=1, max_size=3)
    ),
    max_leaves=10,
)
xml_objects = st.dictionaries(keys, xml_values, max_size=4)

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,30}", fullmatch=True)
tool_names = identifiers | st.text(min_size=1, max_size=8)
# Backtick-free values for calls shown inside code fences (a backtick run there would end the fence).
plain_strings = st.text(alphabet=st.characters(blacklist_characters="`", blacklist_categories=["Cs"]), max_size=8)
plain_objects = st.dictionaries(plain_strings, plain_strings | st.integers(), max_size=3)
plain_xml_objects = st.dictionaries(plain_strings, plain_strings, max_size=3)


def prose(forbidden: str, fragments: list[str]) -> st.SearchStrategy[str]:
    chars = st.text(alphabet=st.characters(blacklist_characters=forbidden + "`", blacklist_categories=["Cs"]))
    return st.lists(chars | st.sampled_from(fragments), max_size=4).map("".join)


# -- rendering: xml ------------------------------------------------------------------------------------


def xml_text(value: str, escape_gt: bool) -> str:
    text = value.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace(">", "&gt;") if escape_gt else text


def xml_attr(value: str, quote: str) -> str:
    text = value.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace(quote, "&quot;" if quote == '"' else "&apos;")


class _XmlRenderer:
    """Renders argument values as ``<arg>``/``<item>`` elements, drawing the spelling of each tag."""

    def __init__(self, draw: st.DrawFn, sep: str, quote: str, escape_gt: bool) -> None:
        self.draw = draw
        self.sep = sep
        self.quote = quote
        self.escape_gt = escape_gt

    def tag(self, word: str) -> str:
        return self.draw(st.sampled_from([word, word.upper(), word.title()]))

    def element(self, value: Any) -> str:
        sep = self.sep
        if isinstance(value, dict):
            return sep + sep.join(self.arg(key, item) for key, item in value.items()) + sep
        if isinstance(value, list):
            return sep + sep.join(self.item(entry) for entry in value) + sep
        return xml_text(value, self.escape_gt)

    def arg(self, key: str, value: Any) -> str:
        quote = self.quote
        head = f"<{self.tag('arg')} {self.tag('name')}={quote}{xml_attr(key, quote)}{quote}"
        if value == "" and self.draw(st.booleans()):
            return head + "/>"
        return f"{head}>{self.element(value)}</{self.tag('arg')}>"

    def item(self, value: Any) -> str:
        if value == "" and self.draw(st.booleans()):
            return f"<{self.tag('item')}/>"
        return f"<{self.tag('item')}>{self.element(value)}</{self.tag('item')}>"


@st.composite
def render_xml_call(draw: st.DrawFn, name: str, arguments: dict[str, Any]) -> str:
    sep = draw(st.sampled_from(["", "\n", "\n  ", " "]))
    quote = draw(st.sampled_from(['"', "'"]))
    escape_gt = draw(st.booleans())
    render = _XmlRenderer(draw, sep, quote, escape_gt)
    tag = render.tag

    space = draw(st.sampled_from([" ", "  ", "\n"]))
    opener = (
        f"<{tag('tool')}{space}{tag('name')}{draw(st.sampled_from(['=', ' = ']))}{quote}{xml_attr(name, quote)}{quote}"
    )
    if not arguments and draw(st.booleans()):
        return opener + draw(st.sampled_from(["/>", " />"]))
    body = sep.join(render.arg(key, value) for key, value in arguments.items())
    if draw(st.booleans()):
        body = f"<{tag('arguments')}>{sep}{body}{sep}</{tag('arguments')}>"
    return f"{opener}>{sep}{body}{sep}</{tag('tool')}>"


# -- rendering: sentinel -------------------------------------------------------------------------------


@st.composite
def dumps(draw: st.DrawFn, value: Any) -> str:
    return json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, None, None, 0, 1])),
        separators=draw(st.sampled_from([None, (",", ":"), (", ", ": ")])),
    )


@st.composite
def render_sentinel_call(draw: st.DrawFn, name: str, arguments: dict[str, Any]) -> str:
    header: dict[str, Any] = {"type": "tool_call", "tool_name": name}
    if draw(st.booleans()):
        header = {"tool_name": name, "type": "tool_call"}
    space = st.sampled_from(["", " ", "\n"])
    body = "" if not arguments and draw(st.booleans()) else draw(dumps(arguments))
    return f"[[SEG_START{draw(space)}{draw(dumps(header))}{draw(space)}]]{draw(space)}{body}{draw(space)}[[SEG_END]]"


# -- rendering: json -----------------------------------------------------------------------------------


@st.composite
def json_call_object(draw: st.DrawFn, name: str, arguments: dict[str, Any], shapes: list[str]) -> dict[str, Any]:
    shape = draw(st.sampled_from(shapes))
    if shape == "name_args":
        return {"name": name, "args": arguments}
    tool: dict[str, Any] = {"function": name, "parameters": arguments}
    if draw(st.booleans()):
        tool = {"parameters": arguments, "function": name}
    if not arguments and draw(st.booleans()):
        tool = {"function": name}  # no arguments key: {}
    return {"tool": tool}


@st.composite
def render_json_calls(draw: st.DrawFn, calls: list[tuple[str, dict[str, Any]]]) -> str:
    envelope = draw(st.sampled_from(["tool_calls", "list"] if len(calls) > 1 else ["single", "tool_calls", "list"]))
    if envelope == "single":
        value: Any = draw(json_call_object(*calls[0], ["tool", "name_args"]))
    elif envelope == "list":
        value = [draw(json_call_object(name, arguments, ["tool", "name_args"])) for name, arguments in calls]
    else:
        entries = []
        for index, (name, arguments) in enumerate(calls):
            encoded: Any = draw(dumps(arguments)) if draw(st.booleans()) else arguments
            entries.append(
                {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": encoded}}
            )
        value = {"tool_calls": entries}
    return draw(dumps(value))


@st.composite
def non_tool_json(draw: st.DrawFn) -> str:
    first = draw(keys.filter(lambda key: key not in ("tool", "tool_calls", "name")))
    rest = draw(st.dictionaries(keys, json_values, max_size=3))
    value: Any = {first: draw(json_values), **{k: v for k, v in rest.items() if k != first}}
    kind = draw(st.sampled_from(["object", "name_value", "list", "empty"]))
    if kind == "name_value":
        value = {"name": draw(strings), "value": draw(json_values)}
    elif kind == "list":
        value = [draw(scalars), value]
    elif kind == "empty":
        value = draw(st.sampled_from([{}, []]))
    text = draw(dumps(value))
    assume("`" not in text)  # a backtick run in prose JSON would open a fence (documented rule)
    return text


# -- logical responses -----------------------------------------------------------------------------------

FORMAT_PROSE = {
    "xml": prose("=", ["<tool", "<tool ", "<tool name", "</tool>", "<arg", "<", "<<", "&amp;", "<t", "[[SEG_START"]),
    "sentinel": prose("{", ["[[SEG_START", "[[SEG_START ", "[[", "[", "[[SEG_END]]", "]]", "SEG_", "<tool"]),
    "json": prose("{[", ['"tool":', '"name"', "}", "]", ":", '"args"', "<tool", "tool_calls"]),
}


@st.composite
def call_item(draw: st.DrawFn, fmt: str, *, plain: bool = False) -> Rendered:
    """A tool call (json: possibly several in one envelope); ``plain``: no backticks anywhere."""
    names = identifiers if plain else tool_names
    name = draw(names)
    if fmt == "xml":
        arguments = draw(plain_xml_objects if plain else xml_objects)
        return Rendered(draw(render_xml_call(name, arguments)), False, ((name, arguments),))
    arguments = draw(plain_objects if plain else json_objects)
    if fmt == "sentinel":
        return Rendered(draw(render_sentinel_call(name, arguments)), False, ((name, arguments),))
    more = st.tuples(names, plain_objects if plain else json_objects)
    calls = [(name, arguments), *draw(st.lists(more, max_size=2))]
    return Rendered(draw(render_json_calls(calls)), False, tuple(calls))


@st.composite
def fenced_item(draw: st.DrawFn, fmt: str) -> Rendered:
    """A tool call shown as an example in a fenced code block: all text."""
    block = draw(call_item(fmt, plain=True)).text
    return Rendered(f"\n{draw(st.sampled_from(['```', '````', '```json']))}\n{block}\n```` \n", True)


@st.composite
def items(draw: st.DrawFn, fmt: str) -> list[Rendered]:
    kinds = [call_item(fmt), call_item(fmt), FORMAT_PROSE[fmt].map(lambda text: Rendered(text, True)), fenced_item(fmt)]
    if fmt == "json":
        kinds.append(non_tool_json().map(lambda text: Rendered(text, True)))
    return draw(st.lists(st.one_of(kinds), max_size=6))


@st.composite
def chunked(draw: st.DrawFn, text: str) -> list[ChunkResponse]:
    if text and draw(st.integers(0, 4)) == 0:
        pieces = list(text)
    else:
        cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=24)))
        bounds = [0, *cuts, len(text)]
        pieces = [text[a:b] for a, b in pairwise(bounds)]
    reasoning = st.none() | st.sampled_from(["", "think", "<tool name='x'>"])
    return [ChunkResponse(content=piece, reasoning=draw(reasoning)) for piece in pieces]


@st.composite
def scenarios(draw: st.DrawFn, fmt: str) -> tuple[list[Rendered], list[ChunkResponse]]:
    response = draw(items(fmt))
    return response, draw(chunked("".join(item.text for item in response)))


def check(fmt: str, response: list[Rendered], chunks: list[ChunkResponse]) -> None:
    full = "".join(item.text for item in response)
    expected_calls = [call for item in response for call in item.calls]
    expected_text = "".join(item.text for item in response if item.is_text)

    outcome = run(fmt, chunks, finalize=not chunks or not chunks[-1].is_complete)
    assert outcome.everything == full
    assert outcome.text == expected_text
    assert outcome.calls == expected_calls
    assert outcome.reasoning == "".join(chunk.reasoning or "" for chunk in chunks)
    tools = outcome.tools
    assert all(tool.ok for tool in tools), [tool.end for tool in tools if not tool.ok]
    for item in response:
        if item.calls:
            mine, tools = tools[: len(item.calls)], tools[len(item.calls) :]
            assert [tool.name for tool in mine] == [name for name, _ in item.calls]
            assert "".join(tool.content for tool in mine) == item.text
    assert tools == []

    whole = run(fmt, [full])
    assert whole.calls == outcome.calls
    assert whole.text == outcome.text
    assert [(t.name, t.content, t.end) for t in whole.tools] == [(t.name, t.content, t.end) for t in outcome.tools]


@PROPERTY_SETTINGS
@given(scenarios("xml"))
def test_xml_rendered_responses_survive_any_chunking(scenario: tuple[list[Rendered], list[ChunkResponse]]) -> None:
    check("xml", *scenario)


@PROPERTY_SETTINGS
@given(scenarios("json"))
def test_json_rendered_responses_survive_any_chunking(scenario: tuple[list[Rendered], list[ChunkResponse]]) -> None:
    check("json", *scenario)


@PROPERTY_SETTINGS
@given(scenarios("sentinel"))
def test_sentinel_rendered_responses_survive_any_chunking(
    scenario: tuple[list[Rendered], list[ChunkResponse]],
) -> None:
    check("sentinel", *scenario)


GARBAGE = st.lists(
    st.sampled_from(
        [
            '<tool name="f">',
            "</tool>",
            '<arg name="a">',
            "</arg>",
            "<item>",
            "<arguments>",
            "&lt;",
            "&",
            "<",
            '[[SEG_START {"type": "tool_call", "tool_name": "f"}]]',
            "[[SEG_START",
            "[[SEG_END]]",
            '{"tool": {"function": "f", "parameters": ',
            '{"name": "f", "args": ',
            '{"tool_calls": [',
            "{",
            "}",
            "[",
            "]",
            '"',
            "\\",
            ",",
            ":",
            "```",
            "`",
            "\n",
            "x",
            " ",
        ]
    )
    | st.text(max_size=3),
    max_size=30,
).map("".join)


@PROPERTY_SETTINGS
@given(st.sampled_from(["xml", "json", "sentinel"]), GARBAGE, st.data())
def test_arbitrary_markup_soup_is_lossless_and_chunking_invariant(fmt: str, text: str, data: st.DataObject) -> None:
    chunks = data.draw(chunked(text))
    outcome = run(fmt, chunks)
    assert outcome.everything == text  # nothing lost, duplicated or reordered
    for tool in outcome.tools:
        assert tool.ok or tool.end["raw_arguments"] == tool.content
    whole = run(fmt, [text])
    assert whole.text == outcome.text
    assert whole.calls == outcome.calls
    assert [(t.name, t.content, t.end) for t in whole.tools] == [(t.name, t.content, t.end) for t in outcome.tools]
