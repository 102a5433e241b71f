"""BM25 on bm25s (numpy backend): presets, indexing, persistence and exact top-k selection.

Scores are bm25s's (``get_scores_from_ids``; Lucene's formula by default). ragmeter selects the
top k itself (:func:`~ragmeter.baselines.runs.select_top_k`) because bm25s's ``retrieve`` pads
short result lists with zero-score documents and breaks ties by index position. See
docs/baselines.md for the settings and why.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.baselines.analyzers import Analyzer, import_bm25s
from ragmeter.baselines.inputs import Corpus, corpus_from_records, read_corpus
from ragmeter.baselines.runs import BaselineRun, id_order, select_top_k
from ragmeter.errors import UsageError

__all__ = ["METHODS", "PRESETS", "BM25Index", "BM25System"]

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
PRESETS: dict[str, dict[str, Any]] = {
    # Anserini/Pyserini's defaults: what published Lucene BM25 baselines use
    "default": {
        "method": "lucene",
        "k1": 0.9,
        "b": 0.4,
        "stopwords": "auto",
        "stemmer": "snowball",
    },
    # UltraRAG's bm25s backend: bm25s's own defaults, stopwords, no stemming
    "ultrarag": {"method": "lucene", "k1": 1.5, "b": 0.75, "stopwords": "auto", "stemmer": "none"},
}
MANIFEST = "ragmeter-index.json"


def corpus_hash(corpus: Corpus) -> str:
    """sha256 over every document's id and analysed text, in order."""
    h = hashlib.sha256()
    for doc, text in zip(corpus.ids, corpus.texts, strict=True):
        h.update(doc.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    return h.hexdigest()


def resolve_params(
    preset: str = "default",
    *,
    method: str | None = None,
    k1: float | None = None,
    b: float | None = None,
    delta: float | None = None,
    stopwords: str | None = None,
    stemmer: str | None = None,
) -> dict[str, Any]:
    """The preset's settings with explicit options on top."""
    if preset not in PRESETS:
        raise UsageError(f"--preset {preset!r} (expected {' or '.join(PRESETS)})")
    params = dict(PRESETS[preset], delta=0.5)
    for key, value in (
        ("method", method),
        ("k1", k1),
        ("b", b),
        ("delta", delta),
        ("stopwords", stopwords),
        ("stemmer", stemmer),
    ):
        if value is not None:
            params[key] = value
    if params["method"] not in METHODS:
        raise UsageError(f"--method {params['method']!r} (expected one of {', '.join(METHODS)})")
    return params


def _as_corpus(corpus: Any) -> Corpus:
    if isinstance(corpus, Corpus):
        return corpus
    if isinstance(corpus, (str, os.PathLike)):
        return read_corpus(corpus)
    return corpus_from_records(corpus)


class BM25Index:
    """A BM25 index over a corpus; :meth:`search` gives runs in evaluation order."""

    def __init__(
        self, retriever: Any, ids: list[str], analyzer: Analyzer, params: dict, corpus_sha: str
    ) -> None:
        self.retriever = retriever
        self.ids = ids
        self.analyzer = analyzer
        self.params = params
        self.corpus_sha = corpus_sha
        self._id_key = id_order(ids)
        self.reused = False  # True when loaded from an up-to-date saved index
        self.rebuild_reason: str | None = None

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        corpus: Corpus | str | os.PathLike[str] | Iterable[Mapping[str, Any]],
        *,
        preset: str = "default",
        language: str = "en",
        **options: Any,
    ) -> BM25Index:
        """Index ``corpus`` (a :class:`Corpus`, a JSONL path or ``{id, text, title?}`` records)."""
        corpus = _as_corpus(corpus)
        params = resolve_params(preset, **options)
        analyzer = Analyzer(language, params["stopwords"], params["stemmer"])
        bm25s = import_bm25s()
        words: dict[str, int] = {}
        docs_words: list[list[int]] = []
        for text in corpus.texts:
            row = []
            for w in analyzer.words(text):
                wid = words.get(w)
                if wid is None:
                    wid = words[w] = len(words)
                row.append(wid)
            docs_words.append(row)
        # stem once per distinct word, then renumber words to stems
        stems = analyzer.stem_map(list(words))
        vocab: dict[str, int] = {}
        word_to_stem = np.empty(len(stems), dtype=np.int64)
        for i, s in enumerate(stems):
            sid = vocab.get(s)
            if sid is None:
                sid = vocab[s] = len(vocab)
            word_to_stem[i] = sid
        corpus_ids = [word_to_stem[row].tolist() if row else [] for row in docs_words]
        retriever = bm25s.BM25(
            k1=params["k1"],
            b=params["b"],
            delta=params["delta"],
            method=params["method"],
            backend="numpy",
        )
        retriever.index((corpus_ids, vocab), show_progress=False)
        return cls(retriever, list(corpus.ids), analyzer, params, corpus_hash(corpus))

    def manifest(self) -> dict[str, Any]:
        """What a saved index must match to be reused."""
        bm25s = import_bm25s()
        return {
            "format": 1,
            "bm25s": bm25s.__version__,
            "corpus_sha256": self.corpus_sha,
            "documents": len(self.ids),
            "analyzer": self.analyzer.settings(),
            "params": self.params,
        }

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Save with bm25s's ``save`` plus the document ids and ``ragmeter-index.json``."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(path), show_progress=False)
        (path / "ids.json").write_text(json.dumps(self.ids), encoding="utf-8")
        (path / MANIFEST).write_text(json.dumps(self.manifest(), indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> BM25Index:
        """Load an index written by :meth:`save`."""
        path = Path(directory)
        meta = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        bm25s = import_bm25s()
        retriever = bm25s.BM25.load(str(path), show_progress=False)
        retriever.backend = "numpy"
        ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
        an = meta["analyzer"]
        analyzer = Analyzer(an["language"], meta["params"]["stopwords"], meta["params"]["stemmer"])
        return cls(retriever, ids, analyzer, meta["params"], meta["corpus_sha256"])

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        corpus: Corpus,
        *,
        preset: str = "default",
        language: str = "en",
        **options: Any,
    ) -> BM25Index:
        """Reuse the index in ``directory`` when corpus, analyzer and parameters match; else
        build, save and record why in :attr:`rebuild_reason`."""
        params = resolve_params(preset, **options)
        analyzer = Analyzer(language, params["stopwords"], params["stemmer"])
        want = {
            "corpus_sha256": corpus_hash(corpus),
            "analyzer": analyzer.settings(),
            "params": params,
        }
        path = Path(directory)
        reason = "no saved index"
        if (path / MANIFEST).is_file():
            try:
                have = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                have = {}
            changed = [k for k in ("corpus_sha256", "analyzer", "params") if have.get(k) != want[k]]
            if have.get("bm25s") != import_bm25s().__version__:
                changed.append("bm25s version")
            if not changed:
                idx = cls.load(path)
                idx.reused = True
                return idx
            names = {"corpus_sha256": "corpus", "analyzer": "analyzer", "params": "parameters"}
            reason = "changed: " + ", ".join(names.get(c, c) for c in changed)
        idx = cls.build(corpus, preset=preset, language=language, **options)
        idx.save(path)
        idx.rebuild_reason = reason
        return idx

    # -- searching ------------------------------------------------------------------------
    def query_ids(self, text: str) -> list[int]:
        """Vocabulary ids of the query's terms (terms the corpus lacks are left out)."""
        return self.retriever.get_tokens_ids(self.analyzer.analyze(text))

    def search_one(self, text: str, k: int = 100) -> list[tuple[str, float]]:
        """The top ``k`` documents with a score above 0, in evaluation order."""
        ids = self.query_ids(text)
        if not ids:
            return []  # bm25s's get_scores raises on a query without known terms
        scores = self.retriever.get_scores_from_ids(ids)
        top = select_top_k(scores, k, self._id_key)
        return [(self.ids[i], float(scores[i])) for i in top.tolist()]

    def search(
        self,
        queries: Sequence[tuple[str, str]],
        k: int = 100,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> BaselineRun:
        """Search ``(qid, text)`` queries; queries without results are listed in ``empty``.

        ``progress(n)`` is called with the number of queries done so far.
        """
        results: dict[str, list[tuple[str, float]]] = {}
        empty = []
        for n, (qid, text) in enumerate(queries, start=1):
            results[qid] = self.search_one(text, k)
            if not results[qid]:
                empty.append(qid)
            if progress is not None and n % 100 == 0:
                progress(n)
        return BaselineRun([q for q, _ in queries], results, empty=empty)


class BM25System:
    """BM25 as a live system (``call: ragmeter.baselines:BM25System``, ``init: {corpus: ...}``).

    ``corpus`` is a JSONL path or ``{id, text, title?}`` records; the other keywords are
    :meth:`BM25Index.build`'s. ``index`` names a directory to reuse a saved index from.
    """

    def __init__(
        self,
        corpus: Any,
        *,
        preset: str = "default",
        language: str = "en",
        index: str | None = None,
        **options: Any,
    ) -> None:
        if index is not None:
            self.index = BM25Index.open(
                index, _as_corpus(corpus), preset=preset, language=language, **options
            )
        else:
            self.index = BM25Index.build(corpus, preset=preset, language=language, **options)

    def retrieve(self, question: str, *, k: int = 100) -> list[tuple[str, float]]:
        return self.index.search_one(question, k)
