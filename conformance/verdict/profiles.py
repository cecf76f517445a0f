"""How hard a suite searches (profiles), and the hypothesis settings every search in the suite uses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed

__all__ = ["PROFILES", "Profile", "register_hypothesis_profiles", "resolve_profile", "search_settings"]


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
    (a run must be reproducible from --seed alone), generate then (unless ``shrink`` is False)
    shrink to a minimal example. Verbosity is fixed so a user's hypothesis profile cannot flood
    the output of the suite's thousands of runs."""

    def apply(test: Callable[..., None]) -> Callable[..., None]:
        configured = settings(
            max_examples=max_examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            derandomize=False,
        )(test)
        seeded: Callable[..., None] = hypothesis_seed(seed)(configured)
        return seeded

    return apply
