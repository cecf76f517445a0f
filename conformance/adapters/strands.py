"""strands-agents: an ``Agent`` on its default model provider, ``BedrockModel`` (Bedrock ConverseStream).

Stack-level, through the library's whole production path: the recording's body is served to the
boto3 ``bedrock-runtime`` client that ``BedrockModel`` builds, offline (a ``before-send`` handler
answers ``ConverseStream`` with an ``AWSResponse`` whose raw stream yields exactly the given reads,
so botocore's own event-stream parser decodes the frames); ``BedrockModel.stream`` turns them into
strands ``StreamEvent`` s; the event loop's ``process_stream`` builds the assistant message and the
stop reason; and ``event_loop_cycle`` decides what runs: it raises ``MaxTokensReachedException`` on
``max_tokens`` (and replaces every ``toolUse`` with a text), validates the tool uses and executes
them on ``tool_use`` (``end_turn`` with tool uses is promoted to ``tool_use``), and runs none
otherwise. A call counts as run when the agent's ``BeforeToolCallEvent`` hook receives it (the
executor's last step before the tool itself); the hook cancels it, so no tool code exists or runs,
and a ``BeforeModelCallEvent`` hook cancels the model call the loop makes after the tool results
(the conversation ends there). A fresh ``Agent`` per body, so no state is kept between calls; the
boto3 client is built once (``make_stack``).

What it reads: the first assistant message the agent appended (``toolUse`` blocks: ``toolUseId``,
``name``, ``input``; ``text``; ``reasoningContent``), the ``input`` each executed call received,
and the stop reason the loop saw (``AfterModelCallEvent.stop_response``). What it cannot map:
strands keeps no raw argument text (``input`` is the parsed object), so calls carry none. The
agent is built with ``retry_strategy=None``: the default retries a throttling error (in-band
``throttlingException``) after sleeping, which would ask the one recorded body again; without
it the error reaches the caller, which is strands' own documented behaviour for that setting.
No bundled Bedrock Converse body ends normally with argument text that does not parse; strands would
run such a call with ``{}`` (``handle_content_block_stop``; strands-agents/harness-sdk#2051, open).

Only ``bedrock-converse``: ``BedrockModel`` calls ``converse_stream`` (``converse`` when
``streaming=False``), never ``invoke_model_with_response_stream`` (``bedrock-invoke``). The OpenAI
provider (``strands.models.openai``) is not driven: its ``openai`` extra requires ``openai<3``,
and the matrix pins openai 3.x.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.adapters.base import AdapterInfo
from conformance.stack import StackCapabilities

__all__ = ["ADAPTER", "StrandsStack", "make_stack"]

# Fake credentials and a region: every request is answered in-process, none is signed for AWS.
_REGION = "us-east-1"
_MODEL_ID = "model-under-test"
_CONTENT_TYPE = "application/vnd.amazon.eventstream"

ADAPTER = AdapterInfo(
    name="strands-agents",
    distributions=("strands-agents", "botocore"),
    imports=("strands", "botocore"),
    kind="stack",
    factory="conformance.adapters.strands:make_stack",
    capabilities=StackCapabilities(apis=("bedrock-converse",), text=True, reasoning=True),
    summary="Agent (event_loop_cycle: process_stream, then the tool executor) over BedrockModel's ConverseStream, "
    "its boto3 client served the bundled Bedrock Converse recordings' bytes offline; a call counts when the "
    "agent's BeforeToolCallEvent receives it",
    # The agent is the layer that decides, so a stream cut before messageStop (read as end_turn) is charged
    # to it: no policy. The one exclusion is an input strands cannot ask for.
    recordings_excluded={
        "bedrock-converse/server_tool_then_client_call.yaml": "a Bedrock system tool's toolUse block (type "
        "server_tool_use, run by the service): BedrockModel builds toolConfig.tools from ToolSpecs only "
        "(strands/models/bedrock.py format_request), so it cannot request a system tool such as Nova web "
        "grounding (strands-agents/harness-sdk#1154, an open feature request) and the block never reaches it; "
        "served anyway, it is handed to the tool executor like a client call (reproduced: "
        "tests/test_repro_strands.py::test_a_server_tool_use_block_is_handed_to_the_tool_executor)",
    },
)


class _RawPieces:
    """What botocore's ``EventStream`` reads a streamed body from (``AWSResponse.raw``): ``stream()`` yields
    exactly the pieces, empty ones included; ``close()``."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = list(pieces)

    def stream(self, **_options: Any) -> Iterator[bytes]:
        yield from self._pieces

    def close(self) -> None:
        self._pieces = []


class StrandsStack:
    """The stack: one ``BedrockModel`` whose client answers ``ConverseStream`` with the pieces of the current
    call, and a fresh ``Agent`` per call."""

    capabilities = ADAPTER.capabilities

    def __init__(self) -> None:
        import boto3  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from strands.models import BedrockModel

        self._pieces: list[bytes] = []
        session = boto3.Session(
            aws_access_key_id="offline", aws_secret_access_key="offline-not-a-secret", region_name=_REGION
        )
        self._model: Any = BedrockModel(boto_session=session, model_id=_MODEL_ID)
        # Every operation of the client passes here: ConverseStream gets the body, anything else (none is
        # expected) fails, so no request ever leaves the process.
        self._model.client.meta.events.register("before-send.bedrock-runtime", self._respond)

    def _respond(self, request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped, import-not-found, unused-ignore]

        operation = kwargs.get("event_name", "")
        if not str(operation).endswith(".ConverseStream"):
            raise RuntimeError(f"offline: no answer for {operation}")
        return AWSResponse(request.url, 200, {"content-type": _CONTENT_TYPE}, _RawPieces(self._pieces))

    def __call__(self, api: str, pieces: Sequence[bytes], options: Mapping[str, Any]) -> dict[str, Any]:
        """Run one agent turn on the body in ``pieces`` and report what the agent ran."""
        del api, options  # one wire API (see capabilities), no server profile
        from strands import Agent
        from strands.hooks import AfterModelCallEvent, BeforeModelCallEvent, BeforeToolCallEvent

        self._pieces = list(pieces)
        executed: list[dict[str, Any]] = []
        stop_reasons: list[str] = []
        model_calls = 0

        def before_model(event: BeforeModelCallEvent) -> None:
            nonlocal model_calls
            model_calls += 1
            if model_calls > 1:  # the call after the tool results: the recording holds one turn
                event.cancel = "offline: one recorded turn"

        def after_model(event: AfterModelCallEvent) -> None:
            if event.stop_response is not None and not stop_reasons:
                stop_reasons.append(str(event.stop_response.stop_reason))

        def before_tool(event: BeforeToolCallEvent) -> None:
            executed.append(dict(event.tool_use))
            event.cancel_tool = "offline: recorded, not run"

        agent: Any = Agent(model=self._model, callback_handler=None, retry_strategy=None)
        # Event types given explicitly: the annotations are strings here (postponed evaluation).
        agent.hooks.add_callback(BeforeModelCallEvent, before_model)
        agent.hooks.add_callback(AfterModelCallEvent, after_model)
        agent.hooks.add_callback(BeforeToolCallEvent, before_tool)
        agent("replay")  # an abnormal end raises out of here (MaxTokensReachedException, EventStreamError...)
        # messages[0] is the prompt, messages[1] the turn the body held (later ones: tool results, the cancel).
        turn = agent.messages[1] if len(agent.messages) > 1 else {"content": []}
        return {**_read_turn(turn, executed), "finish_reason": stop_reasons[0] if stop_reasons else None}


def _read_turn(turn: Mapping[str, Any], executed: list[dict[str, Any]]) -> dict[str, Any]:
    """The calls, text and reasoning of the assistant message ``turn``; a call has ``arguments`` (the input
    the executor handed its tool) when it is in ``executed``, else an ``error``."""
    calls: list[dict[str, Any]] = []
    text = reasoning = ""
    for block in turn.get("content") or []:
        if "toolUse" in block:
            use = block["toolUse"]
            key = (use.get("toolUseId"), use.get("name"))
            ran = next((e for e in executed if (e.get("toolUseId"), e.get("name")) == key), None)
            call: dict[str, Any] = {"call_id": key[0], "name": key[1]}
            if ran is not None:
                executed.remove(ran)
                call["arguments"] = ran.get("input")
            else:
                call["error"] = "the agent did not execute this tool use"
            calls.append(call)
        elif "text" in block:
            text += block["text"]
        elif "reasoningContent" in block:
            reasoning += block["reasoningContent"].get("reasoningText", {}).get("text", "")
    return {"calls": calls, "text": text, "reasoning": reasoning}


def make_stack() -> StrandsStack:
    """The stack the suite runs (``run --stack conformance.adapters.strands:make_stack``): the boto3 client is
    built once, here."""
    return StrandsStack()
