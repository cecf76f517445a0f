"""The wire layer: provider response bodies, replayed through the real SDKs and client libraries.

Ground floor, beside ``conformance.verdict`` and ``conformance.turns``; the converter and
round-trip suites, the corpus tools and ``replay`` build on it. Eight wire APIs
(``conformance.wire.apis``); per concern:

* ``apis``: the wire APIs, their framing, the errors a body raises;
* ``eventstream``: the AWS binary event-stream codec (Bedrock);
* ``framing``: payloads <-> body bytes per API (SSE, NDJSON, event stream);
* ``detect``: which wire API a body belongs to;
* ``bodies``: loading a body from any stored form (cassette, raw body, JSON lines, JSON array);
* ``sdk``: replaying a body through the real SDK, offline, in chosen byte pieces (or building the
  SDK's objects straight from payloads), for every API;
* ``libraries``: the same through ollama-python, cohere and boto3, for the four APIs they serve;
* ``outcome`` / ``outcome_libraries``: the outcome of a stream (calls, text, reasoning, ending), as
  the SDK's own accumulator reads it, or a stated plain fold where the library has none;
* ``may_run``: which calls of an outcome may run and why not (``why_not``), from each wire API's
  stop reasons, the stream's error and the calls themselves: the one place that decides it;
* ``final``: a final-result target's answer (a stack, an accumulator) read as an outcome;
* ``recorded``: facts of a recording no expectation file holds (argument progress, usage, metadata);
* ``cases``: recordings with expectations, found under a folder;
* ``replay``: body -> SDK -> converter -> handler -> outcome, and how two outcomes are compared.
"""

from conformance.wire.apis import (
    LIBRARY_APIS,
    SDK_APIS,
    WIRE_APIS,
    LibraryMissingError,
    UnknownFormatError,
    WireFormatError,
)
from conformance.wire.bodies import Body, load_body
from conformance.wire.cases import Case, bundled_cassette_dir, discover_cases, load_expectation
from conformance.wire.detect import detect_api, payload_api
from conformance.wire.framing import frame_body, iter_payloads, sse_payloads, to_sse
from conformance.wire.may_run import STOP_REASONS, WHY_NOT, derive_may_run, stream_why_not
from conformance.wire.outcome import (
    ExpectedToolCall,
    Outcome,
    SdkAccumulatorError,
    decode_expected_arguments,
    sdk_outcome,
)
from conformance.wire.sdk import aiter_sdk_events, iter_payload_events, iter_sdk_events

__all__ = [
    "LIBRARY_APIS",
    "SDK_APIS",
    "STOP_REASONS",
    "WHY_NOT",
    "WIRE_APIS",
    "Body",
    "Case",
    "ExpectedToolCall",
    "LibraryMissingError",
    "Outcome",
    "SdkAccumulatorError",
    "UnknownFormatError",
    "WireFormatError",
    "aiter_sdk_events",
    "bundled_cassette_dir",
    "decode_expected_arguments",
    "derive_may_run",
    "detect_api",
    "discover_cases",
    "frame_body",
    "iter_payload_events",
    "iter_payloads",
    "iter_sdk_events",
    "load_body",
    "load_expectation",
    "payload_api",
    "sdk_outcome",
    "sse_payloads",
    "stream_why_not",
    "to_sse",
]
