"""BM25 baseline speed: ``ragmeter baseline bm25`` against rank_bm25, and a bm25s top-10 check.

    python -m benchmarks.baselines [--docs 100000] [--queries 1000] [--anchor-queries 50]

A synthetic corpus is generated from a fixed seed: ``--docs`` passages of 8-200 tokens
(mean about 60) drawn from a Zipf vocabulary of 60,000 pseudo-words, and ``--queries``
queries of 3-8 words, each taken from one passage. Both sides run end to end in this process:

- **ragmeter**: read the JSONL corpus and queries, analyse (English stopwords + Snowball),
  index with bm25s, search the top 100 per query with ragmeter's tie-aware selection, write the
  TREC run (``ragmeter baseline bm25``, in-process);
- **rank_bm25** 0.2.2 (``BM25Okapi``, k1 = 0.9, b = 0.4): read the same files, tokenise with the
  same regular expression (no stemming: rank_bm25 has none), build, ``get_scores`` per query,
  top 100, write the run. rank_bm25 needs about a quarter second per query on 100k passages, so
  by default it answers ``--anchor-queries`` queries and its query time is extrapolated to all
  queries (printed as such); ``--anchor-queries 1000`` times them all.

Target (issue 13): ragmeter at least 5x faster end to end. Then the top-10 scores of every query
are compared with bm25s used directly (its tokenizer, ``BM25(method="lucene")``, ``get_scores``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 20261128
VOCAB = 60_000


def _words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out, seen = [], set()
    while len(out) < n:
        w = "".join(letters[rng.integers(0, 26, rng.integers(3, 10))])
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def generate(folder: Path, n_docs: int, n_queries: int) -> tuple[Path, Path]:
    """Write corpus.jsonl and queries.jsonl; return their paths."""
    rng = np.random.default_rng(SEED)
    vocab = np.array(_words(VOCAB, rng))
    p = 1.0 / np.arange(1, VOCAB + 1)
    p /= p.sum()
    lengths = np.clip(rng.gamma(2.0, 30.0, n_docs).astype(int), 8, 200)
    tokens = vocab[rng.choice(VOCAB, size=int(lengths.sum()), p=p)]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            fh.write(json.dumps({"id": f"d{i:06d}", "text": " ".join(tokens[a:b])}) + "\n")
    queries = folder / "queries.jsonl"
    with queries.open("w", encoding="utf-8") as fh:
        for j, doc in enumerate(rng.choice(n_docs, n_queries, replace=False).tolist()):
            words = tokens[starts[doc] : ends[doc]]
            pick = rng.choice(len(words), min(len(words), int(rng.integers(3, 9))), replace=False)
            fh.write(json.dumps({"id": f"q{j:04d}", "text": " ".join(words[np.sort(pick)])}) + "\n")
    return corpus, queries


def run_ragmeter(corpus: Path, queries: Path, out: Path) -> float:
    from ragmeter.cli.entry import main

    t0 = time.perf_counter()
    rc = main(
        [
            "baseline",
            "bm25",
            "--corpus",
            str(corpus),
            "--queries",
            str(queries),
            "-o",
            str(out),
            "-k",
            "100",
        ]
    )
    elapsed = time.perf_counter() - t0
    assert rc == 0, rc
    return elapsed


def run_rank_bm25(corpus: Path, queries: Path, out: Path, anchor: int) -> tuple[float, float]:
    """(measured seconds, end-to-end seconds extrapolated to every query)."""
    from rank_bm25 import BM25Okapi

    pattern = re.compile(r"(?u)\b\w\w+\b")
    t0 = time.perf_counter()
    ids, docs = [], []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            ids.append(rec["id"])
            docs.append(pattern.findall(rec["text"].lower()))
    qs = [json.loads(line) for line in queries.open(encoding="utf-8")]
    bm25 = BM25Okapi(docs, k1=0.9, b=0.4)
    t_build = time.perf_counter() - t0
    t1 = time.perf_counter()
    with out.open("w", encoding="utf-8") as fh:
        for q in qs[:anchor]:
            scores = bm25.get_scores(pattern.findall(q["text"].lower()))
            top = np.argpartition(-scores, 100)[:100]
            top = top[np.argsort(-scores[top], kind="stable")]
            for r, i in enumerate(top.tolist(), start=1):
                fh.write(f"{q['id']} Q0 {ids[i]} {r} {scores[i]!r} rank_bm25\n")
    t_query = time.perf_counter() - t1
    measured = t_build + t_query
    return measured, t_build + t_query * len(qs) / min(anchor, len(qs))


def top10_check(corpus: Path, queries: Path, run_path: Path) -> tuple[int, int]:
    """(queries whose top-10 scores equal bm25s's, queries compared)."""
    import Stemmer

    from ragmeter.baselines.analyzers import import_bm25s
    from ragmeter.baselines.fusion import read_any_run

    bm25s = import_bm25s()
    texts = [json.loads(line)["text"] for line in corpus.open(encoding="utf-8")]
    qs = [json.loads(line) for line in queries.open(encoding="utf-8")]
    stem = Stemmer.Stemmer("english")
    ret = bm25s.BM25(k1=0.9, b=0.4, method="lucene", backend="numpy")
    ret.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False),
        show_progress=False,
    )
    ours = read_any_run(run_path).results
    equal = 0
    for q in qs:
        toks = bm25s.tokenize(
            [q["text"]], stopwords="en", stemmer=stem, return_ids=False, show_progress=False
        )[0]
        toks = [t for t in toks if t in ret.vocab_dict]
        want: list[float] = []
        if toks:
            s = ret.get_scores(toks)
            want = sorted(s[s > 0].tolist(), reverse=True)[:10]
        got = [score for _, score in ours.get(q["id"], [])][:10]
        equal += got == want
    return equal, len(qs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--anchor-queries", type=int, default=50)
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}")
    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    t0 = time.perf_counter()
    for _ in range(5):
        a @ a
    print(f"float32 matmul: {5 * 2 * 1024**3 / (time.perf_counter() - t0) / 1e9:.0f} GFLOP/s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus, queries = generate(folder, args.docs, args.queries)
        size = corpus.stat().st_size / 1e6
        print(f"corpus: {args.docs:,} passages ({size:.0f} MB), {args.queries:,} queries, top 100")
        ours = run_ragmeter(corpus, queries, folder / "ragmeter.trec")
        print(f"ragmeter baseline bm25 (read, analyse, index, search, write): {ours:.2f} s")
        measured, total = run_rank_bm25(
            corpus, queries, folder / "rank_bm25.trec", args.anchor_queries
        )
        n = min(args.anchor_queries, args.queries)
        label = "measured" if n == args.queries else f"extrapolated from {n} queries"
        print(f"rank_bm25 BM25Okapi end to end: {total:.2f} s ({label}; {measured:.2f} s timed)")
        print(f"ratio: {total / ours:.1f}x (target >= 5x)")
        equal, compared = top10_check(corpus, queries, folder / "ragmeter.trec")
        print(f"top-10 scores equal to bm25s: {equal}/{compared} queries")


if __name__ == "__main__":
    main()
