"""How hard a suite searches (profiles), and the hypothesis settings every search in the suite uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

__all__ = [
    "PROFILES",
    "Profile",
    "example_database",
    "register_hypothesis_profiles",
    "resolve_profile",
    "search_settings",
    "the_same_search_in_every_process",
    "use_example_database",
]


@dataclass
class _DatabaseChoice:
    """The opted-in example database (None: none, so a run is reproducible from its seed alone)."""

    path: Path | None = None
    database: ExampleDatabase | None = None


_DATABASE = _DatabaseChoice()


def use_example_database(path: str | Path | None) -> None:
    """Opt in to hypothesis's example database at ``path`` (``None`` turns it off again).

    Every search then first replays what earlier runs saved there (their failing and shrunk
    inputs, and anything HypoFuzz or your own properties stored under the same keys), then
    generates as usual, and saves what it finds. Counts then differ from a run without it: the
    replayed inputs come on top of the seed's.
    """
    _DATABASE.path = Path(path) if path is not None else None
    _DATABASE.database = DirectoryBasedExampleDatabase(str(_DATABASE.path)) if _DATABASE.path is not None else None


def example_database() -> Path | None:
    """The example database in use, or None (the default)."""
    return _DATABASE.path


@dataclass(frozen=True)
class Profile:
    """How hard to try: re-fragmentations per scenario (other suites scale their effort from it)."""

    name: str
    examples_per_scenario: int


PROFILES: dict[str, Profile] = {
    "dev": Profile("dev", 10),
    "ci": Profile("ci", 60),
    "deep": Profile("deep", 1000),
}


def resolve_profile(profile: str | Profile) -> Profile:
    """A ``Profile`` from its name (``KeyError`` names the known ones) or as given."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise KeyError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}") from None


def register_hypothesis_profiles() -> None:
    """Register ``toolcall-dev``, ``toolcall-ci`` and ``toolcall-deep`` as hypothesis settings profiles.

    For your own properties over ``conformance.strategies``: ``--hypothesis-profile toolcall-ci`` gives
    them the suite's effort (examples per property) with no deadline.
    """
    for profile in PROFILES.values():
        settings.register_profile(
            f"toolcall-{profile.name}",
            max_examples=profile.examples_per_scenario,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )


def search_settings(
    max_examples: int, seed: int, *, shrink: bool = True
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The hypothesis settings every search in the suite uses: seeded, no deadline, no database
    unless one was opted into (``use_example_database``: a run must be reproducible from --seed
    alone), generate then (unless ``shrink`` is False) shrink to a minimal example. Verbosity is
    fixed so a user's hypothesis profile cannot flood the output of the suite's thousands of runs."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)
    database = _DATABASE.database
    if database is not None:
        phases = (Phase.reuse, *phases)

    def apply(test: Callable[..., None]) -> Callable[..., None]:
        # The seed first: hypothesis's @seed switches the database off, these settings switch it
        # back on when one was opted into.
        seeded = hypothesis_seed(seed)(test)
        configured: Callable[..., None] = settings(
            max_examples=max_examples,
            deadline=None,
            database=database,
            suppress_health_check=list(HealthCheck),
            phases=phases,
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            derandomize=False,
        )(seeded)
        return configured

    return apply


@contextmanager
def the_same_search_in_every_process() -> Iterator[None]:
    """Run a search whose inputs depend on its seed alone, not on what else the process imported.

    Hypothesis (since 6.131) also draws literals mined from every *local* module in ``sys.modules``
    (about one draw in twenty): the CLI, pytest (which imports the user's test modules) and a
    pytest-xdist worker then generate different inputs from the same seed, and a failure seen in
    one is not found again by another. The suite's generators are built to reach what matters, so
    inside its searches that pool is empty; the user's own hypothesis tests are left as they are.
    Without the private hook (another hypothesis version) the search runs unchanged.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a hypothesis without the module
        yield
        return
    mined = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "_local_constants", None)
    if mined is None or empty is None:
        yield
        return
    nothing = type(empty)(
        integers=type(empty.integers)(),
        floats=type(empty.floats)(key=empty.floats.key),
        bytes=type(empty.bytes)(),
        strings=type(empty.strings)(),
    )
    # The pools filtered per choice type are cached process-wide (CONSTANTS_CACHE, filled at the
    # first draw that wants a constant): a hypothesis test run earlier in the process (pytest)
    # would otherwise leave its mined literals there for the suite's searches to draw.
    pools: Any = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    earlier = dict(pools) if pools is not None else None
    if pools is not None:
        pools.clear()
    providers._get_local_constants = lambda: nothing  # noqa: SLF001 - hypothesis has no setting for it
    try:
        yield
    finally:
        providers._get_local_constants = mined  # noqa: SLF001 - restored for the user's own tests
        if pools is not None and earlier is not None:
            pools.clear()  # what the search cached holds no mined literal: not for the user's tests
            pools.update(earlier)
