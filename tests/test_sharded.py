"""A sharded run (``conformance.handler.sharded``) gives exactly the report one run gives.

The rounds are driven here in one process, every part pickled and unpickled as the pytest
workers exchange them, for 1 to 3 shards, on a handler that fails many checks (the seed-000
design's handler: many failures to merge and shrink) and on one that passes.
"""

from __future__ import annotations

import json
import logging
import pickle
import re
from typing import Any

import pytest

from conformance.handler import Capabilities
from conformance.handler.runner import run_conformance
from conformance.handler.sharded import ShardedRun
from conformance.verdict import Report
from examples.seed000_handler import make_handler as seed_handler
from reference_impl import ApiToolCallStreamingResponseHandler as APIHandler


@pytest.fixture(autouse=True)
def _quiet_seed_handler() -> Any:
    logging.disable(logging.CRITICAL)  # the seed handler logs every swallowed error
    yield
    logging.disable(logging.NOTSET)


def _comparable(report: Report) -> str:
    """The report's JSON without its time and with the segment ids the seed handler draws at random."""
    document = report.to_json()
    document.pop("seconds", None)
    return re.sub(r"[0-9a-f]{8,32}", "<id>", json.dumps(document, indent=1, sort_keys=True))


def _sharded(run: ShardedRun, count: int) -> Report:
    searched = [pickle.loads(pickle.dumps(run.search((index, count)))) for index in range(count)]
    merged, tasks = run.merge(searched)
    shrunk = [
        done for index in range(count) for done in pickle.loads(pickle.dumps(run.shrink(merged, tasks, (index, count))))
    ]
    return run.finish(merged, shrunk)


_SEED_OPTIONS: dict[str, Any] = {"profile": "dev", "seed": 3, "capabilities": Capabilities(reasoning=False)}


@pytest.fixture(scope="module")
def seed_whole() -> Report:
    logging.disable(logging.CRITICAL)
    try:
        return run_conformance(seed_handler, **_SEED_OPTIONS)
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize("count", [2, 3])
def test_a_failing_handler_sharded_equals_one_run(seed_whole: Report, count: int) -> None:
    assert not seed_whole.conformant and sum(len(r.counterexamples) for r in seed_whole.results) > 5
    assert _comparable(_sharded(ShardedRun(seed_handler, **_SEED_OPTIONS), count)) == _comparable(seed_whole)


def test_a_conformant_handler_sharded_equals_one_run() -> None:
    whole = run_conformance(APIHandler, profile="dev", seed=1)
    assert whole.conformant
    assert _comparable(_sharded(ShardedRun(APIHandler, profile="dev", seed=1), 2)) == _comparable(whole)


def test_the_shrinking_is_divided_not_repeated() -> None:
    run = ShardedRun(seed_handler, **_SEED_OPTIONS)
    searched = [run.search((index, 2)) for index in range(2)]
    merged, tasks = run.merge(searched)
    # Each kind of failure is shrunk once, by one shard, however many shards met it.
    kinds = [(task.check_id, task.message) for task in tasks]
    assert len(kinds) == len(set(kinds)) > 3
    mine = [run.shrink(merged, tasks, (index, 2)) for index in range(2)]
    assert sorted(len(part) for part in mine) == sorted([len(tasks[0::2]), len(tasks[1::2])])
