"""The wire layer: provider response bodies, replayed through the real SDKs, and what they say.

Ground floor, beside ``conformance.verdict`` and ``conformance.turns``; the converter and
round-trip suites, the corpus tools and ``replay`` build on it.

* ``bodies``: loading a body from any stored form, telling its wire API, SSE framing;
* ``sdk``: replaying a body through the real SDK, offline, in chosen byte pieces;
* ``outcome``: the outcome of a stream (calls, text, reasoning, ending), as the SDK's own
  accumulator reads it (``sdk_outcome``);
* ``recorded``: facts of a recording no expectation file holds (argument progress, usage, metadata);
* ``cases``: recordings with expectations, found under a folder;
* ``replay``: body -> SDK -> converter -> handler -> outcome, and how two outcomes are compared.
"""

from conformance.wire.bodies import (
    WIRE_APIS,
    Body,
    UnknownFormatError,
    WireFormatError,
    detect_api,
    load_body,
    sse_payloads,
    to_sse,
)
from conformance.wire.cases import Case, bundled_cassette_dir, discover_cases, load_expectation
from conformance.wire.outcome import (
    ExpectedToolCall,
    Outcome,
    SdkAccumulatorError,
    decode_expected_arguments,
    sdk_outcome,
)
from conformance.wire.sdk import aiter_sdk_events, iter_payload_events, iter_sdk_events

__all__ = [
    "WIRE_APIS",
    "Body",
    "Case",
    "ExpectedToolCall",
    "Outcome",
    "SdkAccumulatorError",
    "UnknownFormatError",
    "WireFormatError",
    "aiter_sdk_events",
    "bundled_cassette_dir",
    "decode_expected_arguments",
    "detect_api",
    "discover_cases",
    "iter_payload_events",
    "iter_sdk_events",
    "load_body",
    "load_expectation",
    "sdk_outcome",
    "sse_payloads",
    "to_sse",
]
