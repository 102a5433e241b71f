"""The ``retrieval`` task in the metrics registry (docs/architecture.md#where-a-new-metric-goes).

One :class:`~ragmeter.registry.MetricDef` per measure family; parameterised names (``P.5``,
``ndcg_cut_10``, ``nDCG(gain=exp)@10``) go through :func:`resolve`, which uses the same grammar
as ``ragmeter trec`` (:mod:`ragmeter.retrieval.names`). Import-light: plain dataclasses only.
"""

from __future__ import annotations

from ragmeter.registry import MetricDef, Param, ResolvedMetric, TaskDef
from ragmeter.retrieval.names import FAMILIES, Family, Measure, resolve_one

__all__ = ["TASKS", "family_def", "resolve"]

_K = Param("k", "int", None, "cutoff (integer ≥ 1)")
_REL = Param("rel", "int", None, "relevance level for this measure (default: -l)")
_JUDGED = Param("judged_only", "bool", False, "drop unjudged documents before ranking (-J)")
_GAINS = Param("gains", "dict[int, float]", None, "gain per grade, e.g. {0:0,1:1,2:3}")
_P = Param("p", "float", None, "persistence (0 < p < 1); 0.9 for rbp, 0.8 for RBP")

_DEFAULT = {"map", "recip_rank", "ndcg_cut", "P", "recall"}


def _placeholder(fam: Family) -> str:
    """The registry name of a family: its canonical spelling with a parameter placeholder."""
    if fam.kind == "cut":
        m = Measure(fam.name, cutoff=1, style="ir")
        return (m.ir_name or m.trec_name or fam.name).replace("@1", "@k").replace("_1", "_k")
    if fam.kind == "point":
        return "IPrec@r" if fam.name == "iprec_at_recall" else f"{fam.name}_m"
    if fam.name == "rbp":
        return "RBP(p)"
    if fam.name == "rbp_resid":
        return "RBP_resid(p)"
    if fam.name == "ndcg_exp":
        return "nDCG(gain=exp)"
    m = Measure(fam.name, style="ir")
    if fam.kind == "reals":
        return "SetF" if fam.name == "set_F" else fam.name
    return m.ir_name or fam.name


def _aliases(fam: Family, name: str) -> tuple[str, ...]:
    """Single-valued spellings of the family (multi-valued names go through the resolver)."""
    if fam.kind in ("cut", "point") or fam.name in ("rbp", "rbp_resid", "ndcg_exp"):
        return ()
    out = [fam.name]
    extra = {
        "map": ("MAP",),
        "recip_rank": ("MRR", "mrr"),
        "ndcg": ("NDCG",),
        "bpref": ("BPref",),
        "Rprec": ("RPrec",),
        "set_relative_P": ("SetRelP",),
    }
    out += extra.get(fam.name, ())
    return tuple(a for a in dict.fromkeys(out) if a != name)


def _params(fam: Family) -> tuple[Param, ...]:
    out: list[Param] = []
    if fam.kind == "cut":
        out.append(_K)
    elif fam.kind == "point":
        out.append(Param("r", "float", None, "recall level or multiple of R"))
    if fam.binary and fam.kind not in ("runid",) and fam.name != "num_q":
        out.append(_REL)
    if fam.gain is not None:
        out.append(_GAINS)
    if fam.name in ("rbp", "rbp_resid"):
        out.append(_P)
    if fam.name == "utility":
        out.append(Param("coeffs", "tuple[float, float, float, float]", (1, -1, 0, 0)))
    if fam.name == "11pt_avg":
        out.append(Param("points", "tuple[float, ...]", None, "recall points"))
    if fam.name == "set_F":
        out.append(Param("beta", "float", 1.0))
    if fam.name == "relstring":
        out.append(Param("length", "int", 10))
    if fam.binary and fam.kind in ("cut", "scalar", "point"):
        out.append(_JUDGED)
    return tuple(out)


def _reference(fam: Family) -> str:
    if fam.name in ("judged", "recip_rank_cut"):
        return "ir_measures 0.4.3"
    if fam.name in ("ndcg_exp", "ndcg_cut_exp"):
        return "ranx 0.3.21 ndcg_burges"
    if fam.extension:
        return "ragmeter (trec_eval 10.0 definitions)"
    return "trec_eval 10.0"


def _level(fam: Family) -> str:
    return "corpus" if fam.kind in ("runid", "count", "gm") else "sample"


_DEFS: dict[str, MetricDef] = {}
for _fam in FAMILIES.values():
    _name = _placeholder(_fam)
    _DEFS[_fam.name] = MetricDef(
        task="retrieval",
        name=_name,
        summary=_fam.summary,
        reference=_reference(_fam),
        aliases=_aliases(_fam, _name),
        direction=_fam.direction,  # type: ignore[arg-type]
        range=_fam.range,
        params=_params(_fam),
        formula=_fam.formula,
        citation="trec_eval 10.0 (docs/retrieval.md#measures)",
        level=_level(_fam),  # type: ignore[arg-type]
        default=_fam.name in _DEFAULT,
    )


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
