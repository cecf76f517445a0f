"""One long-lived target process spoken to in JSON lines, with a deadline on every read and write.

The process is started in its own session (so a stuck target is stopped with its whole process
group), its stderr goes to a temporary file (a chatty target can never fill a pipe and stall), and
every answer is checked before anyone reads it. What can go wrong, and what it becomes:

* a line on stdout that is not a protocol message, an answer to the wrong request, a hello this
  suite cannot use, no answer within the deadline: ``BridgeBroken`` quoting the line (exit code 2);
* the process exits while serving a request: ``TargetCrashed`` for that request (a finding), and
  the next request starts it again; more than ``max_restarts`` exits in a row (with no answer in
  between other than to ``new``) are ``BridgeBroken``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from conformance.bridge.protocol import (
    OUTCOME_KEYS,
    PROTOCOL_VERSION,
    BridgeBroken,
    Hello,
    TargetCrashed,
    quote,
)

__all__ = ["DEFAULT_HELLO_TIMEOUT", "DEFAULT_TIMEOUT", "BridgeProcess"]

DEFAULT_TIMEOUT = 10.0  # seconds for one answer (the CLI's --deadline)
DEFAULT_HELLO_TIMEOUT = 30.0  # seconds from start to hello (Node with the AI SDK loaded: ~0.3 s)
_STDERR_TAIL_BYTES = 4000
_STOP_GRACE = 1.0


class _Exited(Exception):  # an internal signal, never raised to a caller
    """The process closed its stdout."""


class BridgeProcess:
    """A target command started once and asked one request at a time (``docs/bridge.md``).

    ``command`` is an argument list or a shell-like string (split with ``shlex``). ``timeout`` bounds
    every answer (``None``: no bound, not recommended), ``hello_timeout`` the start-up.
    """

    def __init__(
        self,
        command: Sequence[str] | str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
        max_restarts: int = 3,
    ) -> None:
        try:
            self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        except ValueError as error:  # an unbalanced quote: shlex says "No closing quotation"
            raise BridgeBroken(f"the bridge command {command!r} cannot be split into words: {error}") from None
        if not self.argv or not all(word.strip() for word in self.argv[:1]):
            raise BridgeBroken(f"the bridge command is empty ({command!r}); give the program to start")
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.timeout = timeout
        self.hello_timeout = hello_timeout
        self.max_restarts = max_restarts
        self.hello: Hello | None = None
        self.generation = 0  # increases whenever a process ends: handler instances belong to one generation
        self.requests = 0
        self.restarts = 0
        self._crashes_in_a_row = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._polls: dict[int, select.poll] = {}  # one poll object per pipe, registered once
        self._buffer = bytearray()
        self._next_id = 0
        self._limit: float | None = timeout
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the bridge)

    @property
    def command(self) -> str:
        """The command line, as a user would type it."""
        return shlex.join(self.argv)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> Hello:
        """Start the process and complete the handshake (hello, start, ready); returns the hello."""
        self._stop()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
            )
        except OSError as error:
            raise BridgeBroken(f"cannot start the bridge command {self.command!r}: {error}") from error
        assert self._proc.stdout is not None and self._proc.stdin is not None
        os.set_blocking(self._proc.stdout.fileno(), False)
        os.set_blocking(self._proc.stdin.fileno(), False)
        self._polls = {}
        for fd, events in ((self._proc.stdout.fileno(), select.POLLIN), (self._proc.stdin.fileno(), select.POLLOUT)):
            poll = select.poll()
            poll.register(fd, events)
            self._polls[fd] = poll
        self._buffer.clear()
        deadline = time.monotonic() + self.hello_timeout
        self._limit = self.hello_timeout
        try:
            hello = self._handshake(deadline)
        except BaseException:
            self._stop()
            raise
        self.hello = hello
        return hello

    def _handshake(self, deadline: float) -> Hello:
        try:
            message, line = self._read_message(deadline, "the hello message")
            hello = Hello.parse(message, line)
            if self.hello is not None and hello != self.hello:
                raise BridgeBroken(f"after a restart the target said {line}, which differs from its first hello")
            self._write({"tcc": PROTOCOL_VERSION, "type": "start", "protocol": PROTOCOL_VERSION}, deadline)
            ready, line = self._read_message(deadline, "the ready message")
        except _Exited:
            raise BridgeBroken(self._exit_text("before finishing the handshake")) from None
        if ready.get("type") != "ready":
            raise BridgeBroken(f"expected {{'type': 'ready'}} after start, got {line}")
        return hello

    def close(self) -> None:
        """Say bye, give the process a moment to exit, then stop its process group; idempotent."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(BridgeBroken, _Exited, OSError):
                self._write({"tcc": PROTOCOL_VERSION, "type": "bye"}, time.monotonic() + _STOP_GRACE)
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_GRACE)
        self._stop()
        self._stderr.close()

    def __enter__(self) -> BridgeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop(self) -> None:
        """Stop the process group (SIGTERM, then SIGKILL) and forget the process."""
        proc, self._proc = self._proc, None
        if proc is not None:
            self.generation += 1  # the instances that lived in it are gone
        self._polls = {}
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_GRACE)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    # -- requests ----------------------------------------------------------------------------------

    def request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return its checked answer (with exactly one of ``ok``, ``raised``, ``unreadable``).

        Starts the process first if it is not running. Raises ``TargetCrashed`` when the process
        exits while serving this request and ``BridgeBroken`` when the protocol cannot go on.
        """
        if not self.running:
            if self.hello is not None:
                self.restarts += 1
            self.start()
        self._next_id += 1
        request_id = self._next_id
        document = {"tcc": PROTOCOL_VERSION, "id": request_id, **message}
        what = _describe_request(document)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        self._limit = self.timeout
        try:
            self._write(document, deadline, what)
            answer, line = self._read_message(deadline, what)
        except _Exited:
            return self._crashed(what)
        except BaseException:
            self._stop()  # the target is mid-request: it cannot be trusted with the next one
            raise
        self.requests += 1
        if document.get("type") != "new":  # a target that starts handlers but crashes in each is still broken
            self._crashes_in_a_row = 0
        self._check_answer(answer, line, request_id, what)
        return answer

    def _crashed(self, what: str) -> dict[str, Any]:
        text = self._exit_text(f"while serving {what}")
        self._stop()
        self._crashes_in_a_row += 1
        if self._crashes_in_a_row > self.max_restarts:
            raise BridgeBroken(f"{text}\n(it exited {self._crashes_in_a_row} times in a row; giving up)")
        raise TargetCrashed(text)

    def _check_answer(self, answer: dict[str, Any], line: str, request_id: int, what: str) -> None:
        if answer.get("id") != request_id:
            raise BridgeBroken(f"the answer to {what} (id {request_id}) carries id {answer.get('id')!r}: {line}")
        present = [key for key in OUTCOME_KEYS if key in answer]
        if "error" in present:
            raise BridgeBroken(f"the target could not serve {what}: {answer['error']} (answer {line})")
        if len(present) != 1:
            raise BridgeBroken(
                f"an answer must carry exactly one of {', '.join(OUTCOME_KEYS)}; the answer to {what} has "
                f"{present or 'none'}: {line}"
            )

    def _exit_text(self, when: str) -> str:
        code: int | None = None
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self._proc.wait(_STOP_GRACE)
        status = f"with status {code}" if code is not None else "(closed its stdout)"
        return f"the target process {self.command!r} exited {status} {when}" + self._stderr_section()

    # -- lines -------------------------------------------------------------------------------------

    def _write(self, document: Mapping[str, Any], deadline: float | None, what: str = "") -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        data = memoryview((json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        fd = proc.stdin.fileno()
        while data:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise _Exited from None
            data = data[written:]
            if data:
                self._wait(fd, deadline, what or "writing a request")

    def _wait(self, fd: int, deadline: float | None, what: str) -> None:
        """Wait until ``fd`` is ready (its direction was registered at start), or time out."""
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            self._timed_out(what)
        ready = self._polls[fd].poll(None if remaining is None else max(1, math.ceil(remaining * 1000)))
        if not ready and deadline is not None and time.monotonic() >= deadline:
            self._timed_out(what)

    def _timed_out(self, what: str) -> None:
        text = f"no answer from {self.command!r} within {self._limit:g} s to {what}" + self._stderr_section()
        self._stop()
        raise BridgeBroken(text)

    def _read_message(self, deadline: float | None, what: str) -> tuple[dict[str, Any], str]:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                raw = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if not raw.strip():
                    continue
                return self._parse_line(raw), quote(raw)
            self._wait(fd, deadline, what)
            try:
                data = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                raise _Exited
            self._buffer += data

    def _parse_line(self, raw: bytes) -> dict[str, Any]:
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("tcc") != PROTOCOL_VERSION:
            raise BridgeBroken(
                f"{self.command!r} wrote a line on stdout that is not a protocol {PROTOCOL_VERSION} message: "
                f"{quote(raw)} (stdout is reserved for the protocol; log to stderr)" + self._stderr_section()
            )
        return message

    def stderr_tail(self) -> str:
        """The last lines the target wrote on stderr (all its processes so far)."""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, _STDERR_TAIL_BYTES, max(0, size - _STDERR_TAIL_BYTES))
        lines = data.decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-20:] if size <= _STDERR_TAIL_BYTES else lines[1:][-20:])

    def _stderr_section(self) -> str:
        tail = self.stderr_tail()
        return f"\n--- the target's stderr (last lines) ---\n{tail}" if tail.strip() else ""


def _describe_request(document: Mapping[str, Any]) -> str:
    """``request #12 (feed on h3)``: which request got no answer, for error messages."""
    kind = document.get("type")
    handler = document.get("h")
    on = f" on {handler}" if handler else ""
    api = document.get("api")
    about = f" of {api}" if api else ""
    line = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return f"request #{document.get('id')} ({kind}{on}{about}) {quote(line)}"
