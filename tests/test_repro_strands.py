"""Direct reproductions for strands-agents: an ``Agent`` on ``BedrockModel`` (Bedrock ConverseStream).

Each test builds a ConverseStream body by hand (AWS event-stream frames: prelude, headers, JSON
payload, CRCs), serves it to the boto3 ``bedrock-runtime`` client ``BedrockModel`` built, through a
``before-send`` handler that answers with a ``botocore.awsrequest.AWSResponse`` (so botocore's own
event-stream parser decodes the frames), and runs a real ``Agent`` with a real ``@tool``: what the
tool receives is what the agent ran. No toolcall-conformance code, no network. The bodies are the
shapes of the bundled recordings behind the matrix's ``stack_outcome_matches`` cell.
"""

import binascii
import json
import struct
from collections.abc import Iterator
from typing import Any

import pytest

strands = pytest.importorskip("strands", reason="strands-agents is not installed")
boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")

from botocore.awsrequest import AWSResponse  # noqa: E402
from strands import Agent, tool  # noqa: E402
from strands.models import BedrockModel  # noqa: E402
from strands.types.exceptions import MaxTokensReachedException  # noqa: E402


def frame(event_type: str, payload: dict[str, Any]) -> bytes:
    """One event-stream message: string headers (type 7) ``:event-type``, ``:content-type``, ``:message-type``."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


def error_frame(exception_type: str, message: str) -> bytes:
    """An in-band exception message (``:message-type`` ``exception``), as Bedrock sends mid-stream."""
    headers = b""
    for name, value in (
        (":exception-type", exception_type),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    body = json.dumps({"message": message}).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    framed = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + body
    return framed + struct.pack(">I", binascii.crc32(framed))


def start() -> bytes:
    return frame("messageStart", {"role": "assistant"})


def tool_use(index: int, tool_use_id: str, name: str, *fragments: str, **start_extra: str) -> bytes:
    """A toolUse block's start and input deltas (no contentBlockStop: add ``block_stop``)."""
    out = frame(
        "contentBlockStart",
        {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_use_id, "name": name, **start_extra}}},
    )
    for fragment in fragments:
        out += frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}})
    return out


def text(index: int, value: str) -> bytes:
    return frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": value}})


def block_stop(index: int) -> bytes:
    return frame("contentBlockStop", {"contentBlockIndex": index})


def stop(reason: str) -> bytes:
    return frame("messageStop", {"stopReason": reason}) + frame(
        "metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}}
    )


DONE = start() + text(0, "Done.") + block_stop(0) + stop("end_turn")  # the answer after the tool results


class Raw:
    """What botocore's EventStream reads (``AWSResponse.raw``): ``stream()`` yields the body."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body

    def close(self) -> None:
        pass


def agent_for(*bodies: bytes, tools: list[Any]) -> Any:
    """An Agent whose BedrockModel's client answers its n-th ConverseStream request with ``bodies[n]``."""
    queue = list(bodies)
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1")
    model = BedrockModel(boto_session=session, model_id="model-under-test")

    def respond(request: Any, **_: Any) -> Any:
        return AWSResponse(request.url, 200, {"content-type": "application/vnd.amazon.eventstream"}, Raw(queue.pop(0)))

    model.client.meta.events.register("before-send.bedrock-runtime", respond)
    return Agent(model=model, tools=tools, callback_handler=None)


written: list[dict[str, str]] = []
searched: list[dict[str, str]] = []


@tool
def write_file(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: where
        content: what
    """
    written.append({"path": path, "content": content})
    return "ok"


@tool
def web_search(query: str) -> str:
    """Search the web.

    Args:
        query: the query
    """
    searched.append({"query": query})
    return "results"


@pytest.fixture(autouse=True)
def _reset() -> None:
    written.clear()
    searched.clear()


WRITE = ('{"path": "a.py", ', '"content": "x = 1"}')


# --- the defect: the failing cell stack_outcome_matches ----------------------------------------


def test_stream_cut_before_message_stop_reads_as_a_finished_end_turn() -> None:
    # bedrock-converse/stream_cut_after_arguments (and stream_cut_mid_call, generated cut bodies): the
    # body stops after the call's complete input, before contentBlockStop and messageStop. The agent
    # returns normally with stop_reason end_turn (process_stream's default), the call is dropped from
    # the message without a word, and nothing raises: the caller reads a cut turn as a finished one.
    agent = agent_for(start() + tool_use(0, "tooluse_1", "write_file", *WRITE), tools=[write_file])
    result = agent("write a.py")
    assert result.stop_reason == "end_turn"
    assert written == []
    assert agent.messages[-1]["role"] == "assistant"
    assert agent.messages[-1]["content"] == []
    # The same with text: a reply cut mid-block is dropped, and the turn still reads as finished (empty).
    agent = agent_for(start() + text(0, "The answer is 4"), tools=[])
    result = agent("what is 2+2?")
    assert result.stop_reason == "end_turn"
    assert agent.messages[-1]["content"] == []


# --- outside target (not a defect): a Bedrock server tool --------------------------------------


def test_a_server_tool_use_block_is_handed_to_the_tool_executor() -> None:
    # bedrock-converse/server_tool_then_client_call: a toolUse block typed server_tool_use (the service
    # ran it; its toolResult follows) is read like a client call, and a local tool of that name runs.
    # Not charged to strands: BedrockModel builds toolConfig from ToolSpecs only, so it cannot ask for a
    # system tool (strands-agents/harness-sdk#1154, open feature request); such a block never reaches it.
    body = (
        start()
        + tool_use(0, "tooluse_srv", "web_search", '{"query": "weather Paris"}', type="server_tool_use")
        + block_stop(0)
        + frame(
            "contentBlockStart",
            {
                "contentBlockIndex": 1,
                "start": {"toolResult": {"toolUseId": "tooluse_srv", "type": "web_search_result", "status": "success"}},
            },
        )
        + frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "18 C"}]}})
        + block_stop(1)
        + tool_use(2, "tooluse_1", "write_file", *WRITE)
        + block_stop(2)
        + stop("tool_use")
    )
    agent = agent_for(body, DONE, tools=[write_file, web_search])
    agent("weather?")
    assert searched == [{"query": "weather Paris"}]
    assert written == [{"path": "a.py", "content": "x = 1"}]


# --- correct behaviours the suite passes ---------------------------------------------------------


def test_a_complete_call_runs_with_its_parsed_input() -> None:
    body = start() + tool_use(0, "tooluse_1", "write_file", *WRITE) + block_stop(0) + stop("tool_use")
    result = agent_for(body, DONE, tools=[write_file])("write a.py")
    assert written == [{"path": "a.py", "content": "x = 1"}]
    assert str(result).strip() == "Done."


def test_max_tokens_raises_and_runs_nothing() -> None:
    cut = '{"path": "a.py", "cont'
    body = start() + tool_use(0, "tooluse_1", "write_file", cut) + block_stop(0) + stop("max_tokens")
    with pytest.raises(MaxTokensReachedException):
        agent_for(body, tools=[write_file])("write a.py")
    assert written == []


def test_an_in_band_error_raises_and_runs_nothing() -> None:
    body = start() + tool_use(0, "tooluse_1", "write_file", *WRITE) + error_frame("modelStreamErrorException", "boom")
    with pytest.raises(Exception, match="modelStreamErrorException"):
        agent_for(body, tools=[write_file])("write a.py")
    assert written == []
