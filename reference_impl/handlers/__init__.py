"""Streaming response handlers: ChunkResponse in, SegmentEvents and ToolInvocations out."""

from reference_impl.handlers.api_tool_call import ApiToolCallStreamingResponseHandler
from reference_impl.handlers.base import HandlerFinalizedError, SegmentEmitterHandler, StreamingResponseHandler
from reference_impl.handlers.parsing import ParsingStreamingResponseHandler
from reference_impl.handlers.pass_through import PassThroughStreamingResponseHandler

__all__ = [
    "ApiToolCallStreamingResponseHandler",
    "HandlerFinalizedError",
    "ParsingStreamingResponseHandler",
    "PassThroughStreamingResponseHandler",
    "SegmentEmitterHandler",
    "StreamingResponseHandler",
]
