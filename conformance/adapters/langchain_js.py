"""LangChain.js (``@langchain/openai`` ChatOpenAI over ``@langchain/core``) as a stack target, over the bridge.

The library runs in Node (``examples/bridge/node-sdks/langchain_bridge.mjs``, versions pinned in that
folder's ``package-lock.json``, installed with ``npm ci``). The suite serves each Chat Completions
body, in byte pieces, to ChatOpenAI through its ``configuration: { fetch }`` option (handed on to the
``openai`` client ChatOpenAI builds); the program runs ``model.bindTools([...]).stream(...)``, folds
the ``AIMessageChunk`` s with ``.concat()`` and reads the final message's ``.tool_calls`` (these run),
``.invalid_tool_calls`` (these do not), ``.content``, ``additional_kwargs.reasoning_content`` and
``response_metadata.finish_reason``.

What it maps: the layer that decides what runs in a LangChain.js application is LangGraph's
``ToolNode`` (also under ``createAgent``), which runs every entry of the last AIMessage's
``tool_calls`` and none of its ``invalid_tool_calls`` (LangChain's tool-calling docs: invalid tool
calls are those whose arguments could not be parsed). That layer is another package
(``@langchain/langgraph``), not installed here, so the program reads the final message the way it
does. An exception out of ``.stream()`` (the ``openai`` client raises ``APIError`` on an in-band
error event) means the application got no final message: nothing runs.
What it cannot map: the application's tool registry (a call to a name the application has no tool
for is still reported as one that runs: ToolNode answers it with an error message, which is not the
stream's concern).

``FINDINGS`` lists every recording the pinned versions do not finish as expected (``generated=0``),
with its reproduction under ``tests/repro_node_fw/`` (``None``: covered by a policy or outside the
target, the evidence in ``ADAPTER``).
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.base import AdapterInfo, NodePackages
from conformance.adapters.node import NODE_SDKS, NodeStackTarget, open_node_stack
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.bridge import DEFAULT_TIMEOUT
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "FINDINGS", "PROGRAM", "open_stack_target"]

PROGRAM: Path = NODE_SDKS / "langchain_bridge.mjs"


def open_stack_target(*, timeout: float | None = DEFAULT_TIMEOUT) -> NodeStackTarget:
    """Start the LangChain.js bridge and return its stack and the capabilities its hello declares.

    Raises ``TargetError`` naming what to install when Node or the folder's ``node_modules`` is missing.
    """
    return open_node_stack(PROGRAM, "langchain-js", package="@langchain/openai", timeout=timeout)


# Recording -> its reproduction script (tests/repro_node_fw/), or None when a policy or outside_target
# covers it. The recordings of a run without generated bodies (tests/test_bridge_node_fw.py).
_INDEX_ZERO = "langchain_index_zero_second_call_runs_with_empty_arguments.mjs"
FINDINGS: dict[str, str | None] = {
    "openai-chat/truncated_max_tokens.yaml": "langchain_truncated_arguments_repaired_into_a_valid_call.mjs",
    "openai-compatible/dialect_index_always_zero.yaml": _INDEX_ZERO,
    "openai-chat/stream_cut_after_arguments.yaml": None,  # policy "incomplete"
    "openai-chat/stream_cut_mid_call.yaml": None,  # policy "incomplete" (its arguments are repaired too)
    "openai-compatible/dialect_no_index.yaml": None,  # outside_target "no_index"
    "openai-compatible/dialect_object_arguments.yaml": None,  # outside_target "object_arguments"
}
# What only generated bodies meet (no bundled recording has a call without an id on this wire): outside
# the target (``no_id`` below), shown by its script all the same.
NO_ID_SCRIPT = "langchain_call_without_id_is_invalid.mjs"

_INDEXED = (
    INDEX_REQUIRED + "; LangChain's ToolCallChunk documents that chunks merge only on equal indices, and "
    "ChatOpenAI copies the delta's index unchanged (an entry without one is a call of its own)"
)

ADAPTER = AdapterInfo(
    name="langchain-js",
    distributions=(),
    imports=(),
    kind="stack",
    factory="conformance.adapters.langchain_js:open_stack_target",
    # What the program's hello declares (tests/test_bridge_node_fw.py checks they agree).
    capabilities=StackCapabilities(
        apis=("openai-chat",),
        text=True,
        reasoning=True,
        converter_options=False,
        json_numbers="double",  # JSON.parse: argument numbers are compared as IEEE doubles
    ),
    summary="ChatOpenAI.bindTools().stream() from @langchain/openai, AIMessageChunks folded with concat() and read "
    "through tool_calls / invalid_tool_calls as LangGraph's ToolNode reads them, in Node over the bridge "
    "(examples/bridge/node-sdks/langchain_bridge.mjs), fed the recordings' bytes through configuration.fetch, offline",
    policies={
        "incomplete": "a body that ends before its finish chunk and [DONE] ends quietly in the `openai` client "
        "ChatOpenAI delegates to (openai/core/streaming.js returns at the body's end), and ChatOpenAI leaves "
        "`response_metadata.finish_reason` unset: the missing finish reason is the caller's signal. A missing "
        "finish_reason is not only truncation (Ollama sends null on complete responses: pydantic/pydantic-ai#6610, "
        "whose maintainers declined to raise by default for that reason)",
    },
    outside_target={
        "no_index": _INDEXED,
        "null_index": _INDEXED,
        "no_id": "@langchain/core's collapseToolCallChunks documents that it keeps a streamed call only with a "
        "valid id (messages/utils.js: 'Validates that the result is a non-null object with a valid id'), since the "
        "ToolMessage answering it needs a `tool_call_id`; langchainjs#8994 chose to drop id-less chunks after "
        "#8581 gave them fallback ids: the call lands in `invalid_tool_calls` (said, not run)",
        "object_arguments": "`ChatCompletionChunk...ToolCall.Function.arguments` is typed `string` (JSON text) in the "
        "`openai` client ChatOpenAI reads through; a JSON object there is not a value its types admit",
    },
    extra="",
    node=NodePackages(NODE_SDKS, ("@langchain/core", "@langchain/openai")),
)
