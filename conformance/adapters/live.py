"""Feeding an async library one wire chunk at a time, through the real openai SDK, offline.

Libraries whose production path is "an OpenAI-compatible HTTP response -> the openai SDK -> the
library's own model class" (pydantic-ai's ``OpenAIChatModel``, openai-agents'
``OpenAIChatCompletionsModel``) are driven here exactly that way: an ``httpx2.MockTransport``
answers the SDK's request with a streaming body, and ``LiveStream.feed`` appends one SSE event
(``conformance.adapters.openai_wire``) to that body, then runs the event loop until the library
asks for more bytes. What the library yielded meanwhile is what it yields for that chunk on a real
network; events it holds back until later input (or the end of the stream) come out later, as
they do in production. ``LiveStream.close`` ends the body and runs the library to completion.

One ``LiveStream`` is one HTTP response; it owns a private event loop and closes it at the end.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from conformance.adapters.openai_wire import StreamEnd, chunk_dict, error_event, role_chunk, sse_event, terminal_chunk
from reference_impl.types import ChunkResponse

__all__ = ["BASE_URL", "LiveStream", "openai_async_client"]

# Not api.openai.com: libraries that treat the official endpoint specially (openai-agents requires a
# finish reason only there) see what every OpenAI-compatible server gets.
BASE_URL = "http://openai-compatible.invalid/v1"


class _Body:
    """A response body that yields the bytes ``feed`` appends and ends when ``close`` is called."""

    def __init__(self) -> None:
        self.pending: deque[bytes] = deque()
        self.closed = False
        self.hungry = asyncio.Event()
        self._wakeup: asyncio.Future[None] | None = None

    def push(self, data: bytes) -> None:
        self.pending.append(data)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        self.hungry.clear()
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            while not self.pending:
                if self.closed:
                    return
                self._wakeup = asyncio.get_running_loop().create_future()
                self.hungry.set()
                await self._wakeup
            yield self.pending.popleft()


def openai_async_client(body: Any) -> Any:
    """An ``AsyncOpenAI`` whose every request is answered by ``body`` as a 200 SSE stream (no retries)."""
    import httpx2
    from openai import AsyncOpenAI

    def respond(_request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(respond))
    return AsyncOpenAI(api_key="sk-conformance", base_url=BASE_URL, http_client=http_client, max_retries=0)


class LiveStream:
    """One streamed response fed chunk by chunk into ``consume(client)``, a coroutine run on a private loop.

    ``consume`` receives the ``AsyncOpenAI`` client and calls ``emit(item)`` for whatever the library
    yields; ``feed`` and ``close`` return the items emitted while the library processed that input.
    An exception the library raises comes out of the ``feed`` or ``close`` during which it was raised.
    """

    def __init__(self, consume: Callable[[Any, Callable[[Any], None]], Coroutine[Any, Any, None]]) -> None:
        self._loop = asyncio.new_event_loop()
        self._body = _Body()
        self._emitted: list[Any] = []
        self._end = StreamEnd()
        self._consume = consume
        self._task: asyncio.Task[None] | None = None

    def _start(self) -> None:
        client = openai_async_client(self._body)
        self._body.push(sse_event(role_chunk()))
        self._task = self._loop.create_task(self._consume(client, self._emitted.append))

    def _run_until_hungry(self) -> list[Any]:
        assert self._task is not None
        task = self._task

        async def settle() -> None:
            hungry = asyncio.ensure_future(self._body.hungry.wait())
            await asyncio.wait({task, hungry}, return_when=asyncio.FIRST_COMPLETED)
            hungry.cancel()

        if not task.done():
            self._loop.run_until_complete(settle())
        emitted, self._emitted[:] = list(self._emitted), []
        if task.done() and task.exception() is not None:
            self._shutdown()
            raise task.exception()  # type: ignore[misc]
        return emitted

    def feed(self, chunk: ChunkResponse) -> list[Any]:
        """Send one chunk as one SSE event (and an in-band error or cut when it carries one)."""
        if self._task is None:
            self._start()
        if self._end.stopped:
            return []
        self._end.note(chunk)
        payload = chunk_dict(chunk)
        if payload is not None:
            self._body.push(sse_event(payload))
        if self._end.error_kind == "provider_error":
            self._body.push(sse_event(error_event(self._end.error_message)))
        if self._end.stopped:
            self._body.close()
        return self._run_until_hungry()

    def close(self) -> list[Any]:
        """End the body (with a terminal chunk and ``[DONE]`` when the stream ended normally) and finish."""
        if self._loop.is_closed():
            return []  # the library already raised out of feed()
        if self._task is None:
            self._start()
        if not self._end.stopped and not self._body.closed:
            if not self._end.finished:
                self._body.push(sse_event(terminal_chunk(self._end.saw_tool_calls)))
            self._body.push(sse_event("[DONE]"))
        self._body.close()
        assert self._task is not None
        try:
            self._loop.run_until_complete(self._task)
        finally:
            emitted, self._emitted[:] = list(self._emitted), []
            self._shutdown()
        return emitted

    def _shutdown(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
