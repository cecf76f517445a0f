"""Direct reproductions for anthropic's ``accumulate_event`` (what ``messages.stream()`` runs).

Each test serves a Messages SSE body to the real SDK through an ``httpx2.MockTransport`` and reads
``messages.stream(...).get_final_message()``; no toolcall-conformance. The bodies are the shapes of
the bundled recordings behind the matrix's ``stack_outcome_matches`` cell.
"""

from __future__ import annotations

import json

import pytest

anthropic = pytest.importorskip("anthropic", reason="anthropic is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")


def event(kind, **data):
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def body(*fragments, stop="tool_use", complete=True):
    """A message with one text block and one tool_use block whose input arrives in ``fragments``."""
    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    parts = [
        event("message_start", message=message),
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Writing."}),
        event("content_block_stop", index=0),
        event(
            "content_block_start",
            index=1,
            content_block={"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}},
        ),
        *[
            event("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": f})
            for f in fragments
        ],
    ]
    if complete:
        parts += [
            event("content_block_stop", index=1),
            event("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage={"output_tokens": 9}),
            event("message_stop"),
        ]
    return "".join(parts).encode()


def final_message(raw):
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=raw, headers={"content-type": "text/event-stream"})
    )
    client = anthropic.Anthropic(api_key="x", http_client=httpx2.Client(transport=transport), max_retries=0)
    with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_message()


def tool_uses(message):
    return [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]


# --- defects: the failing cell stack_outcome_matches ----------------------------------------------


def test_truncated_arguments_at_max_tokens_are_repaired_into_a_smaller_object():
    # anthropic/truncated_max_tokens: the cut string is dropped and the rest becomes the input
    message = final_message(body('{"path": "x.py", ', '"content": "def f():\\n', stop="max_tokens"))
    assert tool_uses(message) == [("toolu_1", "write_file", {"path": "x.py"})]
    assert message.stop_reason == "max_tokens"


def test_stream_cut_before_message_stop_gives_a_runnable_call_and_no_error():
    # anthropic/stream_cut_after_arguments: no content_block_stop, message_delta or message_stop
    message = final_message(body('{"path": "a.py", ', '"content": "x = 1"}', complete=False))
    assert tool_uses(message) == [("toolu_1", "write_file", {"path": "a.py", "content": "x = 1"})]
    assert message.stop_reason is None


def test_stream_cut_mid_call_gives_a_partial_input_and_no_error():
    # anthropic/stream_cut_mid_call
    message = final_message(body('{"path": "a.py", "content": "x', complete=False))
    assert tool_uses(message) == [("toolu_1", "write_file", {"path": "a.py"})]


# --- correct behaviours the suite passes ---------------------------------------------------------


def test_complete_call_and_text_come_out_in_block_order():
    message = final_message(body('{"path": "a.py", ', '"content": "x = 1"}'))
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert tool_uses(message) == [("toolu_1", "write_file", {"path": "a.py", "content": "x = 1"})]


def test_in_band_error_event_raises():
    raw = (
        body('{"path": "a.py"}', complete=False)
        + event("error", error={"type": "overloaded_error", "message": "Overloaded"}).encode()
    )
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        final_message(raw)
