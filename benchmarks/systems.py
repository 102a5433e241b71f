"""Overhead of the live-system call layer (``ragmeter.systems``; issue 13 targets).

    python -m benchmarks.systems [--calls 2000] [--samples 10000] [--concurrency 8]

1. **Calls per second.** A no-op system whose every call sleeps 20 ms, called through
   ragmeter's call layer (cache lookup, thread pool or asyncio semaphore, shape check, one
   SQLite commit per call) at concurrency 8, against the same calls on a bare
   ``ThreadPoolExecutor(8)`` / ``asyncio.gather`` with nothing else, and against the ideal
   ``concurrency / 20 ms`` = 400 calls/s. Target: at least 300 calls/s.
2. **Cached re-run.** A synthetic gold set of ``--samples`` samples (one retrieval query and one
   type label each), evaluated (a) from output files and (b) with a live system whose every call
   is already in the call cache. Target: (b) - (a) under 2 s.

Both sides run in this process; the figures are medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

LATENCY = 0.020


class NoOp:
    """Sleeps ``delay`` seconds per call and returns a fixed label or ranking."""

    def __init__(self, delay: float = LATENCY) -> None:
        self.delay = delay

    def classify(self, text: str) -> str:
        time.sleep(self.delay)
        return "M"

    def retrieve(self, question: str, *, k: int) -> list[tuple[str, float]]:
        time.sleep(self.delay)
        n = question.rsplit(" ", 1)[-1]
        return [(f"d{n}", 2.0), ("d0", 1.0)]


class AsyncNoOp:
    def __init__(self, delay: float = LATENCY) -> None:
        self.delay = delay

    async def classify(self, text: str) -> str:
        await asyncio.sleep(self.delay)
        return "M"


def _call_layer(obj: Any, n: int, concurrency: int, folder: Path) -> float:
    """Seconds for ``n`` classify calls through ragmeter's call layer (fresh on-disk cache)."""
    from ragmeter.errors import InputError
    from ragmeter.systems.cache import CallCache
    from ragmeter.systems.calls import ErrorBudget, run_method
    from ragmeter.systems.loader import load_live_system

    def error(key: str, message: str) -> InputError:
        return InputError(message)

    live = load_live_system(
        "bench", obj=obj, error=error, options={"concurrency": concurrency, "timeout_s": 60.0}
    )
    inputs = {f"u{i}": {"text": f"document {i}"} for i in range(n)}
    path = folder / f"cache-{time.monotonic_ns()}.sqlite"
    with CallCache(path) as cache:
        t0 = time.perf_counter()
        results, errors, _ = run_method(live, "classify", inputs, cache, ErrorBudget(n))
        seconds = time.perf_counter() - t0
        assert len(results) == n and not errors and cache.count() == n
    return seconds


def _bare_threads(n: int, concurrency: int) -> float:
    obj = NoOp()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(obj.classify, (f"document {i}" for i in range(n))))
    return time.perf_counter() - t0


def _bare_async(n: int, concurrency: int) -> float:
    obj = AsyncNoOp()

    async def main() -> None:
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> str:
            async with sem:
                return await obj.classify(f"document {i}")

        await asyncio.gather(*(one(i) for i in range(n)))

    t0 = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - t0


def _gold(folder: Path, n: int) -> Path:
    path = folder / "gold.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(1, n + 1):
            sample = {
                "id": f"s{i}",
                "text": f"Document {i} about a museum.",
                "type_classification": {"primary_type": "M" if i % 3 else "A"},
                "qa_pairs": [{"qid": f"s{i}-q1", "question": f"question {i}"}],
                "relevant_docs": {f"s{i}-q1": {f"d{i}": 1}},
            }
            fh.write(json.dumps(sample) + "\n")
    return path


def _cached_rerun(n: int, repeat: int, folder: Path) -> tuple[float, float, int]:
    """(median seconds from files, median seconds cached live, calls made by the last run)."""
    import ragmeter

    gold = _gold(folder, n)
    tasks = {"retrieval": {"measures": ["nDCG@10", "RR"]}, "classification": {}}
    base = {"project": "bench", "dataset": {"path": str(gold)}, "tasks": tasks}
    live_cfg = {**base, "systems": [{"name": "live", "version": "1"}]}
    cache = folder / "calls.sqlite"
    results = folder / "results"
    kw = {"cache_dir": None, "systems_cache": cache, "results_dir": results}
    fill = ragmeter.evaluate(live_cfg, systems={"live": NoOp(delay=0.0)}, **kw)
    out = results / fill.evaluation_id / "outputs" / "live"
    files_cfg = {
        **base,
        "systems": [
            {
                "name": "live",
                "outputs": {"run": str(out / "run.trec"), "entities": str(out / "entities.jsonl")},
            }
        ],
    }
    from_files, cached = [], []
    calls = -1
    for _ in range(repeat):
        t0 = time.perf_counter()
        a = ragmeter.evaluate(files_cfg, cache_dir=None)
        from_files.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = ragmeter.evaluate(live_cfg, systems={"live": NoOp()}, **kw)
        cached.append(time.perf_counter() - t0)
        calls = sum(s["calls"] for s in b.summary()["systems"][0]["calls"].values())
        for task in tasks:
            assert a.results["live"][task].summary == b.results["live"][task].summary
    return statistics.median(from_files), statistics.median(cached), calls


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n, c = args.calls, args.concurrency
    ideal = c / LATENCY
    with tempfile.TemporaryDirectory(prefix="ragmeter-bench-systems-") as tmp:
        folder = Path(tmp)
        print(f"1. {n} calls of {LATENCY * 1000:.0f} ms at concurrency {c} (ideal {ideal:.0f}/s)")
        rows = [
            ("ragmeter, sync method", lambda: _call_layer(NoOp(), n, c, folder)),
            ("bare ThreadPoolExecutor", lambda: _bare_threads(n, c)),
            ("ragmeter, async method", lambda: _call_layer(AsyncNoOp(), n, c, folder)),
            ("bare asyncio.gather", lambda: _bare_async(n, c)),
        ]
        rates: dict[str, float] = {}
        for label, fn in rows:
            seconds = statistics.median(fn() for _ in range(args.repeat))
            rates[label] = n / seconds
            print(
                f"   {label:<26} {rates[label]:7.1f} calls/s  ({seconds:.2f} s; "
                f"{rates[label] / ideal:.3f} of ideal)"
            )
        for mine, bare in (("ragmeter, sync method", "bare ThreadPoolExecutor"),
                           ("ragmeter, async method", "bare asyncio.gather")):  # fmt: skip
            verdict = "ok" if rates[mine] >= 300 else "BELOW TARGET"
            print(f"   {mine}: {rates[mine] / rates[bare]:.3f} of {bare}; >= 300/s: {verdict}")
        print(f"2. cached re-run of {args.samples} samples (retrieval + classification)")
        files_s, cached_s, calls = _cached_rerun(args.samples, args.repeat, folder)
        extra = cached_s - files_s
        print(f"   evaluation from files        {files_s:6.2f} s")
        print(f"   live system, all cached      {cached_s:6.2f} s  ({calls} calls made)")
        verdict = "ok" if extra < 2.0 else "ABOVE TARGET"
        print(f"   extra {extra:+.2f} s (ratio {cached_s / files_s:.2f}); < 2 s: {verdict}")


if __name__ == "__main__":
    main()
