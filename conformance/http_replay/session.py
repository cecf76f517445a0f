"""One replay: a recording served to whatever client the code under test builds, at the HTTP layer.

``replay_cassette`` is the context manager; ``Replay`` is what it yields. Three engines:

* ``"respx"`` (default): respx routes per wire API (``routes.ROUTES``), for every client on
  ``httpx2`` or (aliased) ``httpx``; each response is served in the pieces the ``Chunking`` says,
  so chunk boundaries go through the client library's own decoder and the whole application.
  Bedrock recordings go through botocore's HTTP session instead (boto3 does not use httpx).
* ``"vcrpy"``: vcrpy plays a cassette file as it is (any client vcrpy patches: httpx2, httpx,
  aiohttp, requests, boto3), matched by route rather than host, so a proxy or Azure base URL still
  matches. vcrpy serves each body as one piece: no chunking.

Whatever the engine, a request no route serves raises ``UnroutedRequestError`` in the client and
again when the replay ends; any other network access raises ``NetworkBlockedError``; a replay the
code under test never asked for ends in ``NotRequestedError``. Nothing reaches the network.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn
from unittest import mock
from urllib.parse import urlsplit

import httpx2

from conformance.http_replay.alias import ensure_httpx_alias
from conformance.http_replay.cases import RecordedResponse, Recording, ReplayCase, find_case, load_recording
from conformance.http_replay.chunking import Chunking
from conformance.http_replay.errors import (
    MissingDependencyError,
    NetworkBlockedError,
    NotRequestedError,
    ReplayExhaustedError,
    ReplayOptionError,
    UnroutedRequestError,
)
from conformance.http_replay.guard import block_network
from conformance.http_replay.routes import Route, route_for, route_matching
from conformance.wire import Case, Outcome

__all__ = ["Engine", "Replay", "SeenRequest", "placeholder_credentials", "replay_cassette"]

Engine = Literal["respx", "vcrpy"]

# Fake credentials, set only where the environment has none, so clients built with no arguments
# (``openai.OpenAI()``) can be constructed. They are only ever sent to the replay.
FAKE_CREDENTIALS: dict[tuple[str, ...], dict[str, str]] = {
    ("OPENAI_API_KEY",): {"OPENAI_API_KEY": "sk-toolcall-replay-not-a-real-key"},
    ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"): {"ANTHROPIC_API_KEY": "toolcall-replay-not-a-real-key"},
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"): {"GEMINI_API_KEY": "toolcall-replay-not-a-real-key"},
    ("CO_API_KEY",): {"CO_API_KEY": "toolcall-replay-not-a-real-key"},
    ("AWS_ACCESS_KEY_ID", "AWS_PROFILE"): {
        "AWS_ACCESS_KEY_ID": "toolcall-replay",
        "AWS_SECRET_ACCESS_KEY": "toolcall-replay-not-a-real-key",
    },
    ("AWS_DEFAULT_REGION", "AWS_REGION"): {"AWS_DEFAULT_REGION": "us-east-1"},
}

_ACTIVE: list[Replay] = []


@dataclass(frozen=True)
class SeenRequest:
    """A request the code under test sent and the replay served."""

    method: str
    url: str
    content: bytes

    def json(self) -> Any:
        """The request body as JSON (``None`` when it is not JSON)."""
        try:
            return json.loads(self.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None


@dataclass
class Replay:
    """A replay in progress: the recording, how it is cut, and what the code under test asked for."""

    case: ReplayCase
    recording: Recording
    chunking: Chunking
    engine: Engine = "respx"
    requests: list[SeenRequest] = field(default_factory=list)
    unrouted: list[str] = field(default_factory=list)
    network_attempts: list[str] = field(default_factory=list)
    played: int = 0

    @property
    def api(self) -> str:
        """The recording's wire API (``openai-chat``, ``anthropic``, ...)."""
        return self.recording.api

    @property
    def route(self) -> Route:
        """The endpoint this replay serves."""
        return route_for(self.api)

    @property
    def expected(self) -> Outcome:
        """The recording's expectation: ``tool_calls`` (each with ``may_run`` / ``why_not``: whether it
        may run, derived from the recording), ``text``, ``reasoning``, ``finish_reason``, ``error``."""
        return self.case.expected()

    def pieces(self, response: int = 0) -> list[bytes]:
        """The byte pieces the ``response``-th response is served in."""
        return self.chunking.pieces(self.recording.responses[response].body)

    def describe(self) -> str:
        """One line for a failure report: which recording, which engine, which cut."""
        return f"{self.case.id} ({self.api}, {self.engine}): {self.chunking.describe()}"

    def respond(self, method: str, url: str, content: bytes) -> RecordedResponse:
        """The response for a request, or the loud error that explains why there is none (recorded too)."""
        path = urlsplit(url).path
        route = self.route
        refusal = route.refuses(method, path, content)
        if refusal is None and not route.matches(method, path):
            other = route_matching(method, path)
            refusal = "no route serves it; this replay serves " + route.describe()
            if other is not None and other.api != self.api:
                refusal += f". The request looks like {other.api}: is the right recording replayed?"
        if refusal is not None:
            self._fail(UnroutedRequestError(f"{method} {url}: {refusal} (recording {self.case.id})"))
        if self.played >= len(self.recording.responses):
            self._fail(
                ReplayExhaustedError(
                    f"{method} {url}: request #{self.played + 1}, but recording {self.case.id} holds "
                    f"{len(self.recording.responses)} response(s)"
                )
            )
        self.requests.append(SeenRequest(method, url, content))
        self.played += 1
        return self.recording.responses[self.played - 1]

    def _fail(self, error: UnroutedRequestError) -> NoReturn:
        self.unrouted.append(str(error))
        raise error

    def annotate(self, error: BaseException) -> None:
        """Add what went wrong in the replay to an exception raised by the code under test."""
        for line in [*self.unrouted, *self.network_attempts, *_vcrpy_refusals(error)]:
            error.add_note(f"toolcall replay: {line}")
        error.add_note(f"toolcall replay: {self.describe()}")

    def verify(self, require_request: bool) -> None:
        """Raise at the end of a replay whose requests went wrong (even if the code under test hid it)."""
        if self.unrouted:
            raise UnroutedRequestError("; ".join(self.unrouted))
        if self.network_attempts:
            raise NetworkBlockedError("; ".join(self.network_attempts))
        if require_request and self.played == 0:
            raise NotRequestedError(
                f"the code under test never sent the recorded request ({self.route.describe()}); "
                f"recording {self.case.id}"
            )


def _vcrpy_refusals(error: BaseException) -> list[str]:
    """vcrpy's "no recorded response" errors behind ``error`` (SDKs wrap them as connection errors)."""
    found, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "CannotOverwriteExistingCassetteException":
            found.append("vcrpy holds no response for this request: " + str(current).strip().splitlines()[0])
        current = current.__cause__ or current.__context__
    return found


# -- the respx engine -----------------------------------------------------------------------------


class _Pieces(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body served in exactly the given pieces."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self._pieces = list(pieces)

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


@contextmanager
def _respx_routes(replay: Replay) -> Iterator[None]:
    ensure_httpx_alias()
    try:
        import respx
    except ImportError as error:
        raise MissingDependencyError(
            "replaying into application code needs respx: pip install 'toolcall-conformance[test]'"
        ) from error

    # Typed loosely: respx's annotations name the real httpx, which is httpx2 here (aliased).
    def serve(request: Any) -> Any:
        recorded = replay.respond(request.method, str(request.url), request.read())
        return httpx2.Response(
            recorded.status,
            headers={"content-type": recorded.content_type},
            stream=_Pieces(replay.chunking.pieces(recorded.body)),
        )

    def stray(request: Any) -> Any:
        replay.respond(request.method, str(request.url), request.read())  # raises: no route matched

    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        route = replay.route
        router.route(method=route.method, path__regex=route.path, name=route.api).mock(side_effect=serve)
        router.route(name="unrouted").mock(side_effect=stray)
        yield


class _RawPieces:
    """What botocore reads a streamed body from (``AWSResponse.raw``)."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self._pieces = list(pieces)

    def stream(self, **_options: Any) -> Iterator[bytes]:
        yield from self._pieces

    def close(self) -> None:
        self._pieces = []


@contextmanager
def _botocore_session(replay: Replay) -> Iterator[None]:
    try:
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from botocore.httpsession import URLLib3Session  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError as error:
        raise MissingDependencyError(f"replaying {replay.api} needs boto3: pip install boto3") from error

    def send(_session: Any, request: Any) -> Any:
        body = request.body
        content = body if isinstance(body, bytes) else (body.read() if hasattr(body, "read") else b"")
        recorded = replay.respond(str(request.method), str(request.url), content or b"")
        headers = {"content-type": recorded.content_type}
        return AWSResponse(request.url, recorded.status, headers, _RawPieces(replay.chunking.pieces(recorded.body)))

    with mock.patch.object(URLLib3Session, "send", send):
        yield


# -- the vcrpy engine -----------------------------------------------------------------------------


@contextmanager
def _vcrpy_cassette(replay: Replay) -> Iterator[None]:
    import vcr

    def same_route(left: Any, right: Any) -> None:
        ours, theirs = (route_matching(r.method, urlsplit(r.uri).path) for r in (left, right))
        if ours is None or ours is not theirs:
            raise AssertionError(f"{left.method} {left.uri} and {right.method} {right.uri} are not the same endpoint")

    recorder = vcr.VCR(record_mode="none", match_on=("method", "toolcall_route"))
    recorder.register_matcher("toolcall_route", same_route)
    with recorder.use_cassette(str(replay.case.body_path), allow_playback_repeats=False) as cassette:
        try:
            yield
        finally:
            replay.played = int(cassette.play_count)


# -- the context manager --------------------------------------------------------------------------


@contextmanager
def placeholder_credentials() -> Iterator[None]:
    """Set placeholder API keys for the SDKs (OpenAI, Anthropic, Gemini, Cohere, AWS) where the environment has none.

    Clients built with no arguments (``openai.OpenAI()``) need a key to be constructed; these are
    only ever sent to a replay. Keys already set are left alone; everything is restored on exit.
    """
    added = {}
    for present, values in FAKE_CREDENTIALS.items():
        if not any(os.environ.get(name) for name in present):
            added.update(values)
    with mock.patch.dict(os.environ, added):
        yield


def _prepare(
    cassette: str | Path | Case | ReplayCase,
    *,
    chunk_bytes: int | None,
    cuts: Sequence[int] | None,
    engine: Engine,
    dirs: Iterable[str | Path],
    bundled: bool,
) -> Replay:
    if engine not in ("respx", "vcrpy"):
        raise ReplayOptionError(f"unknown engine {engine!r}; expected 'respx' or 'vcrpy'")
    chunking = Chunking.of(chunk_bytes, cuts)
    case = find_case(cassette, dirs=dirs, bundled=bundled)
    recording = load_recording(case.body_path)
    route_for(recording.api)
    if engine == "vcrpy":
        if chunking != Chunking():
            raise ReplayOptionError(
                "the vcrpy engine serves each body as one piece: chunk_bytes/cuts need engine='respx'"
            )
        if case.body_path.suffix.lower() not in (".yaml", ".yml"):
            raise ReplayOptionError(f"the vcrpy engine plays vcrpy cassettes (.yaml), not {case.body_path.name}")
    return Replay(case, recording, chunking, engine)


@contextmanager
def replay_cassette(
    cassette: str | Path | Case | ReplayCase,
    *,
    chunk_bytes: int | None = None,
    cuts: Sequence[int] | None = None,
    engine: Engine = "respx",
    dirs: Iterable[str | Path] = (),
    bundled: bool = True,
    fake_credentials: bool = True,
    require_request: bool = True,
) -> Iterator[Replay]:
    """Serve a recording to every client the code inside the ``with`` builds, offline, and yield the ``Replay``.

    ``cassette``: an id (``"openai-chat/parallel_two_tools"``, searched in ``dirs`` then the bundled
    cassettes), a path to a recording, or a case from ``cassette_cases``. ``chunk_bytes=N`` serves
    each response in N-byte pieces, ``cuts=[...]`` cuts it at those byte offsets (what ``fuzz``
    prints); neither serves it whole. ``fake_credentials`` sets placeholder API keys where the
    environment has none, so ``openai.OpenAI()`` and friends can be built with no arguments.
    ``require_request`` fails the replay if no request was made. ``replay.expected`` is the
    recording's expectation, to assert your own output against.

    The respx engine needs ``import httpx`` to be ``httpx2``: it aliases when nothing imported
    ``httpx`` yet, and otherwise raises ``HttpxAliasError`` saying what to change (in pytest:
    ``-p conformance.pytest_plugin.httpx_alias``).
    """
    __tracebackhide__ = True  # failures inside the ``with`` show the user's code first
    replay = _prepare(cassette, chunk_bytes=chunk_bytes, cuts=cuts, engine=engine, dirs=dirs, bundled=bundled)
    if _ACTIVE:
        raise ReplayOptionError(f"a replay is already active ({_ACTIVE[-1].describe()}); replays do not nest")
    _ACTIVE.append(replay)
    try:
        with ExitStack() as stack:
            if engine == "vcrpy":
                stack.enter_context(_vcrpy_cassette(replay))
            elif replay.route.transport == "botocore":
                stack.enter_context(_botocore_session(replay))
            else:
                stack.enter_context(_respx_routes(replay))
            if fake_credentials:
                stack.enter_context(placeholder_credentials())
            stack.enter_context(block_network(replay.network_attempts))
            try:
                yield replay
            except BaseException as error:
                replay.annotate(error)
                raise
        replay.verify(require_request)
    finally:
        _ACTIVE.remove(replay)
