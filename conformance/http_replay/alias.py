"""Making ``import httpx`` be ``httpx2`` before respx loads, and saying what to do when it is too late.

openai 3.x, anthropic 2.x and google-genai 3.x send their requests with ``httpx2``; respx patches
whatever ``import httpx`` / ``import httpcore`` give it. ``httpx2.alias_httpx()`` makes those names
resolve to ``httpx2`` / ``httpcore2`` process-wide, so respx then sees the SDKs' traffic (and
ollama's and cohere's, which import plain ``httpx``). It only works before anything has imported
``httpx``; respx's own pytest plugin does exactly that when pytest loads plugins from entry points.
``conformance.pytest_plugin.httpx_alias``, named with ``-p`` (which pytest loads before entry-point
plugins), runs the alias first. This module never aliases on import: only ``ensure_httpx_alias``
does, when a replay starts and nothing has imported ``httpx`` yet.
"""

from __future__ import annotations

import sys
from typing import Literal

import httpx2

from conformance.http_replay.errors import HttpxAliasError

__all__ = ["ALIAS_PLUGIN", "AliasStatus", "ensure_httpx_alias", "httpx_alias_status"]

ALIAS_PLUGIN = "conformance.pytest_plugin.httpx_alias"

AliasStatus = Literal["aliased", "not-imported", "real-httpx"]


def httpx_alias_status() -> AliasStatus:
    """``aliased``: ``httpx`` is ``httpx2``; ``not-imported``: the alias can still be made;
    ``real-httpx``: ``httpx`` or ``httpcore`` was imported first, the alias is impossible in this process."""
    import httpcore2

    httpx_module = sys.modules.get("httpx")
    httpcore_module = sys.modules.get("httpcore")
    if httpx_module is None and httpcore_module is None:
        return "not-imported"
    if httpx_module in (None, httpx2) and httpcore_module in (None, httpcore2):
        return "aliased" if httpx_module is httpx2 else "not-imported"
    return "real-httpx"


def _culprit() -> str:
    if "respx.plugin" in sys.modules:
        return "respx's pytest plugin (respx.plugin, loaded from its pytest11 entry point) imported it"
    if "respx" in sys.modules:
        return "respx was imported before the alias"
    importers = sorted(
        name
        for name, module in list(sys.modules.items())
        if module is not None and name.split(".")[0] not in {"httpx", "httpcore"} and "httpx" in vars(module)
    )
    if importers:
        return "modules holding the real httpx: " + ", ".join(importers[:5])
    return "something imported it"


def alias_error() -> HttpxAliasError:
    """The error that explains why the alias is impossible now and what to change."""
    return HttpxAliasError(
        "httpx was imported before httpx2.alias_httpx() could run ("
        + _culprit()
        + "), so respx patches the real httpx and cannot see the SDKs' httpx2 traffic. Fix, one of:\n"
        f"  * pytest: add `-p {ALIAS_PLUGIN}` to your pytest options, e.g. in pyproject.toml\n"
        f'      [tool.pytest.ini_options]\n      addopts = "-p {ALIAS_PLUGIN}"\n'
        "    (-p plugins load before entry-point plugins such as respx's, also on pytest-xdist workers);\n"
        "  * or run pytest with `-p no:respx` (respx's respx_mock fixture goes away; @respx.mock still works);\n"
        "  * outside pytest: call httpx2.alias_httpx() first thing, before anything imports httpx or httpcore.\n"
        "No request was sent: the replay refuses to start rather than let the SDK reach the network."
    )


def ensure_httpx_alias() -> None:
    """Make sure ``import httpx`` is ``httpx2``: alias now if nothing imported ``httpx`` yet, else raise
    ``HttpxAliasError`` with the fix."""
    status = httpx_alias_status()
    if status == "aliased":
        return
    if status == "real-httpx":
        raise alias_error()
    httpx2.alias_httpx()
