"""What a target declares it supports; checks and scenarios that need more are skipped for it, by name.

One table (``CAPABILITY_OPTIONS``) describes every capability once: the Python field, the CLI flag,
the pytest option and ini key, and what a check excluded by it says. The CLI, the pytest plugin
and ``Capabilities`` all read it, so the three entry points always offer the same names.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["CAPABILITY_OPTIONS", "TEXT_FORMATS", "Capabilities", "CapabilityOption", "why_excluded"]

TEXT_FORMATS = ("xml", "json", "sentinel")


@dataclass(frozen=True)
class Capabilities:
    """What a handler (or accumulator) declares it supports. Checks needing more are skipped, by name.

    The defaults describe a full provider-native handler. ``events=False`` is set for final-result
    accumulators (``--accumulator``): they produce calls, not segment events.
    """

    reasoning: bool = True  # reads ChunkResponse.reasoning
    stream_errors: bool = True  # reads ChunkResponse.error (truncation, provider errors)
    callbacks: bool = True  # accepts on_segment_event / on_tool_invocation
    lifecycle: bool = True  # reset(), finalize() twice, feed() after finalize(), copies from get_all_*()
    tool_calls: bool = True  # handles tool calls at all (False: a text-only / pass-through handler)
    incremental_arguments: bool = True  # streams argument fragments as CONTENT as they arrive
    segmented_text: bool = True  # ends the open text segment when a tool call starts
    several_deltas_per_chunk: bool = False  # accepts several deltas of one call in one chunk
    # How many characters of text the handler may hold back before emitting them (0: none).
    # None: the handler makes no latency promise, and the latency check is skipped.
    text_lag_chars: int | None = 0
    # None: tool calls arrive as ChunkResponse.tool_calls. "xml" / "json" / "sentinel": they are
    # embedded in the text, and the checks about raw argument deltas do not apply.
    text_format: str | None = None
    events: bool = True  # emits segment events (False: a final-result accumulator)
    # The target renders each chunk into an OpenAI-compatible Chat Completions stream and reads it
    # back (a library behind the openai SDK): the generated streams are then also drawn in the wire
    # dialects real servers send (no index, null content...), which it must honour while rendering
    # (``conformance.handler.wire_dialects``). Not a CLI flag: adapters declare it.
    wire_dialects: bool = False

    def __post_init__(self) -> None:
        if self.text_format is not None and self.text_format not in TEXT_FORMATS:
            raise ValueError(f"unknown text format {self.text_format!r}; expected one of {', '.join(TEXT_FORMATS)}")
        if self.text_lag_chars is not None and self.text_lag_chars < 0:
            raise ValueError(f"text_lag_chars must be >= 0 or None, got {self.text_lag_chars}")

    def has(self, name: str) -> bool:
        """Whether the target has capability ``name`` (a field, or ``text_lag`` / ``api_tool_calls``)."""
        if name == "text_lag":
            return self.text_lag_chars is not None
        if name == "api_tool_calls":
            return self.text_format is None
        value = getattr(self, name)
        return bool(value)

    def declared(self) -> dict[str, Any]:
        """The fields that differ from the defaults (what a saved counterexample records)."""
        default = Capabilities()
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)
        }

    @classmethod
    def from_declared(cls, declared: dict[str, Any]) -> Capabilities:
        """The inverse of ``declared()``; unknown names are a ``ValueError`` naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(declared) - known)
        if unknown:
            raise ValueError(f"unknown capabilities {unknown}; known: {', '.join(sorted(known))}")
        return replace(cls(), **declared)


@dataclass(frozen=True)
class CapabilityOption:
    """How one capability is spelled in each entry point, and what a check it excludes says."""

    field: str
    flag: str  # the CLI flag (the pytest option is ``--toolcall-`` + the flag without dashes)
    help: str
    excluded: str  # why a check needing this capability does not apply

    @property
    def pytest_option(self) -> str:
        return "--toolcall-" + self.flag.removeprefix("--")

    @property
    def ini_key(self) -> str:
        """The pytest ini key: ``toolcall_`` + the field name (booleans: ``true`` / ``false``)."""
        return "toolcall_" + self.field


CAPABILITY_OPTIONS: tuple[CapabilityOption, ...] = (
    CapabilityOption(
        "reasoning",
        "--no-reasoning",
        "the target ignores ChunkResponse.reasoning",
        "declared without reasoning (--no-reasoning)",
    ),
    CapabilityOption(
        "stream_errors",
        "--no-stream-errors",
        "the target ignores ChunkResponse.error (truncation, in-band provider errors)",
        "declared without stream errors (--no-stream-errors)",
    ),
    CapabilityOption(
        "callbacks",
        "--no-callbacks",
        "the factory takes no on_segment_event / on_tool_invocation callbacks",
        "declared without callbacks (--no-callbacks)",
    ),
    CapabilityOption(
        "lifecycle",
        "--no-lifecycle",
        "the target has no reset() / second finalize() / feed-after-finalize / copying getters contract",
        "declared without the lifecycle contract (--no-lifecycle)",
    ),
    CapabilityOption(
        "tool_calls",
        "--no-tool-calls",
        "a text-only handler: it does not handle tool calls at all",
        "declared text-only (--no-tool-calls)",
    ),
    CapabilityOption(
        "incremental_arguments",
        "--no-incremental-arguments",
        "argument fragments are not streamed as CONTENT while they arrive",
        "declared without incremental arguments (--no-incremental-arguments)",
    ),
    CapabilityOption(
        "segmented_text",
        "--no-segmented-text",
        "text is one segment for the whole turn (not split where tool calls interrupt it)",
        "declared without segmented text (--no-segmented-text)",
    ),
    CapabilityOption(
        "several_deltas_per_chunk",
        "--several-deltas-per-chunk",
        "also feed chunks that carry several deltas of one call (no wire API sends them)",
        "",
    ),
)

# Why a check requiring a derived or non-flag capability does not apply.
_DERIVED = {
    "text_lag": "the target declares no bound on how much text it holds back (--text-lag none)",
    "api_tool_calls": "applies to provider-native tool calls only; this target parses tool calls from text",
    "events": "a final-result accumulator has no segment events",
}


def why_excluded(name: str) -> str:
    """What a check that needs capability ``name`` says when the target lacks it."""
    for option in CAPABILITY_OPTIONS:
        if option.field == name:
            return option.excluded
    return _DERIVED.get(name, f"the target does not declare {name}")
