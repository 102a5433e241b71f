"""Dense retrieval (fake hash embedder, exact search, MaxP, cache) and reciprocal rank fusion."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ragmeter.baselines import BaselineRun, rrf
from ragmeter.baselines.dense import DenseIndex, cache_key
from ragmeter.baselines.inputs import corpus_from_records


class HashEmbedder:
    """Deterministic unit vectors: the normalised sum of hash-seeded word vectors."""

    identity = "hash-embedder-v1"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts):
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.split() or [""]:
                seed = int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "little")
                out[i] += np.random.default_rng(seed).standard_normal(16).astype(np.float32)
            out[i] /= np.linalg.norm(out[i]) or 1.0
        return out


def test_exact_search_equals_brute_force(synth) -> None:
    docs, queries = synth
    corpus = corpus_from_records(docs)
    emb = HashEmbedder()
    run = DenseIndex.build(corpus, emb).search(emb, queries, k=15)
    dm, qm = emb.encode(corpus.texts), emb.encode([t for _, t in queries])
    for (qid, _), qv in zip(queries, qm, strict=True):
        scores = dm @ qv
        want = sorted(
            zip(corpus.ids, scores.tolist(), strict=True),
            key=lambda p: (-p[1], [-c for c in p[0].encode()]),
        )
        got = run.results[qid]
        assert [d for d, _ in got] == [d for d, _ in want[:15]]
        assert [s for _, s in got] == pytest.approx([s for _, s in want[:15]], abs=1e-6)


def test_chunking_scores_a_document_by_its_best_window() -> None:
    docs = [{"id": "long", "text": "a b c d e f museum archive"}, {"id": "short", "text": "g h"}]
    emb = HashEmbedder()
    index = DenseIndex.build(corpus_from_records(docs), emb, chunk_words=2, chunk_stride=2)
    assert index.matrix.shape[0] == 5  # 4 windows + 1
    got = dict(index.search(emb, [("q", "museum archive")], k=2).results["q"])
    assert got["long"] == pytest.approx(1.0, abs=1e-6)  # the window "museum archive"


def test_cache_hit_encodes_queries_only_and_text_change_changes_key(synth, tmp_path) -> None:
    docs, queries = synth
    corpus = corpus_from_records(docs)
    emb = HashEmbedder()
    first = DenseIndex.build(corpus, emb, cache_dir=tmp_path)
    a = first.search(emb, queries, 10)
    emb.calls.clear()
    second = DenseIndex.build(corpus, emb, cache_dir=tmp_path)
    assert second.cache_hit and emb.calls == []
    assert second.search(emb, queries, 10).results == a.results
    assert emb.calls == [len(queries)]
    docs2 = [dict(d) for d in docs]
    docs2[5]["text"] += " changed"
    assert cache_key(emb, corpus_from_records(docs2), None, None) != cache_key(
        emb, corpus, None, None
    )
    assert len(list(tmp_path.glob("*.npy"))) == 1


def test_rrf_worked_example() -> None:
    bm25 = {"q": [("d3", 9.0), ("d1", 8.0), ("d2", 7.0), ("d5", 6.0)]}
    dense = {"q": [("d1", 0.9), ("d4", 0.8), ("d3", 0.7), ("d6", 0.6)]}
    fused = rrf([bm25, dense], names=["bm25", "dense"])
    assert fused.results["q"] == [
        ("d1", 1 / 62 + 1 / 61), ("d3", 1 / 61 + 1 / 63), ("d4", 1 / 62),
        ("d2", 1 / 63), ("d6", 1 / 64), ("d5", 1 / 64),
    ]  # fmt: skip
    assert fused.sources["q"] == ["bm25+dense", "bm25+dense", "dense", "bm25", "dense", "bm25"]


def test_rrf_weights_depth_missing_queries_and_scores_over_rank_column() -> None:
    a = BaselineRun(["q1", "q2"], {"q1": [("x", 1.0), ("y", 3.0)], "q2": [("z", 1.0)]})
    b = {"q1": [("y", 5.0)], "q3": [("w", 2.0)]}
    fused = rrf([a, b], weights=[2.0, 1.0], depth=1, k=10)
    # a's ranking is by score (y first although listed second); depth 1 keeps only y
    assert fused.results["q1"] == [("y", 2 / 61 + 1 / 61)]
    assert fused.qids == ["q1", "q2", "q3"]
    assert fused.results["q3"] == [("w", 1 / 61)] and fused.results["q2"] == [("z", 2 / 61)]
