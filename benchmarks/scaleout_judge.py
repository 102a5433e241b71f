"""``python -m benchmarks.scaleout judge`` and ``stats`` (see benchmarks/scaleout.py)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.scaleout import DATA, timed


def _judge_input(n: int) -> Path:
    path = DATA / f"scaleout-judge-{n}.jsonl"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            for i in range(n):
                row = {
                    "id": f"q{i}",
                    "question": f"Question {i}?",
                    "answer": f"Answer {i}.",
                    "reference": f"Answer {i}.",
                    "contexts": [f"answer {i} is here", "noise"],
                }
                fh.write(json.dumps(row) + "\n")
    return path


def _max_per_second(times: list[float]) -> int:
    times = sorted(times)
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


def _steady_rate(times: list[float]) -> float:
    """Calls per second between the first and the last call the server saw: the rate once
    the command (and its cluster) has started, which the wall time also counts."""
    times = sorted(times)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return (len(times) - 1) / span if span > 0 else float("nan")


def _without_executor(out: str) -> tuple[str, dict[str, Any] | None]:
    data = json.loads(out)
    meta = data.pop("executor", None)
    return json.dumps(data, sort_keys=True), meta


def judge_benchmark(a: Any) -> int:
    from tests.judge.fake_openai import FakeOpenAI

    fake = FakeOpenAI(latency=a.latency_ms / 1000).start()
    os.environ.update(
        {
            "RAGMETER_LLM_BASE_URL": fake.url,
            "RAGMETER_LLM_MODEL": "judge-test-model",
            "OPENAI_API_KEY": "sk-benchmark",
        }
    )
    inp = _judge_input(a.judge_samples)
    base = ["judge", str(inp), "-m", "context_precision", "--concurrency", "64"]
    runs = [("in-process", []), ("1 worker", ["--workers", "1"])]
    runs.append((f"{a.workers} workers", ["--workers", str(a.workers)]))
    seen: dict[str, list[tuple[float, int, float]]] = {name: [] for name, _ in runs}
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):  # the runs interleaved, so a change of load hits them all
            for k, (name, extra) in enumerate(runs):
                fake.reset()
                cache = ["--cache", f"{tmp}/c{r}-{k}.sqlite", "--work-dir", f"{tmp}/w"]
                wall, out = timed([*base, *cache, *extra])
                text, _ = _without_executor(out)
                summary = json.loads(text)
                if reference is None:
                    reference = summary["metrics"]
                elif summary["metrics"] != reference:
                    raise SystemExit(f"{name}: the scores differ from the in-process run")
                steady = _steady_rate([q.arrived for q in fake.requests])
                seen[name].append((wall, summary["cost"]["calls_sent"], steady))
        fake.reset()
        rpm_args = ["--workers", str(a.workers), "--rpm", str(a.rpm), "--work-dir", f"{tmp}/w"]
        n_rpm = min(a.judge_samples, a.rpm // 60 * 6)  # about six seconds at the limit
        small = _judge_input(n_rpm)
        wall_rpm, _ = timed(
            [
                "judge",
                str(small),
                "-m",
                "context_precision",
                "--cache",
                f"{tmp}/rpm.sqlite",
                *rpm_args,
            ]
        )
        peak = _max_per_second([r.arrived for r in fake.requests])
    fake.stop()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"judge, {a.judge_samples:,} samples, -m context_precision (1 call each), fake "
        f"server {a.latency_ms:g} ms, concurrency 64, {os.cpu_count()} cores, load average "
        f"{load}, medians of {a.repeats}"
    )
    for name, got in seen.items():
        workers = 1 if name == "in-process" else int(name.split()[0])
        wall = statistics.median(w for w, _, _ in got)
        rate = statistics.median(c / w for w, c, _ in got)
        steady = statistics.median(s for _, _, s in got)
        print(
            f"{name:12s} {wall:7.2f} s  {rate:7.1f} calls/s with start-up, "
            f"{steady:7.1f} once started: {steady / workers:7.1f} per worker (goal ≥ 300)"
        )
    print(
        f"--rpm {a.rpm} on {a.workers} workers: {n_rpm} calls in {wall_rpm:.2f} s, most in any "
        f"1-s window {peak} (goal ≤ {a.rpm / 60 + 1:g})"
    )
    return 0


def stats_benchmark(a: Any) -> int:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for s in range(a.systems):
            path = Path(tmp) / f"sys{s:02d}.jsonl"
            shift = rng.uniform(-0.02, 0.02)
            with path.open("w") as fh:
                for q in range(a.queries):
                    value = min(1.0, max(0.0, rng.random() * 0.6 + 0.2 + shift))
                    fh.write(json.dumps({"id": f"q{q}", "s": round(value, 4)}) + "\n")
            files.append(str(path))
        resamples = str(a.n_resamples)
        base = ["compare", "--per-sample", *files, "-m", "s", "--json", "--n-resamples", resamples]
        variants: list[tuple[str, list[str]]] = [
            ("in-process", []),
            ("1 worker", ["--workers", "1"]),
            ("2 workers", ["--workers", str(a.workers)]),
        ]
        # the same command against clusters already running (started and warmed here, not
        # timed): what a team with a cluster pays per command. One at a time, and none while
        # the other variants run: an idle cluster's heartbeats and periodic callbacks take
        # a share of the two cores from whatever else runs.
        names = [name for name, _ in variants] + [f"running {n}" for n in (1, a.workers)]
        times: dict[str, list[float]] = {name: [] for name in names}
        cpus: dict[str, list[float]] = {name: [] for name in names}
        outs: dict[str, str] = {}
        loads = [os.getloadavg()[0]]

        def measure(name: str, extra: list[str]) -> None:
            before = _children_cpu()
            wall, out = timed([*base, *extra])
            times[name].append(wall)
            cpus[name].append(_children_cpu() - before)
            outs[name], _ = _without_executor(out)

        for _ in range(a.repeats):
            for name, extra in variants:
                measure(name, extra)
            for n in (1, a.workers):
                with _running_cluster(n) as address:
                    measure(f"running {n}", ["--scheduler", address])
            loads.append(os.getloadavg()[0])
        if len(set(outs.values())) != 1:
            raise SystemExit("the p-values differ between executors")
    n_tests = a.systems * (a.systems - 1) // 2
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"stats, {n_tests} randomization tests (all pairs of {a.systems} systems), "
        f"n {a.queries}, {a.n_resamples:,} resamples, medians of {a.repeats}, "
        f"load average {min(loads):.1f}-{max(loads):.1f}"
    )
    for name, wall in med.items():
        # CPU of the command and the worker processes it started and waited for (a running
        # cluster's workers are not the command's: only the driver counts there)
        cpu = statistics.median(cpus[name])
        print(f"{name:12s} {wall:7.2f} s  ({n_tests / wall:.1f} tests/s)  CPU {cpu:7.2f} s")
    print(
        f"2 workers / 1 worker: {med['1 worker'] / med['2 workers']:.2f}× started by the command, "
        f"{med['running 1'] / med[f'running {a.workers}']:.2f}× on running clusters "
        "(goal ≥ 1.8×); outputs identical apart from 'executor'"
    )
    # the host's speed drifts over minutes on a shared machine: the ratio of each repeat's
    # 1- and 2-worker runs, taken one after the other, is the paired measure
    started = [x / y for x, y in zip(times["1 worker"], times["2 workers"], strict=True)]
    running = [
        x / y for x, y in zip(times["running 1"], times[f"running {a.workers}"], strict=True)
    ]
    print(
        "paired, per repeat: started by the command "
        + ", ".join(f"{r:.2f}×" for r in started)
        + f" (median {statistics.median(started):.2f}×); on running clusters "
        + ", ".join(f"{r:.2f}×" for r in running)
        + f" (median {statistics.median(running):.2f}×)"
    )
    return 0


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (and those they waited for)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _running_cluster(workers: int) -> Any:
    """A LocalCluster like the one ``--workers N`` starts, for ``--scheduler``; yields its
    address once every worker has imported the statistics engine."""
    import logging

    import distributed

    from ragmeter.executors.dask import start_local_cluster

    # a closing cluster's workers log a lost heartbeat
    cluster = start_local_cluster(workers, silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    try:
        client.run(lambda: __import__("ragmeter.stats.compare"))
        yield cluster.scheduler_address
    finally:
        client.close()
        cluster.close()
