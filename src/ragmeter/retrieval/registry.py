"""The ``retrieval`` task in the metrics registry (docs/architecture.md#where-a-new-metric-goes).

One :class:`~ragmeter.registry.MetricDef` per measure family, read from the family's declaration
(:mod:`ragmeter.retrieval.measures`: name, aliases, parameters, formula, citation); parameterised
names (``P.5``, ``ndcg_cut_10``, ``nDCG(gain=exp)@10``) go through :func:`resolve`, which uses the
same grammar as ``ragmeter trec`` (:mod:`ragmeter.retrieval.names`). Importing it imports numpy
(the declarations live next to their kernels) but not pyarrow.
"""

from __future__ import annotations

from ragmeter.registry import MetricDef, ResolvedMetric, TaskDef
from ragmeter.retrieval.measures import FAMILIES, Family
from ragmeter.retrieval.names import resolve_one

__all__ = ["TASKS", "family_def", "resolve"]


def _definition(fam: Family) -> MetricDef:
    return MetricDef(
        task="retrieval",
        name=fam.registry_name,
        summary=fam.summary,
        reference=fam.reference,
        aliases=fam.aliases,
        direction=fam.direction,  # type: ignore[arg-type]
        range=fam.range,
        params=fam.params,
        formula=fam.formula,
        citation=fam.citation,
        level=fam.level,  # type: ignore[arg-type]
        default=fam.default,
    )


_DEFS: dict[str, MetricDef] = {name: _definition(fam) for name, fam in FAMILIES.items()}


def family_def(family: str) -> MetricDef:
    """The MetricDef of a measure family (``"P"``, ``"ndcg_cut"``)."""
    return _DEFS[family]


def resolve(name: str) -> ResolvedMetric | None:
    """Resolve one parameterised measure name to its canonical entry (registry resolver).

    >>> r = resolve("ndcg_cut_10")
    >>> r.canonical, r.definition.name, dict(r.params)
    ('nDCG@10', 'nDCG@k', {'k': 10})
    """
    m = resolve_one(name)
    if m is None:
        return None
    params: dict[str, object] = {}
    if m.cutoff is not None:
        params["k" if m.fam.kind == "cut" else "r"] = m.cutoff
    params.update(dict(m.params))
    return ResolvedMetric(_DEFS[m.family], m.canonical, name, params)


_SPELLINGS = (
    "P@10",
    "P.10",
    "P_10",
    "nDCG@10",
    "ndcg_cut.10",
    "ndcg_cut_10",
    "R@100",
    "recall.100",
    "recall_100",
    "RR@10",
    "AP@100",
    "Success@10",
    "Judged@10",
    "nDCG(gain=exp)@10",
    "IPrec@0.5",
    "iprec_at_recall_0.50",
    "P(rel=2)@10",
)

TASKS = (
    TaskDef(
        name="retrieval",
        engine="ragmeter.retrieval",
        summary="ranked retrieval against TREC qrels (trec_eval 10.0 measures and extensions)",
        metrics=tuple(_DEFS.values()),
        resolver=resolve,
        spellings=_SPELLINGS,
    ),
)
