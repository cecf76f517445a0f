"""Section 2, overhead over the SDK floor: what converter + handler add to the SDK's own cost.

For each wire API, one stream of about 10,000 SSE events is rendered with ``conformance.turns``
(a text segment, then two tool calls whose arguments arrive in 5-character deltas; Gemini, which
streams no argument text, gets 10,000 text chunks and two whole calls). It is replayed offline
through the real SDK (``conformance.wire.iter_sdk_events``: an ``httpx2.MockTransport`` serving the
body in 4 KiB pieces to the SDK's own HTTP client, SSE decoder and model construction), two ways,
alternately, in the same process:

* **floor**: iterate the SDK's stream, nothing else;
* **full**: the same iteration, each object through ``converter_for(api)`` and every chunk into a
  reference ``ApiToolCallStreamingResponseHandler``, then ``finalize()``; the result is checked.

The clock starts after the first event (the client is built and the request sent lazily, on the
first ``next()``; that is the same in both and not per event). The figure is the best of
``repeat`` runs of each, in CPU time. Target (issue 5): full / floor - 1 <= 15%.

Also reported, to explain the result: converter + handler alone on the same events built in
advance (``iter_payload_events``), and for every API that misses the target a cProfile of one
``full`` run, summarised by package (``profile``).
"""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks._common import load_average, log
from reference_impl import ApiToolCallStreamingResponseHandler
from reference_impl.converters import converter_for

TARGET_OVERHEAD = 0.15
APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
PIECE_BYTES = 4096
_WORDS = ("The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. ")


def stream_turn(api: str, events: int = 10_000) -> Any:
    """The logical turn whose rendering for ``api`` has about ``events`` SSE events."""
    from conformance.turns.model import Call, Text, Turn

    if api == "gemini":
        text = Text(tuple(_WORDS[i % len(_WORDS)] for i in range(events - 3)))
        calls = tuple(
            Call("write_file", (json.dumps({"path": f"f{i}.txt", "content": "x" * 200}),), call_id=f"call_{i}")
            for i in range(2)
        )
        return Turn((text, *calls))
    n_text = events // 10
    per_call = (events - n_text) // 2

    def call(i: int) -> Any:
        value = "".join(_WORDS[j % len(_WORDS)] for j in range(per_call))
        arguments = json.dumps({"path": f"f{i}.txt", "content": value})
        cuts = [len(arguments) * k // per_call for k in range(per_call + 1)]
        pieces = tuple(arguments[cuts[k] : cuts[k + 1]] for k in range(per_call))
        return Call("write_file", pieces, call_id=f"call_{i}")

    return Turn((Text(tuple(_WORDS[i % len(_WORDS)] for i in range(n_text))), call(0), call(1)))


def _pieces(body: bytes) -> list[bytes]:
    return [body[i : i + PIECE_BYTES] for i in range(0, len(body), PIECE_BYTES)]


def _started(api: str, pieces: list[bytes]) -> tuple[Any, Iterator[Any]]:
    """The SDK stream with its first event already pulled (client built, request sent)."""
    from conformance.wire import iter_sdk_events

    stream = iter_sdk_events(api, pieces)
    return next(stream), stream


def _floor(api: str, pieces: list[bytes]) -> tuple[float, float, int]:
    _first, stream = _started(api, pieces)
    count = 1
    wall, cpu = time.perf_counter(), time.process_time()
    for _event in stream:
        count += 1
    return time.process_time() - cpu, time.perf_counter() - wall, count


def _full(api: str, pieces: list[bytes], check: Callable[[Any], None]) -> tuple[float, float, int]:
    first, stream = _started(api, pieces)
    converter = converter_for(api)
    handler = ApiToolCallStreamingResponseHandler()
    feed, convert = handler.feed, converter.convert
    for chunk in convert(first):
        feed(chunk)
    count = 1
    wall, cpu = time.perf_counter(), time.process_time()
    for event in stream:
        count += 1
        for chunk in convert(event):
            feed(chunk)
    for chunk in converter.finish():
        feed(chunk)
    handler.finalize()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    check(handler)
    return cpu, wall, count


def _alone(api: str, body: bytes) -> float:
    """Converter + handler on the stream's SDK objects built in advance: CPU seconds for one pass."""
    from conformance.wire import iter_payload_events, sse_payloads

    events = list(iter_payload_events(api, sse_payloads(body)))
    best = float("inf")
    for _ in range(3):
        gc.collect()
        cpu = time.process_time()
        converter = converter_for(api)
        handler = ApiToolCallStreamingResponseHandler()
        for event in events:
            for chunk in converter.convert(event):
                handler.feed(chunk)
        for chunk in converter.finish():
            handler.feed(chunk)
        handler.finalize()
        best = min(best, time.process_time() - cpu)
    return best


def _checker(turn: Any) -> Callable[[Any], None]:
    expected = {call.call_id: json.loads(call.arguments) for call in turn.calls}
    text = "".join(item.text for item in turn.items if hasattr(item, "text"))

    def check(handler: Any) -> None:
        got = {inv.id: dict(inv.arguments) for inv in handler.get_all_invocations()}
        if got != expected:
            raise AssertionError(f"invocations differ: {sorted(got)} vs {sorted(expected)}")
        streamed = "".join(e.delta for e in handler.get_all_events() if e.segment_type.value == "text")
        if streamed != text:
            raise AssertionError("the streamed text differs from the rendered text")

    return check


_PACKAGES = (
    ("reference_impl", "reference_impl (converter + handler)"),
    ("/openai/", "openai SDK"),
    ("/anthropic/", "anthropic SDK"),
    ("/google/", "google-genai SDK"),
    ("/httpx2/", "httpx2 / httpcore2"),
    ("/httpcore2/", "httpx2 / httpcore2"),
    ("/pydantic", "pydantic / pydantic-core"),
    ("/json/", "json"),
)


def profile(api: str, pieces: list[bytes], check: Callable[[Any], None], top: int = 8) -> dict[str, Any]:
    """cProfile of one ``full`` run: own time by package, and the reference functions that cost most."""
    profiler = cProfile.Profile()
    profiler.enable()
    _full(api, pieces, check)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_package: dict[str, float] = {}
    ours: list[tuple[float, int, str]] = []
    total = 0.0
    for (filename, line, function), (_cc, calls, tottime, _cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        total += tottime
        package = next((label for key, label in _PACKAGES if key in filename), None)
        if package is None:
            package = "builtins (C calls)" if filename == "~" else "other (stdlib, typing...)"
        by_package[package] = by_package.get(package, 0.0) + tottime
        if "reference_impl" in filename:
            short = filename.split("reference_impl/", 1)[-1]
            ours.append((tottime, calls, f"{short}:{line}({function})"))
    ours.sort(reverse=True)
    return {
        "total_profiled_s": round(total, 3),
        "share_by_package": {
            name: round(seconds / total, 3) for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])
        },
        "top_reference_functions": [
            {"function": name, "calls": calls, "share": round(seconds / total, 3)}
            for seconds, calls, name in ours[:top]
        ],
    }


def run(
    events: int = 10_000, *, repeat: int = 5, apis: tuple[str, ...] = APIS, profile_misses: bool = True
) -> dict[str, Any]:
    log(f"-- overhead over the SDK floor: ~{events} events per API, best of {repeat}, CPU time; load {load_average()}")
    rows = []
    for api in apis:
        from conformance.turns.render import render_sse

        if repeat > 1:
            # Warm-up, untimed: the SDKs import their stream and model modules on first use.
            small = stream_turn(api, 200)
            _floor(api, _pieces(render_sse(small, api)))
            _full(api, _pieces(render_sse(small, api)), _checker(small))
        turn = stream_turn(api, events)
        body = render_sse(turn, api)
        pieces = _pieces(body)
        check = _checker(turn)
        best: dict[str, tuple[float, float]] = {"floor": (float("inf"), 0.0), "full": (float("inf"), 0.0)}
        count = 0
        for _ in range(repeat):
            for name in ("floor", "full"):
                gc.collect()
                cpu, wall, count = _floor(api, pieces) if name == "floor" else _full(api, pieces, check)
                if cpu < best[name][0]:
                    best[name] = (cpu, wall)
        floor_cpu, full_cpu = best["floor"][0], best["full"][0]
        overhead = full_cpu / floor_cpu - 1
        alone = _alone(api, body)
        row: dict[str, Any] = {
            "api": api,
            "events": count,
            "body_bytes": len(body),
            "floor_us_per_event": round(floor_cpu / count * 1e6, 2),
            "full_us_per_event": round(full_cpu / count * 1e6, 2),
            "added_us_per_event": round((full_cpu - floor_cpu) / count * 1e6, 2),
            "overhead": round(overhead, 4),
            "alone_us_per_event": round(alone / count * 1e6, 2),
            "cpu_share": {name: round(cpu / wall, 3) if wall else 1.0 for name, (cpu, wall) in best.items()},
            "met": overhead <= TARGET_OVERHEAD,
        }
        if not row["met"] and profile_misses:
            row["profile"] = profile(api, pieces, check)
        rows.append(row)
        log(
            f"{api:<17} {count:>6} events {len(body) / 1e6:5.2f} MB: floor {row['floor_us_per_event']:7.2f} us/event, "
            f"+ converter + handler {row['full_us_per_event']:7.2f} ({overhead:+.1%}); "
            f"converter + handler alone {row['alone_us_per_event']:.2f} us/event"
        )
    return {"target_overhead": TARGET_OVERHEAD, "piece_bytes": PIECE_BYTES, "rows": rows}


def verdicts(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "met": all(row["met"] for row in section["rows"]),
        "per_api": {row["api"]: row["overhead"] for row in section["rows"]},
    }
