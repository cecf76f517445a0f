"""No network during a replay: every connection to a non-loopback address fails, loudly.

The routes catch what the client libraries send through httpx / httpx2 / botocore. Anything that
goes around them (google-genai's async client on aiohttp, a ``requests`` call, a client built on
plain ``httpx`` that was imported before the alias) would reach the network; while a replay is
active, ``socket.socket.connect`` / ``connect_ex`` and ``socket.getaddrinfo`` refuse any address
that is not loopback or a Unix socket, raise ``NetworkBlockedError`` and record the attempt, so
the replay fails at its end even if the code under test swallowed the error.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from conformance.http_replay.errors import NetworkBlockedError

__all__ = ["block_network"]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_local(host: Any) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    if text.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


def _host_of(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) and address else None


@contextmanager
def block_network(attempts: list[str]) -> Iterator[None]:
    """Refuse non-loopback connections and name lookups while active; append each attempt to ``attempts``."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo

    def refuse(what: str) -> NetworkBlockedError:
        attempts.append(what)
        return NetworkBlockedError(
            f"network access during a replay: {what}. Something bypassed the replay's routes "
            "(an HTTP library other than httpx/httpx2/botocore, e.g. aiohttp; or a client built on the real "
            "httpx, imported before httpx2.alias_httpx()). The replay never lets a request reach the network."
        )

    def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
        def connect(sock: socket.socket, address: Any, *args: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(_host_of(address)):
                raise refuse(f"connect to {address!r}")
            return method(sock, address, *args)

        return connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            raise refuse(f"name lookup of {host!r}")
        return original_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded(original_connect)  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded(original_connect_ex)  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = original_getaddrinfo
