"""One class's report, computed once per pytest run, split between pytest-xdist workers.

Every test of a conformance class reads the same ``Report``. Without xdist it is computed once per
class. Under ``pytest -n N`` the search is split into N shards (``run_conformance(shard=...)``);
each worker claims shards it has not seen claimed (an exclusive file create in a directory keyed by
the run), computes them, and every worker merges all shards once they are written. A worker that
gets no test of the class claims nothing; one that gets all of them computes all shards, so no
worker ever waits for a shard nobody computes. The merged report equals an unsharded run's.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.verdict import Report

__all__ = ["shared_report"]

# A shard another worker claimed must be written within this time, or the run fails loudly.
_WAIT_SECONDS = 3600.0
# Per pytest session (a second session in the same process, as under pytester, starts afresh).
_CACHE = pytest.StashKey[dict[tuple[str, str], Report]]()


def _worker(config: pytest.Config) -> tuple[str, int, int] | None:
    """(run id, worker index, worker count) under xdist, else None."""
    workerinput: Any = getattr(config, "workerinput", None)
    if not workerinput:
        return None
    count = int(workerinput.get("workercount", 1))
    index = int(str(workerinput.get("workerid", "gw0")).removeprefix("gw") or 0)
    return str(workerinput.get("testrunuid", "run")), index, count


def shared_report(
    config: pytest.Config, key: str, compute: Callable[[tuple[int, int] | None], Report], merge: Callable[..., Report]
) -> Report:
    """The report for ``key`` (a class, with its profile and seed), computed once and shared.

    ``compute(shard)`` runs the search (``shard`` None: all of it); ``merge(reports)`` combines shards.
    """
    worker = _worker(config)
    run_id = worker[0] if worker else "local"
    cache = config.stash.setdefault(_CACHE, {})
    cached = cache.get((run_id, key))
    if cached is not None:
        return cached
    if worker is None or worker[2] < 2:
        report = compute(None)
    else:
        report = _sharded(Path(tempfile.gettempdir()) / f"toolcall-conformance-{run_id}", key, worker, compute, merge)
    cache[(run_id, key)] = report
    return report


def _sharded(
    root: Path,
    key: str,
    worker: tuple[str, int, int],
    compute: Callable[[tuple[int, int] | None], Report],
    merge: Callable[..., Report],
) -> Report:
    _, index, count = worker
    folder = root / "".join(c if c.isalnum() or c in "._-" else "_" for c in key)
    folder.mkdir(parents=True, exist_ok=True)
    # Start with this worker's own shard, then help with any other nobody has claimed yet.
    for shard in [index % count, *(s for s in range(count) if s != index % count)]:
        try:
            os.close(os.open(folder / f"{shard}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        part = compute((shard, count))
        temporary = folder / f"{shard}.{index}.tmp"
        temporary.write_bytes(pickle.dumps(part))
        temporary.replace(folder / f"{shard}.report")
    deadline = time.monotonic() + _WAIT_SECONDS
    paths = [folder / f"{shard}.report" for shard in range(count)]
    while not all(path.exists() for path in paths):
        if time.monotonic() > deadline:
            missing = [str(path) for path in paths if not path.exists()]
            raise RuntimeError(f"toolcall-conformance: shards never written by other workers: {missing}")
        time.sleep(0.05)
    parts = [pickle.loads(path.read_bytes()) for path in paths]
    return merge(parts)
