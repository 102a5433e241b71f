"""Per-stratum breakdowns: each metric's aggregate within each value of each strata factor.

Units inherit the strata of their gold sample (a QA pair also offers its own ``answer_type``,
``template_id`` and ``answerable`` as factors). For a sample-level metric the stratum value is
the mean of the per-sample values in the stratum, over scored samples in sorted-id order, the
same rule as the overall aggregate. A corpus-level metric (micro F1, macro F1, NIL F1) is
recomputed for the stratum: from the additive per-unit statistics its adapter provides when it
can (summing is exact, and cheap), else by running the engine on the stratum's units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ragmeter import registry
from ragmeter import status as st
from ragmeter.datasets.describe import MISSING
from ragmeter.datasets.views import Unit
from ragmeter.result import Aggregate, Result, ordered_mean

__all__ = ["QA_FACTORS", "metric_level", "strata_to_dict", "stratify", "unit_strata"]

QA_FACTORS = ("answer_type", "template_id", "answerable")

CorpusStats = Callable[[str], "tuple[Mapping[str, Any], Callable[[np.ndarray], Any]] | None"]


def unit_strata(unit: Unit, factors: Sequence[str]) -> dict[str, str]:
    """The stratum value of ``unit`` for each factor (``__missing__`` when it has none)."""
    out = {}
    for f in factors:
        value = unit.sample.strata.get(f)
        if value is None and unit.qa is not None and f in QA_FACTORS:
            value = getattr(unit.qa, f)
        if isinstance(value, bool):
            value = str(value).lower()
        out[f] = MISSING if value is None else str(value)
    return out


def metric_level(task: str, metric: str, has_rows: bool) -> str:
    """``sample`` or ``corpus`` for an aggregate key of a task's Result."""
    try:
        return registry.resolve(metric, task=task).definition.level
    except (registry.UnknownMetricError, ValueError):
        return "sample" if has_rows else "corpus"


def _status_counts(statuses: Sequence[str]) -> dict[str, int]:
    counts = Counter(statuses)
    order = {s: i for i, s in enumerate(st.STATUSES)}
    return dict(sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))


def stratify(
    result: Result,
    units: Sequence[Unit],
    factors: Sequence[str],
    *,
    unit_of: Callable[[str], str] = lambda x: x,
    corpus_stats: CorpusStats | None = None,
    evaluate_subset: Callable[[Sequence[Unit]], Result] | None = None,
    wanted: Sequence[str] | None = None,
) -> dict[str, dict[str, dict[str, Aggregate]]]:
    """Per-stratum aggregates ``{factor: {level: {metric: Aggregate}}}`` of one task's Result.

    Corpus-level metrics are broken down only when they are in ``wanted`` (the metrics asked
    for): the others would cost an engine run per stratum for values nobody asked for.
    """
    if not factors or not units:
        return {}
    by_unit = {u.id: unit_strata(u, factors) for u in units}
    table = result.samples
    metric_col = np.asarray(table.column("metric").to_pylist(), dtype=object)
    ids_all = table.column("id").to_pylist()
    values_all = table.column("value").to_numpy(zero_copy_only=False)
    status_all = np.asarray(table.column("status").to_pylist(), dtype=object)
    scored_all = np.isin(status_all, list(st.SCORED))
    unit_ids = [unit_of(i) for i in ids_all]  # rows may be finer than units (steps)
    metrics = list(dict.fromkeys(metric_col.tolist()))
    corpus = [
        m
        for m in result.aggregates
        if metric_level(result.task, m, m in metrics) == "corpus"
        and (wanted is None or m in wanted)
    ]
    stats_of = {m: corpus_stats(m) if corpus_stats is not None else None for m in corpus}
    out: dict[str, dict[str, dict[str, Aggregate]]] = {}
    for factor in factors:
        level_of_unit = {u: s[factor] for u, s in by_unit.items()}
        row_levels = np.asarray([level_of_unit.get(u) for u in unit_ids], dtype=object)
        levels = sorted({s[factor] for s in by_unit.values()})
        per_level: dict[str, dict[str, Aggregate]] = {lv: {} for lv in levels}
        for metric in metrics:
            if metric in corpus:
                continue
            rows = np.flatnonzero(metric_col == metric)
            keys = np.asarray([ids_all[i] for i in rows], dtype=object)
            order = rows[np.argsort(keys, kind="stable")]
            for lv in levels:
                idx = order[row_levels[order] == lv]
                if idx.size == 0:
                    continue
                scored = scored_all[idx]
                counts = _status_counts(status_all[idx].tolist())
                n = int(scored.sum())
                if n == 0:
                    per_level[lv][metric] = Aggregate(None, 0, counts, reason="no scored samples")
                else:
                    per_level[lv][metric] = Aggregate(
                        ordered_mean(values_all[idx][scored]), n, counts
                    )
        subsets: dict[str, Result] = {}
        for metric in corpus:
            suff = stats_of[metric]
            if suff is not None:
                per_unit, aggregate = suff
                keys = sorted(per_unit)
                matrix = np.asarray([per_unit[k] for k in keys], dtype=np.float64)
                where = np.asarray([level_of_unit.get(k) for k in keys], dtype=object)
                for lv in levels:
                    mask = where == lv
                    n = int(mask.sum())
                    if n == 0:
                        continue
                    value = float(np.asarray(aggregate(matrix[mask].sum(axis=0))))
                    per_level[lv][metric] = Aggregate(value, n, {st.OK: n})
                continue
            if evaluate_subset is None:
                continue
            for lv in levels:
                if lv not in subsets:
                    members_u = [u for u in units if by_unit[u.id][factor] == lv]
                    subsets[lv] = evaluate_subset(members_u)
                if metric in subsets[lv].aggregates:
                    per_level[lv][metric] = subsets[lv].aggregates[metric]
        out[factor] = {lv: aggs for lv, aggs in per_level.items() if aggs}
    return out


def strata_to_dict(strata: Mapping[str, Mapping[str, Mapping[str, Aggregate]]]) -> dict[str, Any]:
    return {
        f: {lv: {m: asdict(a) for m, a in aggs.items()} for lv, aggs in levels.items()}
        for f, levels in strata.items()
    }
