"""Deliberately broken text-embedded tool-call handlers: one realistic parser bug each (E classes)."""

from __future__ import annotations

from typing import Any, ClassVar

from reference_impl import ParsingStreamingResponseHandler, SegmentType

# Private seam: parser mutants patch the shared scanning helpers of reference_impl.parsers._base to
# plant one defect in every text format at once (a mutant is the reference with one change).
from reference_impl.parsers import PARSERS, TextToolParser, ToolCallFailure, _base
from tests.mutants.api_handler_mutants import Mutant


class _BrokenParserHandler(ParsingStreamingResponseHandler):
    """A parsing handler whose parser is the reference parser with ``parser_bug`` mixed in."""

    parser_bug: ClassVar[type]
    _classes: ClassVar[dict[tuple[type, str], type[TextToolParser]]] = {}

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        key = (self.parser_bug, self.parser_name)
        cls = self._classes.get(key)
        if cls is None:
            reference = PARSERS[self.parser_name]
            cls = self._classes[key] = type(
                f"{self.parser_bug.__name__}{reference.__name__}", (self.parser_bug, reference), {}
            )
        self._parser = cls(self._parser_sink(), self.max_holdback_chars)


class _ForgetsHeldText:
    """Parser bug: at the end of the stream a held candidate is forgotten, not released as text."""

    def finish(self) -> None:
        if self.is_holding:
            self._state = _base.OUTSIDE
        super().finish()


class DropHeldTextAtEnd(_BrokenParserHandler):
    """DROP_TAIL_AT_EOS: text held back as a possible opener is lost when the stream ends (E04)."""

    parser_bug = _ForgetsHeldText


class UnterminatedBlockRunsWithEmptyArguments(ParsingStreamingResponseHandler):
    """EMIT_UNTERMINATED_AS_SUCCESS: a block that never closes runs with {} (E08, D03)."""

    def _tool_end(self, result: Any) -> None:
        if isinstance(result, ToolCallFailure) and result.unterminated:
            result = {}
        super()._tool_end(result)


class BufferAllText(ParsingStreamingResponseHandler):
    """BUFFER_TEXT: prose is held until the end of the stream instead of streaming (E03)."""

    def _init_stream_state(self) -> None:
        super()._init_stream_state()
        self._held_prose: list[str] = []

    def _emit_text(self, segment_type: SegmentType, delta: str) -> None:
        if segment_type is SegmentType.TEXT and not self.is_finalized:
            self._held_prose.append(delta)
            return
        super()._emit_text(segment_type, delta)

    def _finish_stream(self) -> None:
        self._parser.finish()
        held, self._held_prose = "".join(self._held_prose), []
        super()._emit_text(SegmentType.TEXT, held)
        super()._finish_stream()


class _NeverOpenFence(_base.FenceTracker):
    def is_open(self) -> bool:
        return False


class _IgnoresFences:
    """Parser bug: the fence tracker never sees a fence open."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fence = _NeverOpenFence()


class IgnoreFences(_BrokenParserHandler):
    """IGNORE_FENCES: tool markup inside a ``` code block is executed (E06)."""

    parser_bug = _IgnoresFences


def _parser_mutant(name: str, taxonomy: tuple[str, ...], primary: str, cls: type, fmt: str) -> Mutant:
    def factory(**callbacks: Any) -> Any:
        return cls(fmt, **callbacks)

    doc = (cls.__doc__ or name).strip().splitlines()[0]
    return Mutant(f"{name}[{fmt}]", taxonomy, primary, factory, doc)


PARSER_MUTANTS: tuple[Mutant, ...] = tuple(
    mutant
    for fmt in ("xml", "json", "sentinel")
    for mutant in (
        _parser_mutant("drop_held_text_at_end", ("E04",), "text_conserved", DropHeldTextAtEnd, fmt),
        _parser_mutant(
            "unterminated_block_runs_with_empty_arguments",
            ("E08", "D03"),
            "invalid_arguments_flagged",
            UnterminatedBlockRunsWithEmptyArguments,
            fmt,
        ),
        _parser_mutant("buffer_all_text", ("E03",), "text_streams_within_lag", BufferAllText, fmt),
        _parser_mutant("ignore_fences", ("E06",), "segment_per_call", IgnoreFences, fmt),
    )
)
