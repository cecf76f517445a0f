"""conformance.wire across Ollama, Bedrock and Cohere v2: detection against the other four APIs, httpx2 aliasing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.turns.dialects import OPENAI_COMPAT_DIALECTS
from conformance.turns.model import Call, Reasoning, ServerCall, Text, Turn
from conformance.turns.render import render
from conformance.wire import UnknownFormatError, detect_api
from conformance.wire.apis import LIBRARY_APIS
from conformance.wire.detect import payload_api
from conformance.wire.framing import frame_body
from conformance.wire.libraries import iter_library_payload_events
from reference_impl.converters import converter_for, iter_chunks

pytest.importorskip("ollama")
pytest.importorskip("cohere")
pytest.importorskip("boto3")

CALLS = (Text(("Hi ",)), Call("f", ('{"a": ', "1}"), call_id="call_1"), Call("g", (), call_id="call_2"))
SERVER = (ServerCall("web_search", ('{"query": "x"}',), call_id="srv_1"),)
REASONING = (Reasoning(("think",), signature="c2ln"),)


def _existing_payloads() -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for ending in ("stop", "length", "error"):
        for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
            items = (*REASONING, *CALLS, *(SERVER if api in ("anthropic", "openai-responses") else ()))
            out[f"{api}/{ending}"] = render(Turn(items, ending=ending), api)  # type: ignore[arg-type]
        for dialect in OPENAI_COMPAT_DIALECTS:
            # object_arguments needs each call whole first (see its docstring).
            chain = ("whole_call_per_chunk", dialect) if dialect == "object_arguments" else (dialect,)
            out[f"openai-chat+{dialect}/{ending}"] = render(Turn(CALLS, ending=ending), "openai-chat", chain)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(("name", "payloads"), sorted(_existing_payloads().items()))
def test_no_payload_of_the_sdk_apis_is_claimed_by_a_library_api(name: str, payloads: list[dict[str, object]]) -> None:
    api = name.split("/", maxsplit=1)[0].split("+", maxsplit=1)[0]
    # Each payload is its own API's or says nothing on its own (an error object); never a library API's.
    assert {payload_api(payload) for payload in payloads} <= {api, None}, name
    assert api in {payload_api(payload) for payload in payloads}, name


@pytest.mark.parametrize("api", LIBRARY_APIS)
@pytest.mark.parametrize("ending", ["stop", "length", "cut"])
def test_library_api_payloads_are_detected_as_their_own(api: str, ending: str) -> None:
    items = (*REASONING, *CALLS) if api != "bedrock-converse" else (*REASONING, *CALLS, *SERVER)
    payloads = render(Turn(items, ending=ending), api)  # type: ignore[arg-type]
    assert {payload_api(payload) for payload in payloads} == {api}
    assert detect_api(payloads) == api


def test_unknown_api_names_are_refused() -> None:
    with pytest.raises(ValueError, match="ollama, bedrock-converse, bedrock-invoke, cohere-v2"):
        render(Turn(CALLS), "bedrock")
    with pytest.raises(UnknownFormatError, match="ollama, bedrock-converse, bedrock-invoke, cohere-v2"):
        frame_body("bedrock", [])


def test_replay_works_when_httpx_is_aliased_to_httpx2() -> None:
    # httpx2.alias_httpx() makes "import httpx" resolve to httpx2 process-wide; it must run before
    # anything imports httpx, so it gets a fresh interpreter.
    script = textwrap.dedent(
        """
        import sys
        import httpx2
        httpx2.alias_httpx()
        from conformance.turns.model import Call, Turn
        from conformance.wire.libraries import iter_library_events
        from conformance.turns.render import render_body
        from reference_impl.converters import converter_for, iter_chunks
        turn = Turn((Call("f", ('{"x": 1}',), call_id="c1"),))
        for api in ("ollama", "cohere-v2"):
            body = render_body(turn, api)
            chunks = list(iter_chunks(converter_for(api), iter_library_events(api, [body[:5], body[5:]])))
            assert chunks[-1].error is None, chunks[-1]
            assert [d.name for c in chunks for d in c.tool_calls or () if d.name] == ["f"]
        assert sys.modules["ollama._client"].httpx is httpx2
        assert sys.modules["cohere.core.http_client"].httpx is httpx2
        print("aliased replay ok")
        """
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "aliased replay ok" in result.stdout


def _with_extra_keys(value: Any, key: str, extra: Any, *, inside_arguments: bool = False) -> Any:
    """``value`` with ``key: extra`` added to every JSON object at every level, tool arguments excepted."""
    if isinstance(value, dict):
        copied = {
            name: _with_extra_keys(member, key, extra, inside_arguments=inside_arguments or name == "arguments")
            for name, member in value.items()
        }
        if not inside_arguments and key not in copied:
            copied[key] = extra
        return copied
    if isinstance(value, list):
        return [_with_extra_keys(member, key, extra, inside_arguments=inside_arguments) for member in value]
    return value


NOISE_TURN = Turn((*REASONING, *CALLS, Text(("bye",))))


@pytest.mark.parametrize("api", LIBRARY_APIS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=3, max_size=12),
    extra=st.none()
    | st.integers()
    | st.text(max_size=6)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
def test_extra_keys_at_every_level_never_crash_the_payload_path(api: str, key: str, extra: Any) -> None:
    payloads = render(NOISE_TURN, api)
    noisy = [_with_extra_keys(payload, key, extra) for payload in payloads]
    if api.startswith("bedrock"):
        # A Bedrock event is one {eventType: payload} pair: the noise goes inside it.
        noisy = [{kind: body for kind, body in payload.items() if kind != key} for payload in noisy]
    converter = converter_for(api)
    chunks = list(iter_chunks(converter, iter_library_payload_events(api, noisy)))
    reference = list(iter_chunks(converter_for(api), iter_library_payload_events(api, payloads)))
    heads = [(d.index, d.call_id, d.name) for c in chunks for d in c.tool_calls or () if d.name]
    assert heads == [(d.index, d.call_id, d.name) for c in reference for d in c.tool_calls or () if d.name]
    assert "".join(d.arguments_delta or "" for c in chunks for d in c.tool_calls or ()) == "".join(
        d.arguments_delta or "" for c in reference for d in c.tool_calls or ()
    )
    assert "".join(c.content for c in chunks) == "".join(c.content for c in reference)
    assert (chunks[-1].finish_reason, chunks[-1].error) == (reference[-1].finish_reason, reference[-1].error)
