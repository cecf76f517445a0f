"""``ToolCallTracker``: provider keys -> canonical tool calls with a dense 0-based index (seed 004).

Provider converters that do not receive an OpenAI-style ``index`` use this to produce one:

* OpenAI Responses: ``response.output_item.added`` carries ``output_index`` and the item ``id``
  (``fc_...``) next to the ``call_id`` (``call_...``); argument deltas carry ``item_id`` and
  ``output_index``. Start the call under ``item_id`` with ``aliases=[output_index]`` and route
  every later event by whichever key it carries.
* Anthropic: ``content_block_start`` (``tool_use``) carries the content-block ``index`` and the
  ``toolu_...`` id; ``input_json_delta`` and ``content_block_stop`` carry only the block index,
  which counts text and thinking blocks too (the first tool is often block 1).

Either way the tracker hands back a ``TrackedCall`` whose ``index`` is dense, 0-based and in order
of first appearance: that is the value to put in ``ToolCallDelta.index`` (taxonomy A03: a leaked
block index or output index creates phantom calls downstream).

Corrections to the seed-004 design, each a bug class in the taxonomy:

* calls are keyed by the provider's *key*, never by ``call_id`` (B06: some providers repeat one id
  across parallel calls), and a call may be known under several keys (A13: ``item_id`` and
  ``output_index`` name the same call);
* problems are typed errors that say which key and why, never ``None`` (the seed's
  ``Option<StreamEvent>`` drops the delta silently) and never ``KeyError``: a delta before its
  start, a second start of an open key, a delta after the call completed, a changed call id;
* a key may be reused for a *new* call once its call has completed, and only through
  ``start_call`` (which gives the new call a new index): a late delta can never be merged into the
  wrong call (B01);
* arguments are kept as a list of fragments and joined once, at completion (the seed's
  ``String`` accumulation becomes quadratic when ported to Python as ``str +=`` on an attribute);
* ``complete_call(final_arguments=...)`` reconciles the terminal snapshot that Responses sends in
  ``.done`` with what was streamed (A15): the snapshot wins, the part not yet streamed is exposed
  as ``unstreamed_suffix``, and a snapshot that is not an extension of the stream is flagged.

The tracker is not thread-safe: one tracker per response stream, used from one task.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

__all__ = [
    "AliasConflictError",
    "CallCompletedError",
    "CallConflictError",
    "DuplicateCallError",
    "InvalidKeyError",
    "ProviderKey",
    "ToolCallTracker",
    "TrackedCall",
    "TrackerError",
    "UnknownCallError",
]

_KEYS_SHOWN = 10

ProviderKey = str | int
"""A provider's handle for a call: a Responses ``item_id`` / ``output_index``, an Anthropic block index.

Keys are compared exactly: ``1`` and ``"1"`` are different keys (seed 004 stringified Anthropic
indexes; here the converter passes the int it received).
"""


class TrackerError(ValueError):
    """Base class of every error the tracker raises for an inconsistent event sequence.

    ``key`` is the provider key the offending event carried.
    """

    def __init__(self, message: str, *, key: ProviderKey | None = None) -> None:
        super().__init__(message)
        self.key = key


class InvalidKeyError(TrackerError):
    """An empty-string key: an absent provider id must not become a key every id-less event shares."""


class UnknownCallError(TrackerError):
    """An event for a key that no ``start_call`` registered (a delta or stop before its start)."""


class DuplicateCallError(TrackerError):
    """``start_call`` for a key (or alias) that already belongs to a call that is still open."""


class AliasConflictError(TrackerError):
    """``add_alias`` for a key that already belongs to another call (reuse needs ``start_call``)."""


class CallCompletedError(TrackerError):
    """An argument delta, or a second completion, for a call that has already completed."""


class CallConflictError(TrackerError):
    """A different non-empty ``call_id`` or ``name`` for a call that already has one."""


class TrackedCall:
    """One tool call as the tracker knows it. Read-only for callers; the tracker updates it.

    ``index`` is dense and 0-based in order of ``start_call``; ``call_id`` and ``name`` are the
    provider's values (``None`` until known); ``keys`` are the provider keys the call was registered
    under, in registration order (a key may since have been taken over by a later call, see
    ``ToolCallTracker.start_call``). Instances are made by ``ToolCallTracker``, one per call: the
    same object is returned by every method that reaches the call.
    """

    __slots__ = ("_record",)

    def __init__(self, record: _CallRecord) -> None:
        self._record = record

    @property
    def index(self) -> int:
        """Dense 0-based position in order of first appearance: the ``ToolCallDelta.index`` to emit."""
        return self._record.index

    @property
    def keys(self) -> tuple[ProviderKey, ...]:
        """Every provider key this call was registered under (primary key first)."""
        return self._record.keys

    @property
    def call_id(self) -> str | None:
        """The provider's call id (``call_...``, ``toolu_...``), or ``None`` if none was given yet."""
        return self._record.call_id

    @property
    def name(self) -> str | None:
        """The tool name, or ``None`` if none was given yet."""
        return self._record.name

    @property
    def completed(self) -> bool:
        """True once ``complete_call`` ran for this call."""
        return self._record.completed

    @property
    def arguments(self) -> str:
        """The argument text: the terminal snapshot if one was given at completion, else the streamed text.

        After completion this is a stored string. While the call is open it joins the fragments
        received so far (linear in their size): read it once at the end, not after every delta.
        """
        record = self._record
        if record.arguments is not None:
            return record.arguments
        return "".join(record.parts)

    @property
    def streamed_arguments(self) -> str:
        """The concatenation of the fragments passed to ``append_arguments``, in order."""
        record = self._record
        if record.streamed is not None:
            return record.streamed
        return "".join(record.parts)

    @property
    def unstreamed_suffix(self) -> str:
        """After a completion with ``final_arguments``: the tail of the snapshot no delta delivered.

        A converter emits it as one last argument delta so downstream sees the whole text exactly
        once (taxonomy A15: arguments only in ``.done``). Empty when nothing is missing, when no
        snapshot was given, or when the snapshot contradicts the stream (see ``arguments_mismatch``).
        """
        return self._record.unstreamed_suffix

    @property
    def arguments_mismatch(self) -> bool:
        """True if the completion snapshot is not an extension of the streamed text (the snapshot wins)."""
        return self._record.arguments_mismatch

    def __repr__(self) -> str:
        state = "completed" if self.completed else "open"
        return (
            f"TrackedCall(index={self.index}, call_id={self.call_id!r}, name={self.name!r}, "
            f"keys={self.keys!r}, {state}, {len(self.arguments)} argument chars)"
        )


class _CallRecord:
    """The mutable state behind one ``TrackedCall``: only ``ToolCallTracker`` holds and changes it."""

    __slots__ = (
        "arguments",
        "arguments_mismatch",
        "call_id",
        "completed",
        "index",
        "keys",
        "name",
        "parts",
        "streamed",
        "unstreamed_suffix",
        "view",
    )

    def __init__(self, index: int, keys: tuple[ProviderKey, ...], call_id: str | None, name: str | None) -> None:
        self.index = index
        self.keys = keys
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.completed = False
        # Set once, at completion: the joined text, so reading it never re-joins.
        self.streamed: str | None = None
        self.arguments: str | None = None
        self.unstreamed_suffix = ""
        self.arguments_mismatch = False
        self.view = TrackedCall(self)

    def complete(self, final_arguments: str | None) -> None:
        """Join the fragments once and reconcile them with the terminal snapshot, if any."""
        streamed = "".join(self.parts)
        self.parts = []
        self.streamed = streamed
        if final_arguments is None:
            self.arguments = streamed
        else:
            self.arguments = final_arguments
            if final_arguments.startswith(streamed):
                self.unstreamed_suffix = final_arguments[len(streamed) :]
            else:
                self.arguments_mismatch = True
        self.completed = True


def _check_key(key: object) -> ProviderKey:
    # bool is an int subclass and True == 1: a bool key would silently alias block index 1.
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise TypeError(f"a provider key must be a str or an int, got {type(key).__name__}: {key!r}")
    if key == "":
        raise InvalidKeyError(
            "a provider key must not be the empty string (an absent id would make every id-less event "
            "share one call); use the other key the event carries, such as output_index or the block index",
            key=key,
        )
    return key


def _as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _check_optional_text(what: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} must be a str or None, got {type(value).__name__}: {value!r}")
    # '' means "not sent" (continuation events often carry empty ids and names).
    return value or None


class ToolCallTracker:
    """Maps provider keys to canonical tool calls, with dense 0-based indexes and linear accumulation.

    Responses API::

        tracker = ToolCallTracker()
        # response.output_item.added {"output_index": 1, "item": {"id": "fc_1", "call_id": "call_1", "name": "f"}}
        call = tracker.start_call("fc_1", call_id="call_1", name="f", aliases=[1])
        # response.function_call_arguments.delta {"item_id": "fc_1", "output_index": 1, "delta": "{}"}
        call = tracker.append_arguments("fc_1", "{}")  # -> ToolCallDelta(call.index, arguments_delta="{}")
        # response.function_call_arguments.done {"item_id": "fc_1", "output_index": 1, "arguments": "{}"}
        call = tracker.complete_call(1, final_arguments="{}")

    Anthropic::

        call = tracker.start_call(block.index, call_id=block.id, name=block.name)   # content_block_start
        call = tracker.append_arguments(event.index, event.delta.partial_json)      # input_json_delta
        call = tracker.complete_call(event.index)                                    # content_block_stop

    Every method that takes a key raises ``TypeError`` for a key that is not a ``str``/``int``
    (``bool`` included) and a ``TrackerError`` subclass for an event that does not fit the calls
    seen so far; a failed call changes nothing.
    """

    def __init__(self) -> None:
        self._by_key: dict[ProviderKey, _CallRecord] = {}
        self._calls: list[_CallRecord] = []

    # -- registering ---------------------------------------------------------------------------

    def start_call(
        self,
        provider_key: ProviderKey,
        *,
        call_id: str | None = None,
        name: str | None = None,
        aliases: Iterable[ProviderKey] = (),
    ) -> TrackedCall:
        """Register a new call under ``provider_key`` (and ``aliases``) and give it the next index.

        ``call_id`` and ``name`` may be ``None`` (or ``''``) and supplied later with
        ``update_call``. A key that belongs to a *completed* call is taken over by the new call
        (providers restart block indexes per message, and a converter may be reused); the
        completed call keeps its index, data and its other keys. A key that belongs to an *open*
        call raises ``DuplicateCallError``: that is a restarted block or a converter bug, and
        merging the two would corrupt both calls.
        """
        keys = self._unique_keys(provider_key, aliases)
        call_id = _check_optional_text("call_id", call_id)
        name = _check_optional_text("name", name)
        for key in keys:
            owner = self._by_key.get(key)
            if owner is not None and not owner.completed:
                role = "key" if key == keys[0] else "alias"
                raise DuplicateCallError(
                    f"start_call for {role} {key!r}, which already belongs to open call {self._describe(owner)}; "
                    "complete that call first, or route this event to it with append_arguments",
                    key=key,
                )
        record = _CallRecord(len(self._calls), keys, call_id, name)
        self._calls.append(record)
        for key in keys:
            self._by_key[key] = record
        return record.view

    def add_alias(self, existing_key: ProviderKey, new_key: ProviderKey) -> TrackedCall:
        """Make ``new_key`` another name for the call registered under ``existing_key``.

        Adding a key the call already has is a no-op. A key that belongs to another call, open or
        completed, raises ``AliasConflictError``: a key moves to a new call only through
        ``start_call``, so that it also gets a new index.
        """
        call = self._require(existing_key, "add_alias")
        new_key = _check_key(new_key)
        owner = self._by_key.get(new_key)
        if owner is call:
            return call.view
        if owner is not None:
            raise AliasConflictError(
                f"cannot make {new_key!r} an alias of call {self._describe(call)}: it already belongs to "
                f"call {self._describe(owner)}",
                key=new_key,
            )
        call.keys = (*call.keys, new_key)
        self._by_key[new_key] = call
        return call.view

    def update_call(
        self, provider_key: ProviderKey, *, call_id: str | None = None, name: str | None = None
    ) -> TrackedCall:
        """Adopt a ``call_id`` or ``name`` that arrived after the start (taxonomy B04).

        ``None`` and ``''`` change nothing; restating the current value changes nothing; a
        *different* non-empty value for one already set raises ``CallConflictError`` (B01: two
        calls on one key are never merged). Allowed on completed calls too: ``output_item.done``
        may be the first event to carry the id.
        """
        call = self._require(provider_key, "update_call")
        call_id = _check_optional_text("call_id", call_id)
        name = _check_optional_text("name", name)
        for what, current, new in (("call_id", call.call_id, call_id), ("name", call.name, name)):
            if new is not None and current is not None and new != current:
                raise CallConflictError(
                    f"key {provider_key!r} carried {what} {new!r}, but its call {self._describe(call)} already has "
                    f"{what} {current!r}; two calls on one key are never merged",
                    key=provider_key,
                )
        if call_id is not None:
            call.call_id = call_id
        if name is not None:
            call.name = name
        return call.view

    # -- streaming -----------------------------------------------------------------------------

    def append_arguments(self, provider_key: ProviderKey, delta: str) -> TrackedCall:
        """Append one argument fragment to the open call under ``provider_key``; return the call.

        ``''`` is accepted and changes nothing (Anthropic opens every tool block with an empty
        ``partial_json``). Raises ``UnknownCallError`` for a key never started and
        ``CallCompletedError`` after ``complete_call``.
        """
        if not isinstance(delta, str):
            raise TypeError(f"an argument delta must be a str, got {type(delta).__name__}: {delta!r}")
        call = self._require(provider_key, "append_arguments")
        if call.completed:
            raise CallCompletedError(
                f"argument delta for key {provider_key!r} after its call {self._describe(call)} completed; "
                "a new call on this key needs start_call first",
                key=provider_key,
            )
        if delta:
            call.parts.append(delta)
        return call.view

    def complete_call(self, provider_key: ProviderKey, *, final_arguments: str | None = None) -> TrackedCall:
        """Mark the call under ``provider_key`` completed and fix its argument text; return the call.

        The fragments are joined here, once. ``final_arguments`` is the provider's terminal
        snapshot, if it sent one (Responses ``function_call_arguments.done``, ``output_item.done``):
        it becomes ``arguments``; the part of it that no delta delivered is ``unstreamed_suffix``;
        a snapshot that does not start with the streamed text sets ``arguments_mismatch``.
        Raises ``UnknownCallError`` for a key never started and ``CallCompletedError`` for a
        second completion.
        """
        if final_arguments is not None and not isinstance(final_arguments, str):
            raise TypeError(
                f"final_arguments must be a str or None, got {type(final_arguments).__name__}: {final_arguments!r}"
            )
        call = self._require(provider_key, "complete_call")
        if call.completed:
            raise CallCompletedError(
                f"complete_call for key {provider_key!r}, but its call {self._describe(call)} already completed",
                key=provider_key,
            )
        call.complete(final_arguments)
        return call.view

    # -- reading -------------------------------------------------------------------------------

    def lookup(self, provider_key: ProviderKey) -> TrackedCall | None:
        """The call currently registered under ``provider_key``, or ``None``."""
        record = self._by_key.get(_check_key(provider_key))
        return None if record is None else record.view

    def calls(self) -> list[TrackedCall]:
        """Every call started so far, completed or not, in index order (a new list)."""
        return [record.view for record in self._calls]

    def open_calls(self) -> list[TrackedCall]:
        """The calls not yet completed, in index order: what a truncated stream leaves behind."""
        return [record.view for record in self._calls if not record.completed]

    def reset(self) -> None:
        """Forget every call and key: the next call started gets index 0 again."""
        self._by_key.clear()
        self._calls.clear()

    def __len__(self) -> int:
        return len(self._calls)

    def __contains__(self, provider_key: object) -> bool:
        return (
            isinstance(provider_key, (str, int)) and not isinstance(provider_key, bool) and provider_key in self._by_key
        )

    def __repr__(self) -> str:
        return f"ToolCallTracker({len(self._calls)} calls, {len(self.open_calls())} open)"

    # -- helpers -------------------------------------------------------------------------------

    def _require(self, provider_key: ProviderKey, operation: str) -> _CallRecord:
        key = _check_key(provider_key)
        call = self._by_key.get(key)
        if call is None:
            raise UnknownCallError(
                f"{operation} for unknown key {key!r}: no start_call registered it (an event arrived before its "
                f"call started, or carried a different key); {self._known_keys_hint(key)}",
                key=key,
            )
        return call

    def _known_keys_hint(self, key: ProviderKey) -> str:
        shown = [repr(known) for known in itertools.islice(self._by_key, _KEYS_SHOWN)]
        hint = f"known keys: {', '.join(shown) or 'none'}"
        if len(self._by_key) > _KEYS_SHOWN:
            hint += f" and {len(self._by_key) - _KEYS_SHOWN} more"
        # The classic slip: an Anthropic block index passed as int at the start and as str later.
        twin: ProviderKey | None = str(key) if isinstance(key, int) else _as_int(key)
        if twin is not None and twin in self._by_key:
            hint += f" (keys are compared exactly: {twin!r} is known, {key!r} is not)"
        return hint

    @staticmethod
    def _unique_keys(provider_key: ProviderKey, aliases: Iterable[ProviderKey]) -> tuple[ProviderKey, ...]:
        if isinstance(aliases, (str, bytes)):
            # aliases="fc_1" would register "f", "c", "_", "1": certainly not what was meant.
            raise TypeError(f"aliases must be an iterable of keys, not a single {type(aliases).__name__}: {aliases!r}")
        keys: dict[ProviderKey, None] = {_check_key(provider_key): None}
        for alias in aliases:
            keys[_check_key(alias)] = None
        return tuple(keys)

    @staticmethod
    def _describe(call: _CallRecord) -> str:
        return f"#{call.index} (call_id={call.call_id!r}, name={call.name!r}, keys={call.keys!r})"
