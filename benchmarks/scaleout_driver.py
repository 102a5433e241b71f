"""The driver's part of ``ragmeter answers --executor dask`` before the first shard runs.

    python -m benchmarks.scaleout_driver [--samples 1000000] [--repeats 3]

On Dask the driver only cuts the file at line starts (``estimate_lines`` and ``line_shards``),
and each worker reads and checks its own shard. The whole-file read and check of the
in-process command (``_read_answers``) is what the driver also did before the workers checked
their shards; both are timed here, interleaved, on the file of ``benchmarks.scaleout``. The
machine is shared: the load average is printed with the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    from benchmarks.scaleout import answers_file
    from ragmeter.answers.options import resolve_options
    from ragmeter.cli.answers import _read_answers
    from ragmeter.executors.plan import estimate_lines, line_shards, shard_count

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    path = str(answers_file(a.samples))
    options = resolve_options(["em", "f1", "rouge-l"])
    keys = {"id": "id", "pred": "pred_answer", "gold": "golden_answers"}
    keys |= {"question": "question", "groups": None}
    cut_t, read_t = [], []
    for _ in range(a.repeats):
        start = time.perf_counter()
        shards = line_shards(path, shard_count(estimate_lines(path), a.workers, None), ())
        cut_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        ids = _read_answers(path, options, keys, False)[0]
        read_t.append(time.perf_counter() - start)
        assert sum(s.rows for s in shards) == len(ids)
    print(f"samples {a.samples:,}, {len(shards)} shards, load average {os.getloadavg()}")
    print(f"cut at line starts (the driver on Dask)   median {statistics.median(cut_t):7.2f} s")
    print(f"read and check the whole file             median {statistics.median(read_t):7.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
