"""Node libraries as stack targets: one bridge program per library, started once per run.

A Node column of the matrix is a program under ``examples/bridge/`` that serves the byte-level
bridge protocol (``docs/bridge.md``, ``serveStack`` in ``examples/bridge/tcc_bridge.mjs``): the
suite sends each recording's body in byte pieces, the program feeds them to the library through
its own HTTP layer (its ``fetch`` option) and answers with the calls the library would run.
``open_node_stack`` starts such a program and reads its hello; the adapters of
``examples/bridge/node-sdks`` (the ``openai`` and ``@anthropic-ai/sdk`` stream helpers,
LangChain.js, Mastra) each call it with their program.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.bridge import DEFAULT_TIMEOUT, BridgeBroken, BridgeProcess, BridgeStack, stack_target
from conformance.handler import TargetError
from conformance.stack import StackCapabilities

__all__ = ["NODE_SDKS", "NodeStackTarget", "open_node_stack"]

# conformance/ and examples/ sit side by side, in the source tree and in an installed wheel.
NODE_SDKS = Path(__file__).resolve().parents[2] / "examples" / "bridge" / "node-sdks"


@dataclass
class NodeStackTarget:
    """A running Node stack: call ``stack(api, pieces, options)``; ``close()`` when done."""

    stack: BridgeStack
    capabilities: StackCapabilities
    label: str
    process: BridgeProcess = field(repr=False)

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> Any:
        """One recording through the library: what makes ``run --stack MODULE:open_stack_target`` work."""
        return self.stack(api, pieces, options)

    def close(self) -> None:
        """Stop the Node process."""
        self.process.close()

    def __enter__(self) -> NodeStackTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_node_stack(
    program: Path,
    label: str,
    *,
    arguments: Sequence[str] = (),
    package: str,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> NodeStackTarget:
    """Start ``node program arguments...`` and return its stack and the capabilities its hello declares.

    ``package`` is the library the program imports (its ``node_modules/<package>`` must exist).
    Raises ``TargetError`` naming what to install when Node or the folder's ``node_modules`` is
    missing, or when the program cannot start.
    """
    node = shutil.which("node")
    if node is None:
        raise TargetError(f"the {label} target needs Node >= 20 on PATH")
    if not (program.parent / "node_modules" / package / "package.json").is_file():
        raise TargetError(f"{package} is not installed: run `npm ci` in {program.parent}")
    process = BridgeProcess([node, str(program), *arguments], timeout=timeout)
    try:
        stack, capabilities = stack_target(process)
    except BridgeBroken as broken:
        process.close()
        raise broken.to_target_error() from None
    return NodeStackTarget(stack, capabilities, label, process)
