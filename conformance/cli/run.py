"""``toolcall-conformance run``: the checks against a handler, converter or formatter (default: the reference)."""

from __future__ import annotations

import argparse
import logging
from functools import partial
from pathlib import Path
from typing import Any

import reference_impl
from conformance.cli.common import (
    EXIT_CONFORMANT,
    EXIT_VIOLATIONS,
    UsageError,
    load_factory,
    load_formatter,
)
from conformance.handler import Capabilities, run_conformance
from conformance.report import render_terminal, write_json, write_junit
from conformance.verdict import PROFILES, Report, merge_reports
from conformance.wire import WIRE_APIS
from reference_impl.tools import TOOL_TARGETS as FOLLOWUP_TARGETS  # light; the same tuple as followup's

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Declare the ``run`` subcommand and its options."""
    parser = commands.add_parser(
        "run",
        help="parser the conformance checks (default target: the reference implementation)",
        description=(
            "Run every contract check against a handler (built-in scenarios re-fragmented by hypothesis), a "
            "converter (recordings replayed through the real SDKs) or a round-trip formatter (follow-up requests "
            "sent through the real SDKs, offline). Without a target: the whole reference implementation."
        ),
    )
    target = parser.add_mutually_exclusive_group()
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
    parser.add_argument(
        "--target",
        dest="followup_targets",
        action="append",
        choices=FOLLOWUP_TARGETS,
        metavar="TARGET",
        help="with --formatter: check only this provider target (repeatable; default: the formatter's declared "
        "targets, or all of " + ", ".join(FOLLOWUP_TARGETS) + ")",
    )
    parser.add_argument("--format", choices=WIRE_APIS, help="with --converter: the wire API it converts")
    parser.add_argument(
        "--cassette-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also check converters on the recordings (with .expected.json) under DIR; repeatable",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="ci", help="how hard to search (default: ci)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed; the same seed reproduces a run")
    parser.add_argument("--no-reasoning", action="store_true", help="the handler does not support chunk.reasoning")
    parser.add_argument("--no-stream-errors", action="store_true", help="the handler ignores ChunkResponse.error")
    parser.add_argument(
        "--text-format",
        choices=["xml", "json", "sentinel"],
        help="the handler parses tool calls embedded in text in this format (checked on text scenarios)",
    )
    parser.add_argument(
        "--text-lag", type=int, metavar="N", help="with --text-format: the most text characters the handler holds back"
    )
    parser.add_argument(
        "--show-handler-logs",
        action="store_true",
        help="let the handler's own log records through (silenced by default: it runs thousands of times)",
    )
    parser.add_argument(
        "--scenario-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="add the saved scenarios (*.json) under DIR to the built-in ones; repeatable",
    )
    parser.add_argument(
        "--save-failures",
        type=Path,
        metavar="DIR",
        help="write each failing check's minimal counterexample to DIR as a scenario file",
    )
    parser.add_argument("--report-json", type=Path, metavar="PATH", help="write the JSON report here")
    parser.add_argument("--junit-xml", type=Path, metavar="PATH", help="write a JUnit XML report here")
    parser.set_defaults(command_main=run)


def run(args: argparse.Namespace) -> int:
    from conformance.converter import run_converter_conformance
    from conformance.wire.cases import bundled_cassette_dir

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
            from conformance.handler.scenario_files import ScenarioFileError, load_scenarios
            from conformance.handler.scenarios import BUILTIN_SCENARIOS
            from conformance.handler.text_scenarios import text_scenarios

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
    report = merge_reports(
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


def _reference_text_parsers(args: argparse.Namespace) -> list[Any]:
    """The reference ParsingStreamingResponseHandler, once per text format."""

    from conformance.handler.text_scenarios import text_scenarios
    from conformance.turns.text_formats import TEXT_FORMATS

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


def _save_failures(report: Report, directory: Path) -> None:
    from conformance.handler import Counterexample
    from conformance.handler.scenario_files import save_scenario

    for result in report.by_status("failed"):
        found = result.counterexample_input
        if isinstance(found, Counterexample):
            path = save_scenario(directory, found.scenario, found.chunks, check=result.check.id)
            print(f"saved {result.check.id} counterexample: {path}  (re-run: toolcall-conformance rerun {path})")
