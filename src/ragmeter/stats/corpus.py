"""Corpus-level metrics tested by resampling documents (docs/stats.md).

Micro-averaged F1 and every metric computed from counts pooled over documents does not decompose
into per-query scores, so per-query tests do not apply: the unit of resampling is the document,
and the metric is recomputed from the summed statistics of each resample (Noreen 1989; Yeh 2000;
Berg-Kirkpatrick et al. 2012).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.stats._common import (
    check_alpha,
    check_alternative,
    check_confidence,
    check_n_resamples,
    check_seed,
)
from ragmeter.stats._signflip import Patterns, exact_integer_columns, iter_kept_sums
from ragmeter.stats.bootstrap import CI_METHODS, shifted_pvalue
from ragmeter.stats.paired import MISSING_POLICIES
from ragmeter.stats.randomization import TWO_SIDED, pvalues_from_counts
from ragmeter.stats.result import ConfidenceInterval, TestResult, finite_or_none, is_significant

__all__ = ["AGGREGATES", "corpus_test", "micro_f1", "micro_precision", "micro_recall"]

_EPS = float(np.finfo(np.float64).eps)
_FIELDS = ("tp", "fp", "fn")


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    # 0/0 is 0, scikit-learn's zero_division=0 and seqeval's convention
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
    return out


def micro_f1(sums: np.ndarray) -> np.ndarray:
    """2TP / (2TP + FP + FN) over summed (tp, fp, fn); 0 when the denominator is 0.

    >>> float(micro_f1(np.array([20, 5, 6])))
    0.7843137254901961
    """
    s = np.asarray(sums, dtype=np.float64)
    return _ratio(2 * s[..., 0], 2 * s[..., 0] + s[..., 1] + s[..., 2])


def micro_precision(sums: np.ndarray) -> np.ndarray:
    """TP / (TP + FP) over summed (tp, fp, fn); 0 when the denominator is 0."""
    s = np.asarray(sums, dtype=np.float64)
    return _ratio(s[..., 0], s[..., 0] + s[..., 1])


def micro_recall(sums: np.ndarray) -> np.ndarray:
    """TP / (TP + FN) over summed (tp, fp, fn); 0 when the denominator is 0."""
    s = np.asarray(sums, dtype=np.float64)
    return _ratio(s[..., 0], s[..., 0] + s[..., 2])


AGGREGATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "micro_f1": micro_f1,
    "micro_precision": micro_precision,
    "micro_recall": micro_recall,
}


def _stats_row(value: Any, where: str, width: int | None) -> list[float]:
    if isinstance(value, Mapping):
        missing = [f for f in _FIELDS if f not in value]
        if missing:
            raise InputError(
                f"document statistics lack {', '.join(missing)} (expected tp, fp and fn)",
                location=where,
            )
        value = [value[f] for f in _FIELDS]
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(
            f"document statistics {value!r} are not a sequence of numbers (expected e.g. "
            "(tp, fp, fn))",
            location=where,
        )
    row = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise InputError(f"statistic {v!r} is not a number", location=where)
        if not math.isfinite(float(v)):
            raise InputError(f"statistic {v!r} is not finite", location=where)
        row.append(float(v))
    if width is not None and len(row) != width:
        raise InputError(
            f"{len(row)} statistics where other documents have {width}", location=where
        )
    if not row:
        raise InputError("empty document statistics", location=where)
    return row


def _align_docs(
    docs_a: Mapping[str, Any],
    docs_b: Mapping[str, Any],
    missing: str,
    fill_value: Sequence[float] | None,
) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, Any]]:
    from ragmeter.stats.paired import MissingQueriesError

    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} (expected one of {', '.join(MISSING_POLICIES)})")
    ka = {str(k): v for k, v in docs_a.items()}
    kb = {str(k): v for k, v in docs_b.items()}
    missing_in_a = sorted(set(kb) - set(ka))
    missing_in_b = sorted(set(ka) - set(kb))
    dropped: list[str] = []
    if missing == "error":
        if missing_in_a or missing_in_b:
            raise MissingQueriesError(missing_in_a, missing_in_b)
        ids = sorted(ka)
    elif missing == "fill":
        if fill_value is None:
            raise ValueError("missing='fill' needs fill_value statistics, e.g. (0, 0, 0)")
        ids = sorted(set(ka) | set(kb))
    else:
        ids = sorted(set(ka) & set(kb))
        dropped = sorted(set(missing_in_a) | set(missing_in_b))
    width: int | None = None
    rows_a, rows_b = [], []
    for i in ids:
        fill = [float(v) for v in fill_value] if fill_value is not None else []
        ra = _stats_row(ka[i], f"a[{i!r}]", width) if i in ka else fill
        width = len(ra)
        rb = _stats_row(kb[i], f"b[{i!r}]", width) if i in kb else fill
        if len(rb) != width:
            raise InputError(f"{len(rb)} statistics where A has {width}", location=f"b[{i!r}]")
        rows_a.append(ra)
        rows_b.append(rb)
    report = {
        "policy": missing,
        "aligned_by": "id",
        "n_filled": len(missing_in_a) + len(missing_in_b) if missing == "fill" else 0,
        "fill_value": list(fill_value) if missing == "fill" and fill_value is not None else None,
        "missing_in_a": missing_in_a if missing != "intersect" else [],
        "missing_in_b": missing_in_b if missing != "intersect" else [],
        "dropped": dropped,
    }
    return ids, np.array(rows_a, dtype=np.float64), np.array(rows_b, dtype=np.float64), report


def corpus_test(
    docs_a: Mapping[str, Any],
    docs_b: Mapping[str, Any],
    *,
    aggregate: str | Callable[[np.ndarray], Any] = "micro_f1",
    test: str = "randomization",
    n_resamples: int = 9999,
    seed: int = 42,
    exact: bool | str = "auto",
    ci_method: str | None = "bca",
    confidence: float = 0.95,
    alternative: str = "two-sided",
    two_sided: str = "abs",
    alpha: float = 0.05,
    missing: str = "error",
    fill_value: Sequence[float] | None = None,
    metric: str | None = None,
) -> TestResult:
    """Test a corpus-level metric difference by resampling documents.

    ``docs_a`` and ``docs_b`` map each document id to additive statistics, e.g. ``(tp, fp, fn)``
    (a sequence, or a mapping with those keys); documents are aligned like queries (sorted ids,
    ``missing`` policy). ``aggregate`` maps summed statistics (shape (..., k)) to the metric:
    ``"micro_f1"`` = 2TP/(2TP + FP + FN), ``"micro_precision"``, ``"micro_recall"`` or a callable.
    The statistic is Δ = aggregate(Σ A) − aggregate(Σ B).

    - ``test="randomization"`` (approximate randomization): each pattern swaps A's and B's
      statistics for a subset of documents and recomputes Δ; exact enumeration when
      2^n_docs ≤ ``n_resamples``, else sampled from ``default_rng(seed)`` with
      p = (c + 1)/(B + 1); tie tolerance and two-sided rule as the paired randomization test.
    - ``test="bootstrap"``: documents drawn with replacement, the same indices for both systems
      (``scipy.stats.bootstrap`` on document indices, ``rng=default_rng(seed)``); CI by
      ``ci_method`` and the p-value of the null-shifted distribution, (c + 1)/(B + 1).

    ``mean_a``/``mean_b`` hold the two corpus metric values; ``n_zero`` counts documents whose
    statistics are equal on both sides.

    Extraction reports (``NerReport``, ``LinkingReport``, ``E2EReport``) may be passed instead of
    mappings, with ``metric`` naming a micro metric (``"ner.overall.strict.f1"``,
    ``"linking.nil.f1"``): their ``resampling_counts(metric)`` give the per-document (or
    per-mention) counts, and the metric's last part (``f1``, ``precision``, ``recall``) chooses
    the aggregate.

    >>> a = {"d1": (3, 1, 0), "d2": (2, 0, 1), "d3": (4, 2, 1)}
    >>> b = {"d1": (2, 1, 1), "d2": (2, 1, 1), "d3": (3, 2, 2)}
    >>> r = corpus_test(a, b)
    >>> r.test, r.method, r.n_resamples, round(r.statistic, 4), r.p_value
    ('corpus_randomization', 'exact', 8, 0.1462, 0.25)
    """
    if hasattr(docs_a, "resampling_counts") or hasattr(docs_b, "resampling_counts"):
        docs_a, docs_b, aggregate = _from_reports(docs_a, docs_b, metric, aggregate)
    elif metric is not None:
        raise ValueError("metric= applies to extraction reports; pass mappings without it")
    if test not in ("randomization", "bootstrap"):
        raise ValueError(f"unknown corpus test {test!r} (supported: randomization, bootstrap)")
    alternative = check_alternative(alternative)
    check_alpha(alpha)
    check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    if two_sided not in TWO_SIDED:
        raise ValueError(f"two_sided={two_sided!r} (expected 'abs' or 'double')")
    if callable(aggregate):
        agg, agg_name = aggregate, getattr(aggregate, "__name__", "aggregate")
    elif aggregate in AGGREGATES:
        agg, agg_name = AGGREGATES[aggregate], aggregate
    else:
        raise ValueError(
            f"aggregate={aggregate!r} (expected one of {', '.join(AGGREGATES)} or a callable)"
        )
    ids, sa, sb, report = _align_docs(docs_a, docs_b, missing, fill_value)
    n = len(ids)
    if n < 2:
        raise ValueError(f"a corpus test needs at least 2 documents, got {n}")
    if not callable(aggregate) and sa.shape[1] < 3:
        raise InputError(f"{agg_name} needs (tp, fp, fn) per document, got {sa.shape[1]} values")
    total_a, total_b = sa.sum(axis=0), sb.sum(axis=0)
    value_a = float(np.asarray(agg(total_a)))
    value_b = float(np.asarray(agg(total_b)))
    observed = value_a - value_b
    if not math.isfinite(observed):
        raise ValueError(f"the aggregate is not finite on the observed data ({observed!r})")
    x = sb - sa  # swapping document i moves x_i from B to A
    n_same = int(np.count_nonzero(~np.any(x != 0, axis=1)))
    degenerate = n_same == n
    gamma = 100 * _EPS * abs(observed)
    interval: ConfidenceInterval | None = None
    if test == "randomization":
        patterns = Patterns.choose(n, n_resamples=n_resamples, exact=exact, seed=seed)
        p = 1.0
        if not degenerate:
            counts = {k: np.zeros(1, dtype=np.int64) for k in ("abs", "greater", "less")}
            total_x = x.sum(axis=0)
            for kept in iter_kept_sums(x, patterns, exact_integers=exact_integer_columns(x)):
                swapped = total_x[None, :] - kept
                t = np.asarray(agg(total_a[None, :] + swapped), dtype=np.float64) - np.asarray(
                    agg(total_b[None, :] - swapped), dtype=np.float64
                )
                counts["abs"] += int(np.count_nonzero(np.abs(t) >= abs(observed) - gamma))
                counts["greater"] += int(np.count_nonzero(t >= observed - gamma))
                counts["less"] += int(np.count_nonzero(t <= observed + gamma))
            p = float(
                pvalues_from_counts(
                    counts,
                    total=patterns.count,
                    exact=patterns.exact,
                    alternative=alternative,
                    two_sided=two_sided,
                )[0]
            )
        method, resamples = ("exact" if patterns.exact else "monte_carlo"), patterns.count
        if ci_method is not None and ci_method != "none":
            interval, _ = _corpus_bootstrap(
                sa, sb, agg, observed, ci_method, confidence, n_resamples, seed, alternative
            )
    else:
        interval, dist = _corpus_bootstrap(
            sa, sb, agg, observed, ci_method or "bca", confidence, n_resamples, seed, alternative
        )
        p = 1.0 if degenerate else shifted_pvalue(dist, observed, alternative)
        method, resamples = "monte_carlo", n_resamples
    return TestResult(
        test=f"corpus_{test}",
        alternative=alternative,
        n=n,
        n_zero=n_same,
        statistic=observed,
        statistic_name=f"{agg_name}_diff",
        p_value=p,
        method=method,
        n_resamples=resamples,
        seed=int(seed),
        mean_a=value_a,
        mean_b=value_b,
        mean_diff=observed,
        ci=interval,
        effect_size=None,
        alpha=alpha,
        significant=is_significant(p, alpha),
        degenerate=degenerate,
        reason="all_differences_zero" if degenerate else None,
        alignment=report,
        details={
            "aggregate": agg_name,
            "two_sided": two_sided,
            "unit": "document",
            **({"metric": metric} if metric is not None else {}),
        },
    )


def _from_reports(
    report_a: Any, report_b: Any, metric: str | None, aggregate: Any
) -> tuple[Mapping[str, Any], Mapping[str, Any], Any]:
    """Per-unit counts of two extraction reports behind ``metric``, and its aggregate."""
    if metric is None:
        raise ValueError("comparing extraction reports needs metric=, e.g. 'ner.overall.strict.f1'")
    for side, report in (("a", report_a), ("b", report_b)):
        if not hasattr(report, "resampling_counts"):
            raise TypeError(f"{side} is not an extraction report (no resampling_counts)")
    try:
        docs_a = report_a.resampling_counts(metric)
        docs_b = report_b.resampling_counts(metric)
    except KeyError as exc:
        raise ValueError(str(exc.args[0]) if exc.args else str(exc)) from None
    if aggregate == "micro_f1":  # the default: follow the metric's last part
        last = metric.rsplit(".", 1)[-1]
        by_suffix = {"f1": "micro_f1", "precision": "micro_precision", "recall": "micro_recall"}
        if last not in by_suffix:
            raise ValueError(
                f"cannot tell the aggregate of {metric!r} (expected a name ending in f1, "
                "precision or recall, or pass aggregate=)"
            )
        aggregate = by_suffix[last]
    return docs_a, docs_b, aggregate


def _corpus_bootstrap(
    sa: np.ndarray,
    sb: np.ndarray,
    agg: Callable[[np.ndarray], Any],
    observed: float,
    method: str,
    confidence: float,
    n_resamples: int,
    seed: int,
    alternative: str,
) -> tuple[ConfidenceInterval, np.ndarray]:
    """Paired document bootstrap: one index draw serves both systems (scipy, paired=True)."""
    from scipy import stats

    if method not in CI_METHODS:
        raise ValueError(f"ci_method={method!r} (expected one of {', '.join(CI_METHODS)})")
    n, k = sa.shape

    def delta(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = np.moveaxis(np.asarray(idx), axis, -1)
        a = np.take(sa, idx, axis=0).sum(axis=-2)
        b = np.take(sb, idx, axis=0).sum(axis=-2)
        return np.asarray(agg(a), dtype=np.float64) - np.asarray(agg(b), dtype=np.float64)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            (np.arange(n),),
            delta,
            n_resamples=n_resamples,
            batch=max(1, min(n_resamples, (1 << 21) // max(n * k, 1))),
            vectorized=True,
            confidence_level=confidence,
            alternative=alternative,
            method="BCa" if method == "bca" else method,
            rng=np.random.default_rng(seed),
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    degenerate = bool(np.ptp(dist) == 0) or math.isnan(lo) or math.isnan(hi)
    if degenerate:
        low = None if alternative == "less" else observed
        high = None if alternative == "greater" else observed
    else:
        low, high = finite_or_none(lo), finite_or_none(hi)
    ci = ConfidenceInterval(
        low,
        high,
        confidence,
        method,
        n_resamples,
        int(seed),
        finite_or_none(res.standard_error),
        observed,
        degenerate,
    )
    return ci, dist
