"""Judge runtime throughput and ledger overhead against a loopback endpoint with 20 ms latency.

    python -m benchmarks.judge [--samples 400] [--repeats 5] [--latency 0.02]

Starts the test suite's fake OpenAI-compatible server in a separate process (so that its
threads do not share this process's GIL), then judges ``answer_correctness`` (one call per
sample) with the default concurrency (8), a fresh SQLite cache file per run, the real
``openai`` client over HTTP, and prints samples per second. Runs alternate with the ledger on
(rows kept and written to the cache database, as in every real run) and off (totals only), in
the same process, and the medians of both are printed with their ratio.

Targets (issue 7): ≥ 50 judged samples/s with the default concurrency; ledger overhead < 5 %.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.judge.fake_openai", "--latency", str(latency)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("the fake server did not start")
    return proc, url


def one_run(url: str, n: int, *, ledger: bool, tag: str) -> tuple[float, float]:
    import ragmeter.judge as rj
    from ragmeter.judge.config import resolve_config
    from ragmeter.judge.ledger import Ledger

    with tempfile.TemporaryDirectory() as tmp:
        cfg = resolve_config(
            {"base_url": url, "model": "bench-model", "cache_path": f"{tmp}/cache.sqlite"},
            environ={},
        )
        samples = [
            rj.Sample(
                f"{tag}-{i}",
                question=f"Question {i}?",
                reference=f"Fact {i}. Other {i}.",
                answer=f"Fact {i}.",
            )
            for i in range(n)
        ]
        led = None if ledger else Ledger(tag, sink=None, enabled=False)
        t0, c0 = time.perf_counter(), time.process_time()
        res = asyncio.run(rj.aevaluate(samples, ["answer_correctness"], config=cfg, ledger=led))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    counts = dict(res.aggregates["answer_correctness"].status_counts)
    assert counts == {"ok": n}, counts
    assert res.metadata["cost"]["calls_sent"] == n
    assert len(res.ledger_rows) == (n if ledger else 0)
    return dt, cpu


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--samples", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--latency", type=float, default=0.02)
    args = p.parse_args()
    proc, url = start_server(args.latency)
    try:
        one_run(url, 40, ledger=True, tag="warmup")  # imports, connection pool, first requests
        with_ledger, without = [], []
        for r in range(args.repeats):
            # alternate the order so that drift in machine load hits both sides alike
            order = (True, False) if r % 2 == 0 else (False, True)
            for on in order:
                t = one_run(url, args.samples, ledger=on, tag=f"{'on' if on else 'off'}{r}")
                (with_ledger if on else without).append(t)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    n = args.samples
    on_wall = statistics.median(t for t, _ in with_ledger)
    off_wall = statistics.median(t for t, _ in without)
    on_cpu = statistics.median(c for _, c in with_ledger)
    off_cpu = statistics.median(c for _, c in without)
    print(
        f"loopback endpoint, {args.latency * 1000:.0f} ms latency, concurrency 8 (default), "
        f"{n} samples x answer_correctness (1 call each), {args.repeats} runs each, medians"
    )
    print(
        f"with ledger:     {on_wall:.3f} s wall ({n / on_wall:.1f} samples/s), {on_cpu:.3f} s CPU"
    )
    print(
        f"without ledger:  {off_wall:.3f} s wall ({n / off_wall:.1f} samples/s), "
        f"{off_cpu:.3f} s CPU"
    )
    print(
        f"ratio with/without: wall {on_wall / off_wall:.3f} "
        f"(overhead {100 * (on_wall / off_wall - 1):+.1f} %), "
        f"CPU {on_cpu / off_cpu:.3f} (overhead {100 * (on_cpu / off_cpu - 1):+.1f} %)"
    )
    print(f"ideal at this latency and concurrency: {8 / args.latency:.0f} samples/s")


if __name__ == "__main__":
    main()
