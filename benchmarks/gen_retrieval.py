"""Synthetic MS MARCO-dev-sized retrieval benchmark data (benchmarks/README.md, "Retrieval").

``python -m benchmarks.gen_retrieval [--out DIR] [--seed S] [--queries Q] [--depth D] [--stdout]``
writes ``run.trec``, ``qrels.binary.txt``, ``qrels.graded.txt`` and ``meta.json`` (and, with
``--variants``, the shuffled, tab-separated, long-id and gzip variants). The data is synthetic:
numbers drawn from a seeded numpy ``default_rng`` (PCG64), nothing taken from MS MARCO except
its size. With ``--stdout`` only the run is written, to standard output, one query at a time (the
100M-line streaming benchmark pipes it into ``ragmeter trec --stream``).

The generator is deterministic for a given seed and numpy version; ``meta.json`` records the
counts that identify the data (if the counts match :data:`EXPECTED`, the data matches).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

SEED = 20240607
QUERIES = 6_980
DEPTH = 1_000
CORPUS = 8_841_823  # MS MARCO v1 passage count
TAG = "synthbm25"
SAMPLE = 1_064  # distinct corpus ids drawn per query; the first DEPTH are kept

# counts of the default data set: used to say whether this numpy gives the same data
EXPECTED = {
    "run_lines": 6_980_000,
    "qrels_binary_lines": 7_635,
    "qrels_binary_retrieved": 6_495,
    "qrels_graded_lines": 139_835,
    "tied_adjacent_pairs": 336_469,
}

BASE = np.array([0.50, 0.25, 0.15, 0.10])


def _unretrieved(rng: np.random.Generator, run_ids: set[int]) -> int:
    while True:
        idx = int(rng.integers(0, CORPUS))
        if idx not in run_ids:
            return idx


def _grade(rng: np.random.Generator, weights: np.ndarray) -> int:
    return int(rng.choice(4, p=weights / weights.sum()))


def generate(
    seed: int = SEED, queries: int = QUERIES, depth: int = DEPTH
) -> Iterator[tuple[int, np.ndarray, np.ndarray, list[int], list[tuple[int, int]]]]:
    """Yield ``(qid, doc_indices, scores, binary_rel_ids, graded_pairs)`` per query, in order."""
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(1_200_000 - 2, size=queries, replace=False) + 2)
    sample = max(SAMPLE, depth + 64)
    for qid in qids.tolist():
        # 1. documents
        docs = rng.choice(CORPUS, size=sample, replace=False)[:depth]
        run_ids = set(docs.tolist())
        # 2. scores: exponential gaps below a uniform top score, rounded to 3 decimals
        gaps = rng.exponential(0.01, size=depth)
        top = rng.uniform(15, 35)
        scores = np.round(top - np.cumsum(gaps), 3)
        # 3. binary qrels
        n_rel = 1 + int(rng.poisson(0.1))
        taken: set[int] = set()
        binary: list[int] = []
        for _ in range(n_rel):
            if rng.random() < 0.85:
                if rng.random() < 0.30:
                    pos = int(rng.integers(1, 4))
                else:
                    pos = math.floor(math.exp(rng.uniform(0, math.log(1000))))
                pos = min(max(pos, 1), depth)
                while pos in taken:  # next free rank, wrapping around
                    pos = pos % depth + 1
                taken.add(pos)
                binary.append(int(docs[pos - 1]))
            else:
                binary.append(_unretrieved(rng, run_ids))
        binary = list(dict.fromkeys(binary))
        # 4. graded qrels
        n_judged = int(rng.integers(15, 26))
        n_unret = int(rng.integers(0, 4))
        positions = np.sort(rng.choice(min(100, depth), size=n_judged - n_unret, replace=False))
        graded: list[tuple[int, int]] = []
        for p in positions.tolist():
            b = 1 - p / 100
            w = BASE * np.array([1 - 0.6 * b, 1, 1 + b, 1 + 2 * b])
            graded.append((int(docs[p]), _grade(rng, w)))
        for _ in range(n_unret):
            graded.append((_unretrieved(rng, run_ids), _grade(rng, BASE)))
        seen: set[int] = set()
        graded = [(d, g) for d, g in graded if not (d in seen or seen.add(d))]
        yield qid, docs, scores, binary, graded


def _run_block(qid: int, docs: np.ndarray, scores: np.ndarray) -> str:
    q = str(qid)
    names = [f"D{d:07d}" for d in docs.tolist()]
    return "".join(
        f"{q} Q0 {n} {r} {s:.3f} {TAG}\n"
        for r, (n, s) in enumerate(zip(names, scores.tolist(), strict=True), start=1)
    )


def long_id(d: int) -> str:
    """The 40-byte id of corpus index ``d`` in the long-id variant."""
    return f"msmarco_v2.1_doc_{d % 60:02d}_{d:09d}#{d % 7}_{(d * 2654435761) % 10**8:08d}"


def write(out: Path, *, seed: int, queries: int, depth: int, variants: bool) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(EXPECTED, 0)
    with (
        open(out / "run.trec", "w", encoding="ascii", newline="\n") as run,
        open(out / "qrels.binary.txt", "w", encoding="ascii") as qb,
        open(out / "qrels.graded.txt", "w", encoding="ascii") as qg,
        open(out / "run.long.trec", "w", encoding="ascii") if variants else _Null() as run_long,
        open(out / "qrels.binary.long.txt", "w", encoding="ascii") if variants else _Null() as qbl,
    ):
        for qid, docs, scores, binary, graded in generate(seed, queries, depth):
            run.write(_run_block(qid, docs, scores))
            counts["run_lines"] += len(docs)
            counts["tied_adjacent_pairs"] += int(np.count_nonzero(scores[1:] == scores[:-1]))
            in_run = set(docs.tolist())
            for d in binary:
                qb.write(f"{qid} 0 D{d:07d} 1\n")
                counts["qrels_binary_retrieved"] += d in in_run
            counts["qrels_binary_lines"] += len(binary)
            for d, g in graded:
                qg.write(f"{qid} 0 D{d:07d} {g}\n")
            counts["qrels_graded_lines"] += len(graded)
            if variants:
                run_long.write(
                    "".join(
                        f"{qid} Q0 {long_id(d)} {r} {s:.3f} {TAG}\n"
                        for r, (d, s) in enumerate(
                            zip(docs.tolist(), scores.tolist(), strict=True), start=1
                        )
                    )
                )
                for d in binary:
                    qbl.write(f"{qid} 0 {long_id(d)} 1\n")
    if variants:
        write_variants(out, seed=seed)
    meta = {
        "generator": "benchmarks/gen_retrieval.py",
        "synthetic": True,
        "seed": seed,
        "queries": queries,
        "depth": depth,
        "corpus": CORPUS,
        "tag": TAG,
        "numpy": np.__version__,
        "counts": counts,
        "matches_spec": counts == EXPECTED
        if (seed, queries, depth) == (SEED, QUERIES, DEPTH)
        else None,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


class _Null:
    def __enter__(self) -> _Null:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, _: str) -> int:
        return 0


def write_variants(out: Path, *, seed: int) -> None:
    """The shuffled, results.test-like (tabs and two spaces) and gzip copies of ``run.trec``."""
    lines = (out / "run.trec").read_bytes().splitlines(keepends=True)
    perm = np.random.default_rng(seed + 1).permutation(len(lines))
    with open(out / "run.shuffled.trec", "wb") as fh:
        fh.writelines(lines[i] for i in perm.tolist())
    del perm
    with open(out / "run.tabs.trec", "wb") as fh:
        for line in lines:
            q, it, d, r, s, t = line.split()
            fh.write(b"%s\t%s\t%s\t%s\t  %s\t%s\n" % (q, it, d, r, s, t))
    del lines
    with open(out / "run.trec", "rb") as src, gzip.open(out / "run.trec.gz", "wb", 6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def write_qrels_only(
    path: Path, *, seed: int = SEED, queries: int = QUERIES, depth: int = DEPTH
) -> None:
    """The binary qrels of a data set, without writing its run (for the streaming benchmark)."""
    with open(path, "w", encoding="ascii") as qb:
        for qid, _docs, _scores, binary, _graded in generate(seed, queries, depth):
            for d in binary:
                qb.write(f"{qid} 0 D{d:07d} 1\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/data/retrieval"))
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--queries", type=int, default=QUERIES)
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("--stdout", action="store_true", help="write only the run, to stdout")
    ap.add_argument("--variants", action="store_true", help="also write the variant runs")
    args = ap.parse_args(argv)
    if args.stdout:
        out = sys.stdout
        try:
            for qid, docs, scores, _, _ in generate(args.seed, args.queries, args.depth):
                out.write(_run_block(qid, docs, scores))
            out.flush()
        except BrokenPipeError:
            return 1
        return 0
    meta = write(
        args.out, seed=args.seed, queries=args.queries, depth=args.depth, variants=args.variants
    )
    print(json.dumps(meta["counts"]), "matches the reference counts:", meta["matches_spec"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
