"""``examples/replay_assistant.py`` checked end to end against the bundled OpenAI Chat cassettes.

Run it (no network, no API key; the ``-p`` option makes ``import httpx`` be ``httpx2`` before
respx loads, see the README)::

    pytest -p conformance.pytest_plugin.httpx_alias examples/test_replay_assistant.py
    TOOLCALL_EXAMPLE_PLANTED_BUG=1 pytest -p conformance.pytest_plugin.httpx_alias examples/test_replay_assistant.py

``TOOLCALL_EXAMPLE_PLANTED_BUG=ending`` plants the other bug (``AssistantIgnoringTheEnd``: it runs
every call whose arguments parse, however the stream ended). Every expectation comes from the
cassette (``replay.expected``), never from the assistant.
"""

from __future__ import annotations

import os

import pytest

from conformance.http_replay import Replay
from examples.replay_assistant import Assistant, AssistantIgnoringTheEnd, AssistantWithPlantedBug, Turn

_PLANTED = os.environ.get("TOOLCALL_EXAMPLE_PLANTED_BUG")
AssistantClass = {None: Assistant, "": Assistant, "ending": AssistantIgnoringTheEnd}.get(
    _PLANTED, AssistantWithPlantedBug
)


def check_turn(turn: Turn, replay: Replay) -> None:
    """The assistant's turn against the recording's expectation."""
    expected = replay.expected
    assert turn.text == expected.text
    assert [(call.id, call.name, call.arguments) for call in turn.calls] == [
        (call.call_id, call.name, call.arguments) for call in expected.tool_calls
    ]
    # The assistant runs exactly the calls the recording says may run: ``may_run`` is derived from
    # the stream (not cut, not truncated by max tokens, no error event) and the call (a name, an
    # arguments object); ``why_not`` says which of these it is when it may not.
    assert [call.id for call in turn.calls if call.runnable] == [
        call.call_id for call in expected.tool_calls if call.may_run
    ]


@pytest.mark.toolcall_cassettes("@openai-chat")  # openai-chat/* and the OpenAI-compatible dialects
@pytest.mark.parametrize("chunk_bytes", [None, 7], ids=["whole", "7-byte-pieces"])
def test_assistant(toolcall_replay, toolcall_case, chunk_bytes):
    with toolcall_replay(toolcall_case, chunk_bytes=chunk_bytes) as replay:
        turn = AssistantClass().ask("What's the weather in Paris?")
    check_turn(turn, replay)
    assert replay.requests[0].json()["stream"] is True


@pytest.mark.toolcall_cassettes("openai-chat/parallel_two_tools", "openai-chat/raw_unicode_split")
def test_assistant_at_any_cut(toolcall_replay, toolcall_case):
    def scenario(replay: Replay) -> None:
        check_turn(AssistantClass().ask("What's the weather in Paris?"), replay)

    toolcall_replay.fuzz(toolcall_case, scenario, max_examples=15)
