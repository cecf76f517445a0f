"""A delta-level bridge target in Python: serves any in-process handler factory over protocol 1.

    python tests/bridge_targets/py_target.py MODULE:FACTORY [--capabilities JSON] [--misbehave MODE]

It exists so the tests can compare one and the same handler in process and over the bridge (the
verdicts must be identical), and so the failure modes of a target (noise on stdout, hangs, crashes,
stderr floods, a wrong protocol) can be produced on purpose without Node. ``--misbehave`` modes:
``stdout-noise`` (a stray line after the 3rd request), ``hang`` (stops answering at the 3rd),
``crash-once:PATH`` (exits at the 3rd request if PATH does not exist, and creates it),
``crash-always`` (exits on every feed), ``stderr-flood`` (5 MB on
stderr before the first answer), ``wrong-id``, ``no-hello``, ``protocol-2``, ``silent-start``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, os.getcwd())

_KINDS = {RuntimeError: "state", ValueError: "value", TypeError: "type"}


def _kind(error: BaseException) -> str:
    # RuntimeError first: a handler's own refusal is a RuntimeError subclass.
    return next((kind for cls, kind in _KINDS.items() if isinstance(error, cls)), "other")


def _plain(value: Any) -> Any:
    """Events and invocations as JSON: enums by value, dataclasses and objects by their fields."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "value") and type(value).__module__ != "builtins" and hasattr(type(value), "__members__"):
        return value.value
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: _plain(getattr(value, name)) for name in fields}
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    return {key: _plain(item) for key, item in vars(value).items() if not key.startswith("_")}


def _chunk(data: dict[str, Any]) -> Any:
    from reference_impl.types import ChunkResponse, StreamError, TokenUsage, ToolCallDelta

    calls = data.get("tool_calls")
    error = data.get("error")
    usage = data.get("usage")
    return ChunkResponse(
        content=data.get("content") or "",
        reasoning=data.get("reasoning"),
        is_complete=bool(data.get("is_complete")),
        tool_calls=None
        if calls is None
        else [
            ToolCallDelta(
                c["index"],
                c.get("call_id"),
                c.get("name"),
                c.get("arguments_delta"),
                provider_metadata=c.get("provider_metadata"),
            )
            for c in calls
        ],
        finish_reason=data.get("finish_reason"),
        error=None if error is None else StreamError(error["kind"], error["message"]),
        usage=None if usage is None else TokenUsage(**usage),
    )


class Target:
    def __init__(self, factory: Any, misbehave: str) -> None:
        self.factory = factory
        self.misbehave = misbehave
        self.handlers: dict[str, SimpleNamespace] = {}
        self.served = 0

    def create(self, name: str, callbacks: Any) -> None:
        entry = SimpleNamespace(handler=None, fired=[], calls=0)
        if callbacks == "none":
            entry.handler = self.factory()
        else:
            raise_from = callbacks.get("raise_from") if isinstance(callbacks, dict) else None
            message = (callbacks.get("message") if isinstance(callbacks, dict) else None) or "injected"

            def callback(kind: str) -> Any:
                def called(value: Any) -> None:
                    position = entry.calls
                    entry.calls += 1
                    entry.fired.append({"kind": kind, "value": _plain(value)})
                    if raise_from is not None and position >= raise_from:
                        raise RuntimeError(message)

                return called

            entry.handler = self.factory(on_segment_event=callback("event"), on_tool_invocation=callback("invocation"))
        self.handlers[name] = entry

    def call(self, request: dict[str, Any], handler: Any) -> dict[str, Any]:
        kind = request["type"]
        if kind == "feed":
            return {"value": handler.feed(_chunk(request["chunk"]))}
        if kind == "finalize":
            return {"value": handler.finalize()}
        if kind in ("events", "invocations"):
            getter = handler.get_all_events if kind == "events" else handler.get_all_invocations
            first = getter()
            return {"value": first, "aliased": first is getter()}
        if kind == "reset":
            handler.reset()
            return {"value": None}
        if kind == "add":
            handler.add(_chunk(request["chunk"]))
            return {"value": None}
        if kind == "result":
            return {"value": handler.result()}
        raise LookupError(kind)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        for name in request.get("drop") or []:
            self.handlers.pop(name, None)
        if request["type"] == "new":
            self.create(request["h"], request.get("callbacks", "none"))
            return {"ok": None, "callbacks": []}
        entry = self.handlers[request["h"]]
        entry.fired = []
        try:
            result = self.call(request, entry.handler)
        except LookupError:
            return {"error": f"unknown request type {request['type']}"}
        except Exception as error:  # noqa: BLE001 - the handler under test may raise anything: it is data
            return {
                "raised": {"type": type(error).__name__, "message": str(error), "class": _kind(error)},
                "callbacks": entry.fired,
            }
        answer = {"ok": _plain(result["value"]), "callbacks": entry.fired}
        if "aliased" in result:
            answer["aliased"] = result["aliased"]
        return answer


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"tcc": 1, **message}) + "\n")
    sys.stdout.flush()


def misbehave(mode: str, served: int, request: dict[str, Any]) -> dict[str, Any] | None:
    """What a broken target does instead of answering (None: answer normally)."""
    if served == 1 and mode == "stderr-flood":
        sys.stderr.write(("noise " * 100 + "\n") * 9000)
        sys.stderr.flush()
    if served == 3 and mode == "stdout-noise":
        print("debug: feeding a chunk", flush=True)
    if served == 3 and mode == "hang":
        time.sleep(3600)
    crash_now = served == 3 and mode.startswith("crash-once:") and not os.path.exists(mode.partition(":")[2])
    if crash_now:
        open(mode.partition(":")[2], "w").close()  # a marker: the next process answers
    if crash_now or (mode == "crash-always" and request["type"] == "feed"):
        sys.stderr.write("fatal: the target fell over\n")
        sys.stderr.flush()
        os._exit(3)
    if served == 3 and mode == "wrong-id":
        return {"id": request["id"] + 100, "ok": None}
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("factory")
    parser.add_argument("--capabilities", default="{}")
    parser.add_argument("--misbehave", default="")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # the handler's own logs (the suite runs it thousands of times)
    module, _, attribute = args.factory.partition(":")
    target = Target(getattr(importlib.import_module(module), attribute), args.misbehave)
    if args.misbehave == "no-hello":
        time.sleep(3600)
    protocols = [2] if args.misbehave == "protocol-2" else [1]
    send(
        {
            "type": "hello",
            "protocol": protocols,
            "level": "delta",
            "target": {"name": args.factory},
            "capabilities": json.loads(args.capabilities),
        }
    )
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("type") == "bye":
            break
        if request.get("type") == "start":
            if args.misbehave != "silent-start":
                send({"type": "ready"})
            continue
        target.served += 1
        answer = misbehave(args.misbehave, target.served, request)
        send(answer if answer is not None else {"id": request["id"], **target.handle(request)})


if __name__ == "__main__":
    main()
