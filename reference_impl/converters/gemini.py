"""google-genai ``GenerateContentResponse`` stream -> ``ChunkResponse`` (Gemini API and Vertex AI).

Input: the objects of ``client.models.generate_content_stream(...)`` or
``client.aio.models.generate_content_stream(...)``. Only candidate 0 is converted.

Parts, in order (a new ``ChunkResponse`` starts whenever wire order would otherwise change):

* ``text`` with ``thought=True`` -> ``reasoning``; other ``text`` -> ``content``;
* a complete ``functionCall`` (``name`` and ``args``, no ``willContinue``; the Gemini API's only
  form) -> one new call: the next dense index (there is no index on the wire; every part is its
  own call, also for same-name calls: taxonomy A04/A16), ``call_id`` = ``functionCall.id`` (often
  absent), ``args`` serialised once with ``json.dumps(ensure_ascii=False)`` (A11); ``args``
  absent or null -> no argument text at all, which the handler reads as ``{}`` (A12). A call
  whose ``id`` was already seen is a restatement (B08): it adds no call, only a thought
  signature the first part lacked;
* ``thoughtSignature`` on a function-call part -> ``provider_metadata={"thought_signature": base64}``
  on that call's delta (only the first call of a parallel batch has one: G07);
* ``executableCode`` / ``codeExecutionResult`` (run by Google) -> ``server_tool_calls`` /
  ``server_tool_results``.

Vertex streamed arguments (``streamFunctionCallArguments``; A17): a call opened by ``{name,
willContinue: true}`` is continued by parts carrying ``partialArgs`` (``jsonPath`` + one of
``stringValue`` / ``numberValue`` / ``boolValue`` / ``nullValue``; a string may come in several
pieces for one path; continuation parts may restate the name) and closed by an empty
``functionCall {}``, by a part saying ``willContinue: false``, or implicitly when its last part
said nothing and any other part, a new call or the end of the stream arrives. The
argument JSON is built as text, incrementally: ``{"location":"`` then the escaped string pieces,
``","days":3`` ... so the deltas concatenate to the object the values describe. Every path shape
is streamed (nested objects, arrays, arrays of objects and of arrays, quoted member names); the
text is only ever appended to, so leaf values must arrive in document order (they do: the model
generates them in that order). A value that cannot be appended (an out-of-order or repeated path,
an index gap, a path that contradicts an earlier one, a non-finite number, an unparsable path)
stops that call's argument text where it is and is recorded in ``problems``: the call ends as
invalid JSON in the handler and is never executed. Integral numbers are written as integers
(``3``, not ``3.0``), as the non-streamed ``args`` would carry them. A call still marked
``willContinue`` when the stream ends is left open (its JSON unterminated).

End: the finish reason of candidate 0 (raw, e.g. ``STOP`` even after calls). google-genai has no
end-of-stream event, so the terminal chunk comes from ``finish()``: ``MAX_TOKENS`` and
``CONTINUATION`` are ``truncated``; ``STOP`` and ``FINISH_REASON_UNSPECIFIED`` are normal; every other reason
(``SAFETY``, ``MALFORMED_FUNCTION_CALL``, ``UNEXPECTED_TOOL_CALL``...) is ``provider_error``; no
finish reason at all is ``incomplete``. A blocked prompt (``promptFeedback.blockReason``) is a
``provider_error`` at once. ``data: {"error": ...}`` makes the SDK raise ``errors.APIError``.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reference_impl.converters.base import (
    ChunkAssembler,
    StreamConverter,
    as_count,
    clean_id,
    clean_name,
    get_field,
    raw_string,
)
from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["GeminiConverter", "JsonPathError", "PartialArgsTextBuilder", "parse_json_path"]

_NORMAL_REASONS = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})
# CONTINUATION: "the response reached the per-request token limit, but generation is not yet
# complete" (google-genai's FinishReason): a token limit too.
_TRUNCATION_REASONS = frozenset({"MAX_TOKENS", "CONTINUATION"})
_QUIET_PARTS = (
    "inline_data",
    "file_data",
    "function_response",
    "video_metadata",
    "tool_call",
    "tool_response",
)
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "/": "/", "\\": "\\", "'": "'", '"': '"'}
_MAX_SAFE_INTEGER = 2**53

Segment = str | int


class JsonPathError(ValueError):
    """A ``jsonPath`` this converter cannot read, or a value that cannot extend the argument text."""


def parse_json_path(path: str) -> tuple[Segment, ...]:
    """``$.a.b[0]["c.d"]`` -> ``("a", "b", 0, "c.d")`` (the RFC 9535 singular-query subset Vertex uses)."""
    if not path.startswith("$"):
        raise JsonPathError(f"jsonPath {path!r} does not start with '$'")
    segments: list[Segment] = []
    position, end = 1, len(path)
    while position < end:
        char = path[position]
        if char == ".":
            stop = position + 1
            while stop < end and path[stop] not in ".[":
                stop += 1
            name = path[position + 1 : stop]
            if not name:
                raise JsonPathError(f"jsonPath {path!r}: empty member name at offset {position}")
            segments.append(name)
            position = stop
        elif char == "[":
            if position + 1 < end and path[position + 1] in "'\"":
                name, position = _quoted(path, position + 1)
                segments.append(name)
            else:
                stop = path.find("]", position)
                digits = path[position + 1 : stop] if stop > 0 else ""
                if not digits.isdigit():
                    raise JsonPathError(f"jsonPath {path!r}: unsupported selector at offset {position}")
                segments.append(int(digits))
                position = stop + 1
        else:
            raise JsonPathError(f"jsonPath {path!r}: unexpected {char!r} at offset {position}")
    return tuple(segments)


def _quoted(path: str, start: int) -> tuple[str, int]:
    """Read a quoted member name starting at the quote ``path[start]``; return it and the offset after ``]``."""
    quote = path[start]
    out: list[str] = []
    position = start + 1
    while position < len(path):
        char = path[position]
        if char == "\\" and position + 1 < len(path):
            escaped = path[position + 1]
            if escaped == "u" and position + 6 <= len(path):
                out.append(chr(int(path[position + 2 : position + 6], 16)))
                position += 6
                continue
            if escaped not in _ESCAPES:
                raise JsonPathError(f"jsonPath {path!r}: bad escape at offset {position}")
            out.append(_ESCAPES[escaped])
            position += 2
            continue
        if char == quote:
            if path[position + 1 : position + 2] != "]":
                raise JsonPathError(f"jsonPath {path!r}: expected ']' at offset {position + 1}")
            return "".join(out), position + 2
        out.append(char)
        position += 1
    raise JsonPathError(f"jsonPath {path!r}: unterminated quoted name")


@dataclass(slots=True)
class _Container:
    is_array: bool
    size: int = 0  # children written so far
    keys: set[str] = field(default_factory=set)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JsonPathError(f"number {value!r} is not representable in JSON")
        if value.is_integer() and abs(value) < _MAX_SAFE_INTEGER:
            return str(int(value))
    return json.dumps(value)


class PartialArgsTextBuilder:
    """Builds a call's argument JSON text from ``(json_path, value)`` leaves arriving in document order.

    ``add_string_piece`` / ``add_scalar`` return the text to append (possibly ``""``), ``close``
    returns the text that terminates the document. The text written so far is always a prefix
    of the final document: containers and strings are opened as soon as a leaf needs them and
    closed only when a later leaf (or ``close``) shows they are finished. A leaf that cannot be
    appended raises ``JsonPathError``; the builder then refuses everything (``failed``).
    """

    __slots__ = ("_open_string", "_path", "_stack", "failed")

    def __init__(self) -> None:
        self._stack: list[_Container] = []  # open containers; [0] is the root object
        self._path: list[Segment] = []  # the member/index leading to each open container below the root
        self._open_string: tuple[Segment, ...] | None = None
        self.failed: str | None = None

    @property
    def started(self) -> bool:
        return bool(self._stack)

    def add_string_piece(self, path: tuple[Segment, ...], piece: str) -> str:
        escaped = json.dumps(piece, ensure_ascii=False)[1:-1]
        if self._open_string == path:
            return escaped
        prefix = self._position(path)
        self._open_string = path
        return f'{prefix}"{escaped}'

    def add_scalar(self, path: tuple[Segment, ...], value: Any) -> str:
        try:
            text = _scalar_text(value)
        except JsonPathError as error:
            self.failed = str(error)
            raise
        return self._position(path) + text

    def close(self) -> str:
        if self.failed is not None:
            return ""
        out: list[str] = []
        if self._open_string is not None:
            out.append('"')
            self._open_string = None
        while self._stack:
            out.append("]" if self._stack.pop().is_array else "}")
        self._path.clear()
        return "".join(out)

    def _position(self, path: tuple[Segment, ...]) -> str:
        """Text that closes what is finished and opens what ``path`` needs, up to its value."""
        if self.failed is not None:
            raise JsonPathError(self.failed)
        try:
            return self._move_to(path)
        except JsonPathError as error:
            self.failed = str(error)
            raise

    def _move_to(self, path: tuple[Segment, ...]) -> str:
        if not path:
            raise JsonPathError("a value for '$' itself: tool arguments must be an object")
        if isinstance(path[0], int):
            raise JsonPathError(f"path {_show(path)}: the arguments root is an object, not an array")
        out: list[str] = []
        if self._open_string is not None:
            if self._open_string == path:  # pragma: no cover - handled by add_string_piece
                return ""
            out.append('"')
            self._open_string = None
        if not self._stack:
            self._stack.append(_Container(is_array=False))
            out.append("{")
        parents = path[:-1]
        common = 0
        while common < len(self._path) and common < len(parents) and self._path[common] == parents[common]:
            common += 1
        while len(self._path) > common:
            self._path.pop()
            out.append("]" if self._stack.pop().is_array else "}")
        for depth in range(common, len(path)):
            segment = path[depth]
            container = self._stack[-1]
            out.append(self._member(container, segment, path))
            if depth + 1 < len(path):
                child = _Container(is_array=isinstance(path[depth + 1], int))
                out.append("[" if child.is_array else "{")
                self._stack.append(child)
                self._path.append(segment)
        return "".join(out)

    @staticmethod
    def _member(container: _Container, segment: Segment, path: tuple[Segment, ...]) -> str:
        separator = "," if container.size else ""
        if container.is_array:
            if not isinstance(segment, int):
                raise JsonPathError(f"path {_show(path)}: member {segment!r} inside an array")
            if segment != container.size:
                raise JsonPathError(
                    f"path {_show(path)}: array element {segment} after {container.size} element(s); elements "
                    "must arrive in order without gaps"
                )
            container.size += 1
            return separator
        if not isinstance(segment, str):
            raise JsonPathError(f"path {_show(path)}: index {segment} inside an object")
        if segment in container.keys:
            raise JsonPathError(f"path {_show(path)}: member {segment!r} was already written")
        container.keys.add(segment)
        container.size += 1
        return separator + json.dumps(segment, ensure_ascii=False) + ":"


def _show(path: tuple[Segment, ...]) -> str:
    return "$" + "".join(f"[{segment}]" if isinstance(segment, int) else f".{segment}" for segment in path)


@dataclass(slots=True)
class _StreamedCall:
    index: int
    name: str | None
    builder: PartialArgsTextBuilder = field(default_factory=PartialArgsTextBuilder)
    continuing: bool = False  # the last part said willContinue: true
    signature_sent: bool = False


def _signature(part: Any) -> str | None:
    value = get_field(part, "thought_signature")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii") if value else None
    return value if isinstance(value, str) and value else None


class GeminiConverter(StreamConverter):
    """google-genai ``GenerateContentResponse`` stream -> ``ChunkResponse``."""

    api: ClassVar[str] = "gemini"
    # UnknownApiResponseError: a stream line that is not JSON (the server broke the framing).
    _sdk_errors = ("google.genai.errors", ("APIError", "UnknownApiResponseError"), ())

    def __init__(self) -> None:
        super().__init__()
        self._count = 0
        self._by_id: dict[str, int] = {}
        self._signed: set[int] = set()
        self._open: _StreamedCall | None = None
        self._finish_reason: str | None = None

    # -- chunks ----------------------------------------------------------------------------------

    def _convert(self, event: Any) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        usage = self._usage_of(get_field(event, "usage_metadata"))
        if usage is not None:
            self._usage = usage
        candidates = get_field(event, "candidates") or ()
        for candidate in candidates:
            if get_field(candidate, "index") not in (None, 0):
                self.ignored["candidate other than 0"] += 1
                continue
            for part in get_field(get_field(candidate, "content"), "parts") or ():
                self._part(part, pieces)
            reason = raw_string(get_field(candidate, "finish_reason"))
            if reason is not None:
                self._finish_reason = reason
        if not candidates:
            blocked = raw_string(get_field(get_field(event, "prompt_feedback"), "block_reason"))
            if blocked is not None:
                error = StreamError("provider_error", f"the prompt was blocked: {blocked}")
                return self._terminal(pieces, finish_reason=blocked, error=error)
        return pieces.build(usage=usage)

    def _part(self, part: Any, pieces: ChunkAssembler) -> None:
        function_call = get_field(part, "function_call")
        if function_call is not None:
            self._function_call(function_call, part, pieces)
            return
        if self._open is not None and not self._open.continuing:
            self._close_open(pieces)
        text = get_field(part, "text")
        if isinstance(text, str):
            if get_field(part, "thought") is True:
                pieces.reasoning(text)
            else:
                pieces.content(text)
            return
        code = get_field(part, "executable_code")
        if code is not None:
            self.server_tool_calls.append(
                {
                    "type": "executable_code",
                    "language": raw_string(get_field(code, "language")),
                    "code": get_field(code, "code"),
                }
            )
            return
        result = get_field(part, "code_execution_result")
        if result is not None:
            self.server_tool_results.append(
                {"type": "code_execution_result", "outcome": raw_string(get_field(result, "outcome"))}
            )
            return
        for name in _QUIET_PARTS:
            if get_field(part, name) is not None:
                self.ignored[f"part {name}"] += 1
                return
        if _signature(part) is None:  # an empty part that only carries a signature is not unknown
            self._unknown("part without a known field")

    # -- function calls --------------------------------------------------------------------------

    def _function_call(self, call: Any, part: Any, pieces: ChunkAssembler) -> None:
        name = clean_name(get_field(call, "name"))
        call_id = clean_id(get_field(call, "id"))
        args = get_field(call, "args")
        partial = get_field(call, "partial_args") or ()
        flag = get_field(call, "will_continue")  # True: more parts follow; False: the last part; None: not said
        signature = _signature(part)
        current = self._open
        continues_current = (
            current is not None
            and current.continuing
            and args is None
            and (name is None or (name == current.name and (bool(partial) or flag is False)))
        )

        if continues_current:
            assert current is not None
            if name is None and call_id is None and not partial and flag is None:
                self._close_open(pieces)  # the empty ``functionCall {}`` terminator
                return
            self._continue(current, partial, flag, signature, pieces)
        elif args is not None or (name is not None and not partial and flag is not True):
            # A complete call (the Gemini API's only form; a no-argument call has no ``args``).
            if current is not None:
                self._close_open(pieces)
            self._complete_call(name, call_id, args, signature, pieces)
        elif name is not None:
            # Opens a streamed call, possibly with its first partialArgs.
            if current is not None:
                self._close_open(pieces)
            index = self._new_index(call_id)
            self._open = _StreamedCall(index, name)
            pieces.tool(ToolCallDelta(index, call_id, name, provider_metadata=self._metadata(index, signature)))
            self._continue(self._open, partial, flag, None, pieces)
        elif current is not None:
            # The open call's last part lacked willContinue, yet more parts came: still the same call.
            if not partial and flag is None and call_id is None:
                self._close_open(pieces)
                return
            self._continue(current, partial, flag, signature, pieces)
        elif partial:
            self._problem("partialArgs without an open call; started a call without a name")
            index = self._new_index(call_id)
            self._open = _StreamedCall(index, None)
            pieces.tool(ToolCallDelta(index, call_id, None, provider_metadata=self._metadata(index, signature)))
            self._continue(self._open, partial, flag, None, pieces)
        else:
            self.ignored["functionCall continuation without an open call"] += 1

    def _continue(
        self, call: _StreamedCall, partial: Any, flag: Any, signature: str | None, pieces: ChunkAssembler
    ) -> None:
        metadata = self._metadata(call.index, signature)
        if metadata is not None:
            pieces.tool(ToolCallDelta(call.index, provider_metadata=metadata))
        self._feed(call, partial, pieces)
        call.continuing = flag is True
        if flag is False:
            self._close_open(pieces)  # explicitly the last part of the call

    def _new_index(self, call_id: str | None) -> int:
        index = self._count
        self._count += 1
        if call_id is not None:
            self._by_id.setdefault(call_id, index)
        return index

    def _metadata(self, index: int, signature: str | None) -> dict[str, Any] | None:
        if signature is None or index in self._signed:
            return None
        self._signed.add(index)
        return {"thought_signature": signature}

    def _complete_call(
        self, name: str | None, call_id: str | None, args: Any, signature: str | None, pieces: ChunkAssembler
    ) -> None:
        if call_id is not None and call_id in self._by_id:
            index = self._by_id[call_id]
            self.ignored["restated functionCall (same id)"] += 1
            metadata = self._metadata(index, signature)
            if metadata is not None:
                pieces.tool(ToolCallDelta(index, provider_metadata=metadata))
            return
        index = self._new_index(call_id)
        arguments = None if args is None else json.dumps(args, ensure_ascii=False)
        pieces.tool(ToolCallDelta(index, call_id, name, arguments, provider_metadata=self._metadata(index, signature)))

    def _feed(self, call: _StreamedCall, partial: Any, pieces: ChunkAssembler) -> None:
        builder = call.builder
        for item in partial:
            if builder.failed is not None:
                return
            try:
                text = self._leaf_text(builder, item)
            except JsonPathError as error:
                # Whatever was not appended, nothing after it may be: the text would parse to a wrong object.
                builder.failed = builder.failed or str(error)
                self._problem(f"tool call #{call.index} ({call.name}): partialArgs cannot be streamed: {error}")
                return
            if text:
                pieces.tool(ToolCallDelta(call.index, arguments_delta=text))

    @staticmethod
    def _leaf_text(builder: PartialArgsTextBuilder, item: Any) -> str:
        raw_path = get_field(item, "json_path")
        if not isinstance(raw_path, str):
            raise JsonPathError(f"partialArg without a jsonPath: {item!r}")
        path = parse_json_path(raw_path)
        string_value = get_field(item, "string_value")
        if isinstance(string_value, str):
            return builder.add_string_piece(path, string_value)
        for name in ("number_value", "bool_value"):
            value = get_field(item, name)
            if value is not None:
                return builder.add_scalar(path, value)
        if get_field(item, "null_value") is not None:
            return builder.add_scalar(path, None)
        # A bare path marker with no value: nothing to write yet.
        return ""

    def _close_open(self, pieces: ChunkAssembler) -> None:
        call, self._open = self._open, None
        if call is not None:
            text = call.builder.close()
            if text:
                pieces.tool(ToolCallDelta(call.index, arguments_delta=text))

    # -- usage and the end -----------------------------------------------------------------------

    @staticmethod
    def _usage_of(metadata: Any) -> TokenUsage | None:
        if metadata is None:
            return None
        prompt = as_count(get_field(metadata, "prompt_token_count"))
        candidates = as_count(get_field(metadata, "candidates_token_count"))
        thoughts = as_count(get_field(metadata, "thoughts_token_count"))
        total = as_count(get_field(metadata, "total_token_count"))
        if prompt is None and candidates is None and thoughts is None and total is None:
            return None
        tool_prompt = as_count(get_field(metadata, "tool_use_prompt_token_count")) or 0
        return TokenUsage((prompt or 0) + tool_prompt, (candidates or 0) + (thoughts or 0), total)

    def _finish_reason_so_far(self) -> str | None:
        return self._finish_reason

    def _finish(self) -> list[ChunkResponse]:
        pieces = ChunkAssembler()
        reason = self._finish_reason
        if reason is None:
            return self._incomplete(pieces, "a finishReason")
        if self._open is not None:
            if self._open.continuing:
                self._problem(
                    f"tool call #{self._open.index} ({self._open.name}) still said willContinue when the stream "
                    "ended; its arguments are left unterminated"
                )
                self._open = None
            else:
                self._close_open(pieces)
        error = None
        if reason in _TRUNCATION_REASONS:
            error = StreamError("truncated", f"finishReason={reason}: the output hit the token limit")
        elif reason not in _NORMAL_REASONS:
            error = StreamError("provider_error", f"finishReason={reason}")
        return self._terminal(pieces, finish_reason=reason, error=error)
