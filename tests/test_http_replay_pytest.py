"""The respx engine and the ``toolcall_replay`` fixture, in pytest subprocesses that alias ``httpx`` first.

This test process cannot alias (respx's plugin imported the real httpx at startup), which is
exactly the situation ``-p conformance.pytest_plugin.httpx_alias`` exists for: each scenario runs
in a fresh ``python -m pytest -p conformance.pytest_plugin.httpx_alias`` (the way users run it).
The inner tests use only default-constructed SDK clients (``openai.OpenAI()``...), as application
code does, and compare what comes out with each recording's own expectation file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.http_replay import cassette_cases

ALIAS = ("-p", "conformance.pytest_plugin.httpx_alias")
ROOT = Path(__file__).resolve().parents[1]
REAL_RECORDINGS = ROOT.parent / "shared" / "real-recordings"


def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``folder`` (its own rootdir), with no cache and no API keys."""
    environment = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    environment.pop("PYTEST_ADDOPTS", None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def outcomes(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """``{node id: PASSED / FAILED / ERROR / SKIPPED}`` from the ``-rA`` summary."""
    found = {}
    for line in result.stdout.splitlines():
        match = re.match(r"(PASSED|FAILED|ERROR|SKIPPED) (\S+)", line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def _section(stdout: str, name: str) -> str:
    """The inner test's failure report, for the outer assertion message."""
    start = stdout.find(f"_ {name} _")
    return stdout[start : start + 4000] if start >= 0 else stdout[-2000:]


# -- the engine, scenario by scenario (one subprocess for all of them) --------------------------

ENGINE_TESTS = '''
import asyncio
import json
import os
import socket

import httpx
import httpx2
import pytest

from conformance.http_replay import (
    NetworkBlockedError, NotRequestedError, ReplayExhaustedError, ReplayFuzzError, ReplayOptionError,
    UnroutedRequestError, cassette_cases, fuzz_cassette, replay_cassette,
)
from conformance.wire import load_body
from conformance.wire.replay import compare_outcomes, outcome_from_events
from conformance.wire.apis import LIBRARY_APIS
from conformance.wire.libraries import library_stream
from conformance.wire.sdk import stream_request
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.converters import converter_for, iter_chunks

REAL = {real!r}


def default_client(api):
    # What application code does: no transport, no key, no base URL given.
    if api.startswith("openai"):
        import openai
        return openai.OpenAI(max_retries=0)
    if api == "anthropic":
        import anthropic
        return anthropic.Anthropic(max_retries=0)
    if api == "ollama":
        import ollama
        return ollama.Client()
    if api == "cohere-v2":
        import cohere
        return cohere.ClientV2()
    if api.startswith("bedrock"):
        import boto3
        return boto3.client("bedrock-runtime", region_name="us-east-1")
    from google import genai
    return genai.Client()


def stream_of(client, api):
    # The client libraries' streaming calls (Ollama, Bedrock, Cohere) beside the SDKs'.
    return library_stream(client, api) if api in LIBRARY_APIS else stream_request(client, api)


def outcome_through(api, events, options):
    converter = converter_for(api, **options)
    chunks = list(iter_chunks(converter, events))
    handler = ApiToolCallStreamingResponseHandler()
    for chunk in chunks:
        handler.feed(chunk)
    handler.finalize()
    return outcome_from_events(api, chunks, handler.get_all_events())


@pytest.mark.parametrize("case", cassette_cases(), ids=str)
def test_every_bundled_recording_reaches_a_default_sdk_client_intact(case):
    options = load_body(case.body_path).converter_options
    with replay_cassette(case, chunk_bytes=7) as replay:
        client = default_client(replay.api)
        for _ in replay.recording.responses:  # a multi-turn cassette: one request per recorded turn
            outcome = outcome_through(replay.api, stream_of(client, replay.api), options)
    assert compare_outcomes(replay.expected, outcome) == []
    assert len(replay.requests) == len(replay.recording.responses)


CUTS = [1, 2, 3, 50, 51, 52, 53, 400]


def test_pieces_reach_httpx2_and_aliased_httpx_exactly_as_cut():
    assert httpx is httpx2
    for client in (httpx2.Client(), httpx.Client()):
        with replay_cassette("anthropic/raw_unicode_split", cuts=CUTS) as replay:
            with client.stream("POST", "https://api.anthropic.com/v1/messages", json={{"stream": True}}) as response:
                received = list(response.iter_raw())
        assert received == replay.pieces()
        assert [len(piece) for piece in received[:5]] == [1, 1, 1, 47, 1]


def test_async_clients_get_the_same_pieces():
    import openai

    async def main():
        async with httpx2.AsyncClient() as client:
            async with client.stream("POST", "https://x.test/v1/chat/completions", json={{"stream": True}}) as r:
                raw = [piece async for piece in r.aiter_raw()]
        stream = await openai.AsyncOpenAI(max_retries=0).chat.completions.create(model="m", messages=[], stream=True)
        names = [c.choices[0].delta.tool_calls[0].function.name async for c in stream
                 if c.choices and c.choices[0].delta.tool_calls and c.choices[0].delta.tool_calls[0].function.name]
        return raw, names

    with replay_cassette("openai-chat/single_call", chunk_bytes=11) as replay:
        replay.recording = type(replay.recording)(replay.api, replay.recording.responses * 2)
        raw, names = asyncio.run(main())
    assert raw == replay.pieces()
    assert names == [call.name for call in replay.expected.tool_calls]


def test_a_request_for_another_api_fails_in_the_client_and_names_the_api():
    import openai
    with pytest.raises(UnroutedRequestError, match="looks like openai-chat"):
        with replay_cassette("anthropic/single_call", require_request=False):
            list(openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=[], stream=True))


def test_a_swallowed_unrouted_request_still_fails_the_replay():
    import openai
    with pytest.raises(UnroutedRequestError, match="no route"):
        with replay_cassette("anthropic/single_call", require_request=False):
            try:
                openai.OpenAI(max_retries=0).models.list()
            except Exception:
                pass


def test_a_non_streaming_request_is_refused():
    import openai
    with pytest.raises(UnroutedRequestError, match="stream"):
        with replay_cassette("openai-chat/single_call", require_request=False):
            openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=[])


def test_more_requests_than_recorded_responses_fail():
    import openai
    with pytest.raises(ReplayExhaustedError, match="holds 1 response"):
        with replay_cassette("openai-chat/single_call"):
            client = openai.OpenAI(max_retries=0)
            for _ in range(2):
                list(client.chat.completions.create(model="m", messages=[], stream=True))


def test_a_replay_never_requested_fails():
    with pytest.raises(NotRequestedError):
        with replay_cassette("gemini/single_call"):
            pass


def test_any_other_connection_is_blocked_even_if_swallowed():
    with pytest.raises(NetworkBlockedError, match="203.0.113.9"):
        with replay_cassette("openai-chat/single_call", require_request=False):
            try:
                socket.create_connection(("203.0.113.9", 80), timeout=0.5)
            except NetworkBlockedError:
                pass


def test_replays_do_not_nest():
    with replay_cassette("openai-chat/single_call", require_request=False):
        with pytest.raises(ReplayOptionError, match="nest"):
            with replay_cassette("openai-chat/single_call"):
                pass


def test_placeholder_keys_only_where_the_environment_has_none(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "mine")
    with replay_cassette("openai-chat/single_call", require_request=False):
        assert os.environ["OPENAI_API_KEY"].startswith("sk-toolcall-replay")
        assert os.environ["ANTHROPIC_API_KEY"] == "mine"
    assert "OPENAI_API_KEY" not in os.environ


OLLAMA = [
    {{"model": "m", "message": {{"role": "assistant", "content": "Checking."}}, "done": False}},
    {{"model": "m", "message": {{"role": "assistant", "content": "", "tool_calls": [
        {{"function": {{"name": "get_weather", "arguments": {{"city": "Oslo"}}}}}}]}}, "done": False}},
    {{"model": "m", "message": {{"role": "assistant", "content": ""}}, "done": True, "done_reason": "stop"}},
]


def test_ollama_on_plain_httpx_is_served_through_the_alias(tmp_path):
    import ollama
    body = tmp_path / "weather.jsonl"
    body.write_text("".join(json.dumps(line) + "\\n" for line in OLLAMA))
    (tmp_path / "weather.expected.json").write_text(json.dumps({{"expected": {{
        "text": "Checking.", "tool_calls": [{{"name": "get_weather", "arguments": {{"city": "Oslo"}}}}]}}}}))
    with replay_cassette(body, chunk_bytes=5) as replay:
        parts = list(ollama.Client().chat(model="m", messages=[{{"role": "user", "content": "x"}}], stream=True))
    text = "".join(part.message.content or "" for part in parts)
    calls = [(c.function.name, dict(c.function.arguments)) for p in parts for c in p.message.tool_calls or []]
    assert text == replay.expected.text
    assert calls == [(c.name, c.arguments) for c in replay.expected.tool_calls]
    assert replay.requests[0].url == "http://127.0.0.1:11434/api/chat"


@pytest.mark.skipif(REAL is None, reason="../shared/real-recordings is not here")
def test_a_real_cohere_recording_reaches_cohere_client_v2():
    import cohere
    with replay_cassette(REAL + "/cohere/empty_tool_call.jsonl", chunk_bytes=3) as replay:
        events = list(cohere.ClientV2().chat_stream(model="m", messages=[{{"role": "user", "content": "x"}}]))
    outcome = outcome_through("cohere-v2", iter(events), {{}})
    assert compare_outcomes(replay.expected, outcome) == []


def naive_data_lines(replay):
    """A raw SSE reader with the classic bug: it splits each received piece into lines on its own."""
    import openai
    client = openai.OpenAI(max_retries=0)
    with client.chat.completions.with_streaming_response.create(model="m", messages=[], stream=True) as response:
        for piece in response.iter_bytes():
            for line in piece.split(b"\\n"):
                if line.startswith(b"data: {{"):
                    json.loads(line[6:])


def careful_data_lines(replay):
    import openai
    client = openai.OpenAI(max_retries=0)
    names = []
    with client.chat.completions.with_streaming_response.create(model="m", messages=[], stream=True) as response:
        for line in response.iter_lines():
            if line.startswith("data: {{"):
                for choice in json.loads(line[6:])["choices"]:
                    for call in choice["delta"].get("tool_calls") or []:
                        names.append(call["function"].get("name"))
    assert [n for n in names if n] == [call.name for call in replay.expected.tool_calls]


def test_fuzz_finds_shrinks_and_replays_a_chunk_boundary_bug():
    with pytest.raises(ReplayFuzzError) as first:
        fuzz_cassette("openai-chat/single_call", naive_data_lines, max_examples=40, seed=3)
    with pytest.raises(ReplayFuzzError) as again:
        fuzz_cassette("openai-chat/single_call", naive_data_lines, max_examples=40, seed=3)
    error = first.value
    assert error.seed == 3 and again.value.cuts == error.cuts
    assert 1 <= len(error.cuts) <= 2, error.cuts
    assert "seed=3" in str(error) and f"cuts={{list(error.cuts)}}" in str(error)
    with pytest.raises(json.JSONDecodeError):  # the printed cuts replay the failure exactly
        with replay_cassette("openai-chat/single_call", cuts=error.cuts) as replay:
            naive_data_lines(replay)
    with replay_cassette("openai-chat/single_call") as replay:  # and whole, the bug hides
        naive_data_lines(replay)


def test_fuzz_passes_a_reader_that_is_boundary_safe():
    run = fuzz_cassette("openai-chat/parallel_two_tools", careful_data_lines, max_examples=30)
    assert run.examples == 30


def test_vcrpy_engine_works_in_an_aliased_process_and_leaves_respx_working():
    import openai

    def names():
        stream = openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=[], stream=True)
        return [f.function.name for c in stream if c.choices for f in c.choices[0].delta.tool_calls or []
                if f.function and f.function.name]

    for engine in ("vcrpy", "respx", "vcrpy"):
        with replay_cassette("openai-chat/parallel_two_tools", engine=engine) as replay:
            assert names() == [call.name for call in replay.expected.tool_calls]
        assert replay.played == 1


def test_without_respx_the_error_says_which_extra_to_install(monkeypatch):
    import sys
    from conformance.http_replay import MissingDependencyError
    monkeypatch.setitem(sys.modules, "respx", None)
    with pytest.raises(MissingDependencyError, match=r"toolcall-conformance\\[test\\]"):
        with replay_cassette("openai-chat/single_call"):
            pass


def test_fuzz_rejects_the_vcrpy_engine():
    with pytest.raises(ReplayOptionError, match="respx"):
        fuzz_cassette("openai-chat/single_call", careful_data_lines, engine="vcrpy")
'''


@pytest.fixture(scope="module")
def engine_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], str]:
    folder = tmp_path_factory.mktemp("engine")
    real = str(REAL_RECORDINGS) if (REAL_RECORDINGS / "cohere").is_dir() else None
    (folder / "test_engine.py").write_text(ENGINE_TESTS.format(real=real), encoding="utf-8")
    result = run_pytest(folder, *ALIAS)
    found = outcomes(result)
    assert found, result.stdout[-3000:] + result.stderr[-3000:]
    return found, result.stdout


def test_every_bundled_recording_reaches_default_sdk_clients_in_7_byte_pieces(
    engine_run: tuple[dict[str, str], str],
) -> None:
    ids = [case.id for case in cassette_cases()]
    results = {node: status for node, status in engine_run[0].items() if "test_every_bundled_recording_reaches" in node}
    assert len(results) == len(ids) > 90
    assert {node for node, status in results.items() if status != "PASSED"} == set()


@pytest.mark.parametrize(
    "name",
    [
        "test_pieces_reach_httpx2_and_aliased_httpx_exactly_as_cut",
        "test_async_clients_get_the_same_pieces",
        "test_a_request_for_another_api_fails_in_the_client_and_names_the_api",
        "test_a_swallowed_unrouted_request_still_fails_the_replay",
        "test_a_non_streaming_request_is_refused",
        "test_more_requests_than_recorded_responses_fail",
        "test_a_replay_never_requested_fails",
        "test_any_other_connection_is_blocked_even_if_swallowed",
        "test_replays_do_not_nest",
        "test_placeholder_keys_only_where_the_environment_has_none",
        "test_ollama_on_plain_httpx_is_served_through_the_alias",
        "test_fuzz_finds_shrinks_and_replays_a_chunk_boundary_bug",
        "test_fuzz_passes_a_reader_that_is_boundary_safe",
        "test_fuzz_rejects_the_vcrpy_engine",
        "test_without_respx_the_error_says_which_extra_to_install",
        "test_vcrpy_engine_works_in_an_aliased_process_and_leaves_respx_working",
    ],
)
def test_engine_scenario(engine_run: tuple[dict[str, str], str], name: str) -> None:
    found, stdout = engine_run
    assert found.get(f"test_engine.py::{name}") == "PASSED", _section(stdout, name)


@pytest.mark.skipif(not (REAL_RECORDINGS / "cohere").is_dir(), reason="../shared/real-recordings is not here")
def test_engine_serves_a_real_cohere_recording(engine_run: tuple[dict[str, str], str]) -> None:
    name = "test_a_real_cohere_recording_reaches_cohere_client_v2"
    assert engine_run[0].get(f"test_engine.py::{name}") == "PASSED", _section(engine_run[1], name)


# -- the fixture, as a user's test suite meets it ----------------------------------------------

USER_TESTS = """
import json

import openai
import pytest


def data_lines(buggy, client=None):
    client = client or openai.OpenAI()
    payloads = []
    with client.chat.completions.with_streaming_response.create(model="m", messages=[], stream=True) as response:
        if buggy:  # each received piece split into lines on its own: breaks when a cut falls inside a line
            lines = (l for piece in response.iter_bytes() for l in piece.decode("utf-8", "replace").split("\\n"))
        else:
            lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: {"):
                payloads.append(json.loads(line[6:]))
    return payloads


def names(payloads):
    return [c["function"]["name"] for p in payloads for ch in p["choices"] for c in ch["delta"].get("tool_calls") or []
            if c["function"].get("name")]


@pytest.mark.toolcall_cassettes("openai-chat/single_call", "openai-chat/parallel_two_tools")
def test_whole(toolcall_replay, toolcall_case):
    client = openai.OpenAI()  # built before the replay: the fixture's placeholder key is already set
    with toolcall_replay(toolcall_case) as replay:
        got = names(data_lines(buggy=False, client=client))
    assert got == [call.name for call in replay.expected.tool_calls]


@pytest.mark.toolcall_cassettes("openai-chat/single_call")
@pytest.mark.parametrize("buggy", [False, True], ids=["careful", "buggy"])
def test_any_cut(toolcall_replay, toolcall_case, buggy):
    def scenario(replay):
        assert names(data_lines(buggy)) == [call.name for call in replay.expected.tool_calls]

    toolcall_replay.fuzz(toolcall_case, scenario)
"""


@pytest.fixture(scope="module")
def user_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("user")
    (folder / "test_user.py").write_text(USER_TESTS, encoding="utf-8")
    return folder


def test_fixture_failure_report_names_seed_cuts_and_a_node_id_that_reruns_it(user_project: Path) -> None:
    result = run_pytest(user_project, *ALIAS, "--junitxml=report.xml", "--toolcall-replay-examples", "30")
    found = outcomes(result)
    failing = "test_user.py::test_any_cut[openai-chat/single_call-buggy]"
    assert found == {
        "test_user.py::test_whole[openai-chat/single_call]": "PASSED",
        "test_user.py::test_whole[openai-chat/parallel_two_tools]": "PASSED",
        "test_user.py::test_any_cut[openai-chat/single_call-careful]": "PASSED",
        failing: "FAILED",
    }, result.stdout[-4000:]
    section = result.stdout.split("toolcall replay", 1)[1]
    assert "seed=0" in section and "max_examples=30" in section
    cuts = re.search(r"cut at (\[[\d, ]+\])", result.stdout)
    assert cuts, result.stdout[-4000:]
    assert f"re-run: pytest '{failing}' --toolcall-seed 0" in section
    assert "toolcall_replay" in (user_project / "report.xml").read_text(encoding="utf-8")
    # The node id from the report, pasted back: exactly that test, the same failure, the same cuts.
    rerun = run_pytest(user_project, *ALIAS, failing)
    assert outcomes(rerun) == {failing: "FAILED"}
    assert f"cut at {cuts.group(1)}" in rerun.stdout


def test_seed_option_is_used_and_printed(user_project: Path) -> None:
    failing = "test_user.py::test_any_cut[openai-chat/single_call-buggy]"
    result = run_pytest(user_project, *ALIAS, "--hypothesis-seed", "12345", failing)
    assert "seed=12345" in result.stdout, result.stdout[-3000:]
    assert f"re-run: pytest '{failing}' --toolcall-seed 12345" in result.stdout


def test_hypothesis_options_the_suite_does_not_follow_are_named_in_the_header(user_project: Path) -> None:
    failing = "test_user.py::test_any_cut[openai-chat/single_call-buggy]"
    result = run_pytest(
        user_project,
        *ALIAS,
        "--hypothesis-profile",
        "default",
        "--hypothesis-seed",
        "7",
        "--toolcall-seed",
        "8",
        failing,
    )
    assert "--hypothesis-profile default does not change its searches" in result.stdout
    assert "--toolcall-seed 8 and --hypothesis-seed 7 disagree" in result.stdout
    assert "seed=8" in result.stdout  # the replay follows --toolcall-seed, as the class suite does


def test_fixture_under_xdist_gives_the_same_results(user_project: Path) -> None:
    result = run_pytest(user_project, *ALIAS, "-n", "2")
    assert re.search(r"1 failed, 3 passed", result.stdout), result.stdout[-3000:]
    assert "test_any_cut[openai-chat/single_call-buggy]" in result.stdout


def test_without_the_alias_plugin_the_fixture_fails_with_the_fix_and_sends_nothing(user_project: Path) -> None:
    result = run_pytest(user_project, "test_user.py::test_whole")
    assert outcomes(result) == {
        "test_user.py::test_whole[openai-chat/single_call]": "FAILED",
        "test_user.py::test_whole[openai-chat/parallel_two_tools]": "FAILED",
    }
    assert "HttpxAliasError" in result.stdout
    assert "respx's pytest plugin" in result.stdout
    assert 'addopts = "-p conformance.pytest_plugin.httpx_alias"' in result.stdout
    assert "APIConnectionError" not in result.stdout  # nothing was attempted


def test_toolcall_case_without_the_marker_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_unmarked.py").write_text("def test_x(toolcall_case):\n    pass\n", encoding="utf-8")
    result = run_pytest(tmp_path, *ALIAS)
    assert "needs @pytest.mark.toolcall_cassettes" in result.stdout + result.stderr
    assert result.returncode != 0


def test_a_marker_glob_matching_nothing_is_a_collection_error(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.mark.toolcall_cassettes("open-ai-chat/*")
            def test_x(toolcall_case):
                pass
            """
        ),
        encoding="utf-8",
    )
    result = run_pytest(tmp_path, *ALIAS)
    assert "UnknownCassetteError" in result.stdout and "open-ai-chat/*" in result.stdout
    assert result.returncode != 0


def test_a_failing_fuzz_test_shows_the_users_assertion_not_the_suites_frames(user_project: Path) -> None:
    failing = "test_user.py::test_any_cut[openai-chat/single_call-buggy]"
    result = run_pytest(user_project, *ALIAS, "--toolcall-replay-examples", "30", failing)
    assert outcomes(result) == {failing: "FAILED"}
    report = _section(result.stdout, "test_any_cut[openai-chat/single_call-buggy]")
    assert "assert names(data_lines(buggy))" in report  # the user's own line ...
    assert "cut at [" in report  # ... and the cut that breaks it
    # ... and none of the replay's machinery between them (__tracebackhide__).
    for frame in ("conformance/http_replay/fuzz.py:", "conformance/http_replay/session.py:", "replay_fixture.py:"):
        assert frame not in report, frame


def test_without_respx_the_fixture_skips_naming_the_extra(user_project: Path) -> None:
    # respx missing (the `test` extra not installed): a skip saying what to install, never a failure.
    (user_project / "conftest.py").write_text("import sys\nsys.modules['respx'] = None\n", encoding="utf-8")
    try:
        result = run_pytest(user_project, *ALIAS, "-p", "no:respx", "test_user.py::test_whole")
    finally:
        (user_project / "conftest.py").unlink()
    assert set(outcomes(result).values()) == {"SKIPPED"}, result.stdout[-3000:]
    assert "pip install 'toolcall-conformance[test]'" in result.stdout


def test_the_session_wide_alias_is_said_in_the_header(user_project: Path) -> None:
    result = run_pytest(user_project, *ALIAS, "--co")
    assert "import httpx gives httpx2 " in result.stdout and "in this session" in result.stdout
