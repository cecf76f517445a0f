"""Standalone reproduction of the strands-agents defect of the toolcall-conformance matrix.

Needs only strands-agents (measured: strands-agents 1.62.0, boto3/botocore 1.44.8). No network, no
AWS account (fake credentials; every request is answered in-process):

    python repro_strands.py                          # every finding
    python repro_strands.py stack_outcome_matches    # the findings of one matrix cell

Each finding builds a Bedrock ConverseStream body by hand (AWS event-stream frames), serves it to the
boto3 client that ``strands.models.BedrockModel`` built (a ``before-send`` handler returns a
``botocore.awsrequest.AWSResponse``, so botocore decodes the frames itself), and runs a real
``strands.Agent`` with a real ``@tool``. It prints what the stream says and what the agent did; the
script exits 1 while any finding shown is still there, 0 once all are fixed.
"""

import binascii
import json
import struct
import sys

import boto3
from botocore.awsrequest import AWSResponse
from strands import Agent, tool
from strands.models import BedrockModel


def frame(event_type, payload):
    """One event-stream message with the string headers Bedrock sends."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


def start():
    return frame("messageStart", {"role": "assistant"})


def tool_use(index, tool_use_id, name, *fragments):
    out = frame(
        "contentBlockStart",
        {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}},
    )
    for fragment in fragments:
        out += frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}})
    return out


def text(index, value):
    return frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": value}})


class Raw:
    """What botocore's EventStream reads from (``AWSResponse.raw``)."""

    def __init__(self, body):
        self.body = body

    def stream(self, **_):
        yield self.body

    def close(self):
        pass


written = []


@tool
def write_file(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: where
        content: what
    """
    written.append((path, content))
    return "ok"


def run(body):
    """``(stop_reason, assistant message content, tool runs)`` of one agent call on ``body``, or what it raised."""
    written.clear()
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1")
    model = BedrockModel(boto_session=session, model_id="model-under-test")
    model.client.meta.events.register(
        "before-send.bedrock-runtime",
        lambda request, **_: AWSResponse(
            request.url, 200, {"content-type": "application/vnd.amazon.eventstream"}, Raw(body)
        ),
    )
    agent = Agent(model=model, tools=[write_file], callback_handler=None)
    try:
        result = agent("go")
    except Exception as error:  # noqa: BLE001 - what the agent raises is part of the finding
        return f"raised {type(error).__name__}: {error}"
    return result.stop_reason, agent.messages[-1]["content"], list(written)


# Each finding: (matrix cell, what happens, the body, what the stream says, whether the agent's answer
# is still the defect).
FINDINGS = [
    (
        "stack_outcome_matches",
        "a stream cut after a tool call's complete input, before contentBlockStop and messageStop (the connection "
        "closed): the agent returns stop_reason end_turn, the call is dropped without a word, nothing raises",
        start() + tool_use(0, "tooluse_1", "write_file", '{"path": "a.py", ', '"content": "x = 1"}'),
        "the turn ended without messageStop: incomplete; the call must not run and the caller must be told",
        lambda got: not isinstance(got, str) and got[0] == "end_turn",
    ),
    (
        "stack_outcome_matches",
        "a stream cut in the middle of a text block: the agent returns end_turn with an empty answer, nothing raises",
        start() + text(0, "The answer is 4"),
        "the turn ended without messageStop: incomplete; the caller must be told",
        lambda got: not isinstance(got, str) and got[0] == "end_turn",
    ),
]


def main(argv):
    known = {cell for cell, *_ in FINDINGS}
    cells = set(argv) or known
    if cells - known:
        print(f"unknown cell(s) {sorted(cells - known)}; known: {sorted(known)}", file=sys.stderr)
        return 2
    defects = 0
    for cell, what, body, stream_says, still_there in FINDINGS:
        if cell not in cells:
            continue
        got = run(body)
        present = still_there(got)
        defects += present
        print(f"[{cell}] {what}\n  the stream says: {stream_says}\n  strands returned: {got}")
        print("  -> DEFECT still there\n" if present else "  -> fixed\n")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
