"""Offline, deterministic baseline systems: BM25, dense, RRF, keyword types, exact/fuzzy links.

Every baseline is also a live system, so a config can name it under ``call:``::

    systems:
      - name: baseline-bm25
        call: ragmeter.baselines:BM25System
        init: {corpus: data/corpus.jsonl, preset: default, language: en}

``ragmeter baseline ...`` writes the same outputs as files (docs/baselines.md). Submodules are
imported on first use, so ``import ragmeter.baselines`` never imports bm25s or rapidfuzz.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BM25Index": "bm25",
    "BM25System": "bm25",
    "DenseIndex": "dense",
    "DenseSystem": "dense",
    "dense_search": "dense",
    "HybridSystem": "fusion",
    "rrf": "fusion",
    "read_any_run": "fusion",
    "KeywordClassifier": "keywords",
    "ExactLinker": "linking",
    "FuzzyLinker": "linking",
    "link_exact": "linking",
    "link_fuzzy": "linking",
    "BaselineRun": "runs",
    "write_run": "runs",
    "read_corpus": "inputs",
    "read_queries": "inputs",
    "read_labels": "inputs",
    "read_mentions": "inputs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragmeter.baselines' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ragmeter.baselines.{module}"), name)
    globals()[name] = value
    return value
