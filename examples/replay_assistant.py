"""A small tool-calling assistant of the kind applications write, built on the real ``openai`` SDK.

It builds its own ``openai.OpenAI()`` (nothing is injected), streams one chat turn, accumulates
the text and the tool calls, and decides which calls may run: only complete ones, with valid JSON
object arguments, from a stream that ended normally (``finish_reason`` ``tool_calls`` or
``stop``). ``examples/test_replay_assistant.py`` checks it end to end against the bundled
OpenAI Chat cassettes with the ``toolcall_replay`` fixture, at fixed and hypothesis-chosen byte
cuts, without a network or an API key.

``AssistantWithPlantedBug`` is the same class with the bug this project exists to catch: arguments
that are not valid JSON (a stream truncated by ``max_tokens``, cut mid-call, or interrupted by an
error event) become ``{}``, so a ``write_file`` call would run with no path and no content. Run
the example's tests with ``TOOLCALL_EXAMPLE_PLANTED_BUG=1`` and the replay names the recordings
that catch it. ``AssistantIgnoringTheEnd`` has the other one: it runs every call whose arguments
parse, however the stream ended, so a call cut off by a dropped connection after complete-looking
arguments still runs (``TOOLCALL_EXAMPLE_PLANTED_BUG=ending``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import openai

__all__ = ["Assistant", "AssistantIgnoringTheEnd", "AssistantWithPlantedBug", "ToolCall", "Turn"]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]


@dataclass
class ToolCall:
    """A tool call as the assistant assembled it; ``arguments`` is None when they are not a JSON object."""

    id: str | None
    name: str
    raw_arguments: str
    arguments: dict[str, Any] | None
    runnable: bool = False


@dataclass
class Turn:
    """One streamed assistant turn."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None


@dataclass
class _Partial:
    index: int | None = None
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class Assistant:
    """Streams a chat turn through ``openai.OpenAI().chat.completions.create(stream=True)``."""

    def __init__(self, model: str = "gpt-4.1-mini") -> None:
        self.model = model
        self.client = openai.OpenAI(max_retries=0)

    def ask(self, prompt: str) -> Turn:
        """Send ``prompt``, stream the answer, and return the turn with the calls that may run."""
        turn = Turn()
        text: list[str] = []
        partials: list[_Partial] = []  # in the order the calls first appeared
        try:
            stream = self.client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], tools=TOOLS, stream=True
            )
            for chunk in stream:
                for choice in chunk.choices:
                    self._take(choice.delta, text, partials)
                    turn.finish_reason = choice.finish_reason or turn.finish_reason
        except openai.APIError as error:
            turn.error = f"{type(error).__name__}: {error.message}"
        turn.text = "".join(text)
        ended_normally = self.ended_normally(turn)
        for partial in partials:
            raw = "".join(partial.arguments)
            arguments = self.parse_arguments(raw)
            runnable = ended_normally and arguments is not None
            turn.calls.append(ToolCall(partial.id, partial.name, raw, arguments, runnable))
        return turn

    @staticmethod
    def ended_normally(turn: Turn) -> bool:
        """No error, and a finish reason that says the model finished (not ``length``, not none at all)."""
        return turn.error is None and turn.finish_reason in ("tool_calls", "stop")

    @staticmethod
    def _take(delta: Any, text: list[str], partials: list[_Partial]) -> None:
        if delta.content:
            text.append(delta.content)
        for fragment in delta.tool_calls or []:
            partial = Assistant._partial_for(fragment, partials)
            partial.id = partial.id or fragment.id
            if fragment.function is None:
                continue
            partial.name = partial.name or (fragment.function.name or "")
            arguments = fragment.function.arguments
            if isinstance(arguments, dict):  # servers that send the arguments as an object, whole
                partial.arguments = [json.dumps(arguments)]
            elif arguments:
                so_far = "".join(partial.arguments)
                if so_far and arguments.startswith(so_far):  # servers that resend everything so far
                    partial.arguments = [arguments]
                else:
                    partial.arguments.append(arguments)

    @staticmethod
    def _partial_for(fragment: Any, partials: list[_Partial]) -> _Partial:
        """The call a fragment continues: the latest one at its index (or the latest one at all when
        the server sends no index), unless the fragment brings a new id: then a new call starts
        (servers that put every call on index 0, or send no index)."""
        index = getattr(fragment, "index", None)
        same_place = [p for p in partials if p.index == index] if index is not None else partials
        current = same_place[-1] if same_place else None
        if current is None or (fragment.id and current.id and fragment.id != current.id):
            current = _Partial(index=index)
            partials.append(current)
        return current

    @staticmethod
    def parse_arguments(raw: str) -> dict[str, Any] | None:
        """Strict: ``""`` means no arguments (``{}``); anything but a JSON object is None (never run)."""
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


class AssistantWithPlantedBug(Assistant):
    """The planted bug: arguments that fail to parse become ``{}`` (and the call runs with them)."""

    @staticmethod
    def parse_arguments(raw: str) -> dict[str, Any] | None:
        """Lenient, wrongly: a decode error gives ``{}``."""
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


class AssistantIgnoringTheEnd(Assistant):
    """The other planted bug: any call whose arguments parse runs, however the stream ended."""

    @staticmethod
    def ended_normally(turn: Turn) -> bool:
        """Wrongly, always."""
        return True
