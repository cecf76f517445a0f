"""Helpers for tests/test_converters_{ollama,bedrock,cohere}.py: replay through the real client libraries.

Every replay serves bytes to the real library offline (``conformance.wire.libraries``), converts
the library's own objects and feeds the chunks to the reference handler (``outcome_of``).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from test_converters_common import Outcome, assert_contract, outcome_of

from conformance.wire.eventstream import Message
from conformance.wire.framing import frame_body as encode_body
from conformance.wire.libraries import iter_library_events
from conformance.wire.libraries import iter_library_payload_events as iter_payload_events
from conformance.wire.may_run import stream_why_not
from reference_impl.converters import StreamConverter, converter_for, iter_chunks

RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "real-recordings"


def replay(
    api: str,
    payloads: Sequence[Any] | None = None,
    *,
    body: bytes | None = None,
    pieces: Sequence[bytes] | None = None,
    converter: StreamConverter | None = None,
    done_marker: bool = False,
) -> Outcome:
    """Serve the body through the real library (in ``pieces``), convert, run the reference handler."""
    if body is None:
        assert payloads is not None
        body = encode_body(api, payloads, done_marker=done_marker)
    converter = converter if converter is not None else converter_for(api)
    chunks = list(iter_chunks(converter, iter_library_events(api, pieces if pieces is not None else [body])))
    outcome = outcome_of(chunks, converter)
    assert_contract(outcome)
    return outcome


def replay_payloads(api: str, payloads: Sequence[Any], *, converter: StreamConverter | None = None) -> Outcome:
    """The library's objects built straight from the payloads (no HTTP layer), converted."""
    converter = converter if converter is not None else converter_for(api)
    outcome = outcome_of(list(iter_chunks(converter, iter_payload_events(api, payloads))), converter)
    assert_contract(outcome)
    return outcome


def split(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def byte_splits(body: bytes) -> st.SearchStrategy[list[bytes]]:
    """Any split of ``body`` into pieces, empty pieces included."""
    return st.lists(st.integers(0, len(body)), max_size=40).map(lambda cuts: split(body, cuts))


def recording(relative: str) -> tuple[Path, dict[str, Any]]:
    """A real recording in ../shared (read in place, never copied) and its expectation, or skip."""
    path = RECORDINGS / relative
    expected = path.parent / (path.name.split(".")[0] + ".expected.json")
    if not path.is_file() or not expected.is_file():
        pytest.skip(f"real recording {relative} not found under {RECORDINGS} (it is not in the repository)")
    return path, json.loads(expected.read_text(encoding="utf-8"))["expected"]


def assert_matches_expected(outcome: Outcome, expected: dict[str, Any]) -> None:
    """The outcome agrees with a recording's hand-made ``.expected.json``."""
    firsts: dict[int, dict[str, Any]] = {}
    for delta in outcome.deltas:
        entry = firsts.setdefault(delta.index, {"name": [], "id": None})
        if delta.name:
            entry["name"].append(delta.name)
        entry["id"] = entry["id"] or delta.call_id
    assert [("".join(firsts[i]["name"]), firsts[i]["id"]) for i in outcome.indexes] == [
        (call["name"], call["id"]) for call in expected["tool_calls"]
    ]
    assert [outcome.arguments_of(i) for i in outcome.indexes] == [
        call["arguments_raw"] for call in expected["tool_calls"]
    ]
    want = [(call["name"], call["id"], call["arguments"]) for call in expected["tool_calls"]]
    assert Counter(json.dumps(call, sort_keys=True) for call in outcome.calls) == Counter(
        json.dumps(call, sort_keys=True) for call in want
    )
    assert [(inv.name, inv.to_dict()["arguments"]) for inv in outcome.invocations] == [
        (name, arguments) for name, _, arguments in want if arguments is not None
    ]
    assert [(call["name"], call["id"]) for call in outcome.converter.server_tool_calls] == [
        (call["name"], call["id"]) for call in expected["server_tool_calls"]
    ]
    assert outcome.text == expected["text"]
    assert len(outcome.reasoning) == expected["reasoning_chars"]
    assert outcome.terminal.finish_reason == expected["finish_reason"]
    # The kind the recording calls for: the suite's one reading of each API's stop reasons (the
    # third-party format names no wire API: every API's table is read at once).
    kind = stream_why_not(expected["format"], expected["finish_reason"], expected["error"])
    assert (outcome.terminal.error.kind if outcome.terminal.error is not None else None) == kind
    assert not outcome.converter.unknown_events
    assert not outcome.converter.problems


def decode_event_stream(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """``(headers, payload)`` of every complete message in ``data``, read by botocore's own decoder.

    Raises botocore's ``ChecksumMismatch`` on a corrupt frame; an incomplete trailing frame is left
    out, as botocore leaves it waiting for more bytes.
    """
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(message.headers), bytes(message.payload)) for message in buffer]


def ours_as_tuples(messages: list[Message]) -> list[tuple[dict[str, Any], bytes]]:
    return [(message.headers, message.payload) for message in messages]
