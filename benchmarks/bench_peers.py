"""Section 3, peers: the same tool-call stream through the reference and through what people use instead.

One tool call whose arguments arrive in N deltas (the ``tool-args`` input of section 1: fragments
of 3-7 characters), given to each contender in its own native form, built before the clock starts
from the same fragments, and measured in the same run:

=====================================  =====================================  ==============================
contender                              input                                  compared with
=====================================  =====================================  ==============================
reference ``ApiToolCall`` handler      ``ChunkResponse`` objects              (baseline)
naive handler (seed 000 section 6)     the same ``ChunkResponse`` objects     reference
langchain-core ``AIMessageChunk`` +    ``AIMessageChunk(tool_call_chunks=…)``  reference (``ChunkResponse``)
reference via ``OpenAIChatConverter``  openai ``ChatCompletionChunk`` objects (baseline)
openai ``ChatCompletionStreamState``   the same ``ChatCompletionChunk``       reference via converter
reference via ``AnthropicConverter``   anthropic raw stream events            (baseline)
anthropic ``accumulate_event``         the same raw stream events             reference via converter
=====================================  =====================================  ==============================

* the naive handler is ``examples/seed000_handler.py``, a faithful transcription of seed 000
  section 6 (``state.accumulated_args += delta`` on an attribute: CPython copies the whole buffer on
  every delta, because the in-place append only applies to a local variable);
* ``ChatCompletionStreamState.handle_chunk`` is what ``client.chat.completions.stream()`` runs per
  chunk (its events are consumed too); no ``tools=`` are given, so it does not re-parse partial JSON
  (its cheapest configuration);
* ``accumulate_event`` + ``build_events`` is what ``client.messages.stream()`` runs per event: it
  re-parses the whole growing input with ``jiter`` (partial mode) on every ``input_json_delta``;
* langchain-core: ``gathered = gathered + chunk`` per chunk, the documented way to accumulate
  streamed tool calls; every ``+`` merges ``tool_call_chunks`` and re-parses the partial arguments.

The SDK objects are built once per distinct payload and the stream is a list of references to
them (as in section 1, so the input is hot in the cache at any N). A contender whose next size
would take longer than ``budget`` seconds for one run is not run there: its time is projected from
its two largest measured sizes (``t = a N + b N^2``) and marked *projected*.

Targets (issue 5): the reference is the fastest at every N, and at least 10x faster than any
peer that is quadratic at N = 10^5. A peer counts as quadratic when it fails the linearity test the
reference is held to in section 1: its time per delta at 10^5 is more than 1.3x its time per delta
at the smallest N (a per-delta cost that grows with N is a total cost that grows faster than N).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._common import best_of, fit_linear_quadratic, frozen_heap, load_average, log, project_seconds
from benchmarks.bench_scaling import ARG_FRAGMENTS, CALL_ID, TOOL_NAME, feed_all, tool_arg_inputs
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.converters import converter_for

DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUADRATIC_GROWTH = 1.3  # per-delta time at 10^5 / at the smallest N above which a peer is superlinear
TARGET_FACTOR = 10.0
TARGET_N = 100_000
OPEN, CLOSE = '{"content": "', '"}'


@dataclass
class Contender:
    name: str
    kind: str  # "reference" or "peer"
    baseline: str | None  # the reference contender it is compared with
    build: Callable[[int], Any]  # -> (inputs, expected value)
    run: Callable[[Any], Any]
    check: Callable[[Any, str], None]
    requires: str | None = None  # an optional package (the bench extra)


def _value(n: int) -> str:
    return "".join(ARG_FRAGMENTS[i % len(ARG_FRAGMENTS)] for i in range(n - 2))


def _expect(arguments: Any, value: str, who: str) -> None:
    if dict(arguments) != {"content": value}:
        raise AssertionError(f"{who}: the accumulated arguments differ from the streamed ones")


# -- the reference and the naive handler on ChunkResponse objects --------------------------------


def _chunks(n: int) -> tuple[Any, str]:
    inputs = tool_arg_inputs(n)
    return inputs.chunks, inputs.value


def _run_reference(chunks: Any) -> Any:
    return feed_all(ApiToolCallStreamingResponseHandler, chunks)


def _check_handler(handler: Any, value: str) -> None:
    invocations = handler.get_all_invocations()
    if len(invocations) != 1 or invocations[0].name != TOOL_NAME:
        raise AssertionError(f"expected one {TOOL_NAME} invocation, got {invocations!r:.200}")
    _expect(invocations[0].arguments, value, type(handler).__module__)


def _run_naive(chunks: Any) -> Any:
    from examples.seed000_handler import make_handler

    return feed_all(make_handler, chunks)


# -- langchain-core -----------------------------------------------------------------------------


def _langchain_chunks(n: int) -> tuple[Any, str]:
    from langchain_core.messages import AIMessageChunk
    from langchain_core.messages.tool import tool_call_chunk

    def message(args: str, **first: Any) -> Any:
        call = tool_call_chunk(name=first.get("name"), args=args, id=first.get("id"), index=0)
        return AIMessageChunk(content="", tool_call_chunks=[call])

    pool = [message(piece) for piece in ARG_FRAGMENTS]
    head = message(OPEN, name=TOOL_NAME, id=CALL_ID)
    middle = [pool[i % len(pool)] for i in range(n - 2)]
    return [head, *middle, message(CLOSE)], _value(n)


def _run_langchain(messages: Any) -> Any:
    gathered = None
    for message in messages:
        gathered = message if gathered is None else gathered + message
    return gathered


def _check_langchain(gathered: Any, value: str) -> None:
    calls = gathered.tool_calls
    if len(calls) != 1 or calls[0]["name"] != TOOL_NAME:
        raise AssertionError(f"langchain: expected one {TOOL_NAME} call, got {calls!r:.200}")
    _expect(calls[0]["args"], value, "langchain")


# -- SDK objects ---------------------------------------------------------------------------------


def _sdk_stream(api: str, n: int) -> tuple[list[Any], str]:
    """The wire API's own stream objects for one call with N argument deltas (``OPEN``, N-2 fragments, ``CLOSE``).

    ``render`` writes the payloads of a call whose pieces are ``OPEN``, the 64 fragments and
    ``CLOSE``; the SDK objects are built from them once, and the fragment events are repeated.
    """
    from conformance.turns.model import Call, Turn
    from conformance.turns.render import render
    from conformance.wire import iter_payload_events

    pieces = (OPEN, *ARG_FRAGMENTS, CLOSE)
    payloads = render(Turn((Call(TOOL_NAME, pieces, call_id=CALL_ID),)), api)
    objects = list(iter_payload_events(api, payloads))
    # Where the piece events are: the first event whose payload carries OPEN as its argument text.
    texts = [_argument_text(api, payload) for payload in payloads]
    first = texts.index(OPEN)
    if texts[first : first + len(pieces)] != list(pieces):
        raise AssertionError(f"{api}: unexpected rendering of the argument pieces")
    head, fragments = objects[: first + 1], objects[first + 1 : first + 1 + len(ARG_FRAGMENTS)]
    tail = objects[first + 1 + len(ARG_FRAGMENTS) :]
    middle = [fragments[i % len(fragments)] for i in range(n - 2)]
    return [*head, *middle, *tail], _value(n)


def _openai_stream(n: int) -> tuple[list[Any], str]:
    return _sdk_stream("openai-chat", n)


def _anthropic_stream(n: int) -> tuple[list[Any], str]:
    return _sdk_stream("anthropic", n)


def _argument_text(api: str, payload: dict[str, Any]) -> str | None:
    if api == "openai-chat":
        for choice in payload.get("choices") or ():
            for entry in choice.get("delta", {}).get("tool_calls") or ():
                return str(entry.get("function", {}).get("arguments"))
        return None
    delta = payload.get("delta")
    if payload.get("type") == "content_block_delta" and isinstance(delta, dict):
        return str(delta.get("partial_json"))
    return None


def _reference_via(api: str) -> Callable[[Any], Any]:
    def run(events: Any) -> Any:
        converter = converter_for(api)
        handler = ApiToolCallStreamingResponseHandler()
        feed, convert = handler.feed, converter.convert
        for event in events:
            for chunk in convert(event):
                feed(chunk)
        for chunk in converter.finish():
            feed(chunk)
        handler.finalize()
        return handler

    return run


def _run_openai_state(chunks: Any) -> Any:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState()
    for chunk in chunks:
        for _event in state.handle_chunk(chunk):
            pass
    return state


def _check_openai_state(state: Any, value: str) -> None:
    import json

    call = state.current_completion_snapshot.choices[0].message.tool_calls[0]
    if call.function.name != TOOL_NAME:
        raise AssertionError("openai: wrong tool name")
    _expect(json.loads(call.function.arguments), value, "openai ChatCompletionStreamState")


def _run_anthropic_accumulate(events: Any) -> Any:
    from anthropic.lib.streaming._messages import accumulate_event, build_events

    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        for _event in build_events(event=event, message_snapshot=snapshot):
            pass
    return snapshot


def _check_anthropic(snapshot: Any, value: str) -> None:
    block = snapshot.content[0]
    if block.name != TOOL_NAME:
        raise AssertionError("anthropic: wrong tool name")
    _expect(block.input, value, "anthropic accumulate_event")


def contenders() -> list[Contender]:
    reference = "reference ApiToolCall"
    via_openai = "reference via OpenAIChatConverter"
    via_anthropic = "reference via AnthropicConverter"
    return [
        Contender(reference, "reference", None, _chunks, _run_reference, _check_handler),
        Contender("naive handler (seed 000 s.6)", "peer", reference, _chunks, _run_naive, _check_handler),
        Contender(
            "langchain-core AIMessageChunk +",
            "peer",
            reference,
            _langchain_chunks,
            _run_langchain,
            _check_langchain,
            requires="langchain_core",
        ),
        Contender(via_openai, "reference", None, _openai_stream, _reference_via("openai-chat"), _check_handler),
        Contender(
            "openai ChatCompletionStreamState",
            "peer",
            via_openai,
            _openai_stream,
            _run_openai_state,
            _check_openai_state,
        ),
        Contender(via_anthropic, "reference", None, _anthropic_stream, _reference_via("anthropic"), _check_handler),
        Contender(
            "anthropic accumulate_event",
            "peer",
            via_anthropic,
            _anthropic_stream,
            _run_anthropic_accumulate,
            _check_anthropic,
        ),
    ]


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    repeat: int = 3,
    min_time: float = 0.3,
    budget: float = 60.0,
    only: Sequence[str] = (),
) -> dict[str, Any]:
    """Every contender at every size it can do within ``budget`` seconds per run; the rest projected."""
    sizes = sorted(sizes)
    log(f"-- peers: sizes {sizes}, budget {budget:g} s per run, GC on; load {load_average()}")
    results: list[dict[str, Any]] = []
    for contender in contenders():
        if only and not any(part.lower() in contender.name.lower() for part in only):
            continue
        entry: dict[str, Any] = {
            "name": contender.name,
            "kind": contender.kind,
            "baseline": contender.baseline,
            "points": [],
        }
        if contender.requires and importlib.util.find_spec(contender.requires) is None:
            entry["unavailable"] = f"{contender.requires} is not installed (pip install -e '.[bench]')"
            log(f"{contender.name:<36} skipped: {entry['unavailable']}")
            results.append(entry)
            continue
        # Warm-up, untimed: first calls import modules and fill caches (pydantic, jiter, langchain).
        warm_inputs, warm_value = contender.build(sizes[0])
        contender.check(contender.run(warm_inputs), warm_value)
        del warm_inputs
        measured: list[tuple[int, float]] = []
        for n in sizes:
            projected = project_seconds(measured, n) if measured else 0.0
            if measured and projected > budget:
                per_unit = round(projected / n * 1e6, 3)
                entry["points"].append(
                    {"n": n, "projected": True, "seconds": round(projected, 3), "us_per_unit": per_unit}
                )
                log(f"{contender.name:<36} N={n:>9}: not run, projected {projected:.1f} s per run (budget {budget:g})")
                continue
            inputs, value = contender.build(n)
            with frozen_heap():
                timing = best_of(
                    lambda inputs=inputs, contender=contender: contender.run(inputs),
                    lambda result, value=value, contender=contender: contender.check(result, value),
                    n,
                    repeat=1 if projected > 5 else repeat,
                    min_time=0 if projected > 5 else min_time,
                )
            del inputs
            measured.append((n, timing.cpu_s))
            entry["points"].append({"n": n, "projected": False, **timing.as_dict(), "seconds": round(timing.cpu_s, 6)})
            log(
                f"{contender.name:<36} N={n:>9}: {timing.us_per_unit:>10.3f} us/delta "
                f"({timing.runs} runs, {timing.cpu_share:.0%} cpu)"
            )
        a, b = fit_linear_quadratic(measured)
        entry["fit"] = {"a_us": a * 1e6, "b_us": b * 1e6}
        results.append(entry)
    section = {"sizes": sizes, "budget_s": budget, "contenders": results}
    section["comparisons"] = compare(section)
    return section


def _point(entry: dict[str, Any], n: int) -> dict[str, Any] | None:
    return next((p for p in entry["points"] if p["n"] == n), None)


def compare(section: dict[str, Any]) -> list[dict[str, Any]]:
    """Per peer and N: its time per delta over its reference's (same input, same run)."""
    by_name = {entry["name"]: entry for entry in section["contenders"]}
    rows = []
    for entry in section["contenders"]:
        if entry["kind"] != "peer" or "unavailable" in entry or entry["baseline"] not in by_name:
            continue
        reference = by_name[entry["baseline"]]
        measured = [p for p in entry["points"] if not p["projected"]]
        growth = measured[-1]["us_per_unit"] / measured[0]["us_per_unit"] if len(measured) > 1 else None
        at_target = _point(entry, TARGET_N)
        if at_target is not None and measured and not at_target["projected"]:
            growth = at_target["us_per_unit"] / measured[0]["us_per_unit"]
        for point in entry["points"]:
            base = _point(reference, point["n"])
            if base is None:
                continue
            rows.append(
                {
                    "peer": entry["name"],
                    "reference": reference["name"],
                    "n": point["n"],
                    "peer_us": point["us_per_unit"],
                    "reference_us": base["us_per_unit"],
                    "ratio": round(point["us_per_unit"] / base["us_per_unit"], 2),
                    "projected": point["projected"] or base["projected"],
                    "peer_growth": round(growth, 2) if growth is not None else None,
                    "quadratic": growth is not None and growth > QUADRATIC_GROWTH,
                }
            )
    return rows


def verdicts(section: dict[str, Any]) -> dict[str, Any]:
    """Target 3: the reference fastest at every N; >= 10x faster than every quadratic peer at 10^5."""
    rows = section["comparisons"]
    slower = [r for r in rows if r["ratio"] <= 1.0]
    quadratic_at_target = [r for r in rows if r["n"] == TARGET_N and r["quadratic"]]
    short = [r for r in quadratic_at_target if r["ratio"] < TARGET_FACTOR]
    return {
        "fastest_everywhere": not slower,
        "not_fastest": [(r["peer"], r["n"], r["ratio"]) for r in slower],
        "quadratic_peers_at_1e5": [(r["peer"], r["ratio"], r["projected"]) for r in quadratic_at_target],
        "factor_met": bool(quadratic_at_target) and not short if TARGET_N in section["sizes"] else None,
        "short_of_10x": [(r["peer"], r["ratio"]) for r in short],
    }
