"""Dense retrieval with the bundled all-MiniLM-L6-v2: exact cosine search with numpy.

Embeddings are unit rows, so cosine is a dot product. Document embeddings are cached on disk by
a content hash (embedder identity, chunking, every id and text), so a rerun on the same corpus
encodes only the queries. Any object with ``encode(texts) -> (n, d) unit rows`` can stand in
for the model (the tests use a deterministic hash embedder).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragmeter.baselines.inputs import Corpus
from ragmeter.baselines.runs import BaselineRun, id_order, select_top_k
from ragmeter.io.files import atomic_write

__all__ = ["DenseIndex", "DenseSystem", "Embedder", "dense_search", "embedder_identity"]

QUERY_BATCH = 128
ENCODE_BLOCK = 1024  # texts per encode call: one progress step


class Embedder(Protocol):
    """What dense retrieval needs of an embedder."""

    def encode(self, texts: Sequence[str]) -> Any:
        """``(len(texts), d)`` float32 rows of unit L2 norm."""
        ...


def embedder_identity(embedder: Any) -> str:
    """A stable name for the cache key: the bundled model's source, else ``identity``."""
    for attr in ("identity", "source"):
        value = getattr(embedder, attr, None)
        if isinstance(value, str):
            return value
    return type(embedder).__qualname__


def _max_seq_length(embedder: Any) -> int | None:
    model = getattr(embedder, "model", None)
    value = getattr(model, "max_seq_length", None)
    return int(value) if isinstance(value, int) else None


def _windows(text: str, words: int | None, stride: int | None) -> list[str]:
    """The text, or overlapping windows of ``words`` words every ``stride`` words (MaxP)."""
    if not words:
        return [text]
    toks = text.split()
    if len(toks) <= words:
        return [text]
    step = stride or words
    out = [" ".join(toks[i : i + words]) for i in range(0, len(toks) - words + step, step)]
    return [w for w in out if w] or [text]


def cache_key(
    embedder: Any, corpus: Corpus, chunk_words: int | None, chunk_stride: int | None
) -> str:
    h = hashlib.sha256()
    head = {
        "embedder": embedder_identity(embedder),
        "max_seq_length": _max_seq_length(embedder),
        "chunk_words": chunk_words,
        "chunk_stride": chunk_stride,
        "fields": "title+text",
    }
    h.update(json.dumps(head, sort_keys=True).encode())
    for doc, text in zip(corpus.ids, corpus.texts, strict=True):
        h.update(doc.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    return h.hexdigest()


@dataclass
class DenseIndex:
    """Document (window) embeddings; ``owner[j]`` is the document of row ``j``."""

    ids: list[str]
    matrix: np.ndarray
    owner: np.ndarray
    cache_hit: bool = False
    truncated: int | None = None
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        corpus: Corpus,
        embedder: Any,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        progress: Callable[[int], None] | None = None,
        chunk_words: int | None = None,
        chunk_stride: int | None = None,
    ) -> DenseIndex:
        windows: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(corpus.texts):
            for w in _windows(text, chunk_words, chunk_stride):
                windows.append(w)
                owner.append(i)
        owner_arr = np.asarray(owner, dtype=np.int64)
        key = cache_key(embedder, corpus, chunk_words, chunk_stride)
        if cache_dir is not None:
            npy = Path(cache_dir) / f"{key}.npy"
            if npy.is_file():
                matrix = np.load(npy, mmap_mode="r")
                if matrix.shape[0] == len(windows):
                    return cls(list(corpus.ids), matrix, owner_arr, cache_hit=True)
        # encoded in fixed blocks (whatever the progress display), so the bytes never depend on it
        blocks = []
        for lo in range(0, len(windows), ENCODE_BLOCK):
            blocks.append(np.asarray(embedder.encode(windows[lo : lo + ENCODE_BLOCK]), np.float32))
            if progress is not None:
                progress(owner[min(lo + ENCODE_BLOCK, len(windows)) - 1] + 1)  # documents done
        matrix = np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32)
        truncated = _count_truncated(embedder, windows)
        if cache_dir is not None:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            with atomic_write(Path(cache_dir) / f"{key}.npy", "wb") as fh:
                np.save(fh, matrix)
            meta = {
                "embedder": embedder_identity(embedder),
                "documents": len(corpus),
                "rows": len(windows),
                "chunk_words": chunk_words,
                "chunk_stride": chunk_stride,
                "truncated": truncated,
            }
            with atomic_write(Path(cache_dir) / f"{key}.json") as fh:
                fh.write(json.dumps(meta, indent=1))
        return cls(list(corpus.ids), matrix, owner_arr, truncated=truncated)

    def search(
        self, embedder: Any, queries: Sequence[tuple[str, str]], k: int = 100
    ) -> BaselineRun:
        """Exact top-k by cosine (best window per document), ties by id descending."""
        id_key = id_order(self.ids)
        qids = [q for q, _ in queries]
        results: dict[str, list[tuple[str, float]]] = {}
        starts = np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])
        chunked = starts.size != self.owner.size
        for lo in range(0, len(queries), QUERY_BATCH):
            batch = queries[lo : lo + QUERY_BATCH]
            qv = np.asarray(embedder.encode([t for _, t in batch]), dtype=np.float32)
            block = qv @ np.asarray(self.matrix).T
            if chunked:  # MaxP: a document scores its best window
                block = np.maximum.reduceat(block, starts, axis=1)
            for row, (qid, _) in zip(block, batch, strict=True):
                top = select_top_k(row, k, id_key, positive_only=False)
                results[qid] = [(self.ids[i], float(row[i])) for i in top.tolist()]
        return BaselineRun(qids, results)


def _count_truncated(embedder: Any, texts: Sequence[str]) -> int | None:
    """How many texts exceed the model's word-piece limit (None when it cannot be known)."""
    model = getattr(embedder, "model", None)
    limit = _max_seq_length(embedder)
    tok = getattr(model, "tokenizer", None)
    if tok is None or limit is None:
        return None
    lengths = [len(ids) for ids in tok(list(texts), add_special_tokens=True)["input_ids"]]
    return sum(n > limit for n in lengths)


def dense_search(
    corpus: Corpus,
    queries: Sequence[tuple[str, str]],
    k: int = 100,
    *,
    embedder: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    chunk_words: int | None = None,
    chunk_stride: int | None = None,
) -> BaselineRun:
    """Exact dense retrieval; ``embedder`` defaults to the bundled MiniLM."""
    if embedder is None:
        from ragmeter.answers.semantic import load_minilm

        embedder = load_minilm()
    index = DenseIndex.build(
        corpus, embedder, cache_dir=cache_dir, chunk_words=chunk_words, chunk_stride=chunk_stride
    )
    return index.search(embedder, queries, k)


class DenseSystem:
    """Dense retrieval as a live system (``call: ragmeter.baselines:DenseSystem``)."""

    def __init__(
        self,
        corpus: Any,
        *,
        embedder: Any = None,
        embedder_path: str | None = None,
        cache_dir: str | None = ".ragmeter/cache/embeddings",
        chunk_words: int | None = None,
        chunk_stride: int | None = None,
    ) -> None:
        from ragmeter.baselines.bm25 import _as_corpus

        if embedder is None:
            from ragmeter.answers.semantic import load_minilm

            embedder = load_minilm(path=embedder_path)
        self.embedder = embedder
        self.index = DenseIndex.build(
            _as_corpus(corpus),
            embedder,
            cache_dir=cache_dir,
            chunk_words=chunk_words,
            chunk_stride=chunk_stride,
        )

    def retrieve(self, question: str, *, k: int = 100) -> list[tuple[str, float]]:
        return self.index.search(self.embedder, [("q", question)], k).results["q"]
