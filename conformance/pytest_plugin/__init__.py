"""pytest integration: base classes to subclass, and a plugin with ``--toolcall-*`` options.

Subclass ``HandlerConformanceTests`` in your own test suite::

    from conformance.pytest_plugin import HandlerConformanceTests
    from conformance import Capabilities

    class TestMyHandler(HandlerConformanceTests):
        capabilities = Capabilities(reasoning=False)

        def handler_factory(self, **callbacks):
            return MyHandler(**callbacks)

Every check becomes one test (``test_<check_id>``): a violation fails with its minimal
counterexample, a check your capabilities rule out is *skipped* by name. To override a check you
must mark the override ``@pytest.mark.xfail(reason=...)``; an unmarked override is rejected when
the class is defined, so a check cannot be silenced by accident. ``ConverterConformanceTests``,
``FormatterConformanceTests`` and ``StackConformanceTests`` do the same for converters, round-trip
formatters and whole provider stacks (``conformance.pytest_plugin.bases``).

Or run the suite on a factory without writing any test: ``pytest --toolcall-handler pkg.mod:factory``
(ini key ``toolcall_handler``; ``--toolcall-converter``, ``--toolcall-formatter`` and
``--toolcall-stack`` likewise), with
``--toolcall-profile`` and ``--toolcall-seed``. Every generated test carries the
``toolcall_conformance`` marker. Under pytest-xdist each worker runs the suite for the classes it
was given; ``--dist loadscope`` keeps one class on one worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.handler import CAPABILITY_OPTIONS
from conformance.handler.capabilities import TEXT_FORMATS
from conformance.pytest_plugin.bases import (
    MARKER,
    AccumulatorConformanceTests,
    ConverterConformanceTests,
    FormatterConformanceTests,
    HandlerConformanceTests,
    StackConformanceTests,
    profile_and_seed,
)
from conformance.verdict import (
    HARMS,
    PROFILES,
    example_database,
    register_hypothesis_profiles,
    use_example_database,
)
from conformance.wire import WIRE_APIS as WIRE_APIS_ALL

__all__ = [
    "AccumulatorConformanceTests",
    "ConverterConformanceTests",
    "FormatterConformanceTests",
    "HandlerConformanceTests",
    "StackConformanceTests",
]
# The toolcall_replay fixture and toolcall_cassettes marker: conformance/pytest_plugin/replay_fixture.py.
pytest_plugins = ["conformance.pytest_plugin.replay_fixture"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolcall-conformance", "streaming tool-call conformance")
    group.addoption("--toolcall-handler", metavar="MODULE:FACTORY", help="run the conformance suite on this handler")
    group.addoption("--toolcall-profile", choices=sorted(PROFILES), help="search effort (default: ci)")
    group.addoption("--toolcall-seed", type=int, help="hypothesis seed for the conformance runs (default: 0)")
    group.addoption(
        "--toolcall-adapter",
        metavar="MODULE:OBJECT",
        help="a HandlerAdapter for a --toolcall-handler that is not seed-shaped (chunks in, events out)",
    )
    group.addoption(
        "--toolcall-database",
        metavar="DIR",
        help="opt in to a hypothesis example database: replay what earlier runs (or HypoFuzz) saved there first "
        "(default: none, so a run is reproducible from its seed alone)",
    )
    group.addoption(
        "--toolcall-converter",
        metavar="MODULE:FACTORY",
        help="run the converter checks on this factory(api, **options)",
    )
    group.addoption(
        "--toolcall-formatter",
        metavar="MODULE:ATTR",
        help="run the round-trip checks on this formatter (object, class, factory or format_followup function)",
    )
    group.addoption(
        "--toolcall-stack",
        metavar="MODULE:FACTORY",
        help="run the stack checks on this stack(api, pieces, options), or a zero-argument factory of one "
        "(docs/stacks.md)",
    )
    group.addoption(
        "--toolcall-cassette-dir",
        action="append",
        metavar="DIR",
        help="also run the converter checks (or, with --toolcall-stack, the stack checks) on the recordings under DIR "
        "(repeatable)",
    )
    group.addoption(
        "--toolcall-accumulator",
        metavar="MODULE:FACTORY",
        help="run the conformance suite on this final-result accumulator (add(chunk) / result())",
    )
    for option in CAPABILITY_OPTIONS:
        if option.valued:
            group.addoption(
                option.pytest_option, dest="toolcall_" + option.field, metavar=option.metavar, help=option.help
            )
            parser.addini(
                option.ini_key, f"{option.metavar}: the capability {option.field} (CLI {option.flag})", default=""
            )
        else:
            group.addoption(
                option.pytest_option, dest="toolcall_" + option.field, action="store_true", help=option.help
            )
            parser.addini(option.ini_key, f"true/false: the capability {option.field} (CLI {option.flag})", default="")
    group.addoption("--toolcall-text-format", choices=TEXT_FORMATS, help="the handler parses tool calls from text")
    group.addoption("--toolcall-text-lag", metavar="N|none", help="the most text characters the handler holds back")
    parser.addini("toolcall_text_format", "xml, json or sentinel: the handler parses tool calls from text", default="")
    parser.addini("toolcall_text_lag", "the most text characters the handler holds back (or none)", default="")
    parser.addini("toolcall_accumulator", "accumulator factory (MODULE:FACTORY) to run the suite on", default="")
    group.addoption(
        "--toolcall-format",
        action="append",
        choices=WIRE_APIS_ALL,
        metavar="API",
        help="with a converter: the wire API it converts; with a stack: run only the recordings of this API "
        "(repeatable; default: every API of the recordings, or what the stack declares)",
    )
    parser.addini("toolcall_format", "wire APIs the converter converts (the stack runs)", type="args", default=[])
    parser.addini("toolcall_handler", "handler factory (MODULE:FACTORY) to run the conformance suite on", default="")
    parser.addini("toolcall_profile", "conformance profile: dev, ci or deep", default="")
    group.addoption(
        "--toolcall-fail-on",
        choices=[harm.value for harm in HARMS],
        help="fail a check's test only for findings at least this harmful (worst first: "
        + ", ".join(harm.value for harm in HARMS)
        + "); findings below it are reported as xfail (default: every finding fails)",
    )
    parser.addini("toolcall_fail_on", "the least harm that fails a check's test (see --toolcall-fail-on)", default="")
    group.addoption(
        "--toolcall-realistic",
        action="store_true",
        help="draw only input shapes a named server has been seen sending (conformance.wire.shapes)",
    )
    parser.addini(
        "toolcall_realistic", "true/false: draw only observed input shapes (--toolcall-realistic)", default=""
    )
    parser.addini("toolcall_seed", "hypothesis seed for conformance runs", default="")
    parser.addini("toolcall_database", "hypothesis example database directory (opt-in)", default="")
    parser.addini("toolcall_adapter", "HandlerAdapter (MODULE:OBJECT) for toolcall_handler", default="")
    parser.addini("toolcall_converter", "converter factory (MODULE:FACTORY) to run the converter checks on", default="")
    parser.addini("toolcall_formatter", "round-trip formatter (MODULE:ATTR) for the round-trip checks", default="")
    parser.addini("toolcall_stack", "stack (MODULE:FACTORY) to run the stack checks on", default="")
    parser.addini("toolcall_cassette_dirs", "recording directories for the converter checks", type="paths", default=[])


def _wants_handler(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_handler") or config.getini("toolcall_handler"))


def _wants_accumulator(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_accumulator") or config.getini("toolcall_accumulator"))


def _wants_converter(config: pytest.Config) -> bool:
    # Recordings alone (--toolcall-cassette-dir) mean the converter checks, unless they are for a stack.
    return bool(
        config.getoption("toolcall_converter")
        or config.getini("toolcall_converter")
        or (config.getoption("toolcall_cassette_dir") and not _wants_stack(config))
    )


def _wants_stack(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_stack") or config.getini("toolcall_stack"))


def _wants_formatter(config: pytest.Config) -> bool:
    return bool(config.getoption("toolcall_formatter") or config.getini("toolcall_formatter"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the generated test classes the command line asked for (the others are deselected)."""
    unwanted = set()
    if not _wants_handler(config):
        unwanted.add("TestToolcallConformance")
    if not _wants_accumulator(config):
        unwanted.add("TestToolcallAccumulatorConformance")
    if not _wants_converter(config):
        unwanted.add("TestToolcallConverterConformance")
    if not _wants_formatter(config):
        unwanted.add("TestToolcallFormatterConformance")
    if not _wants_stack(config):
        unwanted.add("TestToolcallStackConformance")
    dropped = [
        item
        for item in items
        if item.path.name == "_generated_tests.py" and getattr(getattr(item, "cls", None), "__name__", "") in unwanted
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


# The generated tests' module lives in the installed package, outside the user's rootdir, where
# pytest would give it no usable node id ("::TestToolcallConformance::test_x"). It is collected
# under this name instead, and an argument spelled with it is mapped back to the real file, so a
# node id from a report can be pasted into the next pytest command.
GENERATED_MODULE = "toolcall_conformance_generated.py"
_PREVIOUS_DATABASE = pytest.StashKey[Path | None]()
_GENERATED_PATH = Path(__file__).with_name("_generated_tests.py")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The profile and seed every toolcall-conformance run in this session uses, so a log reproduces it,
    and what of hypothesis's own options it does not follow."""
    profile, seed = profile_and_seed(config)
    header = f"toolcall-conformance: profile {profile}, seed {seed} (--toolcall-profile, --toolcall-seed)"
    database = example_database()
    lines = [header + (f"; example database {database}" if database is not None else "")]
    hypothesis_profile = config.getoption("hypothesis_profile", default=None)
    if hypothesis_profile:
        lines.append(
            f"toolcall-conformance: --hypothesis-profile {hypothesis_profile} does not change its searches: their "
            "effort is --toolcall-profile dev|ci|deep (toolcall_replay.fuzz: --toolcall-replay-examples N)"
        )
    toolcall_seed = config.getoption("toolcall_seed", default=None)
    hypothesis_seed = config.getoption("hypothesis_seed", default=None)
    if toolcall_seed is not None and hypothesis_seed is not None and str(toolcall_seed) != str(hypothesis_seed):
        lines.append(
            f"toolcall-conformance: warning: --toolcall-seed {toolcall_seed} and --hypothesis-seed {hypothesis_seed} "
            f"disagree; the conformance runs and toolcall_replay use {toolcall_seed}"
        )
    return lines


def _database_option(config: pytest.Config) -> str | None:
    value = config.getoption("--toolcall-database") or str(config.getini("toolcall_database") or "")
    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():  # an ini path is relative to the ini file, an option to the invocation dir
        base = config.inipath.parent if not config.getoption("--toolcall-database") and config.inipath else Path.cwd()
        path = base / path
    return str(path)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: a toolcall-conformance contract check")
    register_hypothesis_profiles()
    config.stash[_PREVIOUS_DATABASE] = example_database()
    use_example_database(_database_option(config))
    config.args[:] = [
        str(_GENERATED_PATH) + arg[len(GENERATED_MODULE) :] if arg.startswith(GENERATED_MODULE) else arg
        for arg in config.args
    ]
    wanted = (
        _wants_handler(config)
        or _wants_accumulator(config)
        or _wants_converter(config)
        or _wants_formatter(config)
        or _wants_stack(config)
    )
    if wanted and not any(arg.startswith(str(_GENERATED_PATH)) for arg in config.args):
        # Collect the generated test module alongside whatever the user asked for.
        config.args.append(str(_GENERATED_PATH))


def pytest_unconfigure(config: pytest.Config) -> None:
    # Sessions inside a session (pytester) must not leave their database to the outer one.
    use_example_database(config.stash.get(_PREVIOUS_DATABASE, None))


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """The generated tests' module, collected under a node id that resolves (``GENERATED_MODULE``)."""
    if module_path == _GENERATED_PATH:
        return pytest.Module.from_parent(parent, path=module_path, nodeid=GENERATED_MODULE)
    return None
