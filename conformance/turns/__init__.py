"""Logical turns (what the model said) and their rendering as each wire API's stream.

Ground floor, beside ``conformance.wire``: the corpus writer, the strategies and the round-trip
scripts build turns; ``render_sse`` turns one into the body a provider would send.
"""

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn, fake_signature, split_evenly
from conformance.turns.render import RENDERED_APIS, render, render_sse
from conformance.turns.text_formats import TEXT_FORMATS, render_call

__all__ = [
    "OPENAI_COMPAT_DIALECTS",
    "RENDERED_APIS",
    "TEXT_FORMATS",
    "Call",
    "Reasoning",
    "ServerCall",
    "Text",
    "Turn",
    "fake_signature",
    "render",
    "render_call",
    "render_sse",
    "split_evenly",
]
