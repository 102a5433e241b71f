"""Ranked runs of the baselines: tie-aware top-k selection and the run writers.

A baseline's ranking is written in the order ragmeter evaluates it: score descending, ties by
document id in descending byte order (trec_eval's order, docs/retrieval.md). Selection widens
the candidate set to every document tied with the k-th score before cutting, so which of
several tied documents make the top k is decided by id, never by index position.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.io.files import PathLike, atomic_write

__all__ = ["BaselineRun", "id_order", "score_text", "select_top_k", "write_run"]


@dataclass
class BaselineRun:
    """Per query (in input order) the ranked ``(doc_id, score)`` pairs; ``sources`` optional."""

    qids: list[str]
    results: dict[str, list[tuple[str, float]]]
    sources: dict[str, list[str]] | None = None
    empty: list[str] = field(default_factory=list)  # queries with no result lines

    def ranking(self, qid: str) -> list[str]:
        return [d for d, _ in self.results.get(qid, [])]


def id_order(ids: Sequence[str]) -> np.ndarray:
    """``key[i]``: position of ``ids[i]`` when all ids are sorted by their UTF-8 bytes."""
    order = sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8"))
    key = np.empty(len(ids), dtype=np.int64)
    key[np.asarray(order, dtype=np.int64)] = np.arange(len(ids), dtype=np.int64)
    return key


def select_top_k(
    scores: np.ndarray, k: int, id_key: np.ndarray, *, positive_only: bool = True
) -> np.ndarray:
    """Indices of the top ``k`` by score descending, ties by id descending.

    ``positive_only`` drops documents scoring 0 or less (BM25: they match no query term).
    """
    n = scores.shape[0]
    if positive_only:
        cand = np.flatnonzero(scores > 0)
        if cand.size > k:
            part = cand[np.argpartition(-scores[cand], k - 1)[:k]]
            kth = scores[part].min()
            cand = cand[scores[cand] >= kth]  # every document tied with the k-th score
    elif n > k:
        part = np.argpartition(-scores, k - 1)[:k]
        kth = scores[part].min()
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = np.arange(n)
    order = np.lexsort((-id_key[cand], -scores[cand].astype(np.float64)))
    return cand[order[:k]]


def score_text(value: float) -> str:
    """The shortest text that reads back to the same double (float32 widened exactly first)."""
    return repr(float(value))


def order_pairs(pairs: Mapping[str, float]) -> list[tuple[str, float]]:
    """``{doc: score}`` in evaluation order: score descending, then id descending (bytes)."""
    return sorted(pairs.items(), key=lambda p: (-p[1], _neg_bytes(p[0])))


class _neg_bytes:  # a sort key, used like a function
    """Sort key that orders strings by UTF-8 bytes, descending."""

    __slots__ = ("b",)

    def __init__(self, s: str) -> None:
        self.b = s.encode("utf-8")

    def __lt__(self, other: _neg_bytes) -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _neg_bytes) and self.b == other.b


def write_run(run: BaselineRun, path: PathLike, *, tag: str) -> None:
    """Write ``run`` atomically: TREC (``qid Q0 docno rank score tag``), or JSONL
    ``{qid, retrieved_ids, scores, sources?}`` when ``path`` ends in ``.jsonl``."""
    jsonl = str(path).endswith(".jsonl")
    with atomic_write(path, "w") as fh:
        for qid in run.qids:
            pairs = run.results.get(qid) or []
            if not pairs:
                continue
            if jsonl:
                rec: dict = {
                    "qid": qid,
                    "retrieved_ids": [d for d, _ in pairs],
                    "scores": [float(s) for _, s in pairs],
                }
                if run.sources is not None:
                    rec["sources"] = run.sources[qid]
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            else:
                fh.write(
                    "".join(
                        f"{qid} Q0 {doc} {rank} {score_text(score)} {tag}\n"
                        for rank, (doc, score) in enumerate(pairs, start=1)
                    )
                )
