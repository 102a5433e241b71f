"""Function-style entry points, one per common measure (scikit-learn style).

Each takes ``(qrels, run)`` in any form of docs/retrieval.md#inputs plus keyword options,
validates them up front, and returns a :class:`PerQuery` mapping qid → value with ``.mean()``.
The numbers are the engine's (trec_eval 10.0 semantics): these are thin wrappers over
:func:`ragmeter.retrieval.evaluate`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "PerQuery",
    "average_precision",
    "bpref",
    "inf_ap",
    "ndcg",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
    "success",
]


class PerQuery(Mapping[str, float]):
    """qid → value for the evaluated queries (qid byte order), with the trec_eval mean.

    >>> pq = PerQuery({"q2": 0.5, "q1": 1.0})
    >>> list(pq), pq.mean()
    (['q1', 'q2'], 0.75)
    """

    def __init__(self, values: Mapping[str, float], *, name: str = "") -> None:
        self._values = dict(sorted(values.items(), key=lambda kv: kv[0].encode()))
        self.name = name

    def __getitem__(self, qid: str) -> float:
        return self._values[qid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def mean(self) -> float:
        """Mean over the queries, added left to right in qid order (trec_eval's arithmetic)."""
        if not self._values:
            raise ValueError("mean of no queries")
        total = 0.0
        for v in self._values.values():
            total += v
        return total / len(self._values)

    def __repr__(self) -> str:
        return f"PerQuery({self.name or 'values'}: {len(self)} queries, mean={self.mean():.4f})"


def _cutoff(cutoff: Any, *, required: bool, name: str) -> int | None:
    if cutoff is None:
        if required:
            raise ValueError(f"{name} needs a cutoff (an integer ≥ 1)")
        return None
    if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1:
        raise ValueError(f"cutoff must be an integer ≥ 1, not {cutoff!r}")
    return cutoff


def _level(level: Any) -> int:
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise ValueError(f"relevance_level must be an integer ≥ 0, not {level!r}")
    return level


def _run(qrels: Any, run: Any, measure: str, **options: Any) -> PerQuery:
    from ragmeter.retrieval.engine import evaluate

    res = evaluate(qrels, run, [measure], **options)
    return PerQuery(res.values(res.measures[0]["canonical"]), name=res.measures[0]["name"])


def average_precision(
    qrels: Any,
    run: Any,
    *,
    cutoff: int | None = None,
    relevance_level: int = 1,
    judged_only: bool = False,
) -> PerQuery:
    """Average precision: AP = (1/R)·Σⱼ j/iⱼ over the relevant retrieved documents at ranks
    i₁ < i₂ < …; with ``cutoff`` k, only ranks ≤ k count and the sum is still divided by R
    (trec_eval's map_cut).

    Parameters: ``cutoff`` (int ≥ 1 or None), ``relevance_level`` (a grade ≥ it is relevant),
    ``judged_only`` (drop unjudged documents and renumber, trec_eval's -J).
    Returns a :class:`PerQuery`.

    >>> qrels = {"q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1}}
    >>> run = {"q1": {"d1": 3.0, "d5": 2.0, "d2": 1.0}}
    >>> round(average_precision(qrels, run).mean(), 4)
    0.4167
    >>> average_precision(qrels, run, cutoff=2)["q1"]
    0.25
    """
    k = _cutoff(cutoff, required=False, name="average_precision")
    return _run(
        qrels,
        run,
        "AP" if k is None else f"AP@{k}",
        relevance_level=_level(relevance_level),
        judged_only=judged_only,
    )


def precision(
    qrels: Any, run: Any, *, cutoff: int, relevance_level: int = 1, judged_only: bool = False
) -> PerQuery:
    """P@k = hits(k)/k, dividing by k even when fewer than k documents were retrieved.

    >>> run = {"q1": {"d1": 3.0, "d5": 2.0, "d2": 1.0}}
    >>> precision({"q1": {"d1": 1, "d2": 1}}, run, cutoff=10)["q1"]
    0.2
    """
    k = _cutoff(cutoff, required=True, name="precision")
    return _run(
        qrels, run, f"P@{k}", relevance_level=_level(relevance_level), judged_only=judged_only
    )


def recall(
    qrels: Any, run: Any, *, cutoff: int, relevance_level: int = 1, judged_only: bool = False
) -> PerQuery:
    """R@k = hits(k)/R, where R counts every judged relevant document (retrieved or not).

    >>> qrels = {"q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1}}
    >>> recall(qrels, {"q1": {"d1": 3.0, "d5": 2.0, "d2": 1.0}}, cutoff=10)["q1"]
    0.5
    """
    k = _cutoff(cutoff, required=True, name="recall")
    return _run(
        qrels, run, f"R@{k}", relevance_level=_level(relevance_level), judged_only=judged_only
    )


def ndcg(
    qrels: Any,
    run: Any,
    *,
    cutoff: int | None = None,
    gain: str = "linear",
    gains: Mapping[int, float] | None = None,
    judged_only: bool = False,
) -> PerQuery:
    """nDCG = DCG/IDCG with DCG(k) = Σ_{i ≤ k} gain(dᵢ)/log₂(i+1); the ideal ranking holds the
    gains of all judged documents. ``gain="exp"`` uses 2^g − 1; ``gains`` maps grades to gains.
    The relevance level does not apply (as in trec_eval).

    >>> qrels, run = {"q1": {"d1": 3, "d2": 1}}, {"q1": {"d2": 2.0, "d1": 1.0}}
    >>> round(ndcg(qrels, run, cutoff=10)["q1"], 4)
    0.7967
    >>> round(ndcg(qrels, run, cutoff=10, gain="exp")["q1"], 4)
    0.7098
    """
    k = _cutoff(cutoff, required=False, name="ndcg")
    if gain not in ("linear", "exp"):
        raise ValueError(f"gain must be 'linear' or 'exp', not {gain!r}")
    args = []
    if gain == "exp":
        if gains is not None:
            raise ValueError("gain='exp' and gains cannot be combined")
        args.append("gain=exp")
    if gains is not None:
        args.append(
            "gains={" + ",".join(f"{int(lv)}:{float(g)!r}" for lv, g in sorted(gains.items())) + "}"
        )
    if judged_only:
        args.append("judged_only=true")
    name = "nDCG" + (f"({','.join(args)})" if args else "") + (f"@{k}" if k else "")
    return _run(qrels, run, name)


def reciprocal_rank(
    qrels: Any,
    run: Any,
    *,
    cutoff: int | None = None,
    relevance_level: int = 1,
    judged_only: bool = False,
) -> PerQuery:
    """RR = 1/i₁ (the rank of the first relevant document), 0 if none; with ``cutoff`` k,
    0 when i₁ > k (MS MARCO's MRR@10).

    >>> reciprocal_rank({"q1": {"dA": 1, "dB": 0}}, {"q1": {"dA": 1.0, "dB": 1.0}})["q1"]
    0.5
    """
    k = _cutoff(cutoff, required=False, name="reciprocal_rank")
    return _run(
        qrels,
        run,
        "RR" if k is None else f"RR@{k}",
        relevance_level=_level(relevance_level),
        judged_only=judged_only,
    )


def success(
    qrels: Any, run: Any, *, cutoff: int, relevance_level: int = 1, judged_only: bool = False
) -> PerQuery:
    """Success@k = 1 if a relevant document is in the top k, else 0.

    >>> success({"q1": {"d1": 1}}, {"q1": {"d9": 2.0, "d1": 1.0}}, cutoff=1)["q1"]
    0.0
    """
    k = _cutoff(cutoff, required=True, name="success")
    return _run(
        qrels, run, f"Success@{k}", relevance_level=_level(relevance_level), judged_only=judged_only
    )


def r_precision(
    qrels: Any, run: Any, *, relevance_level: int = 1, judged_only: bool = False
) -> PerQuery:
    """Rprec = hits(R)/R: precision after R documents.

    >>> qrels = {"q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1}}
    >>> r_precision(qrels, {"q1": {"d1": 3.0, "d5": 2.0, "d2": 1.0}})["q1"]
    0.5
    """
    return _run(
        qrels, run, "Rprec", relevance_level=_level(relevance_level), judged_only=judged_only
    )


def bpref(qrels: Any, run: Any, *, relevance_level: int = 1) -> PerQuery:
    """bpref = (1/R)·Σ (1 − min(m, R)/min(N, R)) over the judged relevant retrieved documents,
    m the judged non-relevant ones ranked above; unjudged documents are skipped.

    >>> bpref({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d9": 3.0, "d1": 2.0}})["q1"]
    0.5
    """
    return _run(qrels, run, "bpref", relevance_level=_level(relevance_level))


def inf_ap(qrels: Any, run: Any, *, relevance_level: int = 1) -> PerQuery:
    """Inferred AP (Yilmaz and Aslam, 2006) with trec_eval's ε = 1e-5.

    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": -1, "d4": 1, "d5": 0}}
    >>> run = {"q1": {"dX": 9, "d3": 8, "d2": 7, "d1": 6, "d4": 5}}
    >>> inf_ap(qrels, run)["q1"]
    0.375002499950001
    """
    return _run(qrels, run, "infAP", relevance_level=_level(relevance_level))
