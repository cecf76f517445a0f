"""Delta level: a seed-shaped handler (or final-result accumulator) living in the target process.

``BridgeHandlerFactory`` is an ordinary handler factory for ``run_conformance``: each call sends a
``new`` request and returns a ``BridgeHandler`` whose ``feed``/``finalize``/getters/``reset`` are one
request each. What the suite can observe in process, it observes here too:

* **callbacks**: the target reports, with every answer, what its callbacks received during that
  call; the proxy hands them to the suite's callbacks in order. When a suite callback raises (the
  suite's callback-isolation probe), the instance is rebuilt in the target with callbacks that
  raise from that call on, and the calls so far are replayed, so the handler meets the exception
  where it would have in process. (A callback that raises once is taken to raise for every later
  call too: true of every callback the suite passes.)
* **exceptions**: what the target raised comes back as data and is raised here with the matching
  Python class (``TargetRaisedState`` is a ``RuntimeError``: the contract's refusal);
* **copies**: a getter that hands out the handler's own array (the target reports it) is mirrored
  by a Python list that remembers what the caller appended, as the handler's own list would.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from conformance.bridge.process import BridgeProcess
from conformance.bridge.protocol import (
    BridgeBroken,
    BridgeObject,
    TargetCrashed,
    chunk_to_json,
    quote,
    raised_exception,
)
from conformance.handler.observe import ObservationError
from reference_impl.types import ChunkResponse

__all__ = ["BridgeAccumulator", "BridgeHandler", "BridgeHandlerFactory"]

Callback = Callable[[Any], object]


class _CallbackRaised(Exception):  # an internal signal
    def __init__(self, position: int, error: BaseException) -> None:
        super().__init__(str(error))
        self.position = position
        self.error = error


class _Instance:
    """What every proxy shares: one named instance in one generation of the target process."""

    def __init__(self, factory: BridgeHandlerFactory, callbacks: Any) -> None:
        self._factory = factory
        self._process = factory.process
        self.name = factory.next_name()
        self._generation = self._process.generation
        self._finalizer = weakref.finalize(self, factory.forget, self.name)
        answer = self._send({"type": "new", "callbacks": callbacks})
        # The process may have been (re)started by that request.
        self._generation = self._process.generation
        _outcome(answer, "the target's handler factory")

    def _send(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if message.get("type") != "new" and self._generation != self._process.generation:
            raise TargetCrashed(f"the target process was restarted: handler {self.name} no longer exists")
        request = {**message, "h": self.name}
        drops = self._factory.pending_drops()
        if drops:
            request["drop"] = drops
        return self._process.request(request)

    def _rename(self) -> None:
        self._finalizer.detach()
        self._factory.forget(self.name)
        self.name = self._factory.next_name()
        self._finalizer = weakref.finalize(self, self._factory.forget, self.name)


def _outcome(answer: Mapping[str, Any], what: str) -> Any:
    """The ``ok`` value, or the target's exception raised, or an unreadable result as the suite's finding."""
    if "raised" in answer:
        raise raised_exception(answer["raised"], quote(str(answer)))
    if "unreadable" in answer:
        raise ObservationError(f"{what}: {answer['unreadable']}")
    return answer["ok"]


def _objects(value: Any) -> Any:
    if isinstance(value, list):
        return [BridgeObject.wrap(item) for item in value]
    return value


class BridgeHandler(_Instance):
    """A handler in the target process; one request per call (see the module docstring)."""

    def __init__(
        self,
        factory: BridgeHandlerFactory,
        on_segment_event: Callback | None = None,
        on_tool_invocation: Callback | None = None,
    ) -> None:
        self._callbacks = {"event": on_segment_event, "invocation": on_tool_invocation}
        self._recording = on_segment_event is not None or on_tool_invocation is not None
        self._log: list[dict[str, Any]] = []  # every call since new, for a replay with raising callbacks
        self._position = 0  # callback calls the target reported so far (since its new)
        self._delivered = 0  # callback calls handed to the suite so far
        self._raise_from: int | None = None
        self._shared: dict[str, list[Any]] = {}  # mirrors of getters that return the handler's own list
        self._shared_sizes: dict[str, int] = {}
        super().__init__(factory, "record" if self._recording else "none")

    def feed(self, chunk: ChunkResponse) -> Any:
        """``feed(chunk)`` in the target: the events it returned."""
        return _objects(self._call({"type": "feed", "chunk": chunk_to_json(chunk)}, "feed()"))

    def finalize(self) -> Any:
        """``finalize()`` in the target: the events it returned."""
        return _objects(self._call({"type": "finalize"}, "finalize()"))

    def get_all_events(self) -> Any:
        """``get_all_events()`` in the target."""
        return self._getter("events", "get_all_events()")

    def get_all_invocations(self) -> Any:
        """``get_all_invocations()`` in the target."""
        return self._getter("invocations", "get_all_invocations()")

    def reset(self) -> None:
        """``reset()`` in the target."""
        self._call({"type": "reset"}, "reset()")
        self._shared.clear()
        self._shared_sizes.clear()

    # -- one call ----------------------------------------------------------------------------------

    def _call(self, message: dict[str, Any], what: str) -> Any:
        return _outcome(self._answer(message), what)

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        self._log.append(message)
        answer = self._send(message)
        try:
            self._deliver(answer)
        except _CallbackRaised as raised:
            answer = self._replay_raising(raised)
        return answer

    def _deliver(self, answer: Mapping[str, Any]) -> None:
        """Hand the suite's callbacks what the target's received, each callback call exactly once."""
        fired = answer.get("callbacks") or []
        if not isinstance(fired, list):
            raise BridgeBroken(f"'callbacks' must be a list: {quote(str(answer))}")
        for item in fired:
            position = self._position
            self._position += 1
            if position >= self._delivered:  # a replay reports the calls already delivered again
                self._delivered = position + 1
                self._one_callback(item, position)

    def _one_callback(self, item: Any, position: int) -> None:
        if not isinstance(item, dict) or item.get("kind") not in self._callbacks:
            raise BridgeBroken(f"a callback report must be {{'kind': 'event'|'invocation', 'value': ...}}: {item!r}")
        callback = self._callbacks[item["kind"]]
        if callback is None:
            return
        if "unreadable" in item:
            raise ObservationError(str(item["unreadable"]))
        try:
            callback(BridgeObject.wrap(item.get("value")))
        except Exception as error:  # the suite's own callback raised: the target must meet it too
            if self._raise_from is None:
                raise _CallbackRaised(position, error) from error
            # Already mirrored: the target's callbacks raise from _raise_from on.

    def _replay_raising(self, raised: _CallbackRaised) -> dict[str, Any]:
        """Rebuild the instance with callbacks raising from ``raised.position`` and replay every call."""
        self._raise_from = raised.position
        self._rename()
        message = f"{type(raised.error).__name__}: {raised.error}"
        _outcome(
            self._send({"type": "new", "callbacks": {"raise_from": raised.position, "message": message}}),
            "the target's handler factory",
        )
        self._position = 0
        answer: dict[str, Any] = {}
        for logged in self._log:
            answer = self._send(logged)
            self._deliver(answer)
        return answer

    def _getter(self, kind: str, what: str) -> Any:
        answer = self._answer({"type": kind})
        items = _objects(_outcome(answer, what))
        if not answer.get("aliased") or not isinstance(items, list):
            return items
        # The target's getter returned its own array: what a caller appends to it stays there.
        shared = self._shared.setdefault(kind, [])
        appended = shared[self._shared_sizes.get(kind, 0) :]
        shared[:] = items + appended
        self._shared_sizes[kind] = len(items)
        return shared


class BridgeAccumulator(_Instance):
    """A final-result accumulator in the target process: ``add(chunk)``, then ``result()``."""

    def __init__(self, factory: BridgeHandlerFactory) -> None:
        super().__init__(factory, "none")

    def add(self, chunk: ChunkResponse) -> None:
        """``add(chunk)`` in the target."""
        _outcome(self._send({"type": "add", "chunk": chunk_to_json(chunk)}), "add()")

    def result(self) -> Any:
        """``result()`` in the target: the final result as JSON (``conformance.wire.final`` reads it)."""
        return _outcome(self._send({"type": "result"}), "result()")


class BridgeHandlerFactory:
    """A handler factory for ``run_conformance`` backed by one delta-level target process.

    With ``accumulator=True`` it makes final-result accumulators (``Capabilities(events=False)``).
    """

    def __init__(self, process: BridgeProcess, *, accumulator: bool = False) -> None:
        self.process = process
        self.accumulator = accumulator
        self._names = itertools.count(1)
        self._drops: list[str] = []
        self.__name__ = self.__qualname__ = f"bridge:{process.command}"

    def __call__(
        self, on_segment_event: Callback | None = None, on_tool_invocation: Callback | None = None
    ) -> BridgeHandler | BridgeAccumulator:
        """A fresh handler (or accumulator) in the target process."""
        if self.accumulator:
            return BridgeAccumulator(self)
        return BridgeHandler(self, on_segment_event, on_tool_invocation)

    def next_name(self) -> str:
        """A name for the next instance (``h1``, ``h2``, ...)."""
        return f"h{next(self._names)}"

    def forget(self, name: str) -> None:
        """Drop ``name`` in the target with the next request (the proxy is gone)."""
        self._drops.append(name)

    def pending_drops(self) -> list[str]:
        """The names to drop, taken once."""
        drops, self._drops = self._drops, []
        return drops
