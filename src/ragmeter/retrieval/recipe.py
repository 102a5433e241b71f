"""What builds the ``ragmeter trec`` evaluator, as plain values that Dask workers can rebuild it
from (docs/scaleout.md): the command line and the executors share it."""

from __future__ import annotations

from typing import Any

__all__ = ["build_evaluator", "evaluator_recipe"]


def evaluator_recipe(cfg: dict[str, Any], qrels_path: str) -> tuple[Any, ...]:
    """What builds the command's :class:`Evaluator`, as plain hashable values (Dask workers
    rebuild the same evaluator from it): (qrels path, read_qrels options, measures, options)."""
    fmt = cfg["format"]
    qrels_options = (
        ("format", cfg["qrels_format"]),
        ("qid_field", cfg["qid_field"]),
        ("gold_field", cfg["gold_field"]),
        ("hash_input", fmt == "json"),
    )
    options = (
        # None: the Evaluator's default cut-offs (not looked up here: this module stays light,
        # so that worker processes start before the command imports numpy)
        ("ks", tuple(cfg["ks"]) if cfg["ks"] else None),
        ("zscores", cfg["zscores"]),
        ("relevance_level", cfg["level"]),
        ("complete", cfg["complete"]),
        ("max_docs", cfg["max_docs"]),
        ("judged_only", cfg["judged_only"]),
        ("num_docs_in_coll", cfg["num_docs"]),
        ("gain", cfg["gain"]),
        ("ties", cfg["ties"]),
        ("dedupe", cfg["dedupe"]),
        ("names", cfg["names"]),
        # UltraRAG's numbers come from pytrec_eval: float32 scores, means from per-query values
        ("per_query", cfg["per_query"] or fmt == "ultrarag"),
        ("scores", "float32" if fmt == "ultrarag" else "float64"),
    )
    return (qrels_path, qrels_options, tuple(cfg["measures"] or ["official"]), options)


def build_evaluator(recipe: tuple[Any, ...], *, qrels: Any = None) -> Any:
    """The :class:`Evaluator` of :func:`evaluator_recipe` (``qrels``: already read)."""
    from ragmeter.io import trec as io_trec
    from ragmeter.retrieval.engine import Evaluator

    qrels_path, qrels_options, measures, options = recipe
    opts = dict(options)
    if opts["ks"] is None:
        del opts["ks"]
    else:
        opts["ks"] = list(opts["ks"])
    if qrels is None:
        qrels = io_trec.read_qrels(qrels_path, **dict(qrels_options))
    return Evaluator(qrels, list(measures), **opts)
