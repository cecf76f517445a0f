"""Section 1, scaling: does each reference handler's cost per delta stay flat as the stream grows?

Part of ``python -m benchmarks`` (see ``benchmarks/README.md``); also runs alone::

    python -m benchmarks.bench_scaling                                  # N = 1e3, 1e4, 1e5, 1e6
    python -m benchmarks.bench_scaling --sizes 1000,100000 --only "apitoolcall tool-args" --json out.json

Workloads (a fresh handler per run; every input is built before the clock starts):

* ``tool-args`` (``ApiToolCall``): ONE tool call whose JSON arguments arrive in N
  ``arguments_delta`` fragments, one ``ChunkResponse(tool_calls=[ToolCallDelta(0, ...)])`` each,
  then ``finalize()``;
* ``text`` (``ApiToolCall``, ``PassThrough`` and the three ``Parsing[...]`` handlers): a long text
  stream of N chunks, no tool call;
* ``embedded-call`` (``Parsing[xml|json|sentinel]``): prose around one tool call written in the
  parser's own format, with long arguments, cut every 5 characters (markers included) into N chunks.

Fragment sizes follow the real recordings in ``shared/real-recordings``: argument deltas have a
median of 4-6 characters there (OpenAI Chat 5.7 on average, Responses 4.3, Anthropic 7.2), so
argument fragments are 3-7 characters (mean 5) and text chunks are word tokens (mean 5.6).

Inputs reuse a pool of 64 distinct chunk objects (a list of N references to them): in a real
stream each chunk is built just before it is fed, so it is hot in the cache whatever N is; a
million distinct pre-built chunks would make the benchmark measure memory latency on the *input*
at 10^6 and not at 10^3. What the handler keeps (its events, the fragments) grows with N as in
production.

After each timed run the output is checked (the invocation's arguments, the concatenated text, the
event count), so a broken fast path cannot pass for a fast handler. The time per delta at N is
divided by the time per delta at the smallest N: linear cost gives about 1, quadratic cost grows
with N. Target (issue 5): ratio <= 1.3 at 10^6.

Each size is timed with the garbage collector ``on`` (CPython's default generational collector,
which also walks every event the handler keeps, as ``get_all_events()`` requires) and ``off``
(disabled while the clock runs: the handler's own work). The difference between the two columns
is CPython's full (generation 2) collections, measured directly with ``gc.callbacks`` for the
largest size (``gc_profile``).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._common import GC_MODES, Timing, best_of, frozen_heap, load_average, log
from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    ParsingStreamingResponseHandler,
    PassThroughStreamingResponseHandler,
    SegmentType,
    ToolCallDelta,
)

TARGET_RATIO = 1.3
DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
TOOL_NAME = "write_file"
CALL_ID = "call_bench"
CHUNK_CHARS = 5  # embedded-call: one chunk every 5 characters

_LOREM = (
    "the quick brown fox jumps over the lazy dog while a model streams the arguments of a tool "
    "call in small pieces and the handler keeps up with every one of them without copying "
)
# 64 argument fragments of 3..7 characters (mean 5), cut from plain prose: letters and spaces
# only, so they are valid inside a JSON string, an XML element and a sentinel block alike.
_LENGTHS = [3 + (i * 3) % 5 for i in range(64)]
_STARTS = [sum(_LENGTHS[:i]) for i in range(64)]
ARG_FRAGMENTS: tuple[str, ...] = tuple(
    (_LOREM * 4)[start : start + length] for start, length in zip(_STARTS, _LENGTHS, strict=True)
)
TEXT_TOKENS: tuple[str, ...] = tuple(
    f"{word} " for word in (_LOREM.split() * 2)[:64]
)  # word tokens, mean 5.6 characters


@dataclass
class Inputs:
    """One workload's input at one size, and what a correct handler must produce from it."""

    chunks: list[ChunkResponse]
    value: str  # the expected argument value (tool calls) or the whole text (text streams)
    chars: int  # characters in the stream (for "per character" figures)


# -- inputs --------------------------------------------------------------------------------------


def tool_arg_inputs(n: int) -> Inputs:
    """N chunks, one argument delta each, forming ``{"content": "<value>"}``."""
    if n < 3:
        raise ValueError("tool-args needs at least 3 deltas")
    pool = [ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta=piece)]) for piece in ARG_FRAGMENTS]
    opening = ToolCallDelta(0, call_id=CALL_ID, name=TOOL_NAME, arguments_delta='{"content": "')
    head = ChunkResponse(tool_calls=[opening])
    tail = ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta='"}')])
    middle = [pool[i % len(pool)] for i in range(n - 2)]
    value = "".join(ARG_FRAGMENTS[i % len(ARG_FRAGMENTS)] for i in range(n - 2))
    return Inputs([head, *middle, tail], value, len(value) + len('{"content": ""}'))


def text_inputs(n: int) -> Inputs:
    """N chunks of prose, one word token each."""
    pool = [ChunkResponse(content=token) for token in TEXT_TOKENS]
    chunks = [pool[i % len(pool)] for i in range(n)]
    value = "".join(TEXT_TOKENS[i % len(TEXT_TOKENS)] for i in range(n))
    return Inputs(chunks, value, len(value))


def render_call(parser_name: str, value: str) -> str:
    """One ``write_file`` call with ``{"content": value}`` in the text format ``parser_name``."""
    if parser_name == "xml":
        return f'<tool name="{TOOL_NAME}"><arguments><arg name="content">{value}</arg></arguments></tool>'
    if parser_name == "json":
        return json.dumps({"tool": {"function": TOOL_NAME, "parameters": {"content": value}}})
    if parser_name == "sentinel":
        header = json.dumps({"type": "tool_call", "tool_name": TOOL_NAME})
        return f"[[SEG_START {header}]] {json.dumps({'content': value})} [[SEG_END]]"
    raise ValueError(f"unknown parser {parser_name!r}")


def embedded_call_inputs(parser_name: str) -> Callable[[int], Inputs]:
    """Prose, one call in ``parser_name``'s format, prose; exactly N chunks of 5 characters."""

    def build(n: int) -> Inputs:
        head, tail = "I will write the file now. ", " The file is written."
        frame = len(head) + len(render_call(parser_name, "")) + len(tail)
        if CHUNK_CHARS * n <= frame:
            raise ValueError(f"embedded-call needs N > {frame // CHUNK_CHARS} for {parser_name}")
        period = "".join(ARG_FRAGMENTS)
        length = CHUNK_CHARS * n - frame
        value = (period * (length // len(period) + 1))[:length]
        text = head + render_call(parser_name, value) + tail
        # The argument value is periodic, so most chunks repeat: share one object per distinct text.
        interned: dict[str, ChunkResponse] = {}
        chunks = [
            interned.setdefault(piece, ChunkResponse(content=piece))
            for piece in (text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS))
        ]
        return Inputs(chunks, value, len(text))

    return build


# -- checks --------------------------------------------------------------------------------------


def check_tool_args(handler: Any, inputs: Inputs) -> None:
    invocations = handler.get_all_invocations()
    if len(invocations) != 1:
        raise AssertionError(f"expected 1 invocation, got {len(invocations)}")
    invocation = invocations[0]
    if (invocation.id, invocation.name) != (CALL_ID, TOOL_NAME) or dict(invocation.arguments) != {
        "content": inputs.value
    }:
        raise AssertionError(f"wrong invocation: {invocation.id!r} {invocation.name!r}, arguments differ")
    expected_events = len(inputs.chunks) + 2  # START, one CONTENT per delta, END
    if len(handler.get_all_events()) != expected_events:
        raise AssertionError(f"expected {expected_events} events, got {len(handler.get_all_events())}")


def check_text(handler: Any, inputs: Inputs) -> None:
    text = "".join(event.delta for event in handler.get_all_events() if event.segment_type is SegmentType.TEXT)
    if text != inputs.value:
        raise AssertionError("concatenated TEXT deltas differ from the input")
    if handler.get_all_invocations():
        raise AssertionError("a text stream produced an invocation")


def check_embedded_call(handler: Any, inputs: Inputs) -> None:
    invocations = handler.get_all_invocations()
    if len(invocations) != 1:
        raise AssertionError(f"expected 1 invocation, got {len(invocations)}")
    if invocations[0].name != TOOL_NAME or dict(invocations[0].arguments) != {"content": inputs.value}:
        raise AssertionError("the embedded call's arguments differ from the rendered value")
    streamed = "".join(event.delta for event in handler.get_all_events())
    if streamed != "".join(chunk.content for chunk in inputs.chunks):
        raise AssertionError("TEXT + TOOL_CALL deltas do not reproduce the stream")


# -- workloads -----------------------------------------------------------------------------------


@dataclass
class Workload:
    handler: str
    workload: str
    factory: Callable[[], Any]
    build: Callable[[int], Inputs]
    check: Callable[[Any, Inputs], None]

    @property
    def label(self) -> str:
        return f"{self.handler} {self.workload}"


def feed_all(factory: Callable[[], Any], chunks: Sequence[ChunkResponse]) -> Any:
    """A fresh handler fed every chunk, then finalized: what one timed run does."""
    handler = factory()
    feed = handler.feed
    for chunk in chunks:
        feed(chunk)
    handler.finalize()
    return handler


def _parsing(parser_name: str) -> Callable[[], Any]:
    return lambda: ParsingStreamingResponseHandler(parser_name=parser_name)


def workloads() -> list[Workload]:
    found = [
        Workload("ApiToolCall", "tool-args", ApiToolCallStreamingResponseHandler, tool_arg_inputs, check_tool_args),
        Workload("ApiToolCall", "text", ApiToolCallStreamingResponseHandler, text_inputs, check_text),
        Workload("PassThrough", "text", PassThroughStreamingResponseHandler, text_inputs, check_text),
    ]
    for parser_name in ("xml", "json", "sentinel"):
        found.append(Workload(f"Parsing[{parser_name}]", "text", _parsing(parser_name), text_inputs, check_text))
        found.append(
            Workload(
                f"Parsing[{parser_name}]",
                "embedded-call",
                _parsing(parser_name),
                embedded_call_inputs(parser_name),
                check_embedded_call,
            )
        )
    return found


# -- measuring -----------------------------------------------------------------------------------


def gc_profile(workload: Workload, n: int) -> dict[str, Any]:
    """One run at size ``n`` with every collection timed (``gc.callbacks``): where the GC-on time goes."""
    inputs = workload.build(n)
    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    counts = {0: 0, 1: 0, 2: 0}
    started: list[float] = []

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            generation = int(info["generation"])
            spent[generation] += time.perf_counter() - started.pop()
            counts[generation] += 1

    with frozen_heap():
        gc.callbacks.append(callback)
        try:
            wall_start = time.perf_counter()
            handler = feed_all(workload.factory, inputs.chunks)
            wall = time.perf_counter() - wall_start
        finally:
            gc.callbacks.remove(callback)
        workload.check(handler, inputs)
        del handler
    in_gc = sum(spent.values())
    return {
        "n": n,
        "wall_s": round(wall, 4),
        "gc_s": round(in_gc, 4),
        "gc_share": round(in_gc / wall, 3) if wall else 0.0,
        "collections": {f"gen{g}": {"count": counts[g], "seconds": round(spent[g], 4)} for g in (0, 1, 2)},
        "us_per_unit_outside_gc": round((wall - in_gc) / n * 1e6, 4),
        "us_per_unit_in_gen2": round(spent[2] / n * 1e6, 4),
    }


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    repeat: int = 3,
    min_time: float = 0.3,
    modes: Sequence[str] = GC_MODES,
    only: Sequence[str] = (),
    profile_misses: bool = True,
) -> dict[str, Any]:
    """Every workload at every size and GC mode; returns the section's results (see ``report``)."""
    sizes = sorted(sizes)
    smallest = sizes[0]
    rows: list[dict[str, Any]] = []
    profiles: dict[str, Any] = {}
    log(f"-- scaling: sizes {sizes}, GC {'/'.join(modes)}, best of >= {repeat} runs; load {load_average()}")
    for workload in workloads():
        if only and not any(part.lower() in workload.label.lower() for part in only):
            continue
        base: dict[str, float] = {}
        for n in sizes:
            inputs = workload.build(n)
            row: dict[str, Any] = {
                "handler": workload.handler,
                "workload": workload.workload,
                "n": n,
                "chars_per_unit": round(inputs.chars / n, 2),
                "modes": {},
            }
            with frozen_heap():
                for mode in modes:
                    timing: Timing = best_of(
                        lambda inputs=inputs, workload=workload: feed_all(workload.factory, inputs.chunks),
                        lambda handler, inputs=inputs, workload=workload: workload.check(handler, inputs),
                        n,
                        repeat=repeat,
                        min_time=min_time,
                        gc_mode=mode,
                    )
                    per_unit = timing.us_per_unit
                    ratio = per_unit / base.setdefault(mode, per_unit)
                    row["modes"][mode] = {
                        **timing.as_dict(),
                        "ratio": round(ratio, 3),
                        "verdict": "base" if n == smallest else ("PASS" if ratio <= TARGET_RATIO else "MISS"),
                    }
            del inputs
            rows.append(row)
            log(_format_row(row, modes))
        largest = [row for row in rows if row["handler"] == workload.handler and row["workload"] == workload.workload]
        missed = any(m.get("verdict") == "MISS" for row in largest for m in row["modes"].values())
        if profile_misses and missed and len(sizes) > 1:
            profiles[workload.label] = gc_profile(workload, sizes[-1])
            log(f"   gc profile at N={sizes[-1]}: {profiles[workload.label]}")
    return {
        "target_ratio": TARGET_RATIO,
        "sizes": sizes,
        "gc_modes": list(modes),
        "rows": rows,
        "gc_profiles": profiles,
        "argument_fragment_chars": round(sum(map(len, ARG_FRAGMENTS)) / len(ARG_FRAGMENTS), 2),
        "text_token_chars": round(sum(map(len, TEXT_TOKENS)) / len(TEXT_TOKENS), 2),
    }


def _format_row(row: dict[str, Any], modes: Sequence[str]) -> str:
    line = f"{row['handler']:<18} {row['workload']:<13} {row['n']:>9}"
    for mode in modes:
        m = row["modes"][mode]
        line += (
            f" | gc {mode:<3} {m['runs']:>4} runs {m['us_per_unit']:>7.3f} us/delta {m['cpu_share']:>4.0%} cpu "
            f"ratio {m['ratio']:>5.2f} {m['verdict']}"
        )
    return line


def verdicts(section: dict[str, Any]) -> dict[str, Any]:
    """Target 1: ratio at the largest N <= 1.3, per reference workload, with the GC on (and off, for the record)."""
    largest = max(section["sizes"])
    per_workload = {}
    for row in section["rows"]:
        if row["n"] != largest or len(section["sizes"]) < 2:
            continue
        per_workload[f"{row['handler']} {row['workload']}"] = {
            mode: row["modes"][mode]["ratio"] for mode in section["gc_modes"] if mode in row["modes"]
        }
    met_on = all(r.get("on", 0) <= TARGET_RATIO for r in per_workload.values())
    met_off = all(r.get("off", 0) <= TARGET_RATIO for r in per_workload.values())
    return {"largest_n": largest, "ratios": per_workload, "met_gc_on": met_on, "met_gc_off": met_off}


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(float(part)) for part in text.split(",") if part.strip()})
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--sizes must be comma-separated integers, got {text!r}") from error
    if not sizes or sizes[0] < 100:
        raise argparse.ArgumentTypeError("--sizes must list integers >= 100")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=_parse_sizes, default=list(DEFAULT_SIZES), help="comma list of N")
    parser.add_argument("--repeat", type=int, default=3, help="minimum runs per size and GC mode (best is kept)")
    parser.add_argument("--min-time", type=float, default=0.3, help="keep running small sizes until this many s")
    parser.add_argument("--gc", choices=["both", *GC_MODES], default="both", help="garbage collector during timing")
    parser.add_argument("--only", default="", help="comma list: workloads whose 'handler workload' contains one")
    parser.add_argument("--json", metavar="PATH", help="also write the section's results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if a row MISSes the target (GC on)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    modes = GC_MODES if args.gc == "both" else (args.gc,)
    only = [part.strip() for part in args.only.split(",") if part.strip()]
    section = run(args.sizes, repeat=args.repeat, min_time=args.min_time, modes=modes, only=only)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(section, stream, indent=2)
    result = verdicts(section)
    log(
        f"target ratio <= {TARGET_RATIO} at N={result['largest_n']}: "
        f"GC on {result['met_gc_on']}, GC off {result['met_gc_off']}"
    )
    return 1 if args.check and not result["met_gc_on"] else 0


if __name__ == "__main__":
    sys.exit(main())
