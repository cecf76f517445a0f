"""ToolDefinition, per-provider tool schemas and tool_choice (reference_impl.tools)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.roundtrip import capture_request
from reference_impl.followup import user_message
from reference_impl.tools import (
    TOOL_TARGETS,
    ToolChoice,
    ToolChoiceError,
    ToolDefinition,
    ToolDefinitionError,
    UnsupportedToolChoiceError,
    format_tool_choice,
    format_tools,
    tool_params,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolDefinition("get_weather", "Current weather.", SCHEMA)
TIME = ToolDefinition("get-time", "Local time.")


# -- ToolDefinition --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "get_weather", "get-time", "A1_b-2", "x" * 64])
def test_valid_names_are_accepted(name: str) -> None:
    assert ToolDefinition(name).name == name


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "it is empty"),
        ("x" * 65, "65 characters"),
        ("notion.search", "'.'"),
        ("my tool", "' '"),
        ("mcp/server:tool", "'/:'"),
        ("café", "'é'"),
    ],
)
def test_invalid_names_raise_a_clear_error(name: str, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        ToolDefinition(name)
    message = str(raised.value)
    assert fragment in message
    assert "^[a-zA-Z0-9_-]{1,64}$" in message
    assert "never rewritten" in message  # the G12 reason, so nobody "fixes" it with a sanitiser


@given(st.text(min_size=1, max_size=70))
def test_name_rule_is_exactly_the_regex(name: str) -> None:
    import re

    valid = re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) is not None
    try:
        ToolDefinition(name)
    except ToolDefinitionError:
        assert not valid
    else:
        assert valid


@pytest.mark.parametrize(
    "parameters",
    [{"type": "string"}, {"type": "array", "items": {}}, ["not", "a", "mapping"], {"type": "object", "x": {1, 2}}],
)
def test_parameters_must_be_a_json_object_schema(parameters: Any) -> None:
    with pytest.raises(ToolDefinitionError):
        ToolDefinition("f", "d", parameters)


def test_description_must_be_text() -> None:
    with pytest.raises(ToolDefinitionError):
        ToolDefinition("f", 3)  # type: ignore[arg-type]


def test_default_parameters_is_an_empty_object_schema() -> None:
    assert ToolDefinition("list_tasks").schema() == {"type": "object", "properties": {}}


def test_parameters_are_read_only_and_schema_returns_fresh_copies() -> None:
    source = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = ToolDefinition("f", "d", source)
    source["properties"]["b"] = {}  # the caller's dict is not shared
    assert "b" not in tool.parameters["properties"]
    with pytest.raises(TypeError):
        tool.parameters["properties"]["c"] = {}  # type: ignore[index]
    copy = tool.schema()
    copy["properties"]["c"] = {}
    assert "c" not in tool.schema()["properties"]


# -- formats -------------------------------------------------------------------------------------


def test_openai_chat_format() -> None:
    assert format_tools("openai-chat", [WEATHER]) == [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Current weather.", "parameters": SCHEMA},
        }
    ]


def test_strict_goes_to_openai_only() -> None:
    strict = ToolDefinition("f", "d", strict=True)
    assert format_tools("openai-chat", [strict])[0]["function"]["strict"] is True
    assert format_tools("openai-responses", [strict])[0]["strict"] is True
    assert "strict" not in format_tools("ollama", [strict])[0]["function"]
    assert "strict" not in format_tools("openai-chat", [WEATHER])[0]["function"]


def test_responses_format_always_says_strict() -> None:
    # The Responses API defaults strict to true; a plain schema must say false explicitly.
    assert format_tools("openai-responses", [WEATHER]) == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": SCHEMA,
            "strict": False,
        }
    ]


def test_anthropic_format() -> None:
    assert format_tools("anthropic", [WEATHER]) == [
        {"name": "get_weather", "description": "Current weather.", "input_schema": SCHEMA}
    ]


def test_gemini_format_is_one_tool_with_every_declaration() -> None:
    assert format_tools("gemini", [WEATHER, TIME]) == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "Current weather.", "parametersJsonSchema": SCHEMA},
                {
                    "name": "get-time",
                    "description": "Local time.",
                    "parametersJsonSchema": {"type": "object", "properties": {}},
                },
            ]
        }
    ]
    assert "parameters" in format_tools("gemini", [WEATHER], gemini_json_schema=False)[0]["functionDeclarations"][0]
    assert format_tools("gemini", []) == []


def test_ollama_and_deepseek_use_the_openai_function_shape() -> None:
    assert format_tools("ollama", [WEATHER]) == format_tools("openai-chat", [WEATHER])
    assert format_tools("deepseek", [WEATHER]) == format_tools("openai-chat", [WEATHER])


def test_duplicate_names_and_unknown_targets_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="unique"):
        format_tools("openai-chat", [WEATHER, WEATHER])
    with pytest.raises(ValueError, match="unknown target"):
        format_tools("bedrock", [WEATHER])
    with pytest.raises(TypeError):
        format_tools("openai-chat", [{"name": "f"}])  # type: ignore[list-item]


def test_formatted_schemas_are_independent_copies() -> None:
    first = format_tools("anthropic", [WEATHER])
    first[0]["input_schema"]["properties"]["city"]["type"] = "number"
    assert format_tools("anthropic", [WEATHER])[0]["input_schema"] == SCHEMA


# -- tool_choice -----------------------------------------------------------------------------------

EXPECTED_CHOICES: dict[str, dict[str, Any]] = {
    "openai-chat": {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "function": {"name": "get_weather"}},
    },
    "openai-responses": {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "name": "get_weather"},
    },
    "anthropic": {
        "auto": {"type": "auto"},
        "none": {"type": "none"},
        "required": {"type": "any"},
        "named": {"type": "tool", "name": "get_weather"},
    },
    "gemini": {
        "auto": {"functionCallingConfig": {"mode": "AUTO"}},
        "none": {"functionCallingConfig": {"mode": "NONE"}},
        "required": {"functionCallingConfig": {"mode": "ANY"}},
        "named": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
    },
}
EXPECTED_CHOICES["deepseek"] = EXPECTED_CHOICES["openai-chat"]
# From the Bedrock Converse API reference (ToolChoice: auto | any | tool) and Cohere's v2 chat
# reference (tool_choice: REQUIRED | NONE, omitted for the model's own choice).
LIBRARY_CHOICES: dict[str, dict[str, Any]] = {
    "bedrock-converse": {"auto": {"auto": {}}, "required": {"any": {}}, "named": {"tool": {"name": "get_weather"}}},
    "cohere-v2": {"auto": None, "none": "NONE", "required": "REQUIRED"},
}


def _choice(label: str) -> ToolChoice | str:
    return ToolChoice.named("get_weather") if label == "named" else label


@pytest.mark.parametrize("target", sorted(EXPECTED_CHOICES))
@pytest.mark.parametrize("label", ["auto", "none", "required", "named"])
def test_tool_choice_table(target: str, label: str) -> None:
    assert format_tool_choice(target, _choice(label), [WEATHER]) == EXPECTED_CHOICES[target][label]


@pytest.mark.parametrize("target", sorted(LIBRARY_CHOICES))
@pytest.mark.parametrize("label", ["auto", "none", "required", "named"])
def test_tool_choice_table_of_bedrock_and_cohere(target: str, label: str) -> None:
    expected = LIBRARY_CHOICES[target]
    if label not in expected:
        with pytest.raises(UnsupportedToolChoiceError, match=target):
            format_tool_choice(target, _choice(label), [WEATHER])
        return
    assert format_tool_choice(target, _choice(label), [WEATHER]) == expected[label]


def test_bedrock_and_cohere_tool_schemas() -> None:
    [bedrock] = format_tools("bedrock-converse", [WEATHER])
    assert bedrock == {
        "toolSpec": {"name": "get_weather", "description": WEATHER.description, "inputSchema": {"json": SCHEMA}}
    }
    assert tool_params("bedrock-converse", [WEATHER]) == {
        "toolConfig": {"tools": [bedrock], "toolChoice": {"auto": {}}}
    }
    [cohere] = format_tools("cohere-v2", [WEATHER])
    assert cohere == {
        "type": "function",
        "function": {"name": "get_weather", "description": WEATHER.description, "parameters": SCHEMA},
    }
    assert tool_params("cohere-v2", [WEATHER], "required") == {"tools": [cohere], "tool_choice": "REQUIRED"}


@pytest.mark.parametrize("label", ["none", "required", "named"])
def test_ollama_refuses_what_it_cannot_express(label: str) -> None:
    with pytest.raises(UnsupportedToolChoiceError, match="ollama"):
        format_tool_choice("ollama", _choice(label))
    assert format_tool_choice("ollama", "auto") is None


def test_parallel_false_per_provider() -> None:
    single = ToolChoice("auto", parallel=False)
    assert tool_params("openai-chat", [WEATHER], single)["parallel_tool_calls"] is False
    assert tool_params("openai-responses", [WEATHER], single)["parallel_tool_calls"] is False
    assert tool_params("anthropic", [WEATHER], single)["tool_choice"] == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }
    for target in ("gemini", "ollama", "bedrock-converse", "cohere-v2"):
        with pytest.raises(UnsupportedToolChoiceError):
            tool_params(target, [WEATHER], single)
    with pytest.raises(UnsupportedToolChoiceError):
        format_tool_choice("anthropic", ToolChoice("none", parallel=False))


def test_choice_validation() -> None:
    with pytest.raises(ToolChoiceError, match=r"ToolChoice\.named"):
        ToolChoice.coerce("get_weather")
    with pytest.raises(ToolChoiceError):
        ToolChoice("named")
    with pytest.raises(ToolChoiceError):
        ToolChoice("auto", "get_weather")
    with pytest.raises(ToolChoiceError):
        ToolChoice("sometimes")  # type: ignore[arg-type]
    with pytest.raises(ToolChoiceError, match="not among the tools"):
        format_tool_choice("openai-chat", ToolChoice.named("get_time"), [WEATHER])
    assert ToolChoice.coerce(None) == ToolChoice("auto")
    assert issubclass(UnsupportedToolChoiceError, ValueError)


def test_tool_params_shapes() -> None:
    assert tool_params("openai-chat", [WEATHER]) == {
        "tools": format_tools("openai-chat", [WEATHER]),
        "tool_choice": "auto",
    }
    assert set(tool_params("gemini", [WEATHER])) == {"tools", "tool_config"}
    assert tool_params("ollama", [WEATHER]) == {"tools": format_tools("ollama", [WEATHER])}
    # No tools: nothing at all (OpenAI rejects tool_choice without tools) ...
    assert tool_params("openai-chat", []) == {}
    assert tool_params("anthropic", [], "none") == {}
    # ... and a choice that needs a tool is an error.
    with pytest.raises(ToolChoiceError, match="at least one tool"):
        tool_params("anthropic", [], "required")


# -- through the real SDKs -------------------------------------------------------------------------


@pytest.mark.parametrize("target", [t for t in TOOL_TARGETS if t not in ("ollama", *LIBRARY_CHOICES)])
@pytest.mark.parametrize("label", ["auto", "none", "required", "named"])
def test_the_sdk_sends_tools_and_choice_unchanged(target: str, label: str) -> None:
    params = tool_params(target, [WEATHER, TIME], _choice(label))
    captured = capture_request(target, [user_message(target, "hi")], params)
    assert captured.error is None, captured.error
    assert captured.json is not None
    sent = captured.json
    if target == "gemini":
        assert sent["toolConfig"] == EXPECTED_CHOICES[target][label]
        declarations = sent["tools"][0]["functionDeclarations"]
        # google-genai serialises this one field in snake_case on the wire; the API accepts both.
        assert [d["name"] for d in declarations] == ["get_weather", "get-time"]
        assert declarations[0]["parameters_json_schema"] == SCHEMA
    else:
        assert sent["tool_choice"] == EXPECTED_CHOICES[target][label]
        assert json.dumps(sent["tools"], sort_keys=True) == json.dumps(params["tools"], sort_keys=True)


@pytest.mark.parametrize("target", sorted(LIBRARY_CHOICES))
@pytest.mark.parametrize("label", ["auto", "none", "required", "named"])
def test_the_library_sends_tools_and_choice_unchanged(target: str, label: str) -> None:
    if label not in LIBRARY_CHOICES[target]:
        return  # refused before anything is sent (test_tool_choice_table_of_bedrock_and_cohere)
    params = tool_params(target, [WEATHER, TIME], _choice(label))
    captured = capture_request(target, [user_message(target, "hi")], params)
    assert captured.error is None, captured.error
    assert captured.json is not None
    if target == "bedrock-converse":
        assert captured.json["toolConfig"] == params["toolConfig"]
    else:
        assert captured.json.get("tool_choice") == LIBRARY_CHOICES[target][label]
        assert json.dumps(captured.json["tools"], sort_keys=True) == json.dumps(params["tools"], sort_keys=True)
