"""The JSON-lines bridge: the suite against handlers and provider stacks in any language.

The suite starts the target's command once per run and talks JSON lines over its stdin/stdout
(protocol 1, ``docs/bridge.md``). Two kinds of target:

* **delta level**: the suite sends chunks and the target answers with what its handler's
  ``feed``/``finalize``/getters returned: checked by ``run_conformance`` like an in-process handler;
* **byte level**: the suite sends a wire API name and a response body in byte pieces; the target
  runs its own provider code over them and answers with the final calls: checked by
  ``run_stack_conformance`` on every recording, whole and byte-split.

From Python::

    from conformance.bridge import run_bridge
    report = run_bridge("node examples/bridge/seed001_handler.mjs", profile="ci", seed=0)

It is another way to reach the same targets, not another suite: the same checks, scenarios and
reports. Modules: ``protocol`` (messages, hello, exceptions), ``process`` (one target process,
deadlines, restarts), ``delta`` (the handler proxy), ``stack`` (the byte-level stack), ``runner``
(``run_bridge``), ``command`` (the ``run --bridge`` options).
"""

from conformance.bridge.delta import BridgeAccumulator, BridgeHandler, BridgeHandlerFactory
from conformance.bridge.process import DEFAULT_HELLO_TIMEOUT, DEFAULT_TIMEOUT, BridgeProcess
from conformance.bridge.protocol import (
    PROTOCOL_VERSION,
    BridgeBroken,
    BridgeObject,
    Hello,
    TargetCrashed,
    TargetRaised,
    TargetRaisedState,
    TargetRaisedType,
    TargetRaisedValue,
    chunk_to_json,
)
from conformance.bridge.runner import handler_target, run_bridge, stack_target
from conformance.bridge.stack import BridgeStack

__all__ = [
    "DEFAULT_HELLO_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "PROTOCOL_VERSION",
    "BridgeAccumulator",
    "BridgeBroken",
    "BridgeHandler",
    "BridgeHandlerFactory",
    "BridgeObject",
    "BridgeProcess",
    "BridgeStack",
    "Hello",
    "TargetCrashed",
    "TargetRaised",
    "TargetRaisedState",
    "TargetRaisedType",
    "TargetRaisedValue",
    "chunk_to_json",
    "handler_target",
    "run_bridge",
    "stack_target",
]
