"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) over any runs.

RRF(d) = Σᵢ wᵢ / (c + rankᵢ(d)), c = 60 by default. rankᵢ is the document's rank in run i in
the order ragmeter evaluates it (score descending, ties by id descending), not a file's rank
column, so fusing a file fuses the ranking that is evaluated. Exact RRF values are written and
ties (common: every document found only at rank r by one run ties with the others) resolve by id.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.baselines.runs import BaselineRun, order_pairs
from ragmeter.errors import UsageError

__all__ = ["HybridSystem", "read_any_run", "rrf"]

RunLike = BaselineRun | Mapping[str, Sequence[tuple[str, float]]]


def _per_query(run: RunLike) -> tuple[list[str], dict[str, list[tuple[str, float]]]]:
    if isinstance(run, BaselineRun):
        return run.qids, {q: list(run.results.get(q, [])) for q in run.qids}
    return list(run), {q: list(v) for q, v in run.items()}


def read_any_run(path: str | os.PathLike[str]) -> BaselineRun:
    """A TREC or JSONL run file (``ragmeter.io.trec.read_run``) as a :class:`BaselineRun`."""
    from ragmeter.io.trec import read_run

    fmt = "jsonl" if str(path).endswith(".jsonl") else "trec"
    run = read_run(path, format=fmt)
    table = run.to_table()
    qids = table.column("qid").to_pylist()
    docs = table.column("docno").to_pylist()
    scores = table.column("score").to_pylist()
    order: list[str] = []
    results: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in zip(qids, docs, scores, strict=True):
        if q not in results:
            results[q] = []
            order.append(q)
        results[q].append((d, float(s)))
    return BaselineRun(order, results)


def rrf(
    runs: Sequence[RunLike],
    *,
    k: int = 100,
    c: float = 60,
    weights: Sequence[float] | None = None,
    depth: int = 1000,
    names: Sequence[str] | None = None,
) -> BaselineRun:
    """Fuse ``runs``; each query's ``sources`` name the runs that retrieved each document.

    >>> a = {"q": [("d3", 4.0), ("d1", 3.0), ("d2", 2.0), ("d5", 1.0)]}
    >>> b = {"q": [("d1", 0.9), ("d4", 0.8), ("d3", 0.7), ("d6", 0.6)]}
    >>> [d for d, _ in rrf([a, b]).results["q"]]
    ['d1', 'd3', 'd4', 'd2', 'd6', 'd5']
    """
    if not runs:
        raise UsageError("rrf needs at least one run")
    weights = list(weights) if weights is not None else [1.0] * len(runs)
    if len(weights) != len(runs):
        raise UsageError(f"{len(weights)} weights for {len(runs)} runs (expected one per run)")
    names = list(names) if names is not None else [f"run{i + 1}" for i in range(len(runs))]
    if len(names) != len(runs):
        raise UsageError(f"{len(names)} source names for {len(runs)} runs (expected one per run)")
    qids: list[str] = []
    seen: set[str] = set()
    per_run = []
    for run in runs:
        order, res = _per_query(run)
        per_run.append(res)
        for q in order:
            if q not in seen:
                seen.add(q)
                qids.append(q)
    results: dict[str, list[tuple[str, float]]] = {}
    sources: dict[str, list[str]] = {}
    for q in qids:
        fused: dict[str, float] = {}
        found: dict[str, list[str]] = {}
        for i, res in enumerate(per_run):
            ranked = order_pairs(dict(res.get(q, [])))[:depth]  # evaluation order decides
            for rank, (doc, _) in enumerate(ranked, start=1):
                fused[doc] = fused.get(doc, 0.0) + weights[i] / (c + rank)
                found.setdefault(doc, []).append(names[i])
        top = order_pairs(fused)[:k]
        results[q] = top
        sources[q] = ["+".join(found[d]) for d, _ in top]
    return BaselineRun(qids, results, sources=sources)


class HybridSystem:
    """BM25 + dense fused by RRF as a live system (``call: ragmeter.baselines:HybridSystem``)."""

    def __init__(
        self,
        corpus: Any,
        *,
        depth: int = 1000,
        rrf_k: float = 60,
        weights: Sequence[float] = (1.0, 1.0),
        bm25: Mapping[str, Any] | None = None,
        dense: Mapping[str, Any] | None = None,
    ) -> None:
        from ragmeter.baselines.bm25 import BM25System, _as_corpus
        from ragmeter.baselines.dense import DenseSystem

        corpus = _as_corpus(corpus)
        self.bm25 = BM25System(corpus, **dict(bm25 or {}))
        self.dense = DenseSystem(corpus, **dict(dense or {}))
        self.depth, self.c, self.weights = depth, rrf_k, list(weights)

    def retrieve(self, question: str, *, k: int = 100) -> list[tuple[str, float]]:
        runs = [
            {"q": self.bm25.retrieve(question, k=self.depth)},
            {"q": self.dense.retrieve(question, k=self.depth)},
        ]
        fused = rrf(runs, k=k, c=self.c, weights=self.weights, depth=self.depth)
        return fused.results["q"]
