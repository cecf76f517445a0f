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
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.handler import Capabilities
from conformance.handler.runner import run_conformance
from conformance.handler.sharded import ShardedRun, ShrinkTask, Shrunk
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


@dataclass
class _Rounds:
    """Every part a sharded run's workers would exchange, pickled and unpickled as they would be."""

    tasks: list[ShrinkTask]
    shrunk_per_shard: list[list[Shrunk]]
    report: Report


def _rounds(run: ShardedRun, count: int) -> _Rounds:
    searched = [pickle.loads(pickle.dumps(run.search((index, count)))) for index in range(count)]
    merged, tasks = run.merge(searched)
    per_shard = [pickle.loads(pickle.dumps(run.shrink(merged, tasks, (index, count)))) for index in range(count)]
    return _Rounds(tasks, per_shard, run.finish(merged, [done for part in per_shard for done in part]))


_SEED_OPTIONS: dict[str, Any] = {"profile": "dev", "seed": 3, "capabilities": Capabilities(reasoning=False)}


def test_a_failing_handler_sharded_equals_one_run_and_each_kind_is_shrunk_once() -> None:
    # One test for the three questions on one handler: its whole run (about ten seconds) is
    # computed once, whichever pytest-xdist worker runs it.
    logging.disable(logging.CRITICAL)
    try:
        whole = run_conformance(seed_handler, **_SEED_OPTIONS)
        in_two = _rounds(ShardedRun(seed_handler, **_SEED_OPTIONS), 2)
        in_three = _rounds(ShardedRun(seed_handler, **_SEED_OPTIONS), 3)
    finally:
        logging.disable(logging.NOTSET)
    assert not whole.conformant and sum(len(r.counterexamples) for r in whole.results) > 5
    assert _comparable(in_two.report) == _comparable(whole)
    assert _comparable(in_three.report) == _comparable(whole)
    # Each kind of failure is shrunk once, by one shard, however many shards met it.
    kinds = [(task.check_id, task.message) for task in in_two.tasks]
    assert len(kinds) == len(set(kinds)) > 3
    done = [[item.task for item in part] for part in in_two.shrunk_per_shard]
    assert done == [in_two.tasks[0::2], in_two.tasks[1::2]]


def test_a_conformant_handler_sharded_equals_one_run() -> None:
    whole = run_conformance(APIHandler, profile="dev", seed=1)
    assert whole.conformant
    assert _comparable(_rounds(ShardedRun(APIHandler, profile="dev", seed=1), 2).report) == _comparable(whole)
