"""Tool definitions, their per-provider schemas, and ``tool_choice`` (seed 002, seed 000 section 13).

One ``ToolDefinition`` describes a tool once; ``format_tools(target, tools)`` renders it for a
provider and ``format_tool_choice(target, choice)`` renders which tool the model may or must call.
``tool_params(target, tools, choice)`` returns both as the keyword arguments of the provider's SDK
call (for Gemini: the ``GenerateContentConfig`` fields)::

    from reference_impl.tools import ToolChoice, ToolDefinition, tool_params

    weather = ToolDefinition("get_weather", "Current weather", {"type": "object", "properties": {...}})
    client.chat.completions.create(model=..., messages=..., **tool_params("openai-chat", [weather]))

Targets (``TOOL_TARGETS``) and what they get:

===================  ==============================================  ============================================
target               tools                                           tool_choice auto / none / required / named
===================  ==============================================  ============================================
``openai-chat``      ``{"type": "function", "function": {name,       ``"auto"`` / ``"none"`` / ``"required"`` /
``deepseek``         description, parameters}}`` (+ ``strict``)      ``{"type": "function", "function": {name}}``
``openai-responses`` ``{"type": "function", name, description,       ``"auto"`` / ``"none"`` / ``"required"`` /
                     parameters, "strict": false}``                  ``{"type": "function", "name": name}``
``anthropic``        ``{name, description, input_schema}``           ``{"type": "auto" | "none" | "any"}`` /
                                                                     ``{"type": "tool", "name": name}``
``gemini``           ``[{"functionDeclarations": [{name,             ``{"functionCallingConfig": {"mode": "AUTO" |
                     description, parametersJsonSchema}]}]``         "NONE" | "ANY", "allowedFunctionNames"}}``
``ollama``           like OpenAI Chat (``/api/chat``)                only ``auto`` (the field is omitted);
                                                                     anything else: ``UnsupportedToolChoiceError``
``bedrock-converse`` ``{"toolConfig": {"tools": [{"toolSpec":        ``toolConfig.toolChoice`` ``{"auto": {}}`` /
                     {name, description, "inputSchema": {"json":     none: unsupported / ``{"any": {}}`` /
                     schema}}}], "toolChoice": ...}}``               ``{"tool": {"name": name}}``
``cohere-v2``        like OpenAI Chat (``/v2/chat``)                 omitted / ``"NONE"`` / ``"REQUIRED"`` /
                                                                     named: unsupported
===================  ==============================================  ============================================

Corrections to the seeds: Gemini takes one ``Tool`` holding a ``functionDeclarations`` *list*
(seed 002 writes a singular ``functionDeclaration`` per tool); the Responses API defaults ``strict``
to true, which rejects ordinary schemas, so it is always sent explicitly; Anthropic's "required"
is spelled ``any``; Gemini's schema goes to ``parametersJsonSchema`` (full JSON Schema, passed
verbatim) unless ``gemini_json_schema=False`` asks for the OpenAPI-subset ``parameters`` field.
``parallel=False`` maps to ``parallel_tool_calls: false`` (OpenAI) and
``disable_parallel_tool_use`` (Anthropic); Gemini, Ollama, Bedrock Converse and Cohere have no such
switch and refuse it. Bedrock Converse has no "none" (send no tools instead) and Cohere no named
choice: both refuse them rather than send a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reference_impl.frozen import freeze, thaw

__all__ = [
    "TOOL_NAME_PATTERN",
    "TOOL_TARGETS",
    "ToolChoice",
    "ToolChoiceError",
    "ToolDefinition",
    "ToolDefinitionError",
    "UnsupportedToolChoiceError",
    "format_tool_choice",
    "format_tools",
    "tool_params",
]

# Matched with fullmatch: "$" alone also matches before a trailing newline ("get_weather\n" is no name).
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# Every target a formatter in this package knows. "deepseek" is the OpenAI Chat wire format with
# the DeepSeek/Kimi thinking-mode profile (reasoning_content is passed back; taxonomy G09).
TOOL_TARGETS = (
    "openai-chat",
    "deepseek",
    "openai-responses",
    "anthropic",
    "gemini",
    "ollama",
    "bedrock-converse",
    "cohere-v2",
)

_EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


class ToolDefinitionError(ValueError):
    """A tool definition no provider would accept (bad name, non-object schema, duplicate name)."""


class ToolChoiceError(ValueError):
    """A ``tool_choice`` that makes no sense for the tools given (an unknown tool, no tools at all)."""


class UnsupportedToolChoiceError(ToolChoiceError):
    """The target provider cannot express this ``tool_choice``; nothing is sent silently instead."""


def _check_target(target: str) -> None:
    if target not in TOOL_TARGETS:
        raise ValueError(f"unknown target {target!r}; expected one of {', '.join(TOOL_TARGETS)}")


@dataclass(frozen=True)
class ToolDefinition:
    """A tool the model may call: a name, a description and a JSON Schema for its (object) arguments.

    The name must match ``^[a-zA-Z0-9_-]{1,64}$``, the rule OpenAI and Gemini enforce (Anthropic
    allows 128 characters; the stricter common rule keeps one definition valid everywhere). Names
    are never rewritten here: sanitising ``notion.search`` into ``notion_search`` silently collides
    with a real ``notion_search`` tool and dispatches to the wrong one (taxonomy G12), so an invalid
    name is an error that says which characters to change. ``parameters`` is a JSON Schema whose
    ``type`` (when given) is ``"object"``: tool arguments are always a JSON object. It is stored
    read-only; formatters hand out fresh copies. ``strict=True`` asks OpenAI for strict schema
    adherence (the schema must then satisfy OpenAI's strict-mode rules).
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(_EMPTY_PARAMETERS))
    strict: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.fullmatch(self.name):
            bad = sorted({c for c in str(self.name) if not re.match(r"[a-zA-Z0-9_-]", c)})
            reason = (
                f"it contains {''.join(bad)!r}"
                if bad
                else ("it is empty" if not self.name else f"it has {len(str(self.name))} characters")
            )
            raise ToolDefinitionError(
                f"tool name {self.name!r} is invalid ({reason}): names must match ^[a-zA-Z0-9_-]{{1,64}}$ "
                "(letters, digits, '_' and '-', 1 to 64 characters). Rename the tool explicitly; names are "
                "never rewritten automatically, because a rewritten name can collide with another tool (G12)"
            )
        if not isinstance(self.description, str):
            raise ToolDefinitionError(
                f"tool {self.name!r}: description must be a str, got {type(self.description).__name__}"
            )
        if not isinstance(self.parameters, Mapping):
            raise ToolDefinitionError(
                f"tool {self.name!r}: parameters must be a JSON Schema object (a mapping), "
                f"got {type(self.parameters).__name__}"
            )
        schema_type = self.parameters.get("type", "object")
        if schema_type != "object":
            raise ToolDefinitionError(
                f"tool {self.name!r}: parameters must describe a JSON object (type 'object'), got type "
                f"{schema_type!r}; wrap a single value in an object property"
            )
        try:
            json.dumps(thaw(self.parameters), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ToolDefinitionError(f"tool {self.name!r}: parameters are not JSON-serialisable: {error}") from None
        if not isinstance(self.strict, bool):
            raise ToolDefinitionError(f"tool {self.name!r}: strict must be a bool")
        object.__setattr__(self, "parameters", freeze(dict(self.parameters)))

    def schema(self) -> dict[str, Any]:
        """A fresh, mutable copy of ``parameters``."""
        copy: dict[str, Any] = thaw(self.parameters)
        return copy


ChoiceMode = Literal["auto", "none", "required", "named"]


@dataclass(frozen=True)
class ToolChoice:
    """Whether the model may, must not, or must call a tool, or must call one named tool.

    ``ToolChoice("auto")``, ``ToolChoice("none")``, ``ToolChoice("required")`` or
    ``ToolChoice.named("get_weather")``; the plain strings ``"auto"``/``"none"``/``"required"``
    are accepted wherever a choice is. ``parallel=False`` additionally asks for at most one call.
    """

    mode: ChoiceMode = "auto"
    name: str | None = None
    parallel: bool | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "none", "required", "named"):
            raise ToolChoiceError(
                f"tool_choice mode must be 'auto', 'none', 'required' or 'named', got {self.mode!r}; "
                "for one specific tool use ToolChoice.named(name)"
            )
        if (self.mode == "named") != (self.name is not None):
            raise ToolChoiceError("a named tool_choice needs a name, and only a named one may have one")
        if self.name is not None and not TOOL_NAME_PATTERN.fullmatch(self.name):
            raise ToolChoiceError(f"tool_choice names a tool {self.name!r} that is not a valid tool name")

    @classmethod
    def named(cls, name: str, *, parallel: bool | None = None) -> ToolChoice:
        """The model must call the tool ``name``."""
        return cls("named", name, parallel)

    @classmethod
    def coerce(cls, value: ToolChoice | str | None) -> ToolChoice:
        """A ``ToolChoice`` from a choice or one of the strings ``auto``, ``none``, ``required`` (None: auto)."""
        if value is None:
            return cls()
        if isinstance(value, ToolChoice):
            return value
        if isinstance(value, str) and value in ("auto", "none", "required"):
            return cls(value)  # type: ignore[arg-type]
        raise ToolChoiceError(
            f"tool_choice {value!r} is not 'auto', 'none', 'required' or a ToolChoice; "
            "for one specific tool use ToolChoice.named(name)"
        )


def _checked_tools(tools: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    listed = list(tools)
    seen: set[str] = set()
    for tool in listed:
        if not isinstance(tool, ToolDefinition):
            raise TypeError(f"tools must be ToolDefinition objects, got {type(tool).__name__}")
        if tool.name in seen:
            raise ToolDefinitionError(
                f"two tools are named {tool.name!r}; names identify tools in the provider's reply and must be unique"
            )
        seen.add(tool.name)
    return listed


def format_tools(
    target: str, tools: Iterable[ToolDefinition], *, gemini_json_schema: bool = True
) -> list[dict[str, Any]]:
    """The ``tools`` request field for ``target`` (Gemini: one ``Tool`` holding every declaration)."""
    _check_target(target)
    listed = _checked_tools(tools)
    if target in ("openai-chat", "deepseek", "ollama", "cohere-v2"):
        formatted = []
        for tool in listed:
            function: dict[str, Any] = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.schema(),
            }
            if tool.strict and target in ("openai-chat", "deepseek"):
                function["strict"] = True
            formatted.append({"type": "function", "function": function})
        return formatted
    if target == "bedrock-converse":
        return [
            {"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": t.schema()}}}
            for t in listed
        ]
    if target == "openai-responses":
        # Responses defaults strict to true; an ordinary schema would then be rejected.
        return [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.schema(),
                "strict": tool.strict,
            }
            for tool in listed
        ]
    if target == "anthropic":
        return [{"name": tool.name, "description": tool.description, "input_schema": tool.schema()} for tool in listed]
    # gemini
    if not listed:
        return []
    key = "parametersJsonSchema" if gemini_json_schema else "parameters"
    return [{"functionDeclarations": [{"name": t.name, "description": t.description, key: t.schema()} for t in listed]}]


def _openai_choice(target: str, chosen: ToolChoice) -> Any:
    if chosen.mode != "named":
        return chosen.mode
    if target == "openai-responses":
        return {"type": "function", "name": chosen.name}
    return {"type": "function", "function": {"name": chosen.name}}


def _anthropic_choice(_target: str, chosen: ToolChoice) -> Any:
    spelled = {"auto": "auto", "none": "none", "required": "any", "named": "tool"}[chosen.mode]
    value: dict[str, Any] = {"type": spelled}
    if chosen.name is not None:
        value["name"] = chosen.name
    if chosen.parallel is False:
        if chosen.mode == "none":
            raise UnsupportedToolChoiceError("anthropic: parallel=False means nothing with tool_choice 'none'")
        value["disable_parallel_tool_use"] = True
    return value


def _no_parallel_switch(target: str, chosen: ToolChoice, why: str) -> None:
    if chosen.parallel is False:
        raise UnsupportedToolChoiceError(f"{target} has no switch to forbid parallel function calls; {why}")


def _gemini_choice(target: str, chosen: ToolChoice) -> Any:
    _no_parallel_switch(target, chosen, "leave parallel unset and handle several calls, or ask for one in the prompt")
    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "named": "ANY"}[chosen.mode]
    config: dict[str, Any] = {"mode": mode}
    if chosen.name is not None:
        config["allowedFunctionNames"] = [chosen.name]
    return {"functionCallingConfig": config}


def _ollama_choice(_target: str, chosen: ToolChoice) -> Any:
    # /api/chat has neither tool_choice nor a parallel switch.
    if chosen.mode != "auto" or chosen.parallel is False:
        raise UnsupportedToolChoiceError(
            f"ollama's /api/chat has no tool_choice (asked for {chosen.mode!r}"
            + (f" {chosen.name!r}" if chosen.name else "")
            + (", parallel=False" if chosen.parallel is False else "")
            + "); the model always decides. To forbid tools, send no tools; to force one, say so in the prompt"
        )
    return None


def _bedrock_choice(target: str, chosen: ToolChoice) -> Any:
    _no_parallel_switch(target, chosen, "leave parallel unset and handle several calls")
    if chosen.mode == "none":
        raise UnsupportedToolChoiceError(
            "bedrock-converse has no 'none' tool choice (only auto, any and tool); to forbid tools, send no toolConfig"
        )
    if chosen.mode == "named":
        return {"tool": {"name": chosen.name}}
    return {"auto": {}} if chosen.mode == "auto" else {"any": {}}


def _cohere_choice(target: str, chosen: ToolChoice) -> Any:
    _no_parallel_switch(target, chosen, "leave parallel unset and handle several calls")
    if chosen.mode == "named":
        raise UnsupportedToolChoiceError(
            f"cohere-v2 has no named tool choice (only REQUIRED and NONE); to force {chosen.name!r}, send only it"
        )
    return {"auto": None, "none": "NONE", "required": "REQUIRED"}[chosen.mode]


_CHOICES: dict[str, Callable[[str, ToolChoice], Any]] = {
    "openai-chat": _openai_choice,
    "deepseek": _openai_choice,
    "openai-responses": _openai_choice,
    "anthropic": _anthropic_choice,
    "gemini": _gemini_choice,
    "ollama": _ollama_choice,
    "bedrock-converse": _bedrock_choice,
    "cohere-v2": _cohere_choice,
}


def format_tool_choice(
    target: str, choice: ToolChoice | str | None, tools: Sequence[ToolDefinition] | None = None
) -> Any:
    """The ``tool_choice`` value for ``target`` (Gemini: the ``toolConfig``; Bedrock: ``toolConfig.toolChoice``).

    ``None`` means "omit the field". With ``tools`` given, a named choice must name one of them.
    Raises ``UnsupportedToolChoiceError`` when the provider cannot express the choice.
    """
    _check_target(target)
    chosen = ToolChoice.coerce(choice)
    if tools is not None and chosen.name is not None and chosen.name not in {t.name for t in tools}:
        raise ToolChoiceError(
            f"tool_choice names {chosen.name!r}, which is not among the tools sent ({', '.join(t.name for t in tools)})"
        )
    return _CHOICES[target](target, chosen)


def tool_params(
    target: str,
    tools: Sequence[ToolDefinition],
    choice: ToolChoice | str | None = "auto",
    *,
    gemini_json_schema: bool = True,
) -> dict[str, Any]:
    """The tool-related keyword arguments of ``target``'s SDK call (Gemini: ``GenerateContentConfig`` fields;
    Bedrock Converse: ``toolConfig``; Cohere: ``tools`` and ``tool_choice`` of ``ClientV2.chat_stream``).

    No tools -> ``{}`` (OpenAI rejects a ``tool_choice`` without ``tools``); a choice other than
    ``auto``/``none`` without tools is a ``ToolChoiceError``.
    """
    _check_target(target)
    chosen = ToolChoice.coerce(choice)
    listed = _checked_tools(tools)
    if not listed:
        if chosen.mode in ("required", "named"):
            raise ToolChoiceError(f"tool_choice {chosen.mode!r} needs at least one tool")
        return {}
    formatted = format_tools(target, listed, gemini_json_schema=gemini_json_schema)
    value = format_tool_choice(target, chosen, listed)
    if target == "bedrock-converse":
        return {"toolConfig": {"tools": formatted, "toolChoice": value}}
    params: dict[str, Any] = {"tools": formatted}
    if target == "gemini":
        params["tool_config"] = value
    elif value is not None:
        params["tool_choice"] = value
    if chosen.parallel is not None and target in ("openai-chat", "deepseek", "openai-responses"):
        params["parallel_tool_calls"] = chosen.parallel
    return params
