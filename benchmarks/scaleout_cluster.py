"""The cluster itself: what starting a LocalCluster costs, and what losing a worker costs.

    python -m benchmarks.scaleout start [--repeats 5]
    python -m benchmarks.scaleout lose [--repeats 3]

``start``: in a fresh process each time, the import of ``distributed``, then the executor that
``--workers 2`` starts (a LocalCluster of 2 one-thread workers on 127.0.0.1 with ragmeter's
settings, the client, and the version check of every worker), the first round trip of a task
to each worker, and the close. Goals: the start ≤ 1.0 s, the import ≤ 0.5 s.

``lose``: 24 tasks of 0.9 s of CPU each on 2 workers, once undisturbed and once with one
worker killed (SIGKILL) 3 s in; its nanny starts a new one and the scheduler runs the lost task
again. Goal: the kill costs at most the tasks that were running plus 3 s.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

TASKS = 24
TASK_S = 0.9
KILL_AT_S = 3.0


def spin(seconds: float) -> int:
    """A task: ``seconds`` of CPU on the worker's thread; returns the worker's pid."""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for _ in range(10_000):
            x += 1
    return os.getpid()


def _executor() -> Any:
    from ragmeter.executors import make_executor
    from ragmeter.executors.settings import ExecutorSettings

    return make_executor(ExecutorSettings(kind="dask", workers=2), command="benchmark")


def _start_child() -> dict[str, float]:
    t0 = time.perf_counter()
    import distributed  # noqa: F401

    imported = time.perf_counter() - t0
    t0 = time.perf_counter()
    executor = _executor()
    started = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert sorted(executor.run(abs, [-1, -2], label="probe")) == [1, 2]
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    executor.close()
    closed = time.perf_counter() - t0
    return {"import": imported, "start": started, "first": first, "close": closed}


def _lose_child(kill: bool) -> dict[str, float]:
    executor = _executor()
    try:
        pids = sorted(executor.client.run(os.getpid).values())
        killed: list[float] = []

        def killer() -> None:
            time.sleep(KILL_AT_S)
            os.kill(pids[0], signal.SIGKILL)
            killed.append(time.perf_counter())

        t0 = time.perf_counter()
        if kill:
            threading.Thread(target=killer, daemon=True).start()
        done = list(executor.run(spin, [TASK_S] * TASKS, label="spin"))
        wall = time.perf_counter() - t0
        assert len(done) == TASKS
        return {"wall": wall, "killed": float(bool(killed))}
    finally:
        executor.close()


def _child(what: str) -> dict[str, float]:
    code = (
        "import json, sys\n"
        "from benchmarks import scaleout_cluster as m\n"
        "if __name__ == '__main__':\n"
        f"    print(json.dumps(m._{what}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def start_benchmark(a: Any) -> int:
    runs = [_child("start_child()") for _ in range(a.repeats)]
    print(f"LocalCluster of 2 workers, {a.repeats} fresh processes, load {os.getloadavg()}")
    for key, label in (
        ("import", "import distributed"),
        ("start", "start (cluster, client, version check)"),
        ("first", "first task on each worker"),
        ("close", "close"),
    ):
        print(f"{label:40s} {_spread([r[key] for r in runs])}")
    start = statistics.median(r["start"] for r in runs)
    imported = statistics.median(r["import"] for r in runs)
    print(f"goals: start ≤ 1.0 s ({start:.2f}), import ≤ 0.5 s ({imported:.2f})")
    return 0


def lose_benchmark(a: Any) -> int:
    calm, hit = [], []
    for _ in range(a.repeats):  # interleaved, so that load changes hit both alike
        calm.append(_child("lose_child(False)")["wall"])
        got = _child("lose_child(True)")
        assert got["killed"], "the worker was not killed before the tasks ended"
        hit.append(got["wall"])
    cost = [h - c for h, c in zip(hit, calm, strict=True)]
    print(
        f"{TASKS} tasks of {TASK_S} CPU-s on 2 workers, one killed {KILL_AT_S} s in, "
        f"{a.repeats} pairs, load {os.getloadavg()}"
    )
    print(f"{'undisturbed':40s} {_spread(calm)}")
    print(f"{'a worker killed':40s} {_spread(hit)}")
    print(f"{'cost of the kill':40s} {_spread(cost)}")
    print(f"goal: ≤ the running task ({TASK_S} s) + 3 s = {TASK_S + 3:.1f} s")
    return 0
