"""One class's report, computed once per pytest run, split between pytest-xdist workers.

Every test of a conformance class reads the same ``Report``. Without xdist it is computed once per
class. Under ``pytest -n N`` the run is split into N shards (``conformance.handler.sharded``) and
goes in two rounds, searching then shrinking: in each round a worker claims the shards nobody has
claimed yet (an exclusive file create in a directory keyed by the run), computes them and writes
them; every worker then reads all of them. A worker that gets no test of the class claims nothing;
one that gets all of them computes every shard, so no worker waits for a shard nobody computes. A
shard that raises is written as an error, which every waiting worker raises too. The merged report
equals an unsharded run's.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conformance.handler.sharded import ShardedRun
from conformance.verdict import Report

__all__ = ["shared_report"]

# A shard another worker claimed must be written within this time, or the run fails loudly.
_WAIT_SECONDS = 3600.0
# Per pytest session (a second session in the same process, as under pytester, starts afresh).
_CACHE = pytest.StashKey[dict[tuple[str, str], Report]]()
_Part = TypeVar("_Part")


def _worker(config: pytest.Config) -> tuple[str, int, int] | None:
    """(run id, worker index, worker count) under xdist, else None."""
    workerinput: Any = getattr(config, "workerinput", None)
    if not workerinput:
        return None
    count = int(workerinput.get("workercount", 1))
    index = int(str(workerinput.get("workerid", "gw0")).removeprefix("gw") or 0)
    return str(workerinput.get("testrunuid", "run")), index, count


def shared_report(config: pytest.Config, key: str, whole: Callable[[], Report], sharded: ShardedRun) -> Report:
    """The report for ``key`` (a class, with its profile and seed), computed once and shared.

    ``whole()`` runs the search in one go (no xdist); under xdist ``sharded`` runs it in shards.
    """
    worker = _worker(config)
    run_id = worker[0] if worker else "local"
    cache = config.stash.setdefault(_CACHE, {})
    cached = cache.get((run_id, key))
    if cached is not None:
        return cached
    if worker is None or worker[2] < 2:
        report = whole()
    else:
        folder = Path(tempfile.gettempdir()) / f"toolcall-conformance-{run_id}" / _safe(key)
        report = _in_shards(folder, worker, sharded)
    cache[(run_id, key)] = report
    return report


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def _in_shards(folder: Path, worker: tuple[str, int, int], sharded: ShardedRun) -> Report:
    _, index, count = worker
    searched = _round(folder, "search", index, count, sharded.search)
    merged, tasks = sharded.merge(searched)
    shrunk = _round(folder, "shrink", index, count, lambda shard: sharded.shrink(merged, tasks, shard))
    return sharded.finish(merged, [done for part in shrunk for done in part])


def _round(
    folder: Path, name: str, index: int, count: int, compute: Callable[[tuple[int, int]], _Part]
) -> Sequence[_Part]:
    """Every shard of one round: this worker's own first, then any nobody claimed, then the others'."""
    folder.mkdir(parents=True, exist_ok=True)
    for shard in [index % count, *(s for s in range(count) if s != index % count)]:
        try:
            os.close(os.open(folder / f"{name}-{shard}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        try:
            part: Any = compute((shard, count))
        except BaseException as error:
            # Said to the workers waiting for this shard, so none of them waits out the deadline.
            _write(folder / f"{name}-{shard}.error", f"{type(error).__name__}: {error}", index)
            raise
        _write(folder / f"{name}-{shard}.part", part, index)
    deadline = time.monotonic() + _WAIT_SECONDS
    paths = [folder / f"{name}-{shard}.part" for shard in range(count)]
    while not all(path.exists() for path in paths):
        failed = [path.with_suffix(".error") for path in paths if path.with_suffix(".error").exists()]
        if failed:
            raise RuntimeError(
                f"toolcall-conformance: another worker's shard failed: {pickle.loads(failed[0].read_bytes())}"
            )
        if time.monotonic() > deadline:
            missing = [str(path) for path in paths if not path.exists()]
            raise RuntimeError(f"toolcall-conformance: shards never written by other workers: {missing}")
        time.sleep(0.05)
    return [pickle.loads(path.read_bytes()) for path in paths]


def _write(path: Path, value: object, index: int) -> None:
    temporary = path.with_name(f"{path.name}.{index}.tmp")
    temporary.write_bytes(pickle.dumps(value))
    temporary.replace(path)
