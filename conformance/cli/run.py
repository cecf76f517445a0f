"""``toolcall-conformance run``: the checks against a handler, accumulator, converter, formatter, stack or bridge.

Without a target: the whole reference implementation (the API handler, the three text parsers,
the converters and the round-trip formatter). Everything the run will write is validated before
it starts, so a mistyped path fails in a second, not after the search.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import shlex
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import reference_impl
from conformance.cli.common import (
    EXIT_CONFORMANT,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    EXIT_VIOLATIONS,
    UsageError,
    load_factory,
    load_formatter,
    refuse_blank_targets,
    writable_dir,
    writable_file,
)
from conformance.cli.targets import HandlerTarget, add_capability_options, load_stack, resolve_target
from conformance.handler import Capabilities, Counterexample, TargetError, run_conformance
from conformance.handler.scenario_files import ScenarioFileError, load_scenarios, save_scenario
from conformance.report import render_terminal, write_json, write_junit
from conformance.verdict import (
    DEFAULT_COUNTEREXAMPLES,
    HARMS,
    PROFILES,
    CheckResult,
    ProgressStep,
    Report,
    merge_reports,
    parse_harm,
    use_example_database,
)
from conformance.verdict.deadline import DeadlineExceeded, within
from conformance.wire import WIRE_APIS, bundled_cassette_dir
from reference_impl.tools import TOOL_TARGETS as FOLLOWUP_TARGETS  # light; the same tuple as followup's

__all__ = ["add_parser", "progress_display", "run"]

# How often a forced progress display (--progress) writes a line where stderr is not a terminal.
_PROGRESS_EVERY = 10.0


def add_parser(commands: Any) -> None:
    """Declare the ``run`` subcommand and its options."""
    parser = commands.add_parser(
        "run",
        help="run the conformance checks (default target: the reference implementation)",
        description=(
            "Run every contract check against a handler or final-result accumulator (built-in scenarios as written "
            "and re-fragmented, then streams generated from the whole input space), a converter (recordings "
            "replayed through the real SDKs), a round-trip formatter (follow-up requests sent through the real "
            "SDKs, offline) or a whole provider stack (recordings' response bodies in byte pieces, whole and "
            "split; in process with --stack, any language with --bridge). Without a target: the whole reference "
            "implementation."
        ),
        epilog="Exit codes: 0 conformant, 1 violations found, 2 the suite could not run, 130 interrupted.",
    )
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--handler", metavar="MODULE:FACTORY", help="a callable returning a fresh seed-shaped handler")
    target.add_argument(
        "--accumulator",
        metavar="MODULE:FACTORY",
        help="a callable returning a fresh final-result object with add(chunk) and result() (no events)",
    )
    target.add_argument(
        "--converter",
        metavar="MODULE:FACTORY",
        help="a callable taking the wire API name (and converter options) and returning a fresh converter",
    )
    target.add_argument(
        "--stack",
        metavar="MODULE:FACTORY",
        help="a whole provider stack: stack(api, pieces, options) -> final result, or a zero-argument factory "
        "returning one; its 'capabilities' attribute says what it runs (docs/stacks.md)",
    )
    target.add_argument(
        "--bridge",
        metavar="COMMAND",
        help="a target in any language: this command is started once and spoken to in JSON lines (docs/bridge.md)",
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
    parser.add_argument(
        "--format",
        choices=WIRE_APIS,
        action="append",
        metavar="API",
        help="with --converter: the wire API it converts (one); with --stack or a byte-level --bridge: run only the "
        "recordings of this wire API (repeatable; default: the APIs the stack declares, else all). One of "
        + ", ".join(WIRE_APIS),
    )
    parser.add_argument(
        "--cassette-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also check converters and stacks on the recordings (with .expected.json) under DIR; repeatable",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="ci", help="how hard to search (default: ci)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed; the same seed reproduces a run")
    parser.add_argument(
        "--database",
        type=Path,
        metavar="DIR",
        help="opt in to a hypothesis example database: replay what earlier runs saved there first, save what this "
        "run finds (default: none, so the seed alone reproduces a run)",
    )
    add_capability_options(parser)
    parser.add_argument(
        "--show-handler-logs",
        action="store_true",
        help="let the target's own log records and warnings through (silenced by default: it runs thousands of times)",
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
        help="write each failing check's minimal counterexample to DIR as a scenario file (with its target)",
    )
    parser.add_argument(
        "--all-counterexamples",
        action="store_true",
        help=f"show every distinct failure of a check (default: the first {DEFAULT_COUNTEREXAMPLES})",
    )
    parser.add_argument(
        "--fail-on",
        choices=[harm.value for harm in HARMS],
        metavar="HARM",
        help="exit 1 only for findings at least this harmful, worst first: "
        + ", ".join(harm.value for harm in HARMS)
        + " (default: any finding). Findings below it are still reported.",
    )
    parser.add_argument(
        "--realistic",
        action="store_true",
        help="handler runs: draw only input shapes a named server has been seen sending (the reviewed list in "
        "conformance.wire.shapes; docs/realism.md), so the findings first show what users hit",
    )
    parser.add_argument(
        "--generated",
        type=_count,
        metavar="N",
        help="with --stack or a byte-level --bridge: draw N turns per wire API the stack runs, rendered to "
        "bytes (the generated search; default: by profile, 5 dev, 30 ci, 500 deep; 0: the recordings alone)",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show progress (units done / total, elapsed) on stderr even when it is not a terminal, one line every "
        f"{_PROGRESS_EVERY:g} s (default: a live line on a terminal only, nothing in CI logs)",
    )
    parser.add_argument("--report-json", type=Path, metavar="PATH", help="write the JSON report here")
    parser.add_argument("--junit-xml", type=Path, metavar="PATH", help="write a JUnit XML report here")
    parser.set_defaults(command_main=run)


# -- validation before anything runs -------------------------------------------------------------


def _count(text: str) -> int:
    """A non-negative whole number (argparse reports the error with the option's name)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


_TARGET_FIELDS = ("handler", "accumulator", "converter", "stack", "bridge", "formatter")


def _validate(args: argparse.Namespace) -> None:
    refuse_blank_targets(args, _TARGET_FIELDS)
    if args.format and not (args.converter or args.stack or args.bridge):
        raise UsageError("--format goes with --converter, --stack or a byte-level --bridge")
    if args.generated is not None and not (args.stack or args.bridge):
        raise UsageError("--generated goes with --stack or a byte-level --bridge")
    if args.converter and len(args.format or ()) != 1:
        raise UsageError("--converter needs exactly one --format (one of " + ", ".join(WIRE_APIS) + ")")
    if args.followup_targets and not args.formatter:
        raise UsageError("--target goes with --formatter")
    _existing_dirs(args)
    if args.formatter or args.converter:
        _refuse_handler_options(args, "--formatter" if args.formatter else "--converter")
    if args.stack:
        _refuse_handler_options(args, "--stack", stack=True)
    writable_file(args.report_json, "--report-json")
    writable_file(args.junit_xml, "--junit-xml")
    writable_dir(args.save_failures, "--save-failures")


def _existing_dirs(args: argparse.Namespace) -> None:
    for directory in args.cassette_dir:
        if not directory.is_dir():
            raise UsageError(f"--cassette-dir {directory}: no such directory")
    for directory in args.scenario_dir:
        if not directory.exists():
            raise UsageError(f"--scenario-dir {directory}: no such file or directory")


def _refuse_handler_options(args: argparse.Namespace, option: str, *, stack: bool = False) -> None:
    """Options about handler runs that would be silently ignored with ``option``."""
    from conformance.handler import CAPABILITY_OPTIONS

    given = [o.flag for o in CAPABILITY_OPTIONS if getattr(args, o.field)]
    given += [
        flag
        for flag, value in (
            ("--scenario-dir", args.scenario_dir),
            ("--save-failures", args.save_failures and not stack),
            ("--text-format", args.text_format),
            ("--text-lag", args.text_lag is not None),
            ("--adapter", args.adapter),
            ("--cassette-dir", option == "--formatter" and args.cassette_dir),
            ("--realistic", stack and args.realistic),
        )
        if value
    ]
    if given:
        what = "they configure handler runs" + (
            "; a stack declares what it runs in its capabilities attribute" if stack else ""
        )
        raise UsageError(f"not used with {option}: {', '.join(given)} ({what})")


# -- running -----------------------------------------------------------------------------------


class _HeldOutput(io.TextIOBase):
    """Where the target's own ``print`` goes during a run: counted, its start kept, never the report's stream.

    A handler that prints on every chunk runs thousands of times: 1.9 GB went into the report's
    stream once. What it printed is summed up after the run instead (``--show-handler-logs``: let through).
    """

    KEPT = 2000  # characters kept to show

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.start = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if len(self.start) < self.KEPT:
            self.start += text[: self.KEPT - len(self.start)]
        self.size += len(text)
        return len(text)


@contextmanager
def _quiet(show_logs: bool) -> Iterator[None]:
    """Silence the target's own logging, warnings and prints (it runs thousands of times: an SDK's
    serializer warning on one recording would be printed on every split of it) unless asked not to."""
    if show_logs:
        yield
        return
    held = _HeldOutput()
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(held):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(logging.NOTSET)
        if held.size:
            first = held.start.strip().splitlines()[0][:120] if held.start.strip() else ""
            print(
                f"toolcall-conformance: the target printed {held.size:,} characters to stdout during the run, "
                f"held back from the report (first line: {first!r}); --show-handler-logs lets them through",
                file=sys.stderr,
            )


def progress_display(label: str, forced: bool = False) -> Callable[[str], None] | None:
    """The progress display of one target: units done / total, the unit, the elapsed time.

    On an interactive stderr, one line rewritten in place; elsewhere (CI logs) nothing, unless
    ``forced`` (``--progress``): then a plain line at most every ``_PROGRESS_EVERY`` seconds, and at
    each phase's last unit. Every runner calls it with a ``ProgressStep`` (a plain ``str`` shows
    without counts).
    """
    interactive = sys.stderr.isatty()
    if not (interactive or forced):
        return None
    started = time.monotonic()
    last_line = -_PROGRESS_EVERY

    def show(step: str) -> None:
        nonlocal last_line
        elapsed = time.monotonic() - started
        # Counts and time first: a line cut to the terminal's width loses the end of the step's name.
        where = f"{step.done}/{step.total}, " if isinstance(step, ProgressStep) else ""
        line = f"{label}: [{where}{elapsed:.0f}s] {step}"
        if interactive:
            width = max(20, shutil.get_terminal_size().columns - 1)
            sys.stderr.write(f"\r\033[K{line[:width]}")
        else:
            final = isinstance(step, ProgressStep) and step.done + 1 >= step.total
            if elapsed - last_line < _PROGRESS_EVERY and not final:
                return
            last_line = elapsed
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    return show


def _clear_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")


@contextmanager
def _building(args: argparse.Namespace, option: str, spec: str) -> Iterator[None]:
    """Building the target (its class or factory) is its code too: it gets the run's deadline."""
    try:
        with within(args.deadline or None, lambda: f"building {option} {spec}"):
            yield
    except DeadlineExceeded as error:
        raise UsageError(f"{option} {spec!r}: building it {error}; a target that blocks cannot be checked") from None


def _run_handler(args: argparse.Namespace, target: HandlerTarget) -> Report:
    try:
        saved = load_scenarios(args.scenario_dir)
    except ScenarioFileError as error:
        raise UsageError(str(error)) from error
    if args.scenario_dir and not saved:
        raise UsageError(f"--scenario-dir {', '.join(map(str, args.scenario_dir))}: no scenario files (*.json) found")
    try:
        report = run_conformance(
            target.factory,
            capabilities=target.capabilities,
            profile=args.profile,
            seed=args.seed,
            extra_scenarios=saved,
            adapter=target.adapter,
            target=target.spec,
            on_progress=progress_display(target.spec, args.progress),
            deadline=target.deadline,
            keep_counterexamples=None if args.all_counterexamples else DEFAULT_COUNTEREXAMPLES,
            realistic=args.realistic,
        )
    except TargetError as error:
        raise UsageError(f"cannot run {target.spec}: {error}") from error
    report.target_spec = {**target.saved(), **report.target_spec}
    return report


def _run_converter(args: argparse.Namespace) -> Report:
    from conformance.converter import run_converter_conformance
    from conformance.converter.factory import ConverterFactoryError, as_converter_factory

    factory = load_factory(args.converter, "--converter")
    try:
        as_converter_factory(factory, args.converter)
    except ConverterFactoryError as error:
        raise UsageError(f"--converter {error}") from error
    return run_converter_conformance(
        factory,
        [bundled_cassette_dir(), *args.cassette_dir],
        profile=args.profile,
        seed=args.seed,
        target=args.converter,
        apis=list(args.format),
        on_progress=progress_display(args.converter, args.progress),
        deadline=args.deadline or None,
    )


def _run_formatter(args: argparse.Namespace) -> Report:
    from conformance.roundtrip import run_roundtrip_conformance

    with _building(args, "--formatter", args.formatter):
        formatter = load_formatter(args.formatter)
    return run_roundtrip_conformance(
        formatter,
        targets=args.followup_targets,
        profile=args.profile,
        seed=args.seed,
        target_label=args.formatter,
        on_progress=progress_display(args.formatter, args.progress),
        deadline=args.deadline or None,
    )


def _run_reference(args: argparse.Namespace) -> list[Report]:
    """The whole reference implementation: API handler, text parsers, converters, formatter."""
    from conformance.converter import run_converter_conformance
    from conformance.roundtrip import run_roundtrip_conformance
    from conformance.turns import TEXT_FORMATS
    from reference_impl.converters import CONVERTERS, converter_for
    from reference_impl.followup import ReferenceFormatter

    reports = [_run_handler(args, resolve_target(None, "handler", args))]
    for fmt in TEXT_FORMATS:
        lag = reference_impl.ParsingStreamingResponseHandler(fmt).max_holdback_chars
        reports.append(
            run_conformance(
                partial(reference_impl.ParsingStreamingResponseHandler, fmt),
                capabilities=Capabilities(text_format=fmt, text_lag_chars=lag),
                profile=args.profile,
                seed=args.seed,
                target=f"ParsingStreamingResponseHandler({fmt!r})",
                on_progress=progress_display(f"text parser {fmt}", args.progress),
            )
        )
    reports.append(
        run_converter_conformance(
            converter_for,
            [bundled_cassette_dir(), *args.cassette_dir],
            profile=args.profile,
            seed=args.seed,
            target=f"converters ({', '.join(CONVERTERS)})",
            on_progress=progress_display("converters", args.progress),
        )
    )
    reports.append(
        run_roundtrip_conformance(
            ReferenceFormatter(),
            profile=args.profile,
            seed=args.seed,
            target_label=f"round-trip ReferenceFormatter ({', '.join(FOLLOWUP_TARGETS)})",
            on_progress=progress_display("round-trip formatter", args.progress),
        )
    )
    return reports


def _run_stack(args: argparse.Namespace) -> Report:
    """A whole provider stack in this process, on the bundled recordings and ``--cassette-dir``."""
    from conformance.stack import StackCapabilities, StackFactoryError, close_stack, run_stack_conformance

    with _building(args, "--stack", args.stack):
        target = load_stack(args.stack)
    try:
        capabilities = (target.capabilities or StackCapabilities()).restricted_to(args.format)
    except ValueError as error:
        raise UsageError(f"--format: {error}") from error
    try:
        report = run_stack_conformance(
            target.stack,
            [bundled_cassette_dir(), *args.cassette_dir],
            capabilities=capabilities,
            profile=args.profile,
            seed=args.seed,
            target=args.stack,
            on_progress=progress_display(args.stack, args.progress),
            generated=args.generated,
            deadline_seconds=args.deadline or None,
        )
    except BaseException:
        with contextlib.suppress(StackFactoryError):  # the run's own error is the one to report
            close_stack(target)
        raise
    report.target_spec = {"kind": "stack", "spec": args.stack, "capabilities": capabilities.declared()}
    try:
        close_stack(target)
    except StackFactoryError as error:
        # The verdict stands and is printed; the exit code still says the target misbehaved.
        report.cleanup_error = f"--stack {error}"
    return report


def _run_bridge(args: argparse.Namespace) -> Report:
    from conformance.bridge.command import run_from_args

    try:
        return run_from_args(args, progress_display(args.bridge, args.progress))
    except TargetError as error:
        raise UsageError(f"cannot run --bridge {args.bridge!r}: {error}") from error


def _reports(args: argparse.Namespace) -> list[Report]:
    if args.bridge:
        return [_run_bridge(args)]
    if args.stack:
        return [_run_stack(args)]
    if args.formatter:
        return [_run_formatter(args)]
    if args.converter:
        return [_run_converter(args)]
    if args.handler or args.accumulator:
        kind = "handler" if args.handler else "accumulator"
        return [_run_handler(args, resolve_target(args.handler or args.accumulator, kind, args))]
    return _run_reference(args)


def run(args: argparse.Namespace) -> int:
    """Run the checks, print the report, write the requested files; the exit code says the verdict."""
    _validate(args)
    if args.database is not None:
        if args.database.exists() and not args.database.is_dir():
            raise UsageError(f"--database {args.database}: not a directory")
        use_example_database(args.database)
    title = (
        args.formatter
        or args.bridge
        or args.stack
        or args.handler
        or args.accumulator
        or args.converter
        or "the reference implementation (API handler, 3 text parsers, converters, round-trip formatter)"
    )
    interrupted = False
    with _quiet(args.show_handler_logs):
        try:
            reports = _reports(args)
        except KeyboardInterrupt:
            reports, interrupted = [], True
        except SystemExit as exit_:
            # The code under test ended the process (sys.exit): without this, its exit status
            # (0 too) would be the run's, with no report: a silent pass.
            raise UsageError(
                f"the target raised SystemExit({exit_.code!r}) (sys.exit() or exit() in its code) during the run; "
                "nothing was judged"
            ) from None
        finally:
            _clear_progress()
    if not reports:
        print("toolcall-conformance: interrupted before any target finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return _conclude(args, reports, title, interrupted)


def _conclude(args: argparse.Namespace, reports: list[Report], title: str, interrupted: bool) -> int:
    """Print and write the merged report; the exit code says the verdict (2 when a target could not be
    released after its run, the report being complete)."""
    specs = {r.target: r.target_spec for r in reports}
    report = merge_reports(reports, title)
    report.fail_on = parse_harm(args.fail_on) if args.fail_on else None
    print(render_terminal(report))
    unwritten = _write_outputs(args, report, specs)
    if interrupted or report.stopped.startswith("interrupted"):
        return EXIT_INTERRUPTED
    cleanup = [r.cleanup_error for r in reports if r.cleanup_error] + unwritten
    for error in cleanup:
        print(f"toolcall-conformance: error: {error} (after the run: the report above is complete)", file=sys.stderr)
    if cleanup:
        return EXIT_USAGE
    return EXIT_CONFORMANT if report.passes else EXIT_VIOLATIONS


def _write_outputs(args: argparse.Namespace, report: Report, specs: dict[str, dict[str, Any]]) -> list[str]:
    """Write the requested files; what could not be written (a full device, a folder removed during the
    run) is returned as an error each, so the exit code says it (2) after the verdict was printed."""
    errors = []
    writers: list[tuple[str, Path | None, Callable[[Path], object]]] = [
        ("--save-failures", args.save_failures, lambda path: _save_failures(report, path, specs)),
        ("--report-json", args.report_json, lambda path: write_json(report, path)),
        ("--junit-xml", args.junit_xml, lambda path: write_junit(report, path, rerun=_rerun_command(args, report))),
    ]
    for option, path, write in writers:
        if path is None:
            continue
        try:
            (path if option == "--save-failures" else path.parent).mkdir(parents=True, exist_ok=True)
            write(path)
        except OSError as error:
            errors.append(f"{option} {path}: could not be written: {error.strerror or error}")
    return errors


# Options that name where files go, not what runs: left out of the re-run line.
_OUTPUT_OPTIONS = ("--junit-xml", "--report-json", "--save-failures", "--progress")


def _rerun_command(args: argparse.Namespace, report: Report) -> str:
    """The command that runs the same checks again: what was typed, outputs left out, profile and seed named."""
    typed = list(getattr(args, "argv", None) or ["run"])
    kept: list[str] = []
    skip = False
    for word in typed:
        if skip:
            skip = False
            continue
        option = word.split("=", 1)[0]
        if option in _OUTPUT_OPTIONS:
            skip = "=" not in word and option != "--progress"
            continue
        kept.append(word)
    if "--profile" not in " ".join(kept):
        kept += ["--profile", report.profile]
    if "--seed" not in " ".join(kept):
        kept += ["--seed", str(report.seed)]
    return "toolcall-conformance " + shlex.join(kept)


def _save_failures(report: Report, directory: Path, specs: dict[str, dict[str, Any]]) -> None:
    """Write what failed under ``directory``: a handler's minimal counterexamples as scenario files,
    a stack's failing recordings as bodies with their expectations (``conformance.stack.failures``)."""
    from conformance.stack import StackFinding, save_failures

    saved = []
    stacks: dict[str, list[CheckResult]] = {}
    for result in report.by_status("failed"):
        for number, counterexample in enumerate(result.counterexamples):
            found = counterexample.input
            if isinstance(found, StackFinding):
                stacks.setdefault(result.target, []).append(result)
                break
            if isinstance(found, Counterexample):
                suffix = f"-{number + 1}" if number else ""
                saved.append(
                    save_scenario(
                        directory,
                        found.scenario,
                        found.chunks,
                        check=result.check.id + suffix,
                        target=specs.get(result.target) or None,
                    )
                )
    for path in saved:
        print(f"saved counterexample: {path}")
    if saved:
        print(f"re-run them against the same target: toolcall-conformance rerun {directory} --use-saved-target")
    for target, results in stacks.items():
        _saved_recordings(save_failures(results, directory, specs.get(target) or {}), directory, specs.get(target))


def _saved_recordings(paths: list[Path], directory: Path, spec: dict[str, Any] | None) -> None:
    """Say what was saved and how to run it again (bodies, expectations, pieces of a split)."""
    bodies = [path for path in paths if not path.name.endswith(".json")]
    for path in paths:
        print(f"saved failing recording: {path}" if path in bodies else f"  beside it: {path.name}")
    if not bodies:
        return
    target = ""
    if spec and spec.get("kind") == "stack":
        target = f"--stack {spec['spec']}"
    elif spec and spec.get("kind") == "bridge":
        target = f"--bridge {shlex.quote(str(spec.get('command') or ''))}"
    if target:
        print(f"re-run them against the same target: toolcall-conformance run {target} --cassette-dir {directory}")
    from conformance.stack.repro import CLIENTS
    from conformance.wire import WireFormatError, load_body

    for body in bodies:
        try:
            api = load_body(body).api
        except WireFormatError:
            continue
        client = next((name for name, apis in CLIENTS.items() if api in apis), None)
        if client is not None:
            print(
                f"reproduce one without this suite: toolcall-conformance repro {body} --client {client} "
                "--call MODULE:FUNCTION (your f(client) -> result; without --call the script runs the SDK's own "
                "stream helper, not your stack)"
            )
            return
