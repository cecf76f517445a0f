"""Which recording to replay: resolving a name or a path, listing cases for parametrization, loading responses.

A *replay case* is a recording with an id: its path under its folder without the suffix
(``openai-chat/parallel_two_tools``, ``multiturn/anthropic/weather_and_time``), what pytest node
ids show and what ``find_case`` accepts back. The expectation (``<name>.expected.json``) is what
the replay hands back for the user to assert on; a recording without one still replays.

Responses come from every interaction of a vcrpy cassette, in order (a multi-turn cassette serves
one response per request), or from a body file (``.sse``, ``.jsonl``, ``.json``, AWS
``.eventstream.bin``) served once. Each is served with the recorded status and content type.
"""

from __future__ import annotations

import fnmatch
import functools
import gzip
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from conformance.http_replay.errors import ReplayError, UnknownCassetteError, UnsupportedWireApiError
from conformance.http_replay.routes import ROUTES, route_for, route_matching
from conformance.wire import (
    Case,
    Outcome,
    UnknownFormatError,
    WireFormatError,
    bundled_cassette_dir,
    discover_cases,
    load_body,
    sse_payloads,
    to_sse,
)
from conformance.wire.cases import BODY_SUFFIXES, expectation_path
from conformance.wire.yaml_bounds import YamlBoundExceeded, load_yaml

__all__ = [
    "MissingExpectationError",
    "RecordedResponse",
    "Recording",
    "ReplayCase",
    "cassette_cases",
    "find_case",
    "load_recording",
]

_EVENTSTREAM_SUFFIX = ".eventstream.bin"


class MissingExpectationError(ReplayError, LookupError):
    """The recording has no ``<name>.expected.json`` beside it, so there is nothing to hand back."""


@dataclass(frozen=True)
class RecordedResponse:
    """One response to serve: status, content type and the whole body (cut into pieces when served)."""

    status: int
    content_type: str
    body: bytes


@dataclass(frozen=True)
class Recording:
    """A recording's wire API and its responses, in the order requests get them."""

    api: str
    responses: tuple[RecordedResponse, ...]


@dataclass(frozen=True)
class ReplayCase:
    """A recording to replay, with its id (the node-id part) and, usually, an expectation."""

    id: str
    body_path: Path

    @property
    def expected_path(self) -> Path:
        """Where the expectation lives: ``<name>.expected.json`` beside the body."""
        if self.body_path.name.endswith(_EVENTSTREAM_SUFFIX):
            return self.body_path.with_name(self.body_path.name.removesuffix(_EVENTSTREAM_SUFFIX) + ".expected.json")
        return expectation_path(self.body_path)

    def expected(self) -> Outcome:
        """The recording's independent expectation (tool calls, text, reasoning, finish reason, error)."""
        path = self.expected_path
        if not path.is_file():
            raise MissingExpectationError(f"{self.body_path}: no expectation beside it ({path.name} is missing)")
        return Case(self.body_path, path, self.id).expected()

    @property
    def api(self) -> str:
        """The wire API of the recording (from the recorded request URL, else from its payloads)."""
        return load_recording(self.body_path).api

    def __str__(self) -> str:
        return self.id


def _case_id(name: str) -> str:
    for suffix in (_EVENTSTREAM_SUFFIX, *(".cassette" + s for s in BODY_SUFFIXES), *BODY_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _roots(dirs: Iterable[str | Path], bundled: bool) -> list[Path]:
    roots = [Path(folder) for folder in dirs]
    for root in roots:
        if not root.is_dir():
            raise UnknownCassetteError(f"cassette folder {root} does not exist")
    if bundled:
        roots.append(bundled_cassette_dir())
    return roots


def _all_cases(roots: Sequence[Path]) -> list[ReplayCase]:
    return [ReplayCase(_case_id(case.name), case.body_path) for case in discover_cases(roots)]


def cassette_cases(
    *patterns: str, dirs: Iterable[str | Path] = (), bundled: bool = True, apis: Iterable[str] | None = None
) -> list[ReplayCase]:
    """The recordings whose id matches any of ``patterns`` (shell globs; none: every one), for parametrizing.

    A pattern ``@API`` is a named group: every single-turn recording read as that wire API, wherever
    it lives. ``@openai-chat`` is ``openai-chat/*`` and the OpenAI-compatible dialects
    (``openai-compatible/*``: no ``index``, calls on index 0, cumulative or object arguments...),
    which is where most clients break; ``openai-chat/*`` alone misses all of them. ``dirs`` are
    your own folders of recordings (searched first), ``bundled`` adds the cassettes shipped with the
    package, ``apis`` keeps the recordings of these wire APIs only. Matching nothing is an error
    (``UnknownCassetteError``), so a typo cannot make a parametrized test vanish.
    """
    wanted_apis = None if apis is None else set(apis)
    for api in wanted_apis or ():
        route_for(api)
    groups = {pattern[1:] for pattern in patterns if pattern.startswith("@")}
    for api in groups:
        route_for(api)  # an unknown group is an error naming the known wire APIs
    globs = [pattern for pattern in patterns if not pattern.startswith("@")]

    def selected(case: ReplayCase) -> bool:
        if not patterns or any(fnmatch.fnmatchcase(case.id, glob) for glob in globs):
            return True
        return bool(groups) and not case.id.startswith("multiturn/") and case.api in groups

    found = [
        case
        for case in _all_cases(_roots(dirs, bundled))
        if selected(case) and (wanted_apis is None or case.api in wanted_apis)
    ]
    if not found:
        raise UnknownCassetteError(
            f"no recording matches {list(patterns) or ['*']}"
            + (f" for wire APIs {sorted(wanted_apis)}" if wanted_apis else "")
            + f" under {[str(root) for root in _roots(dirs, bundled)]}"
        )
    return found


def find_case(
    cassette: str | Path | Case | ReplayCase, *, dirs: Iterable[str | Path] = (), bundled: bool = True
) -> ReplayCase:
    """The recording ``cassette`` names: a ``ReplayCase`` / ``Case``, a path to a body file, or an id.

    An id is the path under its folder without the suffix (``openai-chat/single_call``); your
    ``dirs`` are searched before the bundled cassettes. An unknown id raises
    ``UnknownCassetteError`` with the closest ids.
    """
    if isinstance(cassette, ReplayCase):
        return cassette
    if isinstance(cassette, Case):
        return ReplayCase(_case_id(cassette.name), cassette.body_path)
    path = Path(cassette)
    if path.is_file():
        return ReplayCase(_case_id(path.name), path)
    wanted = _case_id(str(cassette).replace("\\", "/"))
    cases = _all_cases(_roots(dirs, bundled))
    for case in cases:
        if case.id == wanted:
            return case
    by_tail = [case for case in cases if case.id.endswith("/" + wanted)]
    if len(by_tail) == 1:
        return by_tail[0]
    import difflib

    close = [case.id for case in by_tail] or difflib.get_close_matches(wanted, [case.id for case in cases], n=5)
    raise UnknownCassetteError(
        f"no recording {str(cassette)!r}"
        + (f"; did you mean one of {close}?" if close else "")
        + " (ids are paths under a cassette folder without the suffix, e.g. 'openai-chat/single_call'; "
        "list them with conformance.http_replay.cassette_cases())"
    )


# -- loading the responses ----------------------------------------------------------------------


def _api_of_uri(method: str, uri: str) -> str | None:
    route = route_matching(method, urlsplit(uri).path)
    return route.api if route else None


def _header(headers: Any, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if str(key).lower() == name:
            return str(value[0] if isinstance(value, list) and value else value)
    return None


def _interaction_response(path: Path, interaction: Any) -> tuple[str, str, RecordedResponse]:
    try:
        request, response = interaction["request"], interaction["response"]
        raw = response["body"]["string"]
        method, uri = str(request.get("method", "POST")), str(request["uri"])
    except (KeyError, TypeError) as error:
        raise WireFormatError(
            f"{path}: interaction lacks {error}; expected request.uri and response.body.string"
        ) from error
    body = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    headers = response.get("headers")
    if "gzip" in (_header(headers, "content-encoding") or "").lower():
        body = gzip.decompress(body)
    status = response.get("status", {}).get("code", 200) if isinstance(response.get("status"), dict) else 200
    content_type = _header(headers, "content-type") or "text/event-stream"
    return method, uri, RecordedResponse(int(status), content_type, body)


def _cassette_recording(path: Path) -> Recording:
    try:
        document = load_yaml(path.read_text(encoding="utf-8"))
    except YamlBoundExceeded as error:
        raise WireFormatError(f"{path}:{error.line}: {error}") from None
    except yaml.YAMLError as error:
        raise WireFormatError(f"{path}: not valid YAML: {error}") from error
    interactions = document.get("interactions") if isinstance(document, dict) else None
    if not interactions:
        raise WireFormatError(f"{path}: a vcrpy cassette needs a non-empty 'interactions' list")
    loaded = [_interaction_response(path, interaction) for interaction in interactions]
    method, uri, _ = loaded[-1]
    api = _api_of_uri(method, uri) or load_body(path).api
    responses = []
    for _, _, response in loaded:
        body = response.body
        if api == "gemini" and body.lstrip().startswith(b"[") and not sse_payloads(body):
            # streamGenerateContent without alt=sse (a JSON array): the SDK asks for SSE.
            body = to_sse(api, json.loads(body))
        responses.append(RecordedResponse(response.status, response.content_type, body))
    return Recording(api, tuple(responses))


def _eventstream_api(body: bytes) -> str:
    from conformance.wire.eventstream import iter_messages

    kinds = {str(message.headers.get(":event-type", "")) for message in iter_messages(body)}
    return "bedrock-invoke" if "chunk" in kinds else "bedrock-converse"


def _new_api_recording(path: Path) -> Recording:
    from conformance.wire import LIBRARY_APIS, frame_body, payload_api

    raw = path.read_bytes()
    lines = raw.decode("utf-8").splitlines()
    payloads = [json.loads(line) for line in lines if line.strip()] if path.suffix == ".jsonl" else sse_payloads(raw)
    votes = {payload_api(payload) for payload in payloads[:20]} & set(LIBRARY_APIS)
    if len(votes) != 1:
        raise UnsupportedWireApiError(f"{path}: cannot tell the wire API of this body; supported: {', '.join(ROUTES)}")
    api = str(votes.pop())
    body = frame_body(api, payloads) if path.suffix == ".jsonl" else raw
    return Recording(api, (RecordedResponse(200, route_for(api).content_type, body),))


@functools.lru_cache(maxsize=512)
def _load_recording(path: Path, mtime_ns: int) -> Recording:
    del mtime_ns  # part of the cache key only
    if path.name.endswith(_EVENTSTREAM_SUFFIX):
        frames = path.read_bytes()
        api = _eventstream_api(frames)
        return Recording(api, (RecordedResponse(200, route_for(api).content_type, frames),))
    if path.suffix.lower() in {".yaml", ".yml"}:
        return _cassette_recording(path)
    try:
        body = load_body(path)
    except UnknownFormatError:
        # Not one of the four SSE APIs: an Ollama, Cohere or Bedrock body.
        return _new_api_recording(path)
    return Recording(body.api, (RecordedResponse(200, route_for(body.api).content_type, body.sse),))


def load_recording(path: str | Path) -> Recording:
    """The wire API and the responses of a recording file (cached while the file is unchanged)."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise UnknownCassetteError(f"{path}: no such recording")
    return _load_recording(resolved, resolved.stat().st_mtime_ns)
