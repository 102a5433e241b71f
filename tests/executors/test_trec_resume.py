"""``ragmeter trec`` on Dask: a re-run after a failed shard resumes from the work dir, in the
grouped plan and in the hash plan, and gives the in-process output."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

import ragmeter.executors
from ragmeter.executors.dask import DaskExecutor
from tests.executors.faults import FaultyExecutor, count_runs, fail_once
from tests.executors.test_trec import QRELS, RUN, synthetic
from tests.helpers import invoke

__all__ = ["synthetic"]  # a module fixture shared with test_trec.py

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")


@pytest.fixture
def faulty(dask_client, monkeypatch, tmp_path):
    """Commands run on the session cluster, where shard ``victim`` of the task named ``label``
    fails the first time; returns the folder that counts the shards of that task computed."""
    marker, runs = str(tmp_path / "failed"), tmp_path / "runs"
    runs.mkdir()

    def use(label: str, victim: int) -> Path:
        def make(settings, *, command=None):
            inner = DaskExecutor(settings, command=command, client=dask_client)

            def wrap(task):
                if getattr(task, "__name__", "") != label:
                    return task
                counted = functools.partial(count_runs, task, str(runs))
                return functools.partial(fail_once, counted, marker, victim)

            return FaultyExecutor(inner, wrap)

        monkeypatch.setattr(ragmeter.executors, "make_executor", make)
        return runs

    return use


def _computed(runs: Path) -> list[int]:
    done = sorted(int(name.split("-")[0]) for name in os.listdir(runs))
    for name in os.listdir(runs):
        os.remove(runs / name)
    return done


def test_a_grouped_run_resumes_from_the_finished_shards(faulty, scheduler, synthetic):
    runs = faulty("trec_run_shard", 3)
    args = ("-q", "--scheduler", scheduler, "--partitions", "7", *synthetic)
    failed = invoke("trec", *args)
    assert (failed.code, failed.stdout) == (2, "")
    assert failed.stderr == (
        "ragmeter trec: internal error in run shard 4 of 7 (RuntimeError: shard 3 failed once)\n"
    )
    first = _computed(runs)
    assert {0, 1, 2} <= set(first) and 3 not in first  # the others may have run too
    work = Path(".ragmeter/work")
    (plan,) = [p for p in os.listdir(work) if p.startswith("run-")]
    again = invoke("trec", *args)
    local = invoke("trec", "-q", *synthetic)
    assert again.code == local.code == 0, again.stderr
    assert again.stdout == local.stdout
    assert again.stderr == (
        "ragmeter trec: resuming run: 3 of 7 shards finished by an earlier run "
        f"({(work / plan).resolve()})\n" + local.stderr
    )
    # only the shards not finished (a shard cancelled while it ran may finish after the first
    # run ended, and count once more)
    assert set(_computed(runs)) == {3, 4, 5, 6}
    assert sorted(os.listdir(work)) == [".lock", "payloads"]  # removed after the success


def test_a_hash_plan_resumes_its_map_blocks(faulty, scheduler, tmp_path):
    lines = Path(RUN).read_bytes().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.run"
    shuffled.write_bytes(b"".join(lines[1::2] + lines[0::2]))
    runs = faulty("map_block", 2)
    args = ("-q", "--scheduler", scheduler, "--plan", "hash", "--partitions", "4")
    failed = invoke("trec", *args, QRELS, str(shuffled))
    assert failed.code == 2
    assert failed.stderr.startswith("ragmeter trec: internal error in map shard 3 of ")
    maps = [p for p in os.listdir(".ragmeter/work") if p.startswith("ragmeter-hash-")]
    assert len(maps) == 1  # the map files stay for the re-run
    assert {0, 1} <= set(_computed(runs))
    again = invoke("trec", *args, QRELS, str(shuffled))
    local = invoke("trec", "-q", QRELS, str(shuffled))
    assert again.code == local.code == 0, again.stderr
    assert again.stdout == local.stdout
    resumed = again.stderr.split("\n", 1)[0]
    assert resumed.startswith("ragmeter trec: resuming map: 2 of ")
    assert int(resumed.split()[6]) >= 4  # blocks
    assert again.stderr.endswith(local.stderr)
    assert min(_computed(runs)) == 2
    assert sorted(os.listdir(".ragmeter/work")) == [".lock", "payloads"]


def test_a_changed_qrels_file_makes_a_new_plan(scheduler, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_bytes(Path(QRELS).read_bytes())
    args = ("--scheduler", scheduler, "--partitions", "3", "--keep-work", str(qrels), RUN)
    assert invoke("trec", *args).code == 0
    again = invoke("trec", *args)
    assert again.stderr.startswith("ragmeter trec: resuming run: 2 of 2 shards")
    qrels.write_bytes(Path(QRELS).read_bytes().replace(b" 1\n", b" 0\n", 5))
    changed = invoke("trec", *args)
    local = invoke("trec", str(qrels), RUN)
    assert "resuming" not in changed.stderr
    assert changed.stdout == local.stdout != again.stdout  # the new judgments were used
