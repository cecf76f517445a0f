"""The Vercel AI SDK as a stack target (a column of the conformance matrix), reached over the bridge.

The SDK runs in Node (``examples/bridge/vercel/vercel_bridge.mjs``, dependencies pinned in that
folder's ``package-lock.json``, installed with ``npm ci``); the suite serves it each recording's
body in byte pieces and reads back the calls ``streamText`` would run::

    from conformance.adapters.vercel_ai_sdk import open_stack_target
    from conformance.stack import run_stack_conformance
    from conformance.wire import bundled_cassette_dir

    with open_stack_target() as target:
        report = run_stack_conformance(target.stack, [bundled_cassette_dir()],
                                       capabilities=target.capabilities, target=target.label)

``FINDINGS`` lists every recording the pinned SDK does not finish as expected, each with its
direct reproduction under ``tests/repro_vercel/`` and what it is (a defect of the SDK, a
legitimate alternative, or a convention of our corpus).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.adapters.base import AdapterInfo, NodePackages, npm_lock_versions
from conformance.adapters.node import NodeStackTarget, open_node_stack
from conformance.bridge import DEFAULT_TIMEOUT
from conformance.handler import TargetError
from conformance.stack import StackCapabilities

__all__ = [
    "ADAPTER",
    "CHAT_PROVIDERS",
    "COMPATIBLE_FINDINGS",
    "FINDINGS",
    "PROGRAM",
    "Finding",
    "VercelStackTarget",
    "open_stack_target",
    "pinned_versions",
    "version",
]

# conformance/ and examples/ sit side by side, in the source tree and in an installed wheel.
PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "bridge" / "vercel" / "vercel_bridge.mjs"
CHAT_PROVIDERS = ("openai", "openai-compatible")
_SHOWN_PACKAGES = ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google", "@ai-sdk/openai-compatible")


def pinned_versions() -> dict[str, str]:
    """Every package the lock file pins (``{"ai": "6.0.326", "@ai-sdk/openai": ..., ...}``)."""
    return npm_lock_versions(PROGRAM.parent)


def version() -> str:
    """The matrix column's version line, from the lock file: ``ai 6.0.326, @ai-sdk/openai 3.0.141, ...``."""
    pinned = pinned_versions()
    return ", ".join(f"{name} {pinned[name]}" for name in _SHOWN_PACKAGES if name in pinned)


@dataclass
class VercelStackTarget(NodeStackTarget):
    """A running Vercel AI SDK stack: call ``stack(api, pieces, options)``; ``close()`` when done.
    ``version`` is the column's version line (``ai 6.0.326, @ai-sdk/openai ...``)."""

    version: str = ""


def open_stack_target(*, chat_provider: str = "openai", timeout: float | None = DEFAULT_TIMEOUT) -> VercelStackTarget:
    """Start the Vercel AI SDK bridge and return its stack, capabilities and pinned version.

    ``chat_provider`` serves Chat Completions bodies to ``@ai-sdk/openai`` (default) or
    ``@ai-sdk/openai-compatible``. Raises ``TargetError`` naming what to install when Node or
    the folder's ``node_modules`` is missing, or when the program cannot start.
    """
    if chat_provider not in CHAT_PROVIDERS:
        raise ValueError(f"chat_provider must be one of {', '.join(CHAT_PROVIDERS)}, got {chat_provider!r}")
    node = shutil.which("node")
    if node is None:
        raise TargetError("the Vercel AI SDK target needs Node >= 20 on PATH")
    if not (PROGRAM.parent / "node_modules" / "ai").is_dir():
        raise TargetError(f"the Vercel AI SDK is not installed: run `npm ci` in {PROGRAM.parent}")
    suffix = "" if chat_provider == "openai" else f" (Chat Completions via @ai-sdk/{chat_provider})"
    started = open_node_stack(
        PROGRAM, f"Vercel AI SDK{suffix}", arguments=["--chat-provider", chat_provider], package="ai", timeout=timeout
    )
    return VercelStackTarget(started.stack, started.capabilities, started.label, started.process, version())


@dataclass(frozen=True)
class Finding:
    """Why one recording fails for the Vercel AI SDK, and where it is reproduced directly."""

    kind: str  # "defect", "legitimate" (an alternative the suite cannot tell apart), "convention" (ours)
    summary: str
    reproduction: str  # a file under tests/repro_vercel/
    chat_provider: str = "openai"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "reproduction": self.reproduction,
            "chat_provider": self.chat_provider,
        }


_UNCLOSED = Finding(
    "defect",
    "a tool input that never closes (cut stream, in-band error, max_tokens) is dropped: tool-input-start and "
    "deltas, then no tool-input-end, tool-call or tool-error (not run, but never reported)",
    "anthropic_unclosed_tool_block_dropped.mjs",
)
_UNFINISHED_RESPONSES = Finding(
    "defect",
    "a Responses function_call without output_item.done is dropped the same way (not run, never reported)",
    "responses_unfinished_call_dropped.mjs",
)
_REASONING_CONTENT = Finding(
    "convention",
    "@ai-sdk/openai ignores DeepSeek's reasoning_content (not OpenAI's wire); @ai-sdk/openai-compatible reads it",
    "openai_chat_reasoning_content_ignored.mjs",
)

# Recording -> finding, for the pinned versions with the default Chat Completions provider.
FINDINGS: dict[str, Finding] = {
    "anthropic/error_event_mid_call.yaml": _UNCLOSED,
    "anthropic/stream_cut_mid_call.yaml": _UNCLOSED,
    "anthropic/stream_cut_after_arguments.yaml": _UNCLOSED,
    "anthropic/truncated_max_tokens.yaml": _UNCLOSED,
    "openai-responses/stream_cut_mid_call.yaml": _UNFINISHED_RESPONSES,
    "openai-responses/stream_cut_after_arguments.yaml": _UNFINISHED_RESPONSES,
    "gemini/restated_call_same_id.yaml": Finding(
        "defect",
        "a functionCall restated with the same id gives two tool-call parts and streamText runs the tool twice",
        "gemini_restated_call_executes_twice.mjs",
    ),
    "openai-compatible/dialect_index_always_zero.yaml": Finding(
        "defect",
        "the second call on index 0 loses its argument deltas (dropped as ambiguous) and runs with {}",
        "index_zero_second_call_runs_with_empty_arguments.mjs",
    ),
    "openai-compatible/dialect_id_late.yaml": Finding(
        "defect",
        "a call id that arrives after the call's first delta is never adopted: the call carries a generated id",
        "openai_compatible_late_call_id_lost.mjs",
    ),
    "openai-compatible/dialect_no_index.yaml": Finding(
        "legitimate",
        "@ai-sdk/openai requires index: schema errors (surfaced), no call runs "
        "(@ai-sdk/openai-compatible runs the second call with {}: a defect)",
        "openai_chat_missing_index_calls_lost.mjs",
    ),
    "openai-compatible/dialect_object_arguments.yaml": Finding(
        "legitimate",
        "arguments sent as an object fail the chunk schema: surfaced as an error, no call runs",
        "object_arguments_schema_error.mjs",
    ),
    "openai-chat/reasoning_then_call.yaml": _REASONING_CONTENT,
    "openai-compatible/deepseek_reasoning_content.yaml": _REASONING_CONTENT,
}

# The matrix column: the default Chat Completions provider (@ai-sdk/openai), as ``FINDINGS`` describes it.
# The capabilities are what the bridge declares in its hello (the matrix checks they agree).
ADAPTER = AdapterInfo(
    name="vercel-ai-sdk",
    distributions=(),
    imports=(),
    kind="stack",
    factory="conformance.adapters.vercel_ai_sdk:open_stack_target",
    capabilities=StackCapabilities(
        apis=("openai-chat", "openai-responses", "anthropic", "gemini"),
        text=True,
        reasoning=True,
        converter_options=False,
        json_numbers="double",  # JSON.parse: argument numbers are compared as IEEE doubles
    ),
    summary="streamText().fullStream over @ai-sdk/openai (Chat Completions and Responses), @ai-sdk/anthropic and "
    "@ai-sdk/google, in Node over the bridge (examples/bridge/vercel/vercel_bridge.mjs), fed the bundled "
    "recordings' bytes through each provider's fetch option, offline; a call counts when streamText would run it",
    extra="",
    # Legitimate alternatives and our corpus's conventions are not charged to the SDK's column
    # (docs/bridge.md lists them with their reproductions, which still run).
    recordings_excluded={
        name: f"{finding.kind}: {finding.summary} (reproduced: tests/repro_vercel/{finding.reproduction})"
        for name, finding in FINDINGS.items()
        if finding.kind != "defect"
    },
    # The packages this column runs (not @ai-sdk/openai-compatible: that is chat_provider="openai-compatible").
    node=NodePackages(PROGRAM.parent, ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google")),
)

# The same with Chat Completions served to @ai-sdk/openai-compatible (``chat_provider="openai-compatible"``):
# it reads reasoning_content and accepts index-less deltas, but then loses the second call's arguments.
COMPATIBLE_FINDINGS: dict[str, Finding] = {
    **{name: finding for name, finding in FINDINGS.items() if finding is not _REASONING_CONTENT},
    "openai-compatible/dialect_no_index.yaml": Finding(
        "defect",
        "index-less continuation deltas of the second call are dropped and the call runs with {}",
        "openai_chat_missing_index_calls_lost.mjs",
        "openai-compatible",
    ),
}
