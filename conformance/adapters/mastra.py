"""Mastra (``@mastra/core`` Agent over an ``@ai-sdk/openai`` Chat Completions model) as a stack target.

The library runs in Node (``examples/bridge/node-sdks/mastra_bridge.mjs``, versions pinned in that
folder's ``package-lock.json``, installed with ``npm ci``; ``@mastra/core`` 0.24.9 is the newest that
runs on Node 20). The suite serves each Chat Completions body, in byte pieces, through
``createOpenAI({ fetch, apiKey }).chat(...)`` (``@ai-sdk/openai`` 2.x, the AI SDK v5 provider) to a
Mastra ``Agent`` whose tools are ``createTool`` tools: each ``execute`` records the call and returns a
value. ``agent.stream(...)`` runs one step (``maxSteps: 1``), so Mastra's own loop decides what runs;
a call counts as run exactly when Mastra executed it, and every other ``tool-call`` part is reported
with an error.

Two layers: @ai-sdk/openai parses the bytes into parts (the same AI SDK code the ``vercel-ai-sdk``
column runs, one major version earlier, fixed in 3.x, which Mastra 0.24 cannot take: its step accepts
only v2 models; its defects are the provider's, reported in this column because a Mastra 0.24 user runs
them); Mastra's loop (``createAgenticExecutionWorkflow``) executes the step's ``tool-call`` parts once the
step's stream has ended, the finish reason known, without checking it (its defects are Mastra's).
``FINDINGS`` names the layer of each.
What it cannot map: reasoning (``@ai-sdk/openai`` 's chat model does not read ``reasoning_content``,
not OpenAI's wire: the stack declares no reasoning); the application's registry (the agent declares a
tool for every name the body mentions).
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.base import AdapterInfo, NodePackages
from conformance.adapters.node import NODE_SDKS, NodeStackTarget, open_node_stack
from conformance.adapters.openai_wire import INDEX_REQUIRED
from conformance.bridge import DEFAULT_TIMEOUT
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "FINDINGS", "PROGRAM", "open_stack_target"]

PROGRAM: Path = NODE_SDKS / "mastra_bridge.mjs"


def open_stack_target(*, timeout: float | None = DEFAULT_TIMEOUT) -> NodeStackTarget:
    """Start the Mastra bridge and return its stack and the capabilities its hello declares.

    Raises ``TargetError`` naming what to install when Node or the folder's ``node_modules`` is missing.
    """
    return open_node_stack(PROGRAM, "mastra", package="@mastra/core", timeout=timeout)


_UNCLOSED = "mastra_provider_unclosed_tool_input_dropped.mjs"  # @ai-sdk/openai 2.x
_EMPTY = "mastra_provider_empty_arguments_call_never_runs.mjs"  # @ai-sdk/openai 2.x
_INDEX_ZERO = "mastra_provider_index_zero_second_call_dropped.mjs"  # @ai-sdk/openai 2.x
_NO_ID = "mastra_provider_call_without_id_ends_the_turn.mjs"  # @ai-sdk/openai 2.x
_FAILED_STEP = "mastra_runs_calls_of_a_step_that_failed.mjs"  # Mastra's loop

# Recording -> its reproduction script (tests/repro_node_fw/), or None when outside_target covers it.
# The recordings of a run without generated bodies (tests/test_bridge_node_fw.py).
FINDINGS: dict[str, str | None] = {
    "openai-chat/error_event_mid_call.yaml": _UNCLOSED,
    "openai-chat/stream_cut_mid_call.yaml": _UNCLOSED,
    "openai-chat/truncated_max_tokens.yaml": _UNCLOSED,
    "openai-chat/no_argument_call.yaml": _EMPTY,
    "openai-compatible/dialect_index_always_zero.yaml": _INDEX_ZERO,
    "openai-chat/stream_cut_after_arguments.yaml": _FAILED_STEP,
    "openai-compatible/dialect_id_late.yaml": _NO_ID,
    "openai-compatible/dialect_no_index.yaml": None,  # outside_target "no_index"
    "openai-compatible/dialect_object_arguments.yaml": None,  # outside_target "object_arguments"
}

_SCHEMA = "@ai-sdk/openai's chunk schema (zod) rejects it: the turn ends with an error part and nothing runs; "

ADAPTER = AdapterInfo(
    name="mastra",
    distributions=(),
    imports=(),
    kind="stack",
    factory="conformance.adapters.mastra:open_stack_target",
    # What the program's hello declares (tests/test_bridge_node_fw.py checks they agree).
    capabilities=StackCapabilities(
        apis=("openai-chat",),
        text=True,
        reasoning=False,
        converter_options=False,
        json_numbers="double",  # JSON.parse: argument numbers are compared as IEEE doubles
    ),
    summary="Mastra Agent.stream() (one step) over @ai-sdk/openai .chat(), createTool tools recording what Mastra "
    "executes, in Node over the bridge (examples/bridge/node-sdks/mastra_bridge.mjs), fed the recordings' bytes "
    "through the provider's fetch option, offline",
    outside_target={
        "no_index": _SCHEMA + INDEX_REQUIRED,
        "null_index": _SCHEMA + INDEX_REQUIRED,
        "object_arguments": _SCHEMA + "`function.arguments` is `z.string()` (OpenAI sends JSON text)",
    },
    extra="",
    node=NodePackages(NODE_SDKS, ("@mastra/core", "@ai-sdk/openai")),
)
