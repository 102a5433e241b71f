"""Benchmark data for the sizes most TREC users run, and for deeply judged collections.

``python -m benchmarks.gen_retrieval_cases [--out DIR]`` writes, under ``DIR`` (default
``/tmp/ragmeter-bench-cases``; large data never goes into the repository):

- ``deep-Q.run`` / ``deep-Q.qrels`` for Q = 10, 100, 250, 1000 queries × 1,000 lines (10k,
  100k, 250k and 1M lines): TREC ad hoc style, Robust-like 11-byte docnos (``FBIS3-123456``)
  and deep judgments (about 60% of each query's run judged, plus unretrieved judged documents),
  as a pooled collection looks after a deep pool;
- ``tiny.run`` / ``tiny.qrels``: the first 10 lines of ``deep-10`` and their query's
  judgments (a start-up measurement);
- ``runs50/run-NN.run`` for NN = 00..49: fifty 100-query runs against ``deep-100.qrels`` (a
  shared task or a sweep);
- ``judged-7m.run`` / ``judged-7m.qrels``: 6,980 queries × 1,000 lines whose 8-byte docnos come
  from a 400,000-document corpus, 100 judgments per query (698,000 lines), so that most of the
  run's documents are judged for *some* query (82% of the corpus).

Deterministic for a seed and numpy version; every file is skipped when it already exists.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 20250118
DEEP_SIZES = (10, 100, 250, 1000)
DEPTH = 1000


def _scores(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.round(rng.uniform(5, 30) - np.cumsum(rng.exponential(0.02, n)), 4)


def _write_run(path: Path, qids, docs, scores, tag: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        for q, d, s in zip(qids, docs, scores, strict=True):
            fh.write(
                "".join(
                    f"{q} Q0 {doc} {i} {sc:.4f} {tag}\n"
                    for i, (doc, sc) in enumerate(zip(d, s.tolist(), strict=True), 1)
                )
            )


def _robust_id(i: int) -> str:
    return f"FBIS3-{i:06d}"


def deep(out: Path, queries: int, seed: int) -> tuple[Path, Path]:
    """A ``queries`` × 1,000 run and its deep qrels (Robust-like ids and pool)."""
    run, qrels = out / f"deep-{queries}.run", out / f"deep-{queries}.qrels"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng([seed, queries])
    qids = [str(301 + i) for i in range(queries)]
    docs, scores, lines = [], [], []
    for q in qids:
        ids = rng.choice(500_000, DEPTH + 200, replace=False)
        ranked = [_robust_id(i) for i in ids[:DEPTH].tolist()]
        docs.append(ranked)
        scores.append(_scores(rng, DEPTH))
        judged = np.sort(rng.choice(DEPTH, 600, replace=False))
        p_rel = np.where(judged < 100, 0.3, 0.05)
        rel = rng.random(judged.size) < p_rel
        lines += [f"{q} 0 {ranked[j]} {int(r)}\n" for j, r in zip(judged, rel, strict=True)]
        lines += [f"{q} 0 {_robust_id(i)} {int(rng.random() < 0.1)}\n" for i in ids[DEPTH:]]
    _write_run(run, qids, docs, scores, "deeprun")
    qrels.write_text("".join(lines), encoding="ascii")
    return run, qrels


def runs50(out: Path, seed: int) -> list[Path]:
    """Fifty 100-query runs over the documents of ``deep-100``: shuffled, re-scored copies."""
    base, _ = deep(out, 100, seed)
    folder = out / "runs50"
    folder.mkdir(exist_ok=True)
    paths = [folder / f"run-{k:02d}.run" for k in range(50)]
    if all(p.exists() for p in paths):
        return paths
    rows = [line.split() for line in base.read_text().splitlines()]
    qids = sorted({r[0] for r in rows}, key=int)
    by_q = {q: [r[2] for r in rows if r[0] == q] for q in qids}
    for k, path in enumerate(paths):
        rng = np.random.default_rng([seed, 50, k])
        docs = [[by_q[q][i] for i in rng.permutation(DEPTH).tolist()] for q in qids]
        _write_run(path, qids, docs, [_scores(rng, DEPTH) for _ in qids], f"sys{k:02d}")
    return paths


def judged_7m(out: Path, seed: int, queries: int = 6980) -> tuple[Path, Path]:
    """A 7M-line run over a small corpus, judged so deeply that most documents are judged."""
    run, qrels = out / "judged-7m.run", out / "judged-7m.qrels"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng([seed, 7])
    corpus = 400_000
    qids = np.sort(rng.choice(np.arange(2, 1_200_000), queries, replace=False))
    with open(run, "w", encoding="ascii") as fr, open(qrels, "w", encoding="ascii") as fq:
        for q in qids.tolist():
            ids = rng.choice(corpus, DEPTH + 40, replace=False)
            names = [f"D{i:07d}" for i in ids.tolist()]
            sc = _scores(rng, DEPTH).tolist()
            fr.write(
                "".join(f"{q} Q0 {names[i]} {i + 1} {sc[i]:.3f} judged\n" for i in range(DEPTH))
            )
            # 60 judged from the top 100, and 40 judged documents the run did not retrieve
            top = np.sort(rng.choice(100, 60, replace=False)).tolist()
            rel = (rng.random(100) < 0.2).astype(int).tolist()
            picked = [names[i] for i in top] + names[DEPTH:]
            fq.write("".join(f"{q} 0 {d} {g}\n" for d, g in zip(picked, rel, strict=True)))
    return run, qrels


def tiny(out: Path, seed: int) -> tuple[Path, Path]:
    """A 10-line run (the first lines of ``deep-10``) and ``deep-10``'s judgments of its query."""
    run10, qrels10 = deep(out, 10, seed)
    run, qrels = out / "tiny.run", out / "tiny.qrels"
    if not (run.exists() and qrels.exists()):
        with open(run10, encoding="ascii") as fh:
            lines = [next(fh) for _ in range(10)]
        run.write_text("".join(lines), encoding="ascii")
        qid = lines[0].split()[0] + " "
        with open(qrels10, encoding="ascii") as fh:
            qrels.write_text("".join(x for x in fh if x.startswith(qid)), encoding="ascii")
    return run, qrels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/ragmeter-bench-cases")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--skip-7m", action="store_true", help="only the small and medium cases")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for q in DEEP_SIZES:
        deep(out, q, args.seed)
    runs50(out, args.seed)
    tiny(out, args.seed)
    if not args.skip_7m:
        judged_7m(out, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
