"""The tool-parameter checks: tool schemas and ``tool_choice`` as each provider documents them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pydantic

from conformance.roundtrip.capture import CapturedRequest, explain_validation, materialise
from conformance.roundtrip.formatter import FormatterAdapter
from conformance.roundtrip.scenarios import TOOLSET_FOR_SCHEMAS
from conformance.roundtrip.wire_readers import ABSENT
from conformance.verdict import Check, CheckRegistry, Harm
from reference_impl.frozen import thaw
from reference_impl.tools import ToolChoice

__all__ = ["CHOICES", "TOOL_CHECKS", "TOOL_CHOICE_EXPECTATIONS", "ToolsContext"]


TOOL_CHOICE_EXPECTATIONS: dict[str, dict[str, Any]] = {
    "openai-chat": {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "function": {"name": "get_weather"}},
        "no_parallel": ("parallel_tool_calls", False),
    },
    "openai-responses": {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "name": "get_weather"},
        "no_parallel": ("parallel_tool_calls", False),
    },
    "anthropic": {
        "auto": {"type": "auto"},
        "none": {"type": "none"},
        "required": {"type": "any"},
        "named": {"type": "tool", "name": "get_weather"},
        "no_parallel": ("tool_choice.disable_parallel_tool_use", True),
    },
    "gemini": {
        "auto": {"functionCallingConfig": {"mode": "AUTO"}},
        "none": {"functionCallingConfig": {"mode": "NONE"}},
        "required": {"functionCallingConfig": {"mode": "ANY"}},
        "named": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        "no_parallel": "unsupported",
    },
    "ollama": {
        "auto": None,
        "none": "unsupported",
        "required": "unsupported",
        "named": "unsupported",
        "no_parallel": "unsupported",
    },
    "bedrock-converse": {
        "auto": {"auto": {}},
        "none": "unsupported",
        "required": {"any": {}},
        "named": {"tool": {"name": "get_weather"}},
        "no_parallel": "unsupported",
    },
    "cohere-v2": {
        "auto": None,
        "none": "NONE",
        "required": "REQUIRED",
        "named": "unsupported",
        "no_parallel": "unsupported",
    },
}
# Where each target's request carries the tool choice (dotted), when not ``tool_choice``.
_CHOICE_FIELD = {"gemini": "toolConfig", "bedrock-converse": "toolConfig.toolChoice"}
TOOL_CHOICE_EXPECTATIONS["deepseek"] = TOOL_CHOICE_EXPECTATIONS["openai-chat"]

CHOICES: dict[str, ToolChoice] = {
    "auto": ToolChoice("auto"),
    "none": ToolChoice("none"),
    "required": ToolChoice("required"),
    "named": ToolChoice.named("get_weather"),
    "no_parallel": ToolChoice("auto", parallel=False),
}


@dataclass
class ToolsContext:
    """One ``format_tools`` run per target, for the tool checks."""

    target: str
    formatter: FormatterAdapter
    schema_params: dict[str, Any] | None = None
    schema_error: str | None = None
    schema_request: CapturedRequest | None = None
    choices: dict[str, tuple[Any, str | None, CapturedRequest | None]] = field(default_factory=dict)
    # The choices whose format_tools raised a ValueError or NotImplementedError (a subclass counts):
    # the clear refusal the check asks for where a target cannot express a choice.
    refused_clearly: set[str] = field(default_factory=set)


_NOT_VERBATIM: Any = object()


def _tool_entries(target: str, request: Mapping[str, Any]) -> list[tuple[Any, Any, Any]]:
    """(name, description, schema) of each tool in a captured request.

    A Gemini declaration sent with ``parameters`` (the OpenAPI subset, which the SDK rewrites:
    ``STRING``, ``any_of``) has no verbatim schema to compare: its schema reads ``_NOT_VERBATIM``.
    """
    found = []
    if target == "bedrock-converse":
        config = request.get("toolConfig") or {}
        for tool in config.get("tools") or [] if isinstance(config, dict) else []:
            spec = tool.get("toolSpec") or {}
            schema = spec.get("inputSchema")
            found.append((spec.get("name"), spec.get("description"), (schema or {}).get("json", _NOT_VERBATIM)))
        return found
    for tool in request.get("tools") or []:
        if target == "gemini":
            declarations = tool.get("functionDeclarations", tool.get("function_declarations")) or []
            for declaration in declarations:
                schema = declaration.get(
                    "parametersJsonSchema", declaration.get("parameters_json_schema", _NOT_VERBATIM)
                )
                found.append((declaration.get("name"), declaration.get("description"), schema))
        elif target == "anthropic":
            found.append((tool.get("name"), tool.get("description"), tool.get("input_schema")))
        elif target == "openai-responses":
            found.append((tool.get("name"), tool.get("description"), tool.get("parameters")))
        else:
            function = tool.get("function") or {}
            found.append((function.get("name"), function.get("description"), function.get("parameters")))
    return found


_TOOL_TYPE_ADAPTERS: dict[str, pydantic.TypeAdapter[Any] | None] = {}


def _tools_type_errors(target: str, tools: Any) -> str | None:
    if target not in _TOOL_TYPE_ADAPTERS:
        config = pydantic.ConfigDict(strict=True)
        if target in ("openai-chat", "deepseek"):
            from openai.types.chat import ChatCompletionToolUnionParam

            _TOOL_TYPE_ADAPTERS[target] = pydantic.TypeAdapter(list[ChatCompletionToolUnionParam], config=config)
        elif target == "openai-responses":
            from openai.types.responses import ToolParam

            _TOOL_TYPE_ADAPTERS[target] = pydantic.TypeAdapter(list[ToolParam], config=config)
        elif target == "anthropic":
            from anthropic.types import ToolUnionParam

            _TOOL_TYPE_ADAPTERS[target] = pydantic.TypeAdapter(list[ToolUnionParam], config=config)
        else:
            _TOOL_TYPE_ADAPTERS[target] = None
    adapter = _TOOL_TYPE_ADAPTERS[target]
    if adapter is None:
        return None
    try:
        materialise(adapter.validate_python(thaw(tools)))
    except pydantic.ValidationError as error:
        return explain_validation(error)
    return None


def _dig(request: Mapping[str, Any], dotted: str) -> Any:
    value: Any = request
    for part in dotted.split("."):
        value = value.get(part, ABSENT) if isinstance(value, dict) else ABSENT
    return value


TOOL_CHECK_REGISTRY = CheckRegistry[ToolsContext]()


@TOOL_CHECK_REGISTRY.check(
    "tool_schemas_accepted",
    title="Tools are accepted by the SDK, sent with their registered names, descriptions and schemas",
    rationale="Sanitised names collide (notion.search vs notion_search) and dispatch to the wrong tool (G12).",
    how_to_fix="Send names verbatim and refuse invalid ones; Responses: send strict false explicitly.",
    requires=frozenset({"format_tools"}),
    taxonomy=("G12",),
    harm=Harm.MISIDENTIFIED,
)
def _check_tool_schemas(ctx: ToolsContext) -> list[str]:
    if ctx.schema_error is not None:
        return [f"format_tools raised {ctx.schema_error}"]
    request = ctx.schema_request
    if request is None or request.json is None:
        return [f"the SDK refused the tools: {request.error if request else 'no request'}"]
    problems = []
    type_errors = _tools_type_errors(ctx.target, (ctx.schema_params or {}).get("tools"))
    if type_errors:
        problems.append(f"the tools do not validate against the SDK's tool types: {type_errors}")
    found = _tool_entries(ctx.target, request.json)
    want = [(tool.name, tool.description, thaw(tool.parameters)) for tool in TOOLSET_FOR_SCHEMAS]
    names = [name for name, _, _ in found]
    if names != [name for name, _, _ in want]:
        problems.append(
            f"tools are sent as {names}, registered as {[n for n, _, _ in want]}: names go out exactly as registered, "
            "unique, never sanitised (a sanitised name collides or cannot be mapped back: G12)"
        )
    for (name, description, schema), (want_name, want_description, want_schema) in zip(found, want, strict=False):
        if name != want_name:
            continue
        if description != want_description:
            problems.append(f"tool {name!r}: description {description!r} is not the registered one")
        if schema is not _NOT_VERBATIM and schema != want_schema:
            problems.append(f"tool {name!r}: parameters {schema!r} differ from the registered schema {want_schema!r}")
    if ctx.target == "openai-responses":
        problems += _responses_strict_problems(request.json)
    return problems


def _responses_strict_problems(request: Mapping[str, Any]) -> list[str]:
    """The first Responses tool that does not send strict: false (one problem is enough)."""
    for tool in request.get("tools") or []:
        if tool.get("strict") is not False:
            return [
                f"Responses tool {tool.get('name')!r} does not send strict: false; the Responses API defaults "
                "strict to true, which rejects ordinary (non-strict) schemas"
            ]
    return []


@TOOL_CHECK_REGISTRY.check(
    "tool_choice_mapped",
    title=(
        "tool_choice auto/none/required/named/parallel=False map to each provider's documented value "
        "(auto may be left to the default), or raise"
    ),
    rationale=(
        "Anthropic spells 'required' as any; Gemini uses toolConfig modes; Ollama has none: sending a guess fails."
    ),
    how_to_fix=(
        "Use the per-provider table; raise a ValueError or NotImplementedError (a subclass is fine) where the "
        "provider cannot express the choice."
    ),
    requires=frozenset({"format_tools"}),
    harm=Harm.RAN_WRONG,
)
def _check_tool_choice(ctx: ToolsContext) -> list[str]:
    problems = []
    table = TOOL_CHOICE_EXPECTATIONS[ctx.target]
    field_name = _CHOICE_FIELD.get(ctx.target, "tool_choice")
    for label, expected in table.items():
        _params, error, request = ctx.choices.get(label, (None, "not run", None))
        if expected == "unsupported":
            problem = _unsupported_choice_problem(ctx, label, error=error, request=request, field_name=field_name)
        else:
            problem = _supported_choice_problem(
                ctx.target, label, expected, error=error, request=request, field_name=field_name
            )
        if problem is not None:
            problems.append(problem)
    return problems


def _unsupported_choice_problem(
    ctx: ToolsContext, label: str, *, error: str | None, request: CapturedRequest | None, field_name: str
) -> str | None:
    """A choice the target cannot express must be refused with a ValueError or NotImplementedError."""
    if error is None:
        sent = _dig(request.json, field_name) if request and request.json else None
        return (
            f"{ctx.target} cannot express tool_choice {label!r}, yet the formatter sent {sent!r} instead of "
            "raising a clear error (e.g. UnsupportedToolChoiceError)"
        )
    if label not in ctx.refused_clearly:
        return f"tool_choice {label!r}: expected a ValueError or NotImplementedError (or a subclass), got {error}"
    return None


def _supported_choice_problem(
    target: str, label: str, expected: Any, *, error: str | None, request: CapturedRequest | None, field_name: str
) -> str | None:
    """A choice the target can express must be sent as the documented value (auto may be left out)."""
    if error is not None:
        return f"tool_choice {label!r}: format_tools raised {error}"
    if request is None or request.json is None:
        return f"tool_choice {label!r}: the SDK refused the request: {request.error if request else ''}"
    if isinstance(expected, tuple):
        dotted, value = expected
        got = _dig(request.json, dotted)
        if got != value:
            return f"tool_choice {label!r}: {dotted} is {got if got is not ABSENT else 'absent'}, expected {value!r}"
        return None
    got = _dig(request.json, field_name)
    if label == "auto" and got is ABSENT and _dig(request.json, "tools") is not ABSENT:
        return None  # every target documents "auto" as the default when tools are sent
    if expected is None:
        if got is not ABSENT:
            return f"tool_choice {label!r}: {target} has no {field_name}; it was sent as {got!r}"
    elif got != expected:
        return (
            f"tool_choice {label!r} is sent as {got if got is not ABSENT else 'nothing'!r}, "
            f"{target} documents {expected!r}"
        )
    return None


TOOL_CHECKS: tuple[Check[ToolsContext], ...] = TOOL_CHECK_REGISTRY.all()
