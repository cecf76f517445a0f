"""anthropic-node: the ``@anthropic-ai/sdk`` npm package's Messages tool runner, in Node over the bridge.

The SDK runs in Node (``examples/bridge/node-sdks/anthropic_bridge.mjs``, pinned by that folder's
``package-lock.json``, installed with ``npm ci``). The suite serves each Messages body in byte
pieces through the client's ``fetch`` option; the layer that decides what runs is the SDK's own
``client.beta.messages.toolRunner({stream: true, tools})`` (``BetaToolRunner``): it runs the
reply's ``tool_use`` blocks only when the reply stopped with ``tool_use``
(``determineNextStepFromStopReason``), and a call runs exactly when the runner invokes the
``betaTool``'s ``run`` with the ``input`` the stream parsed; a second request is answered with plain
text so the loop ends::

    from conformance.adapters.anthropic_node import open_stack_target

    with open_stack_target() as target:
        result = target.stack("anthropic", [body], {})

What it cannot map: the runner needs its tools declared before the request, so the bridge reads
the called names from a first pass of the same body through the SDK's plain stream helper
(``messages.stream(...).finalMessage()``, ``MessageStream``); the final message keeps no raw
argument text except the SDK's non-enumerable ``__json_buf``. Server tools (``server_tool_use``)
ran at the provider and are left out.
"""

from __future__ import annotations

from conformance.adapters.base import AdapterInfo, NodePackages
from conformance.adapters.node import NODE_SDKS, NodeStackTarget, open_node_stack
from conformance.bridge import DEFAULT_TIMEOUT
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "PROGRAM", "open_stack_target"]

PROGRAM = NODE_SDKS / "anthropic_bridge.mjs"

ADAPTER = AdapterInfo(
    name="anthropic-node",
    distributions=(),
    imports=(),
    kind="stack",
    factory="conformance.adapters.anthropic_node:open_stack_target",
    # What the bridge's hello declares (tests/test_bridge_node_sdks.py checks they agree).
    capabilities=StackCapabilities(
        apis=("anthropic",), text=True, reasoning=True, converter_options=False, json_numbers="double"
    ),
    summary="beta.messages.toolRunner({stream: true}) (BetaToolRunner) of the @anthropic-ai/sdk npm package, in "
    "Node over the bridge (examples/bridge/node-sdks/anthropic_bridge.mjs), fed the recordings' bytes through the "
    "client's fetch option, offline; a call counts when the runner invokes its tool",
    extra="",
    node=NodePackages(NODE_SDKS, ("@anthropic-ai/sdk",)),
)


def open_stack_target(*, timeout: float | None = DEFAULT_TIMEOUT) -> NodeStackTarget:
    """Start the anthropic-node bridge and return its stack and the capabilities its hello declares.

    Raises ``TargetError`` naming what to install when Node or ``examples/bridge/node-sdks/node_modules``
    is missing.
    """
    return open_node_stack(PROGRAM, ADAPTER.label, package="@anthropic-ai/sdk", timeout=timeout)
