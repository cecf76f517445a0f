"""``-p conformance.pytest_plugin.httpx_alias``: make ``import httpx`` be ``httpx2`` before other plugins load.

pytest imports the modules named with ``-p`` (on the command line or in ``addopts``) before the
plugins it finds through entry points, respx's among them, which imports ``httpx`` at once. Named
this way, this module runs ``httpx2.alias_httpx()`` first, so respx, and the ``toolcall_replay``
fixture built on it, see the requests of SDKs running on ``httpx2`` (openai 3.x, anthropic 2.x,
google-genai 3.x). pytest-xdist workers parse the same options, so they alias too.

When something imported ``httpx`` even earlier (a ``.pth`` file, ``sitecustomize``), the alias is
impossible: pytest stops at once with ``HttpxAliasError`` saying what to change, rather than
running tests whose requests respx would not see.
"""

from __future__ import annotations

import pytest

from conformance.http_replay.alias import alias_error, httpx_alias_status

_STATUS = httpx_alias_status()
if _STATUS == "not-imported":
    import httpx2

    httpx2.alias_httpx()


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run when the alias could not be made (``httpx`` was imported before this plugin)."""
    if _STATUS == "real-httpx":
        raise pytest.UsageError(str(alias_error()))


def pytest_report_header(config: pytest.Config) -> str:
    """Say, at the top of every run, that ``import httpx`` is ``httpx2`` in this whole session: a test
    of the user's own that checks ``httpx.__version__`` or an ``httpx``-only API sees it."""
    import httpx2

    return (
        f"toolcall-conformance: import httpx gives httpx2 {httpx2.__version__} in this session "
        "(-p conformance.pytest_plugin.httpx_alias); tests that need the real httpx run in a session without it"
    )
