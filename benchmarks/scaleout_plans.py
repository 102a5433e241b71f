"""The retrieval plans on 2 workers against the in-memory command, on the 7M-line benchmark run.

    python -m benchmarks.scaleout plans [--repeats 3]

``ragmeter trec QRELS RUN -m map -m ndcg_cut.10 -m recip_rank -m P.10 --json`` in this machine's
in-memory mode, then with ``--workers 2`` on the run grouped by query (the grouped plan: byte
ranges at query boundaries) and on its shuffled copy (``--plan hash``: qid-hash buckets through
Parquet files). The run is ``benchmarks/gen_retrieval.py``'s (6,980 queries × 1,000 lines, 278
MB; the "Retrieval" section of benchmarks/README.md). Each command is a child process timed spawn
to exit, so the Dask figures include starting and closing the cluster; the contenders are
interleaved, and every output must equal the in-memory one apart from the ``executor`` block
before its time counts. Goals: the grouped plan's lines/s ≥ ⅔ of the in-memory mode's, the
hash plan's ≥ ⅓.
"""

from __future__ import annotations

import json
import os
import statistics
from typing import Any

from benchmarks import gen_retrieval
from benchmarks.retrieval import REPO, ensure_data
from benchmarks.scaleout import timed

MEASURES = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "P.10"]


def plans_benchmark(a: Any) -> int:
    data = REPO / "benchmarks" / "data" / "retrieval"  # what benchmarks.retrieval uses
    ensure_data(data, variants=True)
    qrels = str(data / "qrels.binary.txt")
    grouped, shuffled = str(data / "run.trec"), str(data / "run.shuffled.trec")
    lines = gen_retrieval.EXPECTED["run_lines"]
    base = ["trec", *MEASURES, "--json", qrels]
    contenders = {
        "in memory": [*base, grouped],
        "grouped plan, 2 workers": [*base, grouped, "--workers", "2"],
        "hash plan, 2 workers": [*base, shuffled, "--workers", "2", "--plan", "hash"],
    }
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(a.repeats):
        reference = None
        for name, args in contenders.items():
            wall, text = timed(args)
            out = json.loads(text)
            meta = out.pop("executor", None)
            if reference is None:
                reference = out
            else:
                assert meta is not None and meta["kind"] == "dask", meta
                # the shuffled copy is another file: its name and sha256 differ, not its numbers
                text = json.dumps(out)
                theirs, ours = out["inputs"]["run"], reference["inputs"]["run"]
                for key in ("path", "sha256"):
                    text = text.replace(json.dumps(theirs[key]), json.dumps(ours[key]))
                if text != json.dumps(reference):
                    raise SystemExit(f"{name}: the output differs from the in-memory one")
            times[name].append(wall)
    print(f"{lines:,} lines, {a.repeats} interleaved rounds, load {os.getloadavg()}")
    memory = statistics.median(times["in memory"])
    for name, walls in times.items():
        wall = statistics.median(walls)
        print(
            f"{name:26s} {wall:6.2f} s (min {min(walls):.2f}, max {max(walls):.2f})  "
            f"{lines / wall / 1e6:5.2f}M lines/s  {memory / wall:.2f} of in memory"
        )
    print("goals: grouped ≥ 0.67 of in memory, hash ≥ 0.33; outputs equal apart from 'executor'")
    return 0
