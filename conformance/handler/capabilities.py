"""What a target declares it supports; checks and scenarios that need more are skipped for it, by name.

One table (``CAPABILITY_OPTIONS``) describes every capability once: the Python field, the CLI flag,
the pytest option and ini key, and what a check excluded by it says. The CLI, the pytest plugin
and ``Capabilities`` all read it, so the three entry points always offer the same names. (The text
format and its hold-back, ``--text-format`` / ``--text-lag``, are declared beside it: a text
parser's default hold-back depends on its format.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from conformance.wire.numbers import JSON_NUMBERS

__all__ = [
    "CAPABILITY_OPTIONS",
    "DEFAULT_ARGS_LAG",
    "JSON_NUMBERS",
    "TEXT_FORMATS",
    "Capabilities",
    "CapabilityOption",
    "why_excluded",
]

TEXT_FORMATS = ("xml", "json", "sentinel")

# How much of a call's argument text a handler may hold back while streaming it unless it declares
# another bound: a JSON token or an escape sequence. More is buffering, which freezes UIs on large calls.
DEFAULT_ARGS_LAG = 16


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
    # Decides which calls run (invocations, or an accumulator's runnable calls). False: a model layer
    # that hands every ended call to a runner of its own, which decides: its ENDs are what it hands on.
    invocations: bool = True
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
    # How the target reads JSON numbers in arguments: "exact" (integers of any size, floats as
    # written) or "double" (IEEE doubles, as JavaScript's JSON.parse: 9007199254740993 reads as
    # 9007199254740992, 0.0 as 0); with "double", parsed arguments are compared as doubles.
    json_numbers: str = "exact"
    # How many characters of a call's argument text the handler may hold back once the call has
    # started (a handler that releases arguments at JSON token boundaries declares its bound).
    # None: no bound is promised, and the check is skipped.
    args_lag: int | None = DEFAULT_ARGS_LAG

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            # "no" is truthy: without this, Capabilities(reasoning="no") would declare reasoning support.
            if item.type in ("bool", bool) and not isinstance(value, bool):
                raise TypeError(
                    f"Capabilities.{item.name} must be True or False, got {type(value).__name__}: {value!r}"
                )
            if item.type in ("int | None", "str | None", "str") and value is not None:
                wanted = str if "str" in str(item.type) else int
                if not isinstance(value, wanted) or isinstance(value, bool):
                    raise TypeError(
                        f"Capabilities.{item.name} must be {wanted.__name__}"
                        + (" or None" if "None" in str(item.type) else "")
                        + f", got {type(value).__name__}: {value!r}"
                    )
        if self.text_format is not None and self.text_format not in TEXT_FORMATS:
            raise ValueError(f"unknown text format {self.text_format!r}; expected one of {', '.join(TEXT_FORMATS)}")
        if self.json_numbers not in JSON_NUMBERS:
            raise ValueError(f"json_numbers must be one of {', '.join(JSON_NUMBERS)}, got {self.json_numbers!r}")
        if self.text_lag_chars is not None and self.text_lag_chars < 0:
            raise ValueError(f"text_lag_chars must be >= 0 or None, got {self.text_lag_chars}")
        if self.args_lag is not None and (isinstance(self.args_lag, bool) or self.args_lag < 0):
            raise ValueError(f"args_lag must be >= 0 or None, got {self.args_lag!r}")

    def has(self, name: str) -> bool:
        """Whether the target has capability ``name`` (a field, or ``text_lag`` / ``api_tool_calls``).

        ``args_lag``: the target declares a bound on its argument hold-back (0 is a bound).
        """
        if name == "text_lag":
            return self.text_lag_chars is not None
        if name == "args_lag":
            return self.args_lag is not None
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
    """How one capability is spelled in each entry point, and what a check it excludes says.

    A boolean capability is a flag that flips its default (``--no-reasoning``). A valued one
    (``metavar`` set: ``--args-lag N|none``) takes a value that ``read`` turns into the field's
    value; it changes the verdict of the checks in ``judged_by`` only, so declaring it for a
    target none of them applies to changes nothing (and is refused as such).
    """

    field: str
    flag: str  # the CLI flag (the pytest option is ``--toolcall-`` + the flag without dashes)
    help: str
    excluded: str  # why a check needing this capability does not apply
    metavar: str = ""  # a valued option's values, as --help shows them; "" for a boolean flag
    read: Callable[[str], Any] | None = None  # a valued option's text -> value (ValueError: refused)
    judged_by: tuple[str, ...] = ()  # the checks a valued option's value changes

    @property
    def valued(self) -> bool:
        """Whether the option takes a value (else it is a flag that flips the default)."""
        return self.read is not None

    @property
    def pytest_option(self) -> str:
        return "--toolcall-" + self.flag.removeprefix("--")

    @property
    def ini_key(self) -> str:
        """The pytest ini key: ``toolcall_`` + the field name (booleans: ``true`` / ``false``)."""
        return "toolcall_" + self.field

    def value_of(self, text: str) -> Any:
        """A valued option's value from its command-line or ini text; ``ValueError`` saying what it takes."""
        assert self.read is not None, f"{self.flag} is a flag, it takes no value"
        try:
            return self.read(text.strip())
        except ValueError as error:
            why = f" ({error})" if str(error) else ""
            raise ValueError(f"{self.flag} takes {self.metavar}, got {text!r}{why}") from None

    def shown(self, value: Any) -> str:
        """A valued option's value as its command line writes it."""
        return "none" if value is None else str(value)


def _json_numbers(text: str) -> str:
    if text not in JSON_NUMBERS:
        raise ValueError("")
    return text


def _args_lag(text: str) -> int | None:
    if text.lower() == "none":
        return None
    try:
        lag = int(text)
    except ValueError:
        raise ValueError("") from None  # value_of says what the option takes
    if lag < 0:
        raise ValueError("a number of characters, 0 or more")
    return lag


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
        "invocations",
        "--no-invocations",
        "a model layer: it hands ended calls to a runner of its own, which decides which run (no invocations)",
        "declared without invocations: a runner beyond the target decides which calls run (--no-invocations)",
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
    CapabilityOption(
        "json_numbers",
        "--json-numbers",
        "how the target reads JSON numbers in arguments: exact (the default) or double (IEEE doubles, as "
        "JavaScript's JSON.parse: parsed arguments are then compared as doubles)",
        "",
        metavar="{" + ",".join(JSON_NUMBERS) + "}",
        read=_json_numbers,
        judged_by=("invocations_match_stream",),
    ),
    CapabilityOption(
        "args_lag",
        "--args-lag",
        f"the most argument characters the handler holds back once a call has started (default "
        f"{DEFAULT_ARGS_LAG}; 'none': no bound, which skips arguments_stream_incrementally)",
        "the target declares no bound on how much argument text it holds back (--args-lag none)",
        metavar="N|none",
        read=_args_lag,
        judged_by=("arguments_stream_incrementally",),
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
