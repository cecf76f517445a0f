"""Reference implementation of the streaming tool-call design (seeds 000-004), corrected.

Import the contract types and handlers from here::

    from reference_impl import ApiToolCallStreamingResponseHandler, ChunkResponse, ToolCallDelta
"""

import logging

from reference_impl.adapter import ToolInvocationAdapter
from reference_impl.arguments import ArgumentsError, parse_arguments
from reference_impl.factory import (
    STREAM_PARSER_ENV_VAR,
    UnknownToolCallFormatError,
    create_streaming_handler,
    resolve_tool_call_format,
)
from reference_impl.handlers import (
    ApiToolCallStreamingResponseHandler,
    HandlerFinalizedError,
    ParsingStreamingResponseHandler,
    PassThroughStreamingResponseHandler,
    StreamingResponseHandler,
)
from reference_impl.tracker import (
    AliasConflictError,
    CallCompletedError,
    CallConflictError,
    DuplicateCallError,
    InvalidKeyError,
    ToolCallTracker,
    TrackedCall,
    TrackerError,
    UnknownCallError,
)
from reference_impl.types import (
    ChunkResponse,
    SegmentEvent,
    SegmentEventType,
    SegmentType,
    StreamError,
    TokenUsage,
    ToolCallDelta,
    ToolInvocation,
)

__version__ = "0.1.0"

# A library never prints on its own: applications decide where our warnings go.
logging.getLogger("reference_impl").addHandler(logging.NullHandler())

__all__ = [
    "STREAM_PARSER_ENV_VAR",
    "AliasConflictError",
    "ApiToolCallStreamingResponseHandler",
    "ArgumentsError",
    "CallCompletedError",
    "CallConflictError",
    "ChunkResponse",
    "DuplicateCallError",
    "HandlerFinalizedError",
    "InvalidKeyError",
    "ParsingStreamingResponseHandler",
    "PassThroughStreamingResponseHandler",
    "SegmentEvent",
    "SegmentEventType",
    "SegmentType",
    "StreamError",
    "StreamingResponseHandler",
    "TokenUsage",
    "ToolCallDelta",
    "ToolCallTracker",
    "ToolInvocation",
    "ToolInvocationAdapter",
    "TrackedCall",
    "TrackerError",
    "UnknownCallError",
    "UnknownToolCallFormatError",
    "__version__",
    "create_streaming_handler",
    "parse_arguments",
    "resolve_tool_call_format",
]
