"""The ``toolcall-conformance`` command line.

Exit codes (documented in the README):
  0  conformant (every applicable check passed)
  1  the target violates at least one check
  2  usage error (bad arguments, unimportable or unusable factory)
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import reference_impl
from conformance.checks import Capabilities
from conformance.record import PROVIDERS, SCENARIOS
from conformance.report import render_terminal, write_json, write_junit
from conformance.runner import PROFILES, run_conformance
from conformance.wire import WIRE_APIS

EXIT_CONFORMANT = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A command-line problem the user can fix; printed without a traceback, exit code 2."""


def load_factory(spec: str) -> Callable[..., Any]:
    """Import ``MODULE:ATTRIBUTE`` and return the callable it names."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"--handler must look like MODULE:FACTORY (e.g. mypkg.handlers:make_handler), got {spec!r}")
    # Like `python -m`, uvicorn or gunicorn: a module in the working directory is importable even
    # when the console script's own sys.path does not include it.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import module {module_name!r} from --handler {spec!r}: {error}") from error
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise UsageError(
                f"module {module_name!r} has no attribute {attribute!r} (from --handler {spec!r})"
            ) from error
    if not callable(target):
        raise UsageError(f"{spec!r} names a {type(target).__name__}, not a callable handler factory")
    return target  # type: ignore[no-any-return]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcall-conformance",
        description="Conformance suite for streaming LLM tool-call handlers and converters.",
        epilog="Exit codes: 0 conformant, 1 violations found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {reference_impl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run the conformance checks (default target: the reference implementation)",
        description="Run every contract check against a handler, on built-in scenarios re-fragmented by hypothesis.",
    )
    target = run.add_mutually_exclusive_group()
    target.add_argument("--handler", metavar="MODULE:FACTORY", help="a callable returning a fresh seed-shaped handler")
    target.add_argument(
        "--converter",
        metavar="MODULE:FACTORY",
        help="a callable taking the wire API name and returning a fresh converter (see reference_impl.converters)",
    )
    run.add_argument("--format", choices=WIRE_APIS, help="with --converter: the wire API it converts")
    run.add_argument(
        "--cassette-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also check converters on the recordings (with .expected.json) under DIR; repeatable",
    )
    run.add_argument("--profile", choices=sorted(PROFILES), default="ci", help="how hard to search (default: ci)")
    run.add_argument("--seed", type=int, default=0, help="hypothesis seed; the same seed reproduces a run")
    run.add_argument("--no-reasoning", action="store_true", help="the handler does not support chunk.reasoning")
    run.add_argument("--no-stream-errors", action="store_true", help="the handler ignores ChunkResponse.error")
    run.add_argument(
        "--text-format",
        choices=["xml", "json", "sentinel"],
        help="the handler parses tool calls embedded in text in this format (checked on text scenarios)",
    )
    run.add_argument(
        "--text-lag", type=int, metavar="N", help="with --text-format: the most text characters the handler holds back"
    )
    run.add_argument(
        "--show-handler-logs",
        action="store_true",
        help="let the handler's own log records through (silenced by default: it runs thousands of times)",
    )
    run.add_argument(
        "--scenario-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="add the saved scenarios (*.json) under DIR to the built-in ones; repeatable",
    )
    run.add_argument(
        "--save-failures",
        type=Path,
        metavar="DIR",
        help="write each failing check's minimal counterexample to DIR as a scenario file",
    )
    run.add_argument("--report-json", type=Path, metavar="PATH", help="write the JSON report here")
    run.add_argument("--junit-xml", type=Path, metavar="PATH", help="write a JUnit XML report here")
    replay = commands.add_parser(
        "replay",
        help="replay a recorded stream through converter and reference handler",
        description=(
            "Read a vcrpy cassette, a raw SSE body, JSON lines or a Gemini JSON array; print the normalised "
            "deltas, the segments and the final tool calls."
        ),
    )
    replay.add_argument("path", type=Path)
    replay.add_argument("--format", choices=WIRE_APIS, help="the wire API (detected when unambiguous)")
    replay.add_argument(
        "--via-sdk", action="store_true", help="go through the SDK's own HTTP client and SSE decoder (offline)"
    )
    replay.add_argument(
        "--chunk-bytes", type=int, metavar="N", help="with --via-sdk, serve the body in pieces of N bytes"
    )
    replay.add_argument("--json", action="store_true", help="print one JSON object (schema in docs/replay-schema.md)")

    rerun = commands.add_parser(
        "rerun",
        help="re-run saved counterexample scenarios against a handler",
        description="Replay saved scenario files (from run --save-failures) exactly as saved, with every check.",
    )
    rerun.add_argument("paths", type=Path, nargs="+", metavar="FILE_OR_DIR")
    rerun.add_argument("--handler", metavar="MODULE:FACTORY", help="default: the reference handler")
    rerun.add_argument("--no-reasoning", action="store_true", help="the handler does not support chunk.reasoning")

    record = commands.add_parser(
        "record",
        help="record a provider cassette with the real SDK (keys from the usual environment variables)",
        description=(
            "Send one scenario's request with the real SDK under vcrpy, scrub credentials, and write the cassette "
            "with an expectation folded by the SDK's own accumulator. Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY, "
            "GEMINI_API_KEY or GOOGLE_API_KEY."
        ),
    )
    record.add_argument("--provider", required=True, choices=sorted(PROVIDERS))
    record.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    record.add_argument("--model", help="model name (default: a small current model of the provider)")
    record.add_argument("--base-url", help="an OpenAI-compatible or proxy endpoint instead of the provider's own")
    record.add_argument("--out", type=Path, default=Path("cassettes/recorded"), help="output folder")

    cassettes = commands.add_parser("cassettes", help="work with cassette files")
    cassette_commands = cassettes.add_subparsers(dest="cassettes_command", metavar="SUBCOMMAND", required=True)
    check = cassette_commands.add_parser(
        "check",
        help="validate cassettes: schema, body decodes, expectation present, no secrets",
        description="Exit 1 naming file and line for every problem; usable as a pre-commit hook.",
    )
    check.add_argument("paths", type=Path, nargs="+")
    return parser


def _cmd_replay(args: argparse.Namespace) -> int:
    from conformance.pipeline import replay_body
    from conformance.wire import WireFormatError, load_body

    if args.chunk_bytes is not None and (args.chunk_bytes < 1 or not args.via_sdk):
        raise UsageError("--chunk-bytes needs --via-sdk and a positive size")
    try:
        body = load_body(args.path, args.format)
    except WireFormatError as error:
        raise UsageError(str(error)) from error
    pieces = None
    if args.chunk_bytes:
        pieces = [body.sse[i : i + args.chunk_bytes] for i in range(0, len(body.sse), args.chunk_bytes)]
    result = replay_body(body, pieces, via_sdk=args.via_sdk)
    if args.json:
        print(json.dumps(result.outcome.to_json(), ensure_ascii=False, indent=2))
        return 0
    from conformance.fragment import describe_chunks

    print(f"format: {body.api}   source: {body.source}")
    print(f"\n{len(result.chunks)} chunks:")
    for chunk in result.chunks:
        print("  " + describe_chunks([chunk]))
    print(f"\n{len(result.events)} segment events:")
    from conformance.observe import observe_event

    for event in result.events:
        print("  " + observe_event(event).describe())
    print("\ntool calls:")
    for position, call in enumerate(result.outcome.tool_calls):
        verdict = json.dumps(call.arguments, ensure_ascii=False) if call.arguments is not None else "REJECTED"
        print(f"  [{position}] {call.name} id={call.call_id!r} -> {verdict}")
    if not result.outcome.tool_calls:
        print("  (none)")
    if result.unknown_events:
        print(f"\nskipped unknown event types: {result.unknown_events}")
    print(f"finish_reason: {result.outcome.finish_reason!r}   error: {result.outcome.error!r}")
    return 0


def _cmd_record(args: argparse.Namespace) -> int:
    from conformance.record import RecordingError, record_cassette

    try:
        cassette, expected = record_cassette(
            args.provider, args.scenario, args.out, model=args.model, base_url=args.base_url
        )
    except RecordingError as error:
        raise UsageError(str(error)) from error
    print(f"recorded {cassette}\nexpectation {expected}")
    return EXIT_CONFORMANT


def _cmd_cassettes_check(args: argparse.Namespace) -> int:
    from conformance.cassettes import check_cassettes

    findings = check_cassettes(args.paths)
    for finding in findings:
        print(finding, file=sys.stderr)
    if findings:
        print(f"{len(findings)} problem(s) found", file=sys.stderr)
        return EXIT_VIOLATIONS
    print(f"cassettes check: {', '.join(str(p) for p in args.paths)}: clean")
    return EXIT_CONFORMANT


def _cmd_run(args: argparse.Namespace) -> int:
    from conformance.cassettes import bundled_cassette_dir
    from conformance.converter_suite import run_converter_conformance
    from conformance.runner import Report

    if args.format and not args.converter:
        raise UsageError("--format goes with --converter")
    if args.converter and not args.format:
        raise UsageError("--converter needs --format (one of " + ", ".join(WIRE_APIS) + ")")
    for directory in args.cassette_dir:
        if not directory.is_dir():
            raise UsageError(f"--cassette-dir {directory}: no such directory")
    capabilities = Capabilities(
        reasoning=not args.no_reasoning,
        stream_errors=not args.no_stream_errors,
        text_format=args.text_format,
        text_lag_chars=args.text_lag if args.text_format else 0,
    )
    if not args.show_handler_logs:
        logging.disable(logging.CRITICAL)
    reports: list[Report] = []
    try:
        if args.converter:
            converter_factory = load_factory(args.converter)
            reports.append(
                run_converter_conformance(
                    lambda _api, **options: converter_factory(**options),
                    [bundled_cassette_dir(), *args.cassette_dir],
                    profile=args.profile,
                    seed=args.seed,
                    target=args.converter,
                    apis=[args.format],
                )
            )
        else:
            if args.handler:
                factory, target = load_factory(args.handler), args.handler
            else:
                factory = reference_impl.ApiToolCallStreamingResponseHandler
                target = "ApiToolCallStreamingResponseHandler"
            from conformance.scenario_io import ScenarioFileError, load_scenarios
            from conformance.scenarios import BUILTIN_SCENARIOS
            from conformance.text_formats import text_scenarios

            try:
                saved = load_scenarios(args.scenario_dir)
            except ScenarioFileError as error:
                raise UsageError(str(error)) from error
            builtin = text_scenarios(args.text_format) if args.text_format else BUILTIN_SCENARIOS
            reports.append(
                run_conformance(
                    factory,
                    capabilities=capabilities,
                    profile=args.profile,
                    seed=args.seed,
                    target=target,
                    scenarios=[*builtin, *saved],
                )
            )
            if not args.handler:
                reports += _reference_text_parsers(args)
            if not args.handler:
                from reference_impl.converters import converter_for

                reports.append(
                    run_converter_conformance(
                        converter_for,
                        [bundled_cassette_dir(), *args.cassette_dir],
                        profile=args.profile,
                        seed=args.seed,
                        target="converters (openai-chat, openai-responses, anthropic, gemini)",
                    )
                )
    finally:
        logging.disable(logging.NOTSET)
    report = _merge(
        reports,
        args.handler or args.converter or "the reference implementation (API handler, 3 text parsers, 4 converters)",
    )
    print(render_terminal(report))
    if args.save_failures:
        _save_failures(report, args.save_failures)
    if args.report_json:
        write_json(report, args.report_json)
    if args.junit_xml:
        write_junit(report, args.junit_xml)
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS


def _reference_text_parsers(args: argparse.Namespace) -> list[Any]:
    """The reference ParsingStreamingResponseHandler, once per text format."""
    from functools import partial

    from conformance.text_formats import TEXT_FORMATS, text_scenarios

    reports = []
    for fmt in TEXT_FORMATS:
        factory = partial(reference_impl.ParsingStreamingResponseHandler, fmt)
        lag = reference_impl.ParsingStreamingResponseHandler(fmt).max_holdback_chars
        reports.append(
            run_conformance(
                factory,
                capabilities=Capabilities(text_format=fmt, text_lag_chars=lag),
                profile=args.profile,
                seed=args.seed,
                target=f"ParsingStreamingResponseHandler({fmt!r})",
                scenarios=text_scenarios(fmt),
            )
        )
    return reports


def _save_failures(report: Any, directory: Path) -> None:
    from conformance.scenario_io import save_scenario

    for result in report.by_status("failed"):
        if result.counterexample_scenario is not None and result.counterexample_chunks is not None:
            path = save_scenario(
                directory, result.counterexample_scenario, result.counterexample_chunks, check=result.check.id
            )
            print(f"saved {result.check.id} counterexample: {path}  (re-run: toolcall-conformance rerun {path})")


def _cmd_rerun(args: argparse.Namespace) -> int:
    from conformance.runner import Profile
    from conformance.scenario_io import ScenarioFileError, load_scenarios

    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    try:
        scenarios = load_scenarios(args.paths)
    except ScenarioFileError as error:
        raise UsageError(str(error)) from error
    if not scenarios:
        raise UsageError("no scenario files (*.json) found")
    factory = load_factory(args.handler) if args.handler else reference_impl.ApiToolCallStreamingResponseHandler
    logging.disable(logging.CRITICAL)
    try:
        # Exactly the saved chunks: no re-fragmentation, so the counterexample is what runs.
        report = run_conformance(
            factory,
            capabilities=Capabilities(reasoning=not args.no_reasoning),
            profile=Profile("rerun", 0),
            scenarios=scenarios,
            target=args.handler or "reference implementation",
        )
    finally:
        logging.disable(logging.NOTSET)
    print(render_terminal(report))
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS


def _merge(reports: list[Any], title: str) -> Any:
    """One report over several targets; each check result keeps its own target."""
    first = reports[0]
    first.target = title
    for other in reports[1:]:
        first.results += other.results
        first.scenarios += other.scenarios
        first.examples += other.examples
        first.seconds += other.seconds
    return first


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolcall-conformance`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "replay":
            return _cmd_replay(args)
        if args.command == "rerun":
            return _cmd_rerun(args)
        if args.command == "record":
            return _cmd_record(args)
        if args.command == "cassettes":
            return _cmd_cassettes_check(args)
    except UsageError as error:
        print(f"toolcall-conformance: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


if __name__ == "__main__":
    sys.exit(main())
