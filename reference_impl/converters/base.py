"""What every stream converter shares: the base class, wire-ordered chunk assembly, field access, drivers.

Nothing here knows a provider. Each ``reference_impl.converters.<api>`` module subclasses
``StreamConverter`` and implements ``_convert`` (one SDK stream object) and ``_finish`` (the
iterator ended); this module supplies the contract around them (see the package docstring).
"""

from __future__ import annotations

import collections
import functools
import importlib
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, ClassVar

from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

__all__ = ["ChunkAssembler", "StreamConverter", "aiter_chunks", "describe_error", "get_field", "iter_chunks"]

logger = logging.getLogger("reference_impl.converters")

_MISSING = object()

# Id and name values some OpenAI-compatible servers put on continuation chunks instead of leaving
# the field out (taxonomy A05, A20). They never identify a call or name a tool.
_PLACEHOLDER_IDS = frozenset({"null", "none", "undefined"})


@functools.lru_cache(maxsize=256)
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# How ``get_field`` reads an object of a given type, decided once per type (``_access_of``):
# ``_MAPPING``, ``_GETATTR``, or for a pydantic model the names defined on its class and bases.
_GETATTR, _MAPPING = 0, 1
_ACCESS: dict[type, int | frozenset[str]] = {}
_CACHE_LIMIT = 1024


def _access_of(cls: type) -> int | frozenset[str]:
    access: int | frozenset[str] = _GETATTR
    if issubclass(cls, Mapping):
        access = _MAPPING
    else:
        # A pydantic model (the class that declares the ``__pydantic_extra__`` slot is
        # pydantic.BaseModel) whose subclasses add no attribute hook of their own.
        for klass in cls.__mro__:
            if "__pydantic_extra__" in vars(klass):
                access = frozenset(name for base in cls.__mro__ for name in vars(base))
                break
            if "__getattr__" in vars(klass) or "__getattribute__" in vars(klass):
                break
    if len(_ACCESS) >= _CACHE_LIMIT:
        _ACCESS.clear()
    _ACCESS[cls] = access
    return access


def get_field(obj: Any, name: str) -> Any:
    """``obj.name`` for SDK objects (declared fields and pydantic extras), ``obj[name]`` for mappings.

    SDK stream objects are built without validation, so any field may be missing or ``None``; a
    missing field reads as ``None``. Mappings are accepted too (raw JSON payloads), under the
    snake_case name or its camelCase wire spelling (Gemini's JSON uses ``functionCall``).

    Converters probe a dozen optional fields per event, most of them absent, and on a pydantic
    model ``getattr`` of an absent field runs ``BaseModel.__getattr__`` and raises (3 us). So a
    pydantic model is read the way that lookup resolves a public name that is not a class
    attribute: the instance ``__dict__``, then ``__pydantic_extra__`` (0.4 us).
    """
    if obj is None:
        return None
    access = _ACCESS.get(type(obj))
    if access is None:
        access = _access_of(type(obj))
    if isinstance(access, frozenset):
        if name not in access and not name.startswith("_"):
            value = obj.__dict__.get(name, _MISSING)
            if value is not _MISSING:
                return value
            extra = obj.__pydantic_extra__
            return extra.get(name) if isinstance(extra, dict) else None
    elif access == _MAPPING:
        if name in obj:
            return obj[name]
        return obj.get(_camel(name))
    value = getattr(obj, name, _MISSING)
    if value is _MISSING:
        extra = getattr(obj, "model_extra", None)
        return extra.get(name) if isinstance(extra, Mapping) else None
    return value


def text_or_none(value: Any) -> str | None:
    """A non-empty ``str``, else ``None`` (``""`` means "not sent" on every wire API)."""
    return value if isinstance(value, str) and value else None


def clean_id(value: Any) -> str | None:
    """A usable provider call id: non-empty, not whitespace, not a placeholder such as ``"null"``."""
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    if not stripped or stripped.lower() in _PLACEHOLDER_IDS:
        return None
    return value


def clean_name(value: Any) -> str | None:
    """A usable tool name fragment: non-empty, not whitespace only, not a placeholder such as ``"null"``."""
    if not isinstance(value, str) or not value.strip() or value.strip().lower() in _PLACEHOLDER_IDS:
        return None
    return value


def as_count(value: Any) -> int | None:
    """A token count as a non-negative int, or ``None`` when the provider did not send one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = int(value)
    return number if number >= 0 else None


def raw_string(value: Any) -> str | None:
    """A provider enum value (``str`` subclasses and ``Enum`` members alike) as its raw wire string."""
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return raw if isinstance(raw, str) and raw else None


def describe_error(error: Any) -> str:
    """A one-line description of an in-band error object: ``code (type): message``."""
    if isinstance(error, str):
        return error
    message = get_field(error, "message")
    code = get_field(error, "code")
    kind = get_field(error, "type")
    if kind == "error":  # the Responses ``error`` event's own type: says nothing
        kind = None
    head = " ".join(f"{part}" for part in (code, f"({kind})" if kind else None) if part not in (None, ""))
    if message:
        return f"{head}: {message}" if head else str(message)
    return head or repr(error)


class ChunkAssembler:
    """Collects one SDK event's output in wire order and cuts it into ``ChunkResponse`` objects.

    Inside one ``ChunkResponse`` the handler processes ``reasoning``, then ``content``, then
    ``tool_calls``. When an event carries them in another order (a Gemini chunk whose parts are
    a call followed by text), a new chunk is started, so wire order survives (taxonomy C04).
    Text pieces are kept in lists and joined once per chunk.
    """

    __slots__ = ("_chunks", "_content", "_rank", "_reasoning", "_tools")

    def __init__(self) -> None:
        self._chunks: list[ChunkResponse] = []
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._tools: list[ToolCallDelta] = []
        self._rank = -1

    def reasoning(self, text: str | None) -> None:
        if text:
            self._advance(0)
            self._reasoning.append(text)

    def content(self, text: str | None) -> None:
        if text:
            self._advance(1)
            self._content.append(text)

    def tool(self, delta: ToolCallDelta | None) -> None:
        if delta is not None:
            self._advance(2)
            self._tools.append(delta)

    def _advance(self, rank: int) -> None:
        if rank < self._rank:
            self._flush()
        self._rank = rank

    def _flush(self) -> None:
        if self._reasoning or self._content or self._tools:
            self._chunks.append(
                ChunkResponse(
                    content="".join(self._content),
                    reasoning="".join(self._reasoning) or None,
                    tool_calls=self._tools or None,
                )
            )
        self._reasoning, self._content, self._tools = [], [], []
        self._rank = -1

    def build(
        self,
        *,
        usage: TokenUsage | None = None,
        is_complete: bool = False,
        finish_reason: str | None = None,
        error: StreamError | None = None,
    ) -> list[ChunkResponse]:
        """The chunks collected so far; usage and terminal fields go on the last one (made if needed)."""
        self._flush()
        chunks, self._chunks = self._chunks, []
        if usage is None and not is_complete and finish_reason is None and error is None:
            return chunks
        if not chunks:
            chunks.append(ChunkResponse())
        last = chunks[-1]
        last.usage = usage
        last.is_complete = is_complete
        last.finish_reason = finish_reason
        last.error = error
        return chunks


class StreamConverter(ABC):
    """One provider stream's SDK objects -> ``ChunkResponse`` objects. Stateful: one instance per stream.

    Public state, for observability (none of it is needed to consume the chunks):

    * ``unknown_events``: unknown event / delta / block / part / item types, skipped and counted;
    * ``ignored``: known things deliberately not converted (a helper event that duplicates a raw
      one, a second choice, an event after the terminal one, a restated Gemini call...), counted;
    * ``server_tool_calls`` / ``server_tool_results``: provider-executed tools (Anthropic
      ``server_tool_use`` and ``*_tool_result`` blocks, Responses ``web_search_call`` items, Gemini
      ``executable_code`` parts). They are never emitted as client tool calls;
    * ``problems``: protocol anomalies the converter worked around, one sentence each (also
      logged as warnings on the ``reference_impl.converters`` logger);
    * ``is_complete``: the terminal chunk has been emitted; later events produce nothing.
    """

    api: ClassVar[str]

    def __init__(self) -> None:
        self.unknown_events: collections.Counter[str] = collections.Counter()
        self.ignored: collections.Counter[str] = collections.Counter()
        self.server_tool_calls: list[dict[str, Any]] = []
        self.server_tool_results: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._complete = False
        self._usage: TokenUsage | None = None

    # -- the contract ----------------------------------------------------------------------------

    @property
    def is_complete(self) -> bool:
        """True once a chunk with ``is_complete=True`` was returned."""
        return self._complete

    @property
    def usage(self) -> TokenUsage | None:
        """The last usage snapshot seen (``None`` if the provider sent none)."""
        return self._usage

    def convert(self, event: Any) -> list[ChunkResponse]:
        """Convert one SDK stream object; return zero or more chunks, in wire order."""
        if self._complete:
            self.ignored["event after the terminal event"] += 1
            return []
        return self._convert(event)

    def finish(self) -> list[ChunkResponse]:
        """Call when the SDK iterator is exhausted: the terminal chunk if none was emitted yet.

        A stream that ended without its terminal event gets ``error=StreamError("incomplete")``.
        """
        if self._complete:
            return []
        return self._finish()

    def fail(self, exc: BaseException) -> list[ChunkResponse]:
        """Call when the SDK raised mid-stream: one terminal chunk carrying the error.

        ``provider_error`` for an error the provider sent (``data: {"error": ...}``, ``event:
        error``, an HTTP error status); ``incomplete`` for a dropped connection or a timeout. Every
        chunk returned before is unaffected: nothing that arrived is lost.
        """
        message = f"{type(exc).__name__}: {exc}"
        if self._complete:
            self._problem(f"the SDK raised after the terminal event, ignored: {message}")
            return []
        kind = "incomplete" if isinstance(exc, self.connection_errors) else "provider_error"
        return self._terminal(
            ChunkAssembler(), finish_reason=self._finish_reason_so_far(), error=StreamError(kind, message)
        )

    # Where the SDK keeps its error classes, and their names: (module, api error names,
    # connection error names). Resolved lazily so that importing a converter never imports an SDK.
    _sdk_errors: tuple[str, tuple[str, ...], tuple[str, ...]] = ("", (), ())

    def _sdk_error_classes(self, names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
        module_name = self._sdk_errors[0]
        if not module_name or not names:
            return ()
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # pragma: no cover - the SDKs are dependencies
            return ()
        return tuple(getattr(module, name) for name in names)

    @property
    def api_errors(self) -> tuple[type[BaseException], ...]:
        """The SDK's own error classes that ``iter_chunks`` turns into a ``fail()`` chunk."""
        return self._sdk_error_classes(self._sdk_errors[1])

    @property
    def connection_errors(self) -> tuple[type[BaseException], ...]:
        """The subset of ``api_errors`` that means "the connection broke" (-> ``incomplete``)."""
        return self._sdk_error_classes(self._sdk_errors[2])

    # -- for subclasses --------------------------------------------------------------------------

    @abstractmethod
    def _convert(self, event: Any) -> list[ChunkResponse]:
        """Convert one event (never called after the terminal chunk)."""

    @abstractmethod
    def _finish(self) -> list[ChunkResponse]:
        """The iterator ended and no terminal chunk was emitted."""

    def _finish_reason_so_far(self) -> str | None:
        """The provider's stop reason if one arrived before an SDK error (kept on the error chunk)."""
        return None

    def _terminal(
        self, pieces: ChunkAssembler, *, finish_reason: str | None, error: StreamError | None
    ) -> list[ChunkResponse]:
        self._complete = True
        return pieces.build(usage=self._usage, is_complete=True, finish_reason=finish_reason, error=error)

    def _incomplete(self, pieces: ChunkAssembler, what: str) -> list[ChunkResponse]:
        return self._terminal(
            pieces,
            finish_reason=self._finish_reason_so_far(),
            error=StreamError("incomplete", f"the stream ended without {what}"),
        )

    def _problem(self, message: str) -> None:
        self.problems.append(message)
        logger.warning("%s converter: %s", self.api, message)

    def _unknown(self, what: str) -> None:
        if what not in self.unknown_events:
            logger.debug("%s converter: skipping unknown %s", self.api, what)
        self.unknown_events[what] += 1


def iter_chunks(converter: StreamConverter, sdk_stream: Iterable[Any]) -> Iterator[ChunkResponse]:
    """Drive ``converter`` over a sync SDK stream: ``convert`` each object, then ``finish``.

    If the SDK raises one of its own API errors while iterating (``converter.api_errors``), the
    error becomes ``converter.fail(exc)``'s chunk and iteration stops. Any other exception,
    including one raised by the converter itself, propagates: it is a bug, not a stream event.
    """
    # An empty tuple in an except clause catches nothing, which is exactly right. Converters
    # written elsewhere may have no api_errors at all (it is optional for them).
    errors = tuple(getattr(converter, "api_errors", ()) or ())
    iterator = iter(sdk_stream)
    while True:
        try:
            event = next(iterator)
        except StopIteration:
            break
        except errors as exc:
            yield from converter.fail(exc)
            return
        yield from converter.convert(event)
    yield from converter.finish()


async def aiter_chunks(converter: StreamConverter, sdk_stream: AsyncIterable[Any]) -> AsyncIterator[ChunkResponse]:
    """Async twin of ``iter_chunks`` (``AsyncOpenAI``, ``AsyncAnthropic``, ``client.aio`` streams)."""
    # An empty tuple in an except clause catches nothing, which is exactly right. Converters
    # written elsewhere may have no api_errors at all (it is optional for them).
    errors = tuple(getattr(converter, "api_errors", ()) or ())
    iterator = aiter(sdk_stream)
    while True:
        try:
            event = await anext(iterator)
        except StopAsyncIteration:
            break
        except errors as exc:
            for chunk in converter.fail(exc):
                yield chunk
            return
        for chunk in converter.convert(event):
            yield chunk
    for chunk in converter.finish():
        yield chunk
