"""The hash plan on a shuffled run: peak memory of the driver and of each worker, 1 vs 2 workers.

    python -m benchmarks.scaleout_hash [--lines 10M|100M] [--repeats N] [--skip-inmemory]

The run is the synthetic MS MARCO-like run of ``benchmarks/gen_retrieval.py`` (1,000 lines per
query, ``lines / 1000`` queries, seed 20240607) shuffled in bounded memory: every line goes to one
of 64 temporary files chosen by a seeded RNG, each file is shuffled in memory and the files are
concatenated. Runs larger than 10M lines are copies of the 10M-line run, each copy's qids
prefixed (``c3_1234``), and the qrels likewise. The data is written once under
``/tmp/ragmeter-scale-hash/<lines>/`` (about 4 GB of text for 100M lines; nothing in the
repository).

Contenders, each a child process timed spawn to exit (Dask figures include starting and closing
the cluster), with ``-m map -m ndcg_cut.10 -m recip_rank -m P.10 --json``:

- ``--stream --spill DIR`` in-process (the hash plan, bounded memory);
- ``--workers 1 --plan hash`` and ``--workers 2 --plan hash`` (LocalCluster, 2 GiB per worker);
- the in-memory evaluation of the same shuffled file (skipped with ``--skip-inmemory``; at
  100M lines it needs about 9 GB).

Every output must be byte-identical (apart from the ``executor`` block) before any time counts.
Peak RSS is each process's VmHWM from ``/proc``, polled every 0.1 s for the child and every
process it spawns (the Dask nanny and worker processes). The machine is shared: the load average
is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/tmp/ragmeter-scale-hash")
MEASURES = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "P.10"]
SPLIT = 64
BASE_LINES = 10_000_000  # larger runs are copies of this one


def _lines(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000, "B": 1_000_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KMB")) * mult)


def ensure_data(lines: int, root: Path = DATA) -> tuple[Path, Path]:
    """``(qrels, shuffled run)`` of ``lines`` lines, written on first use."""
    from benchmarks.gen_retrieval import _run_block, generate

    out = root / str(lines)
    qrels, run = out / "qrels.txt", out / "run.shuffled.trec"
    if qrels.exists() and run.exists():
        return qrels, run
    out.mkdir(parents=True, exist_ok=True)
    if lines > BASE_LINES and lines % BASE_LINES == 0:
        _replicate(*ensure_data(BASE_LINES, root), qrels, run, lines // BASE_LINES)
        return qrels, run
    queries = max(1, lines // 1000)
    rng = np.random.default_rng(15)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        parts = [open(Path(tmp) / f"{i:02d}", "wb") for i in range(SPLIT)]  # noqa: SIM115
        with open(qrels, "w", encoding="ascii") as qb:
            for qid, docs, scores, binary, _ in generate(queries=queries):
                block = _run_block(qid, docs, scores).encode().splitlines(keepends=True)
                where = rng.integers(0, SPLIT, len(block))
                for i in range(SPLIT):
                    chosen = np.flatnonzero(where == i).tolist()
                    if chosen:
                        parts[i].write(b"".join(block[j] for j in chosen))
                for d in binary:
                    qb.write(f"{qid} 0 D{d:07d} 1\n")
        for fh in parts:
            fh.close()
        tmp_run = run.with_suffix(".tmp")
        with open(tmp_run, "wb") as dst:
            for i in range(SPLIT):
                part = (Path(tmp) / f"{i:02d}").read_bytes().splitlines(keepends=True)
                perm = rng.permutation(len(part))
                dst.writelines(part[j] for j in perm.tolist())
                del part, perm
        tmp_run.rename(run)
    return qrels, run


def _replicate(qrels: Path, run: Path, qrels_out: Path, run_out: Path, copies: int) -> None:
    """``copies`` copies of a shuffled run and its qrels, each copy's qids prefixed (``c3_``):
    every copy is as unsorted as the original, and has its own queries."""
    for src, dst in ((qrels, qrels_out), (run, run_out)):
        data = src.read_bytes()
        tmp = dst.with_suffix(".tmp")
        with open(tmp, "wb") as out:
            for c in range(copies):
                prefix = f"c{c}_".encode()
                out.write(prefix + data[:-1].replace(b"\n", b"\n" + prefix) + b"\n")
        tmp.rename(dst)


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _hwm(pid: int) -> int | None:
    """Peak resident set size of a process (KiB), while it lives."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def measured(args: list[str]) -> tuple[float, int, list[int], str]:
    """Run ``ragmeter ARGS``: (wall s, driver peak KiB, worker peaks KiB, stdout)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    peaks: dict[int, int] = {}
    kinds: dict[int, str] = {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragmeter", *args], stdout=out, stderr=err, env=env
        )
        while proc.poll() is None:
            for pid in [proc.pid, *_descendants(proc.pid)]:
                hwm = _hwm(pid)
                if hwm is not None:
                    peaks[pid] = max(peaks.get(pid, 0), hwm)
                    if pid not in kinds:
                        kinds[pid] = _cmdline(pid)
            time.sleep(0.1)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"ragmeter {' '.join(args)} failed:\n{err.read().decode()[-2000:]}")
        stdout = out.read().decode()
    driver = peaks.get(proc.pid, 0)
    # the Dask worker processes (not the nannies, not the resource tracker)
    workers = [
        kb
        for pid, kb in peaks.items()
        if pid != proc.pid and "spawn_main" in kinds.get(pid, "") and kb > 100_000
    ]
    return wall, driver, sorted(workers), stdout


def _strip(doc: str) -> str:
    data = json.loads(doc)
    data.pop("executor", None)
    return json.dumps(data, indent=2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", default="10M")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--skip-inmemory", action="store_true")
    ap.add_argument("--skip-spill", action="store_true", help="only the two Dask contenders")
    ap.add_argument("--worker-memory", default="2GiB")
    a = ap.parse_args(argv)
    lines = _lines(a.lines)
    t0 = time.perf_counter()
    qrels, run = ensure_data(lines, a.data)
    ready = time.perf_counter() - t0
    print(f"data: {run} ({run.stat().st_size / 1e9:.2f} GB), ready in {ready:.0f} s")
    base = ["trec", *MEASURES, "--json", str(qrels), str(run)]
    spill_dir = a.data / "spill"
    contenders = {
        "dask 1 worker, hash plan": [
            *base,
            "--workers",
            "1",
            "--plan",
            "hash",
            "--worker-memory",
            a.worker_memory,
        ],
        "dask 2 workers, hash plan": [
            *base,
            "--workers",
            "2",
            "--plan",
            "hash",
            "--worker-memory",
            a.worker_memory,
        ],
        "in-process --stream --spill": [*base, "--stream", "--spill", str(spill_dir)],
    }
    if a.skip_spill:
        del contenders["in-process --stream --spill"]
    if not a.skip_inmemory:
        contenders = {"in-process, in memory": base, **contenders}
    figures: dict[str, list[tuple[float, int, list[int]]]] = {k: [] for k in contenders}
    reference: str | None = None
    for _ in range(a.repeats):  # interleaved, so that load changes hit every contender alike
        for label, args in contenders.items():
            wall, driver, workers, out = measured(args)
            got = _strip(out)
            if reference is None:
                reference = got
            elif got != reference:
                raise SystemExit(f"{label}: the output differs from the first contender's")
            figures[label].append((wall, driver, workers))
            mib = [round(kb / 1024) for kb in workers]
            print(
                f"  {label}: {wall:.2f} s, driver {driver / 1024:.0f} MiB, workers {mib}",
                flush=True,
            )
            shutil.rmtree(spill_dir, ignore_errors=True)
    print(f"{lines:,} shuffled lines, {lines // 1000:,} queries; load average {os.getloadavg()}")
    print(f"{'contender':32} {'wall s':>8} {'driver MiB':>11}  workers' peak MiB")
    walls = {}
    for label, runs in figures.items():
        wall = statistics.median(r[0] for r in runs)
        walls[label] = wall
        driver = max(r[1] for r in runs) / 1024
        workers = [round(kb / 1024) for kb in runs[-1][2]]
        print(f"{label:32} {wall:8.2f} {driver:11.0f}  {workers or '-'}")
    one, two = walls["dask 1 worker, hash plan"], walls["dask 2 workers, hash plan"]
    print(f"2 workers / 1 worker wall: {two / one:.2f} (goal ≤ 0.55 at 100M lines)")
    print("outputs byte-identical apart from 'executor'")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
