"""Each adapter sees what its library sees in production, and returns what the library returned.

The langchain-core and litellm adapters build the library's input themselves; here the same chunks
go through the library's production path (``ChatOpenAI.stream`` and ``litellm.completion(stream=True)``
over the SSE body an OpenAI-compatible server would send) and must give the same result. The
pydantic-ai and openai-agents adapters *are* the production path; here they must return each
library event from the feed of the chunk that caused it (what the suite's timing checks rely on).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from conformance.adapters.openai_wire import chunk_dict, role_chunk, sse_event, stream_end, terminal_chunk
from reference_impl.types import ChunkResponse, ToolCallDelta

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed")

STREAMS = [
    [
        ChunkResponse(content="Let me check "),
        ChunkResponse(tool_calls=[ToolCallDelta(0, "a", "f", '{"x":'), ToolCallDelta(1, "b", "g", '{"y":')]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, "1}")]),
        ChunkResponse(content="both.", tool_calls=[ToolCallDelta(1, "", "", "2}")]),
    ],
    [
        ChunkResponse(tool_calls=[ToolCallDelta(0, None, "read_", None)]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, "c1", "file", '{"path": "a')]),
        ChunkResponse(tool_calls=[ToolCallDelta(0, "c1", "file", '.py"}')]),
        ChunkResponse(tool_calls=[ToolCallDelta(1, "c2", "ui_show", '{"surface": ')]),
    ],
]


def _body(chunks: list[ChunkResponse]) -> bytes:
    payloads = [role_chunk(), *(p for p in map(chunk_dict, chunks) if p is not None)]
    payloads.append(terminal_chunk(stream_end(chunks).saw_tool_calls))
    return b"".join(sse_event(p) for p in payloads) + sse_event("[DONE]")


def _transport(body: bytes) -> Any:
    return httpx2.MockTransport(
        lambda request: httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )


@pytest.mark.parametrize("chunks", STREAMS)
def test_langchain_adapter_equals_chat_openai_stream(chunks: list[ChunkResponse]) -> None:
    pytest.importorskip("langchain_openai", reason="langchain-openai is not installed (pip install '.[adapters]')")
    from langchain_openai import ChatOpenAI

    from conformance.adapters.langchain import make_accumulator

    model = ChatOpenAI(
        model="m",
        api_key="x",
        base_url="http://test/v1",
        streaming=True,
        max_retries=0,
        http_client=httpx2.Client(transport=_transport(_body(chunks))),
    )
    pieces = list(model.stream("hi"))
    real = sum(pieces[1:], pieces[0])
    accumulator = make_accumulator()
    for chunk in chunks:
        accumulator.add(chunk)
    adapted = accumulator.result()
    assert [(c["id"], c["name"], c["args"]) for c in real.tool_calls] == [
        (i, n, a) for i, n, _, a in adapted["tool_calls"] if isinstance(a, dict)
    ]
    assert [(c["id"], c["args"]) for c in real.invalid_tool_calls] == [
        (i, raw) for i, _, raw, a in adapted["tool_calls"] if not isinstance(a, dict)
    ]
    assert real.content == adapted["text"]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")  # litellm's own, on import
@pytest.mark.parametrize("chunks", STREAMS)
def test_litellm_adapter_equals_completion_stream(chunks: list[ChunkResponse]) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = pytest.importorskip("litellm", reason="litellm is not installed (pip install '.[adapters]')")
    import openai

    from conformance.adapters.litellm import make_accumulator

    client = openai.OpenAI(
        api_key="x",
        base_url="http://test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=_transport(_body(chunks))),
    )
    stream = litellm.completion(
        model="openai/m",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        client=client,
        api_key="x",
        api_base="http://test/v1",
    )
    real = litellm.stream_chunk_builder(list(stream)).choices[0].message
    accumulator = make_accumulator()
    for chunk in chunks:
        accumulator.add(chunk)
    adapted = accumulator.result()
    assert [(c.id, c.function.name, c.function.arguments) for c in real.tool_calls or []] == [
        (i, n, raw) for i, n, raw, _ in adapted["tool_calls"]
    ]
    assert (real.content or "") == adapted["text"]


@pytest.mark.parametrize(("module", "library"), [("pydantic_ai", "pydantic_ai"), ("openai_agents", "agents")])
def test_live_adapters_return_each_event_from_the_feed_that_caused_it(module: str, library: str) -> None:
    pytest.importorskip(library, reason=f"{library} is not installed (pip install '.[adapters]')")
    import importlib

    handler = importlib.import_module(f"conformance.adapters.{module}").make_handler()
    first = handler.feed(ChunkResponse(content="Hello"))
    assert [e.payload.get("delta") for e in first if e.event_type == "SEGMENT_CONTENT"] == ["Hello"]
    second = handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, "c1", "f", '{"x": ')]))
    assert [e.payload.get("delta") for e in second if e.event_type == "SEGMENT_CONTENT"] == ['{"x": ']
    third = handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, None, None, "1}")]))
    assert [e.payload.get("delta") for e in third if e.event_type == "SEGMENT_CONTENT"] == ["1}"]
    last = handler.finalize()
    ends = [e for e in handler.get_all_events() if e.event_type == "SEGMENT_END" and e.segment_type == "tool_call"]
    assert [e.payload["metadata"]["arguments"] for e in ends] == [{"x": 1}] and ends[0] in last
    assert handler.finalize() == []
    with pytest.raises(RuntimeError):
        handler.feed(ChunkResponse(content="late"))
