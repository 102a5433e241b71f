"""``ragmeter trec --stream`` on a 100M-line run: peak RSS and throughput.

    python -m benchmarks.retrieval_stream [--data DIR] [--copies 15] [--batch-rows N] [--pipe]

By default the 100M-line run is the 7M-line benchmark run replicated ``--copies`` times, each
copy's qids prefixed (``c3_1234``), with the qrels replicated the same way (written once under
``benchmarks/data/retrieval/stream/``). Every copy scores exactly as the original, so the summary
must equal the in-memory summary of the 7M-line file — the script checks it. It reports peak RSS
(≤ 1 GiB required) and lines/s against the in-memory mode on the 7M-line file (≥ ⅔ required).

``--pipe`` instead pipes ``python -m benchmarks.gen_retrieval --queries 100000 --stdout`` into
``ragmeter trec --stream qrels -``; that run is bounded by the generator's
speed, so it reports memory only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import gen_retrieval
from benchmarks.retrieval import REPO, ensure_data, parse_trec

FIVE = ["map", "ndcg_cut.10", "recip_rank", "recall.100", "P.10"]


def _replicate(src: Path, dst: Path, copies: int) -> None:
    data = src.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    with open(dst, "wb") as out:
        for c in range(copies):
            prefix = f"c{c}_".encode()
            out.write(prefix + data[:-1].replace(b"\n", b"\n" + prefix) + b"\n")


def _run_wait4(argv: list[str], env: dict[str, str], stdin=None) -> tuple[float, int, str]:
    """Spawn, wait with os.wait4 (peak RSS of this child only), return (wall, KiB, stdout)."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=out, stderr=err, stdin=stdin, env={**os.environ, **env}
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"failed ({proc.returncode}): {err.read().decode()[:500]}")
        return wall, int(usage.ru_maxrss), out.read().decode()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO / "benchmarks" / "data" / "retrieval")
    ap.add_argument("--copies", type=int, default=15, help="copies of the 7M-line run (15: 104.7M)")
    ap.add_argument("--batch-rows", type=int, default=2_000_000)
    ap.add_argument("--pipe", action="store_true", help="pipe the generator (memory only)")
    args = ap.parse_args(argv)
    ensure_data(args.data, variants=False)
    env = {"PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    base = [sys.executable, "-m", "ragmeter", "trec"]
    for m in FIVE:
        base += ["-m", m]
    qrels7 = args.data / "qrels.binary.txt"
    run7 = args.data / "run.trec"
    print("ragmeter trec --stream benchmark (benchmarks/README.md)")
    mem = [_run_wait4([*base, str(qrels7), str(run7)], env) for _ in range(3)]
    wall_mem = sorted(m[0] for m in mem)[1]  # median of three
    rss_mem, out_mem = max(m[1] for m in mem), mem[0][2]
    lines7 = gen_retrieval.EXPECTED["run_lines"]
    print(
        f"  in memory, 7M lines: {wall_mem:.2f} s, {lines7 / wall_mem / 1e6:.2f} M lines/s, "
        f"peak RSS {rss_mem / 1024:.0f} MB"
    )
    if args.pipe:
        qrels100 = args.data / "stream" / "qrels.100k.binary.txt"
        if not qrels100.exists():
            qrels100.parent.mkdir(parents=True, exist_ok=True)
            print("  writing the qrels of the 100k-query data (minutes) …", flush=True)
            gen_retrieval.write_qrels_only(qrels100, queries=100_000)
        gen = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.gen_retrieval", "--queries", "100000", "--stdout"],
            stdout=subprocess.PIPE,
            cwd=REPO,
        )
        wall, rss, out = _run_wait4(
            [*base, "--stream", "--batch-rows", str(args.batch_rows), str(qrels100), "-"],
            env,
            stdin=gen.stdout,
        )
        gen.wait()
        lines = 100_000 * gen_retrieval.DEPTH
        print(
            f"  --stream from the generator pipe, {lines / 1e6:.0f}M lines: {wall:.1f} s, "
            f"peak RSS {rss / 1024:.0f} MB"
        )
        print(f"  {'PASS' if rss <= 1024 * 1024 else 'FAIL'}  peak RSS ≤ 1 GiB")
        return 0
    stream_dir = args.data / "stream"
    stream_dir.mkdir(parents=True, exist_ok=True)
    run_big = stream_dir / f"run.x{args.copies}.trec"
    qrels_big = stream_dir / f"qrels.x{args.copies}.txt"
    if not run_big.exists() or not qrels_big.exists():
        print(f"  writing {args.copies} prefixed copies of the run and qrels …", flush=True)
        _replicate(run7, run_big, args.copies)
        _replicate(qrels7, qrels_big, args.copies)
    lines = lines7 * args.copies
    subprocess.run(["cat", str(run_big)], stdout=subprocess.DEVNULL, check=True)  # page cache
    wall, rss, out = _run_wait4(
        [*base, "--stream", "--batch-rows", str(args.batch_rows), str(qrels_big), str(run_big)], env
    )
    rate, rate_mem = lines / wall, lines7 / wall_mem
    print(
        f"  --stream, {lines / 1e6:.1f}M lines ({run_big.stat().st_size / 2**30:.1f} GiB): "
        f"{wall:.1f} s, {rate / 1e6:.2f} M lines/s, peak RSS {rss / 1024:.0f} MB"
    )
    same = parse_trec(out) == parse_trec(out_mem)
    print(
        f"  {'PASS' if same else 'FAIL'}  summary equals the in-memory summary of the 7M-line run"
    )
    print(f"  {'PASS' if rss <= 1024 * 1024 else 'FAIL'}  peak RSS {rss / 1024:.0f} MB ≤ 1 GiB")
    ratio = rate / rate_mem
    print(
        f"  {'PASS' if ratio >= 2 / 3 else 'FAIL'}  throughput {ratio:.2f} of the in-memory "
        "mode's (≥ 0.67)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
