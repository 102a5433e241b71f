"""Where the time of ``ragmeter compare`` on workers goes: the randomization kernel alone.

    python -m benchmarks.scaleout_stats [--tests 105] [--queries 6980] [--n-resamples 99999]

Times, each in a child process, the sign-flip counts of ``--tests`` columns of differences
(n ``--queries``, exact-integer path, ``--n-resamples`` patterns of ``default_rng(42)``):

- ``shared``: all columns at once, one process, as ``compare`` runs them in-process;
- ``test blocks``: 8 blocks of columns, each drawing every pattern again (the plan that cut the
  tests into blocks of (metric, pair) tests);
- ``row blocks``: 8 blocks of resample rows, each with all columns (the plan now used);
- ``patterns only``: drawing and unpacking the patterns, without the product;

with BLAS held to 1 thread (as on a worker) and, for ``shared``, with 2; then the 8 row
blocks in 2 processes of 4 blocks each, started together: what 2 single-thread workers can
give on this machine, without Dask.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = 8


def _work(
    mode: str, tests: int, n: int, resamples: int, part: tuple[int, int]
) -> tuple[float, float]:
    """One measurement in this process: wall and CPU seconds (after the data is made)."""
    import numpy as np

    from ragmeter.executors.stats import _cut
    from ragmeter.stats._signflip import Patterns
    from ragmeter.stats.randomization import signflip_counts

    rng = np.random.default_rng(1)
    d = np.round(rng.random((n, tests)) * 0.6 - 0.3, 4)
    pat = Patterns.choose(n, n_resamples=resamples, exact="auto", seed=42)
    start, cpu = time.perf_counter(), time.process_time()
    if mode == "shared":
        signflip_counts(d, pat, decimals=4)
    elif mode == "test blocks":
        size = -(-tests // BLOCKS)
        for c in range(0, tests, size):
            signflip_counts(d[:, c : c + size], pat, decimals=4)
    elif mode == "row blocks":
        cuts = _cut(resamples, BLOCKS)
        for rows in cuts[part[0] : part[1]]:
            signflip_counts(d, pat, decimals=4, rows=rows)
    elif mode == "patterns only":
        for b in pat.iter_bytes(max(64, min(4096, (1 << 20) // n))):
            np.unpackbits(b, axis=1, bitorder="little", count=n).astype(np.float64)
    return time.perf_counter() - start, time.process_time() - cpu


def _child(
    mode: str, a: argparse.Namespace, threads: int, part: tuple[int, int]
) -> tuple[list[str], dict[str, str]]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }
    args = [sys.executable, "-m", "benchmarks.scaleout_stats", "--child", mode]
    args += ["--tests", str(a.tests), "--queries", str(a.queries)]
    args += ["--n-resamples", str(a.n_resamples), "--part", f"{part[0]}:{part[1]}"]
    return args, env


def _run(mode: str, a: argparse.Namespace, threads: int = 1, procs: int = 1) -> tuple[float, float]:
    """``procs`` children started together, each doing its share of the blocks: the longest
    child's wall time and the CPU time of all (without the children's start-up)."""
    per = BLOCKS // procs
    children = [_child(mode, a, threads, (i * per, (i + 1) * per)) for i in range(procs)]
    running = [subprocess.Popen(c, env=e, stdout=subprocess.PIPE, text=True) for c, e in children]
    inner = [tuple(map(float, p.communicate()[0].split())) for p in running]
    if any(p.returncode for p in running):
        raise SystemExit(f"{mode}: a child failed")
    return max(w for w, _ in inner), sum(c for _, c in inner)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=int, default=105)
    ap.add_argument("--queries", type=int, default=6_980)
    ap.add_argument("--n-resamples", type=int, default=99_999)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", default=None)
    ap.add_argument("--part", default=f"0:{BLOCKS}")
    a = ap.parse_args(argv)
    if a.child:
        lo, hi = (int(x) for x in a.part.split(":"))
        print(*_work(a.child, a.tests, a.queries, a.n_resamples, (lo, hi)))
        return 0
    variants = [
        ("shared, 1 thread", "shared", 1, 1),
        ("shared, 2 BLAS threads", "shared", 2, 1),
        ("test blocks, 1 thread", "test blocks", 1, 1),
        ("row blocks, 1 thread", "row blocks", 1, 1),
        ("row blocks, 2 processes", "row blocks", 1, 2),
        ("patterns only, 1 thread", "patterns only", 1, 1),
    ]
    times: dict[str, list[float]] = {name: [] for name, *_ in variants}
    cpus: dict[str, list[float]] = {name: [] for name, *_ in variants}
    loads = [os.getloadavg()[0]]
    for _ in range(a.repeats):  # interleaved, so that load changes hit all alike
        for name, mode, threads, procs in variants:
            wall, cpu = _run(mode, a, threads, procs)
            times[name].append(wall)
            cpus[name].append(cpu)
        loads.append(os.getloadavg()[0])
    print(
        f"{a.tests} tests, n {a.queries:,}, {a.n_resamples:,} resamples, medians of "
        f"{a.repeats}, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    # on a shared machine the CPU time is the steadier figure: a process that waits for a
    # core does not count it, a process stalled on memory (two processes sharing it) does
    base = statistics.median(times["row blocks, 1 thread"])
    print(f"{'':26s} {'wall':>8s} {'CPU':>8s}  speed-up (wall, against row blocks on 1 thread)")
    for name, got in times.items():
        med, cpu = statistics.median(got), statistics.median(cpus[name])
        print(f"{name:26s} {med:7.2f}s {cpu:7.2f}s  {base / med:.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
