"""The rules a streaming tool-call handler must follow, and where the design says so.

Every handler check enforces exactly one of these rules (``Check.rule``), and ``docs/checks.md``
prints the rule beside the check. R16 says what the same checks demand of a text-format parser:
its built-in scenarios (``text_scenarios.py``) are judged by the checks of R4, R6, R7 and R14.
A rule is either written in the seed design (``shared/seeds/000``: the Python design, section
numbers given) or is a correction of a seed defect backed by real bug reports
(``shared/research/bug-taxonomy.md`` classes given). What a reference implementation merely
chose (its id scheme, what it puts in metadata beyond these rules, when exactly it emits an
event) is not a rule, and no check demands it.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.handler.capabilities import DEFAULT_ARGS_LAG

__all__ = ["RULES", "Rule", "rule"]


@dataclass(frozen=True)
class Rule:
    """One rule of the contract: a short id, what it says, and where it comes from."""

    id: str
    text: str
    source: str


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "R1",
            "feed(chunk) returns the events it emitted, finalize() the remaining ones, and get_all_events() "
            "is exactly what they returned, in order",
            "seed 000 5.1 (StreamingResponseHandler)",
        ),
        Rule(
            "R2",
            "An event has an event type (SEGMENT_START / SEGMENT_CONTENT / SEGMENT_END), a segment id and, on "
            "START, a segment type that the segment's later events share; START and END data is in "
            "payload['metadata'], CONTENT text in payload['delta']",
            "seed 000 3.2 (event metadata contract) and 6",
        ),
        Rule(
            "R3",
            "Each segment has one START, then CONTENT events, then one END; finalize() ends every open segment",
            "seed 000 6 (finalize closes the text and tool segments)",
        ),
        Rule(
            "R4",
            "Text and reasoning deltas come out whole and in wire order; within a chunk reasoning comes before "
            "content, and content before tool calls",
            "seed 000 4.2 and 8.1 (ChunkResponse); taxonomy C04, C05",
        ),
        Rule(
            "R5",
            "A tool call that interrupts text ends the open text segment; text after it opens a new one",
            "correction of seed 000 6 (one text segment for the turn reorders text around calls); taxonomy C04",
        ),
        Rule(
            "R6",
            "Each provider tool call is one tool segment whose START names the tool, whose CONTENT is the "
            "argument text as sent, and whose END carries the parsed arguments; calls are told apart by "
            "index, and a second id on an occupied index is never merged into the first call: each call of "
            "that index runs as itself or ends with an error (one error for the whole index is enough)",
            "seed 000 3.2 and 6 (API tool call path); taxonomy A02, A05-A08, B01, B06",
        ),
        Rule(
            "R7",
            "Arguments that are not one complete JSON object (truncated, invalid, a list or scalar, several "
            "objects) end the call with an error and no invocation; empty arguments mean {}",
            "correction of seed 000 6 (its {} fallback runs tools with lost arguments); taxonomy D02-D05, D08",
        ),
        Rule(
            "R8",
            "Every valid call becomes exactly one invocation with the provider's tool name and arguments",
            "seed 000 3.2 and 6b (ToolInvocationAdapter)",
        ),
        Rule(
            "R9",
            "The provider's call id reaches the consumer (as the END's call_id, the segment id or the "
            "invocation id), however late it arrived",
            "seed 000 4.1 (ToolCallDelta.call_id); taxonomy B04, G01",
        ),
        Rule(
            "R10",
            "Calls are started, ended and invoked in the order they first appeared on the wire",
            "follow-ups answer calls in call order and Gemini wants its signature on the first call; taxonomy G06, G07",
        ),
        Rule(
            "R11",
            "After finalize(), feed() raises RuntimeError and a second finalize() returns []; reset() makes "
            "the handler behave like a new one; get_all_events()/get_all_invocations() return copies",
            "seed 000 5.1, 5.2 and 6 (is_finalized, reset, .copy()); taxonomy B07, C06",
        ),
        Rule(
            "R12",
            "Callbacks see every event and invocation as it is produced; a raising callback is logged and "
            "changes nothing else",
            "seed 000 3.2 and 6 (_emit calls on_segment_event inside try/except)",
        ),
        Rule(
            "R13",
            "A stream that ends abnormally (ChunkResponse.error: truncated, provider error, incomplete) "
            "runs none of its calls, even those whose arguments happen to parse; surfacing it as an error "
            "END or as an exception out of feed()/finalize() are both conformant",
            "beyond seed 000 (ChunkResponse.error); taxonomy F06-F08",
        ),
        Rule(
            "R14",
            "Argument fragments come out as CONTENT as they arrive, and text within the declared hold-back "
            f"(argument text too: args_lag, {DEFAULT_ARGS_LAG} characters unless the target declares another bound)",
            "seed 000 3.2 (CONTENT carries the JSON arguments for UI streaming); taxonomy C07, E04",
        ),
        Rule(
            "R15",
            "Malformed or unexpected provider data never makes feed()/finalize() raise or hang",
            "taxonomy D09, F04",
        ),
        Rule(
            "R16",
            "A handler parsing tool calls embedded in text (xml, json, sentinel formats) reads each complete "
            "block as one tool call under R6 (CONTENT is the block's argument text) and everything outside "
            "blocks as text, in order; markup inside a fenced code block, and JSON without the format's tool "
            "shape, stay text; a block still open when the stream ends is an error call, never text and "
            "never run; text is held back only while it could still begin a block (at most text_lag_chars, "
            "not counting the markup itself)",
            "seed 000 4 (text-format parsers); taxonomy E01-E10; the built-in scenarios of "
            "conformance/handler/text_scenarios.py",
        ),
    )
}


def rule(rule_id: str) -> str:
    """A rule id, checked to exist (used when checks are registered)."""
    if rule_id not in RULES:
        raise KeyError(f"unknown contract rule {rule_id!r}; known: {', '.join(RULES)}")
    return rule_id
