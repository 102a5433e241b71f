"""A small shuffled run for the hash-plan tests (in-process and on Dask)."""

from __future__ import annotations

import random
from pathlib import Path

# what differs between the cases: formats, per-query output, -c, -J/-M, ties in file order,
# UltraRAG's first-appearance order, --dedupe
CASES: dict[str, tuple[str, ...]] = {
    "text -q": ("-q",),
    "json -q": ("--json", "-q"),
    "all_trec -c": ("-q", "-c", "-m", "all_trec"),
    "csv": ("--format", "csv", "-q", "-m", "official"),
    "ultrarag": ("-m", "ultrarag", "--format", "ultrarag"),
    "-J -M ties file": ("-J", "-M", "15", "--ties", "file", "-q", "-m", "P.5,10", "-m", "map"),
}


def shuffled_run(root: Path, *, queries: int = 160, seed: int = 1515) -> tuple[str, str, str]:
    """``(qrels, shuffled run, the same run grouped by query)``: unicode qids, tied scores,
    graded judgments, judged queries absent from the run and run queries without judgments."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(queries):
        qid = (f"é-{q}", f"q{q}", f"话题{q}", f"{rng.randint(1, 10**6)}")[q % 4]
        docs = [f"D{rng.randint(0, 400)}" for _ in range(rng.randint(1, 45))]
        if q % 13 != 5:
            for d in sorted(set(docs[::2])):
                qrels.append(f"{qid} 0 {d} {rng.choice([0, 0, 1, 2])}\n")
        if q % 11 != 4:
            for rank, d in enumerate(dict.fromkeys(docs)):
                run.append(f"{qid}\tQ0 {d} {rank} {round(rng.random(), 1)} sys{q % 3}\n")
    grouped = list(run)
    rng.shuffle(run)
    paths = []
    for name, lines in (("qrels", qrels), ("run", run), ("grouped.run", grouped)):
        path = root / name
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(str(path))
    return paths[0], paths[1], paths[2]


def skewed_run(root: Path, *, big: int = 2_000, seed: int = 99) -> tuple[str, str]:
    """``(qrels, shuffled run)``: the run of :func:`shuffled_run` with one query of ``big``
    lines and one of ``big // 4`` added, so that one qid-hash bucket holds far more rows than
    the others."""
    rng = random.Random(seed)
    qrels_path, run_path, _ = shuffled_run(root, seed=seed)
    qrels = Path(qrels_path).read_text(encoding="utf-8").splitlines(keepends=True)
    run = Path(run_path).read_text(encoding="utf-8").splitlines(keepends=True)
    for qid, n in (("big", big), ("médium", big // 4)):
        docs = [f"B{i}" for i in range(n)]
        qrels += [f"{qid} 0 {d} {rng.choice([0, 1, 2])}\n" for d in docs[::3]]
        run += [f"{qid} Q0 {d} {i} {round(rng.random(), 2)} big\n" for i, d in enumerate(docs)]
    rng.shuffle(run)
    out = []
    for name, lines in (("skewed.qrels", qrels), ("skewed.run", run)):
        path = root / name
        path.write_text("".join(lines), encoding="utf-8")
        out.append(str(path))
    return out[0], out[1]
