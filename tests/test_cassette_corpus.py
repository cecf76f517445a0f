"""Every bundled cassette, replayed through the real SDK, our converter and the reference handler,
matches its expectation; and any byte-level split of its body gives the same outcome."""

from __future__ import annotations

import base64
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.corpus.exemptions import SDK_READING_EXEMPTIONS, differences
from conformance.corpus.writer import body_for, expectation_for, expectation_json
from conformance.corpus.written import CORPUS, SDK_ACCUMULATOR_MISHANDLES, CorpusScenario
from conformance.wire import Case, load_body
from conformance.wire.cases import bundled_cassette_dir, discover_cases, load_expectation
from conformance.wire.outcome import Outcome, SdkAccumulatorError, sdk_outcome
from conformance.wire.recorded import read_recording
from conformance.wire.replay import compare_outcomes, replay_body

CASES = list(discover_cases([bundled_cassette_dir()]))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
@pytest.mark.parametrize("via_sdk", [True, False], ids=["via-sdk", "payloads"])
def test_cassette_replays_to_its_expectation(case: Case, via_sdk: bool) -> None:
    body = load_body(case.body_path)
    result = replay_body(body, via_sdk=via_sdk)
    assert compare_outcomes(case.expected(), result.outcome) == []


BY_KEY = {scenario.key: scenario for scenario in CORPUS}


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")  # the SDK's, on object arguments
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_expectation_is_what_the_sdk_reads(case: Case) -> None:
    """The stored expectation is independent of our code: the SDK's own reading agrees with it, tool
    calls, text and reasoning; for the cassettes of the reviewed exemption list (never a phrase in the
    cassette itself), the SDK misreads it exactly as documented there."""
    body = load_body(case.body_path)
    stored = load_expectation(case.expected_path)
    key = case.name.removesuffix(".yaml")
    exemption = SDK_READING_EXEMPTIONS.get(key)
    if exemption is not None:
        sdk: Outcome | Exception
        try:
            sdk = sdk_outcome(body.api, body.data)
        except SdkAccumulatorError as error:
            sdk = error
        assert differences(exemption, BY_KEY[key].turn, sdk, stored) == []
        return
    sdk_read = sdk_outcome(body.api, body.data)
    assert [(c.name, c.call_id, c.arguments) for c in sdk_read.tool_calls] == [
        (c.name, c.call_id, c.arguments) for c in stored.tool_calls
    ]
    assert sdk_read.text == stored.text
    assert sdk_read.reasoning == stored.reasoning


def test_the_exemption_list_is_exactly_what_the_cassettes_say() -> None:
    # The metadata documents the exemption; the list in code decides it. They must agree, and every
    # entry must name a cassette of the corpus.
    assert set(SDK_READING_EXEMPTIONS) <= set(BY_KEY)
    said = {
        case.name.removesuffix(".yaml")
        for case in CASES
        if "conformance/corpus/exemptions.py" in json.loads(case.expected_path.read_text(encoding="utf-8"))["source"]
    }
    assert said == set(SDK_READING_EXEMPTIONS)
    assert len(SDK_READING_EXEMPTIONS) == 7  # the seven OpenAI-compatible dialects of the README


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("scenario", CORPUS, ids=[scenario.key for scenario in CORPUS])
def test_stored_cassette_is_fresh(scenario: CorpusScenario) -> None:
    """What is stored is what the scenario definition gives today: the body, and the expectation
    (the definition confirmed by the SDK's reading); regenerate with ``python -m conformance.corpus cassettes``."""
    folder = bundled_cassette_dir() / scenario.folder
    body = load_body(folder / f"{scenario.name}.yaml")
    assert body.data == body_for(scenario)
    stored = (folder / f"{scenario.name}.expected.json").read_text(encoding="utf-8")
    assert stored == expectation_json(expectation_for(scenario, body.data))


def test_every_single_turn_cassette_has_a_definition() -> None:
    on_disk = {case.name.removesuffix(".yaml") for case in CASES if not case.name.startswith("multiturn/")}
    assert on_disk == set(BY_KEY)


@pytest.mark.parametrize("scenario", CORPUS, ids=[f"{s.folder}/{s.name}" for s in CORPUS])
def test_recorded_facts_are_the_corpus_definition(scenario: CorpusScenario) -> None:
    """What the usage / metadata / incremental converter checks compare with, read from the cassette
    through the SDK (``conformance.recorded``), is what the scenario definition says."""
    path = bundled_cassette_dir() / scenario.folder / f"{scenario.name}.yaml"
    body = load_body(path)
    recording = read_recording(body.api, body.sse, load_expectation(path.with_name(f"{scenario.name}.expected.json")))
    turn = scenario.turn
    prompt, completion = turn.usage
    if turn.ending in ("stop", "length") or (scenario.api == "cohere-v2" and turn.ending == "error"):
        # (Cohere's message-end carries the usage even when it reports the error.)
        assert recording.usage is not None, recording.why
        assert prompt in recording.usage.prompt and completion in recording.usage.completion, recording.usage
    elif scenario.api in ("anthropic", "bedrock-invoke"):  # message_start reported the prompt and a first token
        assert recording.usage is not None and recording.usage.completion == {1}
    else:
        assert recording.usage is None
    cache = turn.extras.get("anthropic_cache_tokens")
    if cache:
        assert recording.usage is not None and recording.usage.prompt == {prompt, prompt + sum(cache)}
    if turn.calls:
        assert recording.calls is not None or scenario.dialects, recording.why
    if scenario.api == "gemini":
        assert recording.calls is not None, recording.why
        signatures = [[base64.b64decode(c.thought_signature)] if c.thought_signature else [] for c in turn.calls]
        assert [call.thought_signatures for call in recording.calls] == signatures
    if scenario.api == "openai-responses":
        assert recording.calls is not None
        assert all(call.item_id and call.item_id.startswith("fc_") for call in recording.calls)
    streams_text = (
        scenario.api not in ("gemini", "ollama")
        and not turn.extras.get("responses_arguments_only_in_done")
        and not set(scenario.dialects) & (SDK_ACCUMULATOR_MISHANDLES | {"whole_call_per_chunk"})
    )
    if streams_text and turn.calls:
        assert recording.calls is not None, recording.why
        for call, recorded in zip(turn.calls, recording.calls, strict=True):
            assert recorded.progress is not None, call.name
            assert [text for _, text in recorded.progress] == list(
                itertools.accumulate(p for p in call.argument_pieces if p)
            )


SAMPLE = [
    case for case in CASES if any(k in case.name for k in ("unicode", "parallel", "dialect_no_index", "truncated"))
]


@pytest.mark.parametrize("case", SAMPLE, ids=[case.name for case in SAMPLE])
def test_any_byte_split_gives_the_same_outcome(case: object) -> None:
    body = load_body(case.body_path)  # type: ignore[attr-defined]
    baseline = replay_body(body).outcome.to_json()
    size = len(body.sse)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.integers(0, size), max_size=40).map(sorted), st.booleans())
    def same(cuts: list[int], with_empty: bool) -> None:
        bounds = [0, *cuts, size]
        pieces = [body.sse[a:b] for a, b in itertools.pairwise(bounds)]
        if with_empty:
            pieces.insert(len(pieces) // 2, b"")
        assert replay_body(body, pieces).outcome.to_json() == baseline

    same()
    # and the extreme: one byte at a time (splits inside every multi-byte UTF-8 sequence and \n\n)
    assert replay_body(body, [body.sse[i : i + 1] for i in range(size)]).outcome.to_json() == baseline
