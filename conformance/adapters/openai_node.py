"""openai-node: the ``openai`` npm package's Chat Completions tool runner, in Node over the bridge.

The SDK runs in Node (``examples/bridge/node-sdks/openai_bridge.mjs``, pinned by that folder's
``package-lock.json``, installed with ``npm ci``). The suite serves each Chat Completions body in
byte pieces through the client's ``fetch`` option; the layer that decides what runs is the SDK's
own ``client.chat.completions.runTools({stream: true, tools})`` (``ChatCompletionStreamingRunner``,
a ``ChatCompletionStream`` that also refuses ``length`` and ``content_filter`` turns): a call runs
exactly when the runner invokes the tool's function, with what the tool's ``parse`` (``JSON.parse``,
the SDK's documented example) made of the arguments; a second request is answered with plain text
so the loop ends::

    from conformance.adapters.openai_node import open_stack_target

    with open_stack_target() as target:
        result = target.stack("openai-chat", [body], {})

What it cannot map: the runner needs its tools declared before the request, so the bridge reads
the called names from a first pass of the same body through the SDK's plain stream helper
(``chat.completions.stream(...).finalChatCompletion()``). ``reasoning_content`` is not part of the
SDK's message type: no reasoning is declared. Which recordings fail, and why, is in
``tests/test_bridge_node_sdks.py`` (each defect reproduced by a script under ``tests/repro_node_sdks/``).
"""

from __future__ import annotations

from conformance.adapters.base import AdapterInfo, NodePackages
from conformance.adapters.node import NODE_SDKS, NodeStackTarget, open_node_stack
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.bridge import DEFAULT_TIMEOUT
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "PROGRAM", "open_stack_target"]

PROGRAM = NODE_SDKS / "openai_bridge.mjs"

_TYPED_TEXT = (
    "`ChatCompletionChunk.Choice.Delta.ToolCall.Function.arguments` is typed `string` (JSON text, "
    "node_modules/openai/resources/chat/completions/completions.d.ts)"
)

ADAPTER = AdapterInfo(
    name="openai-node",
    distributions=(),
    imports=(),
    kind="stack",
    factory="conformance.adapters.openai_node:open_stack_target",
    # What the bridge's hello declares (tests/test_bridge_node_sdks.py checks they agree).
    capabilities=StackCapabilities(
        apis=("openai-chat",), text=True, reasoning=False, converter_options=False, json_numbers="double"
    ),
    summary="chat.completions.runTools({stream: true}) (ChatCompletionStreamingRunner) of the openai npm package, "
    "in Node over the bridge (examples/bridge/node-sdks/openai_bridge.mjs), fed the recordings' bytes through the "
    "client's fetch option, offline; a call counts when the runner invokes its tool",
    outside_target={
        "no_index": INDEX_REQUIRED
        + "; the Node SDK's accumulator refuses such a chunk with an OpenAIError (invalid tool call index), surfaced",
        "null_index": INDEX_REQUIRED,
        "index_always_zero": "OpenAI numbers a turn's calls 0, 1, ... and the SDK merges deltas by that index "
        "(ChatCompletionStream: `toolCallSnapshots[index]`); a server that puts every call on index 0 (Ollama) is "
        "not OpenAI's stream",
        "object_arguments": _TYPED_TEXT + ": a JSON object there is not a value the SDK's types admit",
        "message_and_delta": "OpenAI's chunk choices carry `delta`, never `message` (`ChatCompletionChunk.Choice` has "
        "no such field); the SDK keeps a choice's unknown fields (`...other` in ChatCompletionStream's accumulator), "
        "so a server's `message` there (Writer) lands on the snapshot's own `message` and the stream raises "
        "`no tool call snapshot` (said, not silent)",
        "arguments_empty": "OpenAI sends `{}` for a call without arguments (conformance/wire/shapes.py, "
        "arguments_empty); runTools hands the raw argument text to the tool's own `parse` (the SDK's documented "
        '`parse: JSON.parse`, which refuses `""`), so reading an empty text is the caller\'s decision; ' + _TYPED_TEXT,
    },
    extra="",
    node=NodePackages(NODE_SDKS, ("openai",)),
)


def open_stack_target(*, timeout: float | None = DEFAULT_TIMEOUT) -> NodeStackTarget:
    """Start the openai-node bridge and return its stack and the capabilities its hello declares.

    Raises ``TargetError`` naming what to install when Node or ``examples/bridge/node-sdks/node_modules``
    is missing.
    """
    return open_node_stack(PROGRAM, ADAPTER.label, package="openai", timeout=timeout)
