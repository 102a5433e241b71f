"""The hash plan on Dask with skewed buckets: split before the reduce, or after the reduce of a
whole bucket killed its workers; the output is the in-process one."""

from __future__ import annotations

import functools
import json
import re

import pytest

import ragmeter.executors
from ragmeter.executors.dask import DaskExecutor
from ragmeter.retrieval import spill
from tests.executors.faults import FaultyExecutor, kill_bucket
from tests.helpers import invoke
from tests.retrieval.spill_data import skewed_run

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")

ARGS = ("--json", "-q", "-m", "all_trec", "--plan", "hash", "--partitions", "4")


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    return skewed_run(tmp_path_factory.mktemp("skewed-dask"))


def _meta(local, res) -> dict:
    assert (res.code, res.stderr) == (local.code, local.stderr), res.stderr
    doc = json.loads(res.stdout)
    meta = doc.pop("executor")
    assert json.dumps(doc, indent=2, ensure_ascii=False) + "\n" == local.stdout
    return meta


def test_a_skewed_bucket_is_split_on_the_workers(scheduler, skewed):
    qrels, run = skewed
    local = invoke("trec", "--json", "-q", "-m", "all_trec", qrels, run)
    meta = _meta(local, invoke("trec", "--scheduler", scheduler, *ARGS, qrels, run))
    assert (meta["plan"], meta["partitions"], meta["split_buckets"]) == ("hash", 4, 1)


@pytest.fixture
def killing(own_client, monkeypatch):
    """Commands run on a cluster of their own where every reduce of one bucket kills its
    worker (and of its parts too, if asked)."""

    def use(victim: int, parts_too: bool) -> None:
        client = own_client()

        def make(settings, *, command=None):
            inner = DaskExecutor(settings, command=command, client=client)

            def wrap(task):
                if getattr(task, "__name__", "") != "reduce_task":
                    return task
                return functools.partial(kill_bucket, task, victim, parts_too)

            return FaultyExecutor(inner, wrap)

        monkeypatch.setattr(ragmeter.executors, "make_executor", make)

    return use


def _big_bucket() -> int:
    # "big" alone is over the mean at 4 buckets, so its bucket is split before the reduce:
    # the victim is another bucket, reduced whole first
    return (spill.bucket_of(b"big", 4) + 1) % 4


def test_a_bucket_that_kills_its_workers_is_split_and_run_again(killing, skewed):
    qrels, run = skewed
    killing(_big_bucket(), parts_too=False)
    local = invoke("trec", "--json", "-q", "-m", "all_trec", qrels, run)
    meta = _meta(local, invoke("trec", "--executor", "dask", *ARGS, qrels, run))
    # the skewed bucket and the one that killed its workers; Dask may also give up on a task
    # that was waiting on a worker when it died (a shard counts deaths, not its own faults)
    assert meta["split_buckets"] >= 2


def test_a_part_that_kills_its_workers_is_one_line(killing, skewed):
    qrels, run = skewed
    victim = _big_bucket()
    killing(victim, parts_too=True)
    res = invoke("trec", "--executor", "dask", *ARGS, qrels, run)
    assert (res.code, res.stdout) == (2, "")
    assert re.fullmatch(
        r"ragmeter trec: bucket [1-4] of 4, (part [1-4] of [1-4]|query '[^']+') \([0-9,]+ "
        r"lines\) killed the workers that ran it; raise --worker-memory \(now 1\.1 GB\) or "
        r"--partitions\n",
        res.stderr,
    ), res.stderr
