"""The errors of HTTP-level replay: each says what went wrong and what to do about it."""

from __future__ import annotations

__all__ = [
    "HttpxAliasError",
    "MissingDependencyError",
    "NetworkBlockedError",
    "NotRequestedError",
    "ReplayError",
    "ReplayExhaustedError",
    "ReplayOptionError",
    "UnknownCassetteError",
    "UnroutedRequestError",
    "UnsupportedWireApiError",
]


class ReplayError(Exception):
    """Base class of every error raised by ``conformance.http_replay``."""


class UnknownCassetteError(ReplayError, LookupError):
    """No cassette (bundled, or under the folders given) matches the name or path asked for."""


class UnsupportedWireApiError(ReplayError, ValueError):
    """The recording's wire API has no route here (or its client library is not installed)."""


class ReplayOptionError(ReplayError, ValueError):
    """Options that do not go together (chunking with the vcrpy engine, both ``chunk_bytes`` and ``cuts``...)."""


class UnroutedRequestError(ReplayError, AssertionError):
    """The code under test sent a request that no route of the replayed recording serves.

    Raised inside the request (so the client sees it at once) and again when the replay ends, in
    case the code under test swallowed it. It is never passed through to the network.
    """


class ReplayExhaustedError(UnroutedRequestError):
    """The code under test sent more requests than the recording holds responses."""


class NotRequestedError(ReplayError, AssertionError):
    """The replay ended without the code under test ever sending the recorded request."""


class NetworkBlockedError(ReplayError, AssertionError):
    """Something opened a network connection during a replay, bypassing the replay's routes."""


class HttpxAliasError(ReplayError, RuntimeError):
    """``httpx`` was imported before ``httpx2.alias_httpx()``, so respx cannot see the SDKs' traffic."""


class MissingDependencyError(ReplayError, ImportError):
    """A library the chosen replay needs is not installed (respx: ``pip install 'toolcall-conformance[test]'``)."""
