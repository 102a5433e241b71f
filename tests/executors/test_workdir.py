"""The work dir: a re-run of the same command reuses the shards an interrupted run finished."""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path

import pytest

from ragmeter.executors.dask import DaskExecutor
from ragmeter.executors.plan import PayloadShard
from ragmeter.executors.settings import ExecutorSettings
from ragmeter.executors.tasks import call_payload
from ragmeter.executors.workdir import MAX_AGE_S, WorkDir, run_resumable
from tests.executors.faults import count_runs, fail_once


def _shards(work: WorkDir, n: int) -> list[PayloadShard]:
    # each shard serialises a small list: a pure function of ragmeter run by call_payload
    return [
        PayloadShard(i, *work.payload(([i, 0.5],)), "ragmeter.io.jsonutil:dumps") for i in range(n)
    ]


def _runs(folder: Path) -> list[int]:
    return sorted(int(name.split("-")[0]) for name in os.listdir(folder))


@pytest.fixture
def executor(dask_client):
    return DaskExecutor(ExecutorSettings(kind="dask"), command="run", client=dask_client)


def test_a_rerun_recomputes_only_the_shards_not_finished(executor, tmp_path, capfd):
    work = WorkDir(str(tmp_path / "work"), command="run")
    shards = _shards(work, 6)
    runs = tmp_path / "runs"
    runs.mkdir()
    marker = str(tmp_path / "failed-once")
    task = functools.partial(
        fail_once, functools.partial(count_runs, call_payload, str(runs)), marker, 3
    )
    plan = work.plan("sums", call_payload, shards)
    got = []
    with pytest.raises(Exception, match="shard 3 failed once"):
        for value in run_resumable(executor, task, shards, label="sums", plan=plan):
            got.append(value)
    assert got == ["[0, 0.5]", "[1, 0.5]", "[2, 0.5]"]  # shards 0-2 came back, and were saved
    time.sleep(0.5)  # a worker's log line would arrive on the shared stderr by now
    noise = capfd.readouterr().err
    assert "Traceback" not in noise and "failed once" not in noise, noise
    first = _runs(runs)
    assert {0, 1, 2} <= set(first)
    for name in os.listdir(runs):
        os.remove(runs / name)
    again = WorkDir(str(tmp_path / "work"), command="run")
    plan = again.plan("sums", call_payload, _shards(again, 6))
    values = list(run_resumable(executor, task, _shards(again, 6), label="sums", plan=plan))
    assert values == [f"[{i}, 0.5]" for i in range(6)]
    assert _runs(runs) == [3, 4, 5]  # the finished shards were not computed again
    assert (plan.reused, plan.computed) == (3, 3)
    assert capfd.readouterr().err.startswith(
        "ragmeter run: resuming sums: 3 of 6 shards finished by an earlier run ("
    )
    again.finish(success=True)
    assert sorted(os.listdir(tmp_path / "work")) == [".lock", "payloads"]
    assert os.listdir(tmp_path / "work" / "payloads") == []


def test_an_altered_shard_file_or_input_is_recomputed(tmp_path):
    from ragmeter.executors.local import LocalExecutor

    data = tmp_path / "in.jsonl"
    data.write_text('{"a": 1}\n')
    work = WorkDir(str(tmp_path / "work"))
    shards = [PayloadShard(0, str(data), "x", "ragmeter.io.jsonutil:dumps")]
    plan = work.plan("p", call_payload, shards)
    plan.save(0, 41.0)
    with open(os.path.join(plan.path, "shard-00000.pkl"), "ab") as fh:
        fh.write(b"tampered")
    assert plan.load(0) == (False, None)
    plan.save(0, 42.0)
    assert work.plan("p", call_payload, shards).load(0) == (True, 42.0)
    data.write_text('{"a": 2}\n')  # same size, new content and mtime: another plan
    assert work.plan("p", call_payload, shards).load(0) == (False, None)
    assert list(run_resumable(LocalExecutor(), float, [1, 2], label="x", plan=None)) == [1.0, 2.0]


def test_plans_older_than_a_week_are_removed_at_start(tmp_path):
    old = tmp_path / "work" / "tasks-0123456789abcdef"
    old.mkdir(parents=True)
    stale = time.time() - MAX_AGE_S - 60
    os.utime(old, (stale, stale))
    fresh = tmp_path / "work" / "tasks-fedcba9876543210"
    fresh.mkdir()
    work = WorkDir(str(tmp_path / "work"))
    assert work.removed_old == 1
    assert sorted(os.listdir(tmp_path / "work")) == [".lock", "payloads", "tasks-fedcba9876543210"]


HOLDER = """
import sys, time
from ragmeter.executors.workdir import WorkDir

work = WorkDir(sys.argv[1], command="trec")
print("held", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def other_command(tmp_path):
    """Another process that owns the work dir ``tmp_path / "work"`` until the test ends."""
    import subprocess
    import sys

    from tests.helpers import REPO

    root = tmp_path / "work"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    yield root
    proc.communicate("\n", timeout=30)


def test_a_second_command_on_a_busy_work_dir_works_in_a_private_folder(other_command, capfd):
    theirs = other_command / "run-0123456789abcdef"
    theirs.mkdir()
    (theirs / "shard-00000.pkl").write_bytes(b"theirs")
    work = WorkDir(str(other_command), command="trec")
    assert work.private and work.root == str(other_command / f"private-{os.getpid()}")
    assert capfd.readouterr().err == (
        f"ragmeter trec: another ragmeter command is using the work dir {other_command}; this "
        f"one works in {work.root}, removed when it ends\n"
    )
    path, _ = work.payload({"x": 1})
    assert path.startswith(work.root)
    work.finish(success=False)  # a private folder cannot be resumed: it goes in any case
    assert not os.path.exists(work.root)
    assert (theirs / "shard-00000.pkl").read_bytes() == b"theirs"


def test_one_process_shares_its_own_work_dir(tmp_path):
    outer = WorkDir(str(tmp_path / "w"))
    inner = WorkDir(str(tmp_path / "w"))
    assert not outer.private and not inner.private
    inner.finish(success=True)
    outer.finish(success=True)
    again = WorkDir(str(tmp_path / "w"))  # released: the next command owns it
    assert not again.private
    again.finish(success=True)


def test_a_hash_plan_beside_another_command_gives_the_same_result(other_command, scheduler):
    """The other command would remove the shared maps and plans when it succeeds; this one's
    are its own."""
    from tests.helpers import CONFORMANCE, invoke

    data = CONFORMANCE / "trec_eval"
    lines = (data / "results.test").read_bytes().splitlines(keepends=True)
    shuffled = other_command.parent / "shuffled.run"
    shuffled.write_bytes(b"".join(lines[1::2] + lines[0::2]))
    args = ("trec", "--json", str(data / "qrels.test"), str(shuffled))
    local = invoke(*args)
    res = invoke(*args, "--scheduler", scheduler, "--work-dir", str(other_command))
    assert (local.code, res.code) == (0, 0), res.stderr
    assert "another ragmeter command is using the work dir" in res.stderr
    out = json.loads(res.stdout)
    assert out.pop("executor")["plan"] == "hash"
    assert json.dumps(out, indent=2) + "\n" == local.stdout
    assert sorted(p.name for p in other_command.iterdir()) == [".lock", "payloads"]
    spill = other_command.parent / "spill"
    res = invoke(
        *args, "--scheduler", scheduler, "--work-dir", str(other_command), "--spill", str(spill)
    )
    assert res.code == 0, res.stderr
    assert os.listdir(spill) == []  # its maps went with its private folder


def test_a_work_dir_that_cannot_be_written_is_one_line_and_stops_the_tasks(tmp_path):
    """A full disk or a folder removed under a running command: one line naming the file, no
    temporary file left, and the executor's generator closed (its tasks cancelled) at once."""
    import shutil

    from ragmeter.errors import UsageError
    from ragmeter.executors.workdir import PlanDir

    closed = []

    class Executor:
        def run(self, task, shards, *, label, split=None):
            try:
                for shard in shards:
                    yield task(shard)
            finally:
                closed.append(label)

    plan = PlanDir(str(tmp_path / "tasks-0123"), 3, command="answers")
    shutil.rmtree(plan.path)  # the folder goes away under the command
    got = run_resumable(Executor(), abs, [-1, -2, -3], label="scoring", plan=plan)
    with pytest.raises(UsageError) as err:
        next(got)
    assert str(err.value) == (
        f"ragmeter answers: cannot write {plan.path}/shard-00000.pkl in the work dir (No such "
        "file or directory; expected a writable folder with free space, set with --work-dir)"
    )
    assert closed == ["scoring"]
    assert not os.path.exists(plan.path)
