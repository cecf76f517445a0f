"""The ``toolcall_replay`` fixture and the ``toolcall_cassettes`` marker: recordings served to your own client.

::

    import pytest

    @pytest.mark.toolcall_cassettes("openai-chat/*")
    def test_assistant(toolcall_replay, toolcall_case):
        with toolcall_replay(toolcall_case, chunk_bytes=7) as replay:
            answer = MyAssistant().ask("weather?")  # builds its own openai.OpenAI()
        # it runs exactly the calls the recording says may run, with their arguments
        assert answer.calls_it_ran == [(c.name, c.arguments) for c in replay.expected.tool_calls if c.may_run]

    @pytest.mark.toolcall_cassettes("openai-chat/*")
    def test_assistant_any_cut(toolcall_replay, toolcall_case):
        def scenario(replay):
            answer = MyAssistant().ask("weather?")
            assert answer.calls_it_ran == [(c.name, c.arguments) for c in replay.expected.tool_calls if c.may_run]

        toolcall_replay.fuzz(toolcall_case, scenario)

``toolcall_case`` is parametrized by the marker over the recordings whose id matches its globs
(``dirs=`` adds your folders, ``apis=`` filters by wire API); node ids carry the recording id
(``test_assistant[openai-chat/single_call]``) and can be pasted back into pytest. A failing test
gets a ``toolcall replay`` report section (and JUnit property) naming every replay it ran: the
recording, the chunking, and for ``fuzz`` the seed and the shrunk cuts, so it can be replayed
from the log alone. Options: ``--toolcall-replay-examples`` / ini ``toolcall_replay_examples``
(hypothesis examples per ``fuzz``), ini ``toolcall_replay_dirs`` (your recordings, searched before
the bundled ones); the seed is ``--hypothesis-seed`` or ``--toolcall-seed`` when given, else 0.

respx sees the SDKs' ``httpx2`` traffic only when ``httpx2.alias_httpx()`` ran before anything
imported ``httpx``: add ``-p conformance.pytest_plugin.httpx_alias`` to ``addopts``. Without it
the fixture fails with ``HttpxAliasError``, which says exactly that; no request reaches the network.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance.http_replay import (
    DEFAULT_EXAMPLES,
    Engine,
    FuzzRun,
    MissingDependencyError,
    Replay,
    ReplayCase,
    ReplayFuzzError,
    cassette_cases,
    fuzz_cassette,
    placeholder_credentials,
    replay_cassette,
)
from conformance.wire import Case

__all__ = ["ToolcallReplay"]

MARKER = "toolcall_cassettes"
_LOG = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--toolcall-replay-examples`` and the ini keys of the replay fixture."""
    group = parser.getgroup("toolcall-conformance")
    group.addoption(
        "--toolcall-replay-examples",
        type=int,
        metavar="N",
        help=f"hypothesis examples per toolcall_replay.fuzz() (default: {DEFAULT_EXAMPLES})",
    )
    parser.addini("toolcall_replay_examples", "hypothesis examples per toolcall_replay.fuzz()", default="")
    parser.addini(
        "toolcall_replay_dirs", "folders of your own recordings for toolcall_replay", type="paths", default=[]
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``toolcall_cassettes`` marker."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*globs, dirs=(), bundled=True, apis=None): parametrize the toolcall_case fixture over "
        "the recordings whose id matches (e.g. 'openai-chat/*')",
    )


def _user_dirs(config: pytest.Config) -> list[Path]:
    return [Path(path) for path in config.getini("toolcall_replay_dirs")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``toolcall_case`` over the recordings the ``toolcall_cassettes`` marker selects."""
    if "toolcall_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: the toolcall_case fixture needs "
            f"@pytest.mark.{MARKER}('openai-chat/*', ...) to say which recordings to run"
        )
    options = dict(marker.kwargs)
    dirs = [*(Path(folder) for folder in options.pop("dirs", ())), *_user_dirs(metafunc.config)]
    cases = cassette_cases(*marker.args, dirs=dirs, **options)
    metafunc.parametrize("toolcall_case", cases, ids=[case.id for case in cases])


def _seed(config: pytest.Config) -> int:
    """The same order as the class suite's (``profile_and_seed``): ``--toolcall-seed``, then ``--hypothesis-seed``."""
    for option in ("toolcall_seed", "hypothesis_seed"):
        value = config.getoption(option, default=None)
        if value is not None and str(value).lstrip("-").isdigit():
            return int(value)
    return 0


def _examples(config: pytest.Config) -> int:
    value = config.getoption("toolcall_replay_examples", default=None) or config.getini("toolcall_replay_examples")
    return int(value) if value else DEFAULT_EXAMPLES


@contextmanager
def _skipped_when_missing() -> Iterator[None]:
    """A library the replay needs is not installed (respx: the ``test`` extra): the test is skipped
    naming what to install, never failed (the user's code did nothing wrong)."""
    __tracebackhide__ = True
    try:
        yield
    except MissingDependencyError as error:
        pytest.skip(str(error))
    except ReplayFuzzError as error:
        if isinstance(error.__cause__, MissingDependencyError):
            pytest.skip(str(error.__cause__))
        raise


class ToolcallReplay:
    """The ``toolcall_replay`` fixture: ``toolcall_replay(case, ...)`` is a replay context manager,
    ``toolcall_replay.fuzz(case, scenario)`` a hypothesis search over cuts; both log for the report."""

    def __init__(self, node: pytest.Item, seed: int, max_examples: int, dirs: Iterable[Path]) -> None:
        self.seed = seed
        self.max_examples = max_examples
        self.dirs = list(dirs)
        self._log = node.stash.setdefault(_LOG, [])
        self._runs: list[FuzzRun] = []

    def __call__(
        self,
        cassette: str | Path | Case | ReplayCase,
        *,
        chunk_bytes: int | None = None,
        cuts: Iterable[int] | None = None,
        engine: Engine = "respx",
        bundled: bool = True,
        fake_credentials: bool = True,
        require_request: bool = True,
    ) -> AbstractContextManager[Replay]:
        """Serve ``cassette`` to every client built inside the ``with`` (see ``replay_cassette``)."""
        __tracebackhide__ = True  # a failure shows the user's code, not the fixture's frames
        return self._logged(
            replay_cassette(
                cassette,
                chunk_bytes=chunk_bytes,
                cuts=None if cuts is None else list(cuts),
                engine=engine,
                dirs=self.dirs,
                bundled=bundled,
                fake_credentials=fake_credentials,
                require_request=require_request,
            )
        )

    @contextmanager
    def _logged(self, session: AbstractContextManager[Replay]) -> Iterator[Replay]:
        __tracebackhide__ = True
        with ExitStack() as stack:
            with _skipped_when_missing():  # entering the replay is where a missing library shows
                replay = stack.enter_context(session)
            self._log.append(f"replayed {replay.describe()}")
            yield replay

    def fuzz(
        self,
        cassette: str | Path | Case | ReplayCase,
        scenario: Callable[[Replay], Any],
        *,
        max_examples: int | None = None,
        seed: int | None = None,
        engine: Engine = "respx",
        bundled: bool = True,
    ) -> FuzzRun:
        """Run ``scenario(replay)`` with ``cassette`` cut at hypothesis-chosen offsets (see ``fuzz_cassette``)."""
        __tracebackhide__ = True

        def started(run: FuzzRun) -> None:
            self._log.append(f"fuzzed {run.case.id}: seed={run.seed}, max_examples={run.max_examples}")
            self._runs.append(run)

        self._runs = []
        try:
            with _skipped_when_missing():
                return fuzz_cassette(
                    cassette,
                    scenario,
                    max_examples=self.max_examples if max_examples is None else max_examples,
                    seed=self.seed if seed is None else seed,
                    dirs=self.dirs,
                    bundled=bundled,
                    engine=engine,
                    on_run=started,
                )
        finally:
            for run in self._runs:
                self._log.append(f"  {run.describe()}")


@pytest.fixture
def toolcall_replay(request: pytest.FixtureRequest) -> Iterator[ToolcallReplay]:
    """Serve recorded streams (bundled or yours) to the SDK clients your code builds, at the HTTP layer.

    For the whole test, placeholder API keys are set where the environment has none, so clients
    built before the ``with`` (in the test or in fixtures that depend on this one) construct too.
    """
    config = request.config
    with placeholder_credentials():
        yield ToolcallReplay(request.node, _seed(config), _examples(config), _user_dirs(config))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On failure, add a ``toolcall replay`` section: every replay, its chunking, fuzz seed and cuts."""
    report = yield
    log = item.stash.get(_LOG, None)
    if log and report.failed and call.when == "call":
        # The seed on the re-run line: a node id alone reproduces the cuts only under the same seed.
        rerun = f"re-run: pytest {item.nodeid!r} --toolcall-seed {_seed(item.config)}"
        text = "\n".join([*log, rerun])
        report.sections.append(("toolcall replay", text))
        report.user_properties.append(("toolcall_replay", text))
    return report
