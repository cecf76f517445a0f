"""Does the handlers' cost per delta stay flat as the stream grows? (issue 2, "Done means").

Run from the repository root::

    python -m benchmarks.bench_scaling                      # sizes 1e3, 1e4, 1e5, 1e6
    python benchmarks/bench_scaling.py --sizes 1000,100000 --repeat 5 --json out.json

Workloads (every input is built before the clock starts; each run gets a fresh handler):

* ``tool-args``: ONE tool call whose JSON arguments arrive in N ``arguments_delta`` fragments, one
  ``ChunkResponse(tool_calls=[ToolCallDelta(0, ...)])`` per fragment, then ``finalize()``;
* ``text``: N chunks of one or two characters of content;
* ``embedded-call`` (only if ``reference_impl.handlers.parsing`` exists): prose around one tool
  call in the parser's own format, with long arguments, cut into N chunks at arbitrary points.

After each timed run the output is checked (the invocation's arguments, the concatenated text),
so a broken fast path cannot pass for a fast handler. The time reported is the best of
``max(--repeat, enough runs to fill --min-time seconds)``. The *ratio* is the time per unit at N
divided by the time per unit at the smallest N: linear cost gives about 1, quadratic cost grows
with N. Target: ratio <= 1.3 at every size (PASS/MISS per row).

Each size is timed twice: ``gc on`` (the interpreter's default collector, which also walks every
event the handler keeps, as ``get_all_events()`` requires) and ``gc off`` (collector disabled
while the clock runs: the handler's own work). The inputs are hidden from the collector with
``gc.freeze()`` in both modes, so a million live input chunks do not count against the handler.
The difference between the two columns is mostly CPython's full (generation 2) collections, each
of which walks every event the handler keeps: amortised linear in theory (one runs when the
tracked heap has grown by a quarter), but at 10^6 events the walk covers hundreds of megabytes and
is dominated by cache misses. The ``gc off`` column answers the algorithmic question "is anything
quadratic". ``cpu%`` is the best run's process CPU time over its wall time: rows marked
``(busy CPU)`` shared the processor with other work and are not comparable.

``seed-000 (naive)`` is the seed's handler logic reduced to its hot path
(``state.accumulated_args += delta`` on an attribute, seed 000 section 6), measured in the same
run to show what quadratic looks like on this machine. CPython only appends to a str in place
when the target is a local variable with no other reference; an attribute always holds a second
reference, so every ``+=`` copies the whole buffer. It is only run up to ``--naive-max`` (default
100,000 deltas): at 10^6 one run copies about a terabyte.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from reference_impl import (
    ApiToolCallStreamingResponseHandler,
    ChunkResponse,
    PassThroughStreamingResponseHandler,
    SegmentType,
    ToolCallDelta,
)

TARGET_RATIO = 1.3
# A best run that got less than this share of a CPU was slowed by other processes: its row is marked.
BUSY_CPU_SHARE = 0.9
TOOL_NAME = "write_file"
CALL_ID = "call_bench"
# A small pool of distinct fragments, shared by every chunk: inputs for 10^6 deltas stay small
# and the handler still sees different strings from one delta to the next.
_POOL = [chr(97 + i % 26) + chr(97 + (i * 7 + 3) % 26) for i in range(64)]
_TEXT_POOL = ["a", "b ", "c", "de", " ", "f", "gh", "i"]


# -- the naive baseline: seed 000 section 6, hot path only --------------------------------------


@dataclass
class _SeedSegmentEvent:
    event_type: str
    segment_id: str
    segment_type: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class _SeedToolCallState:
    segment_id: str
    name: str
    accumulated_args: str = ""


class NaiveSeedHandler:
    """Seed 000's ``ApiToolCallStreamingResponseHandler.feed``/``finalize`` for tool calls, as written."""

    def __init__(self) -> None:
        self._active_tools: dict[int, _SeedToolCallState] = {}
        self._all_events: list[_SeedSegmentEvent] = []
        self._counter = 0

    def _generate_id(self) -> str:
        self._counter += 1
        return f"seg-{self._counter}"

    def _emit(self, event: _SeedSegmentEvent) -> None:
        self._all_events.append(event)

    def feed(self, chunk: ChunkResponse) -> list[_SeedSegmentEvent]:
        events = []
        if chunk.tool_calls:
            for delta in chunk.tool_calls:
                if delta.index not in self._active_tools:
                    seg_id = delta.call_id or self._generate_id()
                    self._active_tools[delta.index] = _SeedToolCallState(segment_id=seg_id, name=delta.name or "")
                    start_event = _SeedSegmentEvent("SEGMENT_START", seg_id, "tool_call", {"metadata": {}})
                    self._emit(start_event)
                    events.append(start_event)
                if delta.arguments_delta:
                    state = self._active_tools[delta.index]
                    state.accumulated_args += delta.arguments_delta  # the quadratic line
                    content_event = _SeedSegmentEvent(
                        "SEGMENT_CONTENT", state.segment_id, "tool_call", {"delta": delta.arguments_delta}
                    )
                    self._emit(content_event)
                    events.append(content_event)
                if delta.name and not self._active_tools[delta.index].name:
                    self._active_tools[delta.index].name = delta.name
        return events

    def finalize(self) -> list[_SeedSegmentEvent]:
        events = []
        for state in self._active_tools.values():
            try:
                parsed_args = json.loads(state.accumulated_args) if state.accumulated_args else {}
            except json.JSONDecodeError:
                parsed_args = {}
            end_event = _SeedSegmentEvent(
                "SEGMENT_END",
                state.segment_id,
                "tool_call",
                {"metadata": {"tool_name": state.name, "arguments": parsed_args}},
            )
            self._emit(end_event)
            events.append(end_event)
        return events

    def invocations(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(id, name, arguments) per END, as the seed's adapter would build them."""
        return [
            (event.segment_id, event.payload["metadata"]["tool_name"], event.payload["metadata"]["arguments"])
            for event in self._all_events
            if event.event_type == "SEGMENT_END"
        ]


# -- workloads -----------------------------------------------------------------------------------


@dataclass
class Workload:
    """How to build the input for size N, run it through a fresh handler, and check the result."""

    handler: str
    workload: str
    build: Callable[[int], Any]
    run: Callable[[Any], Any]
    check: Callable[[Any, Any], None]
    max_n: int | None = None


def _tool_arg_chunks(n: int) -> tuple[list[ChunkResponse], str]:
    """N chunks, one argument delta each, forming ``{"content": "<value>"}``; returns (chunks, value)."""
    if n < 3:
        raise ValueError("tool-args needs at least 3 deltas")
    middle = [_POOL[i % len(_POOL)] for i in range(n - 2)]
    chunks = [
        ChunkResponse(tool_calls=[ToolCallDelta(0, call_id=CALL_ID, name=TOOL_NAME, arguments_delta='{"content": "')])
    ]
    chunks.extend(ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta=piece)]) for piece in middle)
    chunks.append(ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta='"}')]))
    return chunks, "".join(middle)


def _text_chunks(n: int) -> tuple[list[ChunkResponse], str]:
    pieces = [_TEXT_POOL[i % len(_TEXT_POOL)] for i in range(n)]
    return [ChunkResponse(content=piece) for piece in pieces], "".join(pieces)


def _run_reference(factory: Callable[[], Any]) -> Callable[[Any], Any]:
    def run(inputs: Any) -> Any:
        chunks = inputs[0]
        handler = factory()
        for chunk in chunks:
            handler.feed(chunk)
        handler.finalize()
        return handler

    return run


def _check_tool_args(handler: Any, inputs: Any) -> None:
    chunks, value = inputs
    invocations = handler.get_all_invocations()
    if len(invocations) != 1:
        raise AssertionError(f"expected 1 invocation, got {len(invocations)}")
    invocation = invocations[0]
    if (invocation.id, invocation.name) != (CALL_ID, TOOL_NAME) or dict(invocation.arguments) != {"content": value}:
        raise AssertionError(f"wrong invocation: {invocation.id!r} {invocation.name!r}, arguments differ")
    expected_events = len(chunks) + 2  # START, one CONTENT per delta, END
    if len(handler.get_all_events()) != expected_events:
        raise AssertionError(f"expected {expected_events} events, got {len(handler.get_all_events())}")


def _check_text(handler: Any, inputs: Any) -> None:
    _chunks, value = inputs
    events = handler.get_all_events()
    text = "".join(event.delta for event in events if event.segment_type is SegmentType.TEXT)
    if text != value:
        raise AssertionError("concatenated TEXT deltas differ from the input")
    if handler.get_all_invocations():
        raise AssertionError("a text stream produced an invocation")


def _run_naive(inputs: Any) -> NaiveSeedHandler:
    chunks = inputs[0]
    handler = NaiveSeedHandler()
    for chunk in chunks:
        handler.feed(chunk)
    handler.finalize()
    return handler


def _check_naive(handler: NaiveSeedHandler, inputs: Any) -> None:
    _chunks, value = inputs
    if handler.invocations() != [(CALL_ID, TOOL_NAME, {"content": value})]:
        raise AssertionError("the naive baseline produced wrong arguments")


_RENDER = {
    "xml": lambda value: f'<tool name="{TOOL_NAME}"><arguments><arg name="content">{value}</arg></arguments></tool>',
    "json": lambda value: json.dumps({"tool": {"function": TOOL_NAME, "parameters": {"content": value}}}),
    "sentinel": lambda value: (
        f"[[SEG_START {json.dumps({'type': 'tool_call', 'tool_name': TOOL_NAME})}]] "
        f"{json.dumps({'content': value})} [[SEG_END]]"
    ),
}


def _embedded_call_chunks(parser_name: str) -> Callable[[int], tuple[list[ChunkResponse], str]]:
    def build(n: int) -> tuple[list[ChunkResponse], str]:
        # About two characters of argument per chunk; the cuts fall anywhere, markers included.
        value = "".join(_TEXT_POOL[i % len(_TEXT_POOL)] for i in range(2 * n)).replace(" ", "_")
        text = f"I will write the file now. {_RENDER[parser_name](value)} The file is written."
        bounds = [len(text) * i // n for i in range(n + 1)]
        return [ChunkResponse(content=text[bounds[i] : bounds[i + 1]]) for i in range(n)], value

    return build


def _check_embedded_call(handler: Any, inputs: Any) -> None:
    _chunks, value = inputs
    invocations = handler.get_all_invocations()
    if len(invocations) != 1:
        raise AssertionError(f"expected 1 invocation, got {len(invocations)}")
    if invocations[0].name != TOOL_NAME or dict(invocations[0].arguments) != {"content": value}:
        raise AssertionError("the embedded call's arguments differ from the rendered value")


def workloads(naive_max: int) -> list[Workload]:
    """Every workload this machine can run (the parsing handler only if its module exists)."""
    api = _run_reference(ApiToolCallStreamingResponseHandler)
    found: list[Workload] = [
        Workload("ApiToolCall", "tool-args", _tool_arg_chunks, api, _check_tool_args),
        Workload("ApiToolCall", "text", _text_chunks, api, _check_text),
        Workload("PassThrough", "text", _text_chunks, _run_reference(PassThroughStreamingResponseHandler), _check_text),
    ]
    if importlib.util.find_spec("reference_impl.handlers.parsing") is not None:
        parsing = importlib.import_module("reference_impl.handlers.parsing")
        for parser_name in ("xml", "json", "sentinel"):
            factory = _parsing_factory(parsing.ParsingStreamingResponseHandler, parser_name)
            found.append(
                Workload(
                    f"Parsing[{parser_name}]",
                    "embedded-call",
                    _embedded_call_chunks(parser_name),
                    _run_reference(factory),
                    _check_embedded_call,
                )
            )
    found.append(Workload("seed-000 (naive)", "tool-args", _tool_arg_chunks, _run_naive, _check_naive, naive_max))
    return found


def _parsing_factory(cls: Any, parser_name: str) -> Callable[[], Any]:
    return lambda: cls(parser_name=parser_name)


# -- measuring -----------------------------------------------------------------------------------

GC_MODES = ("on", "off")


@dataclass
class Timing:
    """Best of ``runs`` timed runs at one size, in one garbage-collector mode."""

    runs: int
    seconds: float
    us_per_unit: float
    ratio: float
    verdict: str
    cpu_share: float  # process CPU time / wall time of the best run; well below 1 means another process ran


@dataclass
class Row:
    handler: str
    workload: str
    n: int
    timings: dict[str, Timing]  # by GC mode; empty when the size was skipped


def measure(
    workload: Workload, n: int, repeat: int, min_time: float, modes: Sequence[str]
) -> dict[str, tuple[float, int, float]]:
    """Best wall time per GC mode over at least ``repeat`` runs (more for small N, until ``min_time``).

    The inputs are moved out of the collector's sight (``gc.freeze``): in a real stream chunks are
    transient, and a million live input chunks would make every full collection the benchmark's
    cost rather than the handler's. Mode ``on`` is the interpreter's default collector, which also
    walks everything the handler keeps (all its events); ``off`` disables it while the clock runs,
    leaving the handler's own work. Also returned: the best run's CPU time / wall time, which
    exposes runs that shared the CPU with another process.
    """
    inputs = workload.build(n)
    gc.collect()
    gc.freeze()
    results: dict[str, tuple[float, int, float]] = {}
    try:
        for mode in modes:
            best = math.inf
            best_cpu_share = 1.0
            runs = 0
            spent = 0.0
            while runs < repeat or (spent < min_time and runs < 1000):
                gc.collect()
                if mode == "off":
                    gc.disable()
                try:
                    cpu_start = time.process_time()
                    start = time.perf_counter()
                    result = workload.run(inputs)
                    elapsed = time.perf_counter() - start
                    cpu = time.process_time() - cpu_start
                finally:
                    gc.enable()
                workload.check(result, inputs)
                del result
                if elapsed < best:
                    best = elapsed
                    best_cpu_share = cpu / elapsed if elapsed > 0 else 1.0
                spent += elapsed
                runs += 1
            results[mode] = (best, runs, best_cpu_share)
    finally:
        gc.unfreeze()
        del inputs
        gc.collect()
    return results


def benchmark(
    sizes: Sequence[int],
    repeat: int,
    min_time: float,
    naive_max: int,
    modes: Sequence[str],
    only: Sequence[str] = (),
) -> list[Row]:
    rows: list[Row] = []
    smallest = min(sizes)
    print(_header(modes))
    for workload in workloads(naive_max):
        label = f"{workload.handler} {workload.workload}".lower()
        if only and not any(part.lower() in label for part in only):
            continue
        base: dict[str, float] = {}
        for n in sorted(sizes):
            row = Row(workload.handler, workload.workload, n, {})
            if workload.max_n is None or n <= workload.max_n:
                for mode, (seconds, runs, cpu_share) in measure(workload, n, repeat, min_time, modes).items():
                    per_unit = seconds / n
                    ratio = per_unit / base.setdefault(mode, per_unit)
                    verdict = "base" if n == smallest else "PASS" if ratio <= TARGET_RATIO else "MISS"
                    row.timings[mode] = Timing(runs, seconds, per_unit * 1e6, ratio, verdict, cpu_share)
            rows.append(row)
            print(_format_row(row, modes), flush=True)
    return rows


def _header(modes: Sequence[str]) -> str:
    columns = "".join(
        f" | {'gc ' + mode:<6} {'runs':>4} {'total s':>8} {'us/unit':>7} {'cpu%':>4} {'ratio':>6} verdict"
        for mode in modes
    )
    return f"{'handler':<18} {'workload':<13} {'N':>9}{columns}"


def _format_row(row: Row, modes: Sequence[str]) -> str:
    line = f"{row.handler:<18} {row.workload:<13} {row.n:>9}"
    for mode in modes:
        timing = row.timings.get(mode)
        if timing is None:
            line += f" | {'':<6} {'-':>4} {'-':>8} {'-':>7} {'-':>4} {'-':>6} skipped"
        else:
            busy = " (busy CPU)" if timing.cpu_share < BUSY_CPU_SHARE else ""
            line += (
                f" | {'':<6} {timing.runs:>4} {timing.seconds:>8.3f} {timing.us_per_unit:>7.3f} "
                f"{min(timing.cpu_share, 9.99):>4.0%} {timing.ratio:>6.2f} {timing.verdict}{busy}"
            )
    return line


def _print_load(when: str) -> None:
    # Timings taken while other work runs are not comparable across rows: say so up front.
    if hasattr(os, "getloadavg"):
        one, five, _ = os.getloadavg()
        print(f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs")


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(float(part)) for part in text.split(",") if part.strip()})
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--sizes must be comma-separated integers, got {text!r}") from error
    if not sizes or sizes[0] < 3:
        raise argparse.ArgumentTypeError("--sizes must list integers >= 3")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_parse_sizes, default=[1000, 10_000, 100_000, 1_000_000], help="comma list")
    parser.add_argument("--repeat", type=int, default=3, help="minimum runs per size and GC mode (best is kept)")
    parser.add_argument("--min-time", type=float, default=0.5, help="keep running small sizes until this many s")
    parser.add_argument("--naive-max", type=int, default=100_000, help="largest N for the quadratic seed baseline")
    parser.add_argument("--gc", choices=["both", *GC_MODES], default="both", help="garbage collector during timing")
    parser.add_argument(
        "--only", default="", help="comma list: run the workloads whose 'handler workload' contains one"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if a reference handler row MISSes")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    modes = GC_MODES if args.gc == "both" else (args.gc,)

    print(
        f"python {platform.python_version()} ({platform.python_implementation()}) on {platform.machine()}, "
        f"{os.cpu_count()} CPUs; best of >= {args.repeat} runs; ratio = us/unit at N / us/unit at N={min(args.sizes)}; "
        f"target ratio <= {TARGET_RATIO}"
    )
    if importlib.util.find_spec("reference_impl.handlers.parsing") is None:
        print("reference_impl.handlers.parsing not found: no Parsing[...] rows")
    _print_load("before")
    only = [part.strip() for part in args.only.split(",") if part.strip()]
    rows = benchmark(args.sizes, args.repeat, args.min_time, args.naive_max, modes, only)
    _print_load("after")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(
                {
                    "python": sys.version,
                    "machine": platform.machine(),
                    "cpus": os.cpu_count(),
                    "target_ratio": TARGET_RATIO,
                    "rows": [asdict(row) for row in rows],
                },
                stream,
                indent=2,
            )
    misses = [
        f"{row.handler} {row.workload} N={row.n} gc {mode}"
        for row in rows
        if not row.handler.startswith("seed-000")
        for mode, timing in row.timings.items()
        if timing.verdict == "MISS"
    ]
    for miss in misses:
        print(f"MISS: {miss}")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())
