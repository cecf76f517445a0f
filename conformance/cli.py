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
from reference_impl.tools import TOOL_TARGETS as FOLLOWUP_TARGETS  # light; the same tuple as followup's

EXIT_CONFORMANT = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A command-line problem the user can fix; printed without a traceback, exit code 2."""


def _import_attribute(spec: str, option: str, example: str, shape: str) -> Any:
    """Import ``MODULE:ATTRIBUTE`` (dotted attributes allowed) and return the object it names."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"{option} must look like {shape} (e.g. {example}), got {spec!r}")
    # Like `python -m`, uvicorn or gunicorn: a module in the working directory is importable even
    # when the console script's own sys.path does not include it.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import module {module_name!r} from {option} {spec!r}: {error}") from error
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise UsageError(
                f"module {module_name!r} has no attribute {attribute!r} (from {option} {spec!r})"
            ) from error
    return target


def load_factory(spec: str, option: str = "--handler") -> Callable[..., Any]:
    """Import ``MODULE:ATTRIBUTE`` and return the callable it names (``option`` names the flag in errors)."""
    example = "mypkg.handlers:make_handler" if option == "--handler" else "mypkg.providers:make_converter"
    target = _import_attribute(spec, option, example, "MODULE:FACTORY")
    if not callable(target):
        raise UsageError(f"{spec!r} names a {type(target).__name__}, not a callable factory (from {option})")
    return target  # type: ignore[no-any-return]


def load_formatter(spec: str, option: str = "--formatter") -> Any:
    """Import ``MODULE:ATTRIBUTE`` naming a round-trip formatter and return it as a ``FormatterAdapter``.

    The attribute may be a formatter object, a class or zero-argument factory returning one, or a
    bare ``format_followup(target, turn, results)`` function (see ``conformance.roundtrip``). Anything
    unusable (not a formatter, a factory that raises, unknown declared targets) is a ``UsageError``.
    """
    from conformance.roundtrip import as_formatter

    target = _import_attribute(spec, option, "mypkg.followup:MyFormatter", "MODULE:ATTR")
    if not callable(target) and not hasattr(target, "format_followup"):
        raise UsageError(
            f"{spec!r} names a {type(target).__name__}, not a round-trip formatter (no format_followup method), "
            f"class or factory (from {option})"
        )
    try:
        return as_formatter(target, spec)
    except Exception as error:  # the user's factory or constructor may raise anything
        raise UsageError(
            f"{option} {spec!r} is not a usable round-trip formatter: {type(error).__name__}: {error}"
        ) from error


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolcall-conformance",
        description="Conformance suite for streaming LLM tool-call handlers, converters and round-trip formatters.",
        epilog="Exit codes: 0 conformant, 1 violations found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {reference_impl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run the conformance checks (default target: the reference implementation)",
        description=(
            "Run every contract check against a handler (built-in scenarios re-fragmented by hypothesis), a "
            "converter (recordings replayed through the real SDKs) or a round-trip formatter (follow-up requests "
            "sent through the real SDKs, offline). Without a target: the whole reference implementation."
        ),
    )
    target = run.add_mutually_exclusive_group()
    target.add_argument("--handler", metavar="MODULE:FACTORY", help="a callable returning a fresh seed-shaped handler")
    target.add_argument(
        "--converter",
        metavar="MODULE:FACTORY",
        help="a callable taking the wire API name and returning a fresh converter (see reference_impl.converters)",
    )
    target.add_argument(
        "--formatter",
        metavar="MODULE:ATTR",
        help="a round-trip formatter (object, class, factory or format_followup function; see conformance.roundtrip)",
    )
    run.add_argument(
        "--target",
        dest="followup_targets",
        action="append",
        choices=FOLLOWUP_TARGETS,
        metavar="TARGET",
        help="with --formatter: check only this provider target (repeatable; default: the formatter's declared "
        "targets, or all of " + ", ".join(FOLLOWUP_TARGETS) + ")",
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

    demo = commands.add_parser(
        "demo",
        help="the offline multi-turn agent demo: tools called, results sent back, final answer",
        description=(
            "Run the reference agent against the bundled multi-turn cassettes through the real SDKs, offline: "
            "the tool calls detected, the results the next request sent back, and the final answer."
        ),
    )
    demo.add_argument("--api", choices=WIRE_APIS, help="only this wire API (default: all four)")
    demo.add_argument("--chunk-bytes", type=int, metavar="N", help="serve each response body in pieces of N bytes")
    demo.add_argument(
        "--cassette-dir", type=Path, metavar="DIR", help="multi-turn cassettes to run (default: the bundled ones)"
    )
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
    if args.followup_targets and not args.formatter:
        raise UsageError("--target goes with --formatter")
    if args.formatter:
        _reject_handler_options(args, "--formatter")
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
        if args.formatter:
            from conformance.roundtrip import run_roundtrip_conformance

            formatter = load_formatter(args.formatter)
            reports.append(
                run_roundtrip_conformance(
                    formatter,
                    targets=args.followup_targets,
                    profile=args.profile,
                    seed=args.seed,
                    target_label=args.formatter,
                )
            )
        elif args.converter:
            converter_factory = load_factory(args.converter, "--converter")
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
                reports.append(_reference_formatter(args))
    finally:
        logging.disable(logging.NOTSET)
    report = _merge(
        reports,
        args.formatter
        or args.handler
        or args.converter
        or "the reference implementation (API handler, 3 text parsers, 4 converters, round-trip formatter)",
    )
    print(render_terminal(report))
    if args.save_failures:
        _save_failures(report, args.save_failures)
    if args.report_json:
        write_json(report, args.report_json)
    if args.junit_xml:
        write_junit(report, args.junit_xml)
    return EXIT_CONFORMANT if report.conformant else EXIT_VIOLATIONS


def _reject_handler_options(args: argparse.Namespace, option: str) -> None:
    """Options about handler or converter runs that would be silently ignored with ``option``."""
    given = [
        flag
        for flag, value in (
            ("--cassette-dir", args.cassette_dir),
            ("--scenario-dir", args.scenario_dir),
            ("--save-failures", args.save_failures),
            ("--text-format", args.text_format),
            ("--text-lag", args.text_lag is not None),
            ("--no-reasoning", args.no_reasoning),
            ("--no-stream-errors", args.no_stream_errors),
        )
        if value
    ]
    if given:
        raise UsageError(f"not used with {option}: {', '.join(given)} (they configure handler and converter runs)")


def _reference_formatter(args: argparse.Namespace) -> Any:
    """The round-trip checks against ``reference_impl.followup.ReferenceFormatter``, on every target."""
    from conformance.roundtrip import run_roundtrip_conformance
    from reference_impl.followup import ReferenceFormatter

    return run_roundtrip_conformance(
        ReferenceFormatter(),
        profile=args.profile,
        seed=args.seed,
        target_label=f"round-trip ReferenceFormatter ({', '.join(FOLLOWUP_TARGETS)})",
    )


def _cmd_demo(args: argparse.Namespace) -> int:
    """The offline multi-turn demo (``conformance.roundtrip.run_demo``) on the bundled or given cassettes."""
    from conformance.roundtrip import load_multiturn_cassette, multiturn_cassette_paths, run_demo

    if args.chunk_bytes is not None and args.chunk_bytes < 1:
        raise UsageError("--chunk-bytes must be a positive size")
    if args.cassette_dir is not None and not args.cassette_dir.is_dir():
        raise UsageError(f"--cassette-dir {args.cassette_dir}: no such directory")
    # Cassettes live in <dir>/<api>/<name>.yaml; run_demo filters the same way.
    paths = [p for p in multiturn_cassette_paths(args.cassette_dir) if args.api is None or p.parent.name == args.api]
    if not paths:
        where = args.cassette_dir or "the bundled cassettes"
        raise UsageError(f"no multi-turn cassettes{' for ' + args.api if args.api else ''} under {where}")
    for path in paths:  # a folder holding something other than multi-turn cassettes is a usage error
        try:
            load_multiturn_cassette(path)
        except Exception as error:  # YAML errors, missing keys, not a multi-turn cassette
            detail = str(error) if str(path) in str(error) else f"{path}: {type(error).__name__}: {error}"
            raise UsageError(f"cannot run the demo: {detail}") from error
    return run_demo(args.api, args.cassette_dir, chunk_bytes=args.chunk_bytes)


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
        if args.command == "demo":
            return _cmd_demo(args)
    except UsageError as error:
        print(f"toolcall-conformance: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


if __name__ == "__main__":
    sys.exit(main())
