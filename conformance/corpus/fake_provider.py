"""A small fake provider on 127.0.0.1 that serves the eight wire formats, for offline recording tests.

It answers ``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages``,
``/v1/models/<m>:streamGenerateContent``, ``/api/chat`` (Ollama NDJSON), ``/v2/chat`` (Cohere),
``/model/<id>/converse-stream`` and ``/model/<id>/invoke-with-response-stream`` (Bedrock, AWS event
stream) with a rendered ``Turn``, written in small pieces with chunked transfer encoding (as real
providers do), and echoes secret-looking headers back (``set-cookie``, ``openai-organization``,
``x-goog-api-key`` with a value of no known shape) so that scrubbing can be proven. An API it has
no turn for gets a 500. It listens on loopback only, on a port the OS picks, and stops with
``close()``.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformance.turns.model import Turn
from conformance.turns.render import render_body
from conformance.wire.apis import CONTENT_TYPES, FRAMING

__all__ = ["FakeProvider"]

_ROUTES = (
    ("/converse-stream", "bedrock-converse"),
    ("/invoke-with-response-stream", "bedrock-invoke"),
    ("/chat/completions", "openai-chat"),
    ("/responses", "openai-responses"),
    ("/messages", "anthropic"),
    (":streamGenerateContent", "gemini"),
    ("/api/chat", "ollama"),
    ("/v2/chat", "cohere-v2"),
)


class FakeProvider:
    """``with FakeProvider({"openai-chat": turn, ...}) as server: server.base_url``."""

    def __init__(self, turns: dict[str, Turn], *, write_size: int = 37) -> None:
        self.turns = turns
        self.write_size = write_size
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                api = next((name for marker, name in _ROUTES if marker in self.path), None)
                owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if api is None or api not in owner.turns:
                    message = b'{"error": {"message": "this fake provider has no turn for that route"}}'
                    self.send_response(404 if api is None else 500)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(message)))
                    self.end_headers()
                    self.wfile.write(message)
                    return
                payload = render_body(owner.turns[api], api)
                self.send_response(200)
                self.send_header("content-type", CONTENT_TYPES[FRAMING[api]])
                self.send_header("transfer-encoding", "chunked")
                self.send_header("set-cookie", "session=fake-session-cookie-value-0123456789; Path=/")
                self.send_header("openai-organization", "org-fakeorganization0123456789")
                self.send_header("x-goog-api-key", "plainvalue42")
                self.end_headers()
                for start in range(0, len(payload), owner.write_size):
                    piece = payload[start : start + owner.write_size]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
