"""Scale-out: ragmeter in-process against Dask LocalClusters (answers, judge, stats).

    python -m benchmarks.scaleout [answers] [--samples 1000000] [--workers 2] [--repeats 1]
    python -m benchmarks.scaleout judge [--judge-samples 12000] [--latency-ms 20] [--rpm 3000]
    python -m benchmarks.scaleout stats [--systems 15] [--queries 2000]
    python -m benchmarks.scaleout start | lose     (benchmarks/scaleout_cluster.py)
    python -m benchmarks.scaleout plans            (benchmarks/scaleout_plans.py)

``judge``: ``ragmeter judge -m context_precision`` (one call per sample) against the test
suite's fake OpenAI server with 20 ms of latency, in-process and on 1 and 2 workers (a fresh
cache each); calls/s per worker (goal ≥ 300), then on 2 workers with ``--rpm`` the most calls
the server saw in any one-second window (goal ≤ rpm/60 + 1). ``stats``: ``ragmeter compare
--per-sample`` over all pairs of 15 systems (105 randomization tests, 9,999 resamples) on 1
and 2 workers (goal: 2 workers ≥ 1.8 × 1 worker).

Goal (issue 15): 1M answers with em, f1 and rouge-l, 2 workers ≥ 1.7 × in-process. The
answers come from the ROUGE benchmark's generator (benchmarks/rouge_data.py, seed 13), written
once to ``benchmarks/data/``. Each contender is a child process (``python -m ragmeter answers
FILE -m em,f1,rouge-l --summary-only``, plus ``--workers N`` for Dask), timed spawn to exit, so
the Dask figure includes starting and closing the cluster. Before any time counts, the outputs
must be byte-identical apart from the ``executor`` block. The machine is shared: the load
average is printed with the figures, and only the ratio of runs taken together means much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"


def answers_file(n: int) -> Path:
    """``n`` UltraRAG-style rows (generated on first use)."""
    path = DATA / f"scaleout-answers-{n}.jsonl"
    if path.exists():
        return path
    from benchmarks.rouge_data import make_pairs

    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        for i, (ref, pred) in enumerate(make_pairs(n, seed=13)):
            row = {"id": i, "golden_answers": [ref], "pred_answer": pred}
            fh.write(json.dumps(row) + "\n")
    tmp.rename(path)
    return path


def timed(args: list[str]) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args], capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"ragmeter {' '.join(args)} failed:\n{proc.stderr}")
    return wall, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "what",
        nargs="?",
        choices=("answers", "judge", "stats", "start", "lose", "plans"),
        default="answers",
    )
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    # 12,000 calls are some 17 s at 700 calls/s: the rate once started is then the workers'
    # steady rate, not the start of one worker overlapping the other's first calls
    ap.add_argument("--judge-samples", type=int, default=12_000)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--rpm", type=int, default=3_000)
    ap.add_argument("--systems", type=int, default=15)
    ap.add_argument("--queries", type=int, default=2_000)
    # 9,999 resamples make a test of n 7,000 about 5 ms of work; 999,999 about 0.5 s
    ap.add_argument("--n-resamples", type=int, default=9_999)
    a = ap.parse_args(argv)
    if a.what == "plans":
        from benchmarks.scaleout_plans import plans_benchmark

        a.repeats = max(a.repeats, 3)
        return plans_benchmark(a)
    if a.what in ("start", "lose"):
        from benchmarks import scaleout_cluster

        a.repeats = a.repeats if a.repeats > 1 else (5 if a.what == "start" else 3)
        return getattr(scaleout_cluster, f"{a.what}_benchmark")(a)
    if a.what == "judge":
        from benchmarks.scaleout_judge import judge_benchmark

        return judge_benchmark(a)
    if a.what == "stats":
        from benchmarks.scaleout_judge import stats_benchmark

        return stats_benchmark(a)
    path = answers_file(a.samples)
    base = ["answers", str(path), "-m", "em,f1,rouge-l", "--summary-only"]
    local_t, dask_t = [], []
    for _ in range(a.repeats):  # interleaved, so that load changes hit both alike
        t, local_out = timed(base)
        local_t.append(t)
        t, dask_out = timed([*base, "--workers", str(a.workers)])
        dask_t.append(t)
        data = json.loads(dask_out)
        meta = data["ragmeter"].pop("executor")
        if json.dumps(data) != json.dumps(json.loads(local_out)):
            raise SystemExit("the Dask output differs from the in-process output")
    lo, da = statistics.median(local_t), statistics.median(dask_t)
    print(f"samples {a.samples:,}, metrics em f1 rouge-l, load average {os.getloadavg()}")
    print(f"in-process            {lo:8.2f} s  ({a.samples / lo:,.0f} samples/s)")
    print(
        f"dask, {meta['workers']} workers      {da:8.2f} s  ({a.samples / da:,.0f} samples/s, "
        f"distributed {meta['dask']})"
    )
    print(f"speed-up {lo / da:.2f}× (goal ≥ 1.7×); outputs identical apart from 'executor'")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
