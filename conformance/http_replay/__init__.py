"""Replay recorded streams into application code, at the HTTP layer, cut at any byte boundary.

Your LLM client class builds its own ``openai.OpenAI()`` / ``anthropic.Anthropic()`` /
``genai.Client()``; nothing needs to be injected. Inside ``replay_cassette`` every request it sends
for a stream gets the recording (bundled or yours), served in the byte pieces you choose, through
the SDK's own HTTP client and decoder, and ``replay.expected`` says what the recording amounts
to, for you to assert on your own output; each of its calls says whether it may run
(``may_run``, and ``why_not`` when it may not: ``conformance.wire.may_run``)::

    from conformance.http_replay import replay_cassette

    with replay_cassette("openai-chat/parallel_two_tools", chunk_bytes=7) as replay:
        answer = MyAssistant().ask("weather and time?")
    assert [(c.name, c.arguments) for c in answer.calls_it_ran] == [
        (c.name, c.arguments) for c in replay.expected.tool_calls if c.may_run
    ]

* ``replay_cassette``: the context manager (``chunk_bytes=N``, ``cuts=[...]``, ``engine="vcrpy"``);
* ``fuzz_cassette``: hypothesis-chosen cuts, seeded, shrunk, replayable (``ReplayFuzzError``);
* ``cassette_cases`` / ``find_case``: recordings by id or glob, for ``pytest.mark.parametrize``;
* ``ROUTES``: the endpoint of each wire API (``openai-chat``, ``openai-responses``,
  ``anthropic``, ``gemini``, ``ollama``, ``cohere-v2``, ``bedrock-converse``, ``bedrock-invoke``).

In pytest, the ``toolcall_replay`` fixture and the ``toolcall_cassettes`` marker
(``conformance.pytest_plugin.replay_fixture``) wrap these. Requests go through respx, which only
sees the SDKs' ``httpx2`` traffic once ``httpx2.alias_httpx()`` has run before anything imported
``httpx``: see ``conformance.http_replay.alias``.

Nothing reaches the network: a request no route serves raises ``UnroutedRequestError``, any other
connection ``NetworkBlockedError``.
"""

from conformance.http_replay.alias import ALIAS_PLUGIN, ensure_httpx_alias, httpx_alias_status
from conformance.http_replay.cases import (
    MissingExpectationError,
    RecordedResponse,
    Recording,
    ReplayCase,
    cassette_cases,
    find_case,
    load_recording,
)
from conformance.http_replay.chunking import Chunking, cuts_strategy, split_at
from conformance.http_replay.errors import (
    HttpxAliasError,
    MissingDependencyError,
    NetworkBlockedError,
    NotRequestedError,
    ReplayError,
    ReplayExhaustedError,
    ReplayOptionError,
    UnknownCassetteError,
    UnroutedRequestError,
    UnsupportedWireApiError,
)
from conformance.http_replay.fuzz import DEFAULT_EXAMPLES, FuzzRun, ReplayFuzzError, fuzz_cassette
from conformance.http_replay.routes import ROUTES, Route, route_for
from conformance.http_replay.session import Engine, Replay, SeenRequest, placeholder_credentials, replay_cassette

__all__ = [
    "ALIAS_PLUGIN",
    "DEFAULT_EXAMPLES",
    "ROUTES",
    "Chunking",
    "Engine",
    "FuzzRun",
    "HttpxAliasError",
    "MissingDependencyError",
    "MissingExpectationError",
    "NetworkBlockedError",
    "NotRequestedError",
    "RecordedResponse",
    "Recording",
    "Replay",
    "ReplayCase",
    "ReplayError",
    "ReplayExhaustedError",
    "ReplayFuzzError",
    "ReplayOptionError",
    "Route",
    "SeenRequest",
    "UnknownCassetteError",
    "UnroutedRequestError",
    "UnsupportedWireApiError",
    "cassette_cases",
    "cuts_strategy",
    "ensure_httpx_alias",
    "find_case",
    "fuzz_cassette",
    "httpx_alias_status",
    "load_recording",
    "placeholder_credentials",
    "replay_cassette",
    "route_for",
    "split_at",
]
