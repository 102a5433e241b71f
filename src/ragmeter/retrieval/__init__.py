"""Ranked-retrieval evaluation with trec_eval 10.0 semantics (docs/retrieval.md).

>>> from ragmeter import retrieval as rt
>>> res = rt.evaluate({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 1.0, "d2": 1.0}}, ["RR"])
>>> res.summary   # ties are broken by docno, descending: d2 ranks above d1
{'RR': 0.5}

Importing this package is light: numpy, pyarrow and the engine load on first use, and
pandas, scipy, typer, rich and pydantic are never imported by it.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str]] = {
    "evaluate": ("ragmeter.retrieval.engine", "evaluate"),
    "Evaluator": ("ragmeter.retrieval.engine", "Evaluator"),
    "Options": ("ragmeter.retrieval.engine", "Options"),
    "RetrievalResult": ("ragmeter.retrieval.result", "RetrievalResult"),
    "evaluate_stream": ("ragmeter.retrieval.engine", "evaluate_stream"),
    "source_breakdown": ("ragmeter.retrieval.sources", "source_breakdown"),
    "parse_measures": ("ragmeter.retrieval.names", "parse_measures"),
    "Measure": ("ragmeter.retrieval.names", "Measure"),
    "PerQuery": ("ragmeter.retrieval.functions", "PerQuery"),
    "average_precision": ("ragmeter.retrieval.functions", "average_precision"),
    "precision": ("ragmeter.retrieval.functions", "precision"),
    "recall": ("ragmeter.retrieval.functions", "recall"),
    "ndcg": ("ragmeter.retrieval.functions", "ndcg"),
    "reciprocal_rank": ("ragmeter.retrieval.functions", "reciprocal_rank"),
    "success": ("ragmeter.retrieval.functions", "success"),
    "r_precision": ("ragmeter.retrieval.functions", "r_precision"),
    "bpref": ("ragmeter.retrieval.functions", "bpref"),
    "inf_ap": ("ragmeter.retrieval.functions", "inf_ap"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ragmeter.retrieval' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
