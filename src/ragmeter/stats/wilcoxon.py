"""Wilcoxon signed-rank test (docs/stats.md), delegated to scipy ≥ 1.15 on the rounded d."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ragmeter.stats._common import (
    base_fields,
    check_alpha,
    check_alternative,
    check_n_resamples,
    check_seed,
    effect_fields,
)
from ragmeter.stats.paired import MissingPolicy, as_paired
from ragmeter.stats.result import TestResult, finite_or_none, is_significant

__all__ = ["WILCOXON_METHODS", "ZERO_METHODS", "wilcoxon"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("auto", "exact", "asymptotic", "permutation")
_SCIPY_MIN = (1, 15)


def _check_scipy() -> None:
    import scipy

    major, minor = (int(x) for x in scipy.__version__.split(".")[:2])
    if (major, minor) < _SCIPY_MIN:
        raise RuntimeError(
            f"ragmeter's Wilcoxon test needs scipy >= 1.15 (found {scipy.__version__}); older "
            "versions fall back to the normal approximation whenever there are zeros"
        )


def _has_ties(d: np.ndarray, zero_method: str) -> bool:
    """Ties among the ranked |d| as scipy sees them (zeros ranked unless zero_method=wilcox)."""
    x = np.abs(d[d != 0]) if zero_method == "wilcox" else np.abs(d)
    return len(np.unique(x)) < len(x)


def wilcoxon(
    a: Any,
    b: Any = None,
    *,
    zero_method: str = "wilcox",
    method: str = "auto",
    correction: bool = False,
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    seed: int = 42,
    alpha: float = 0.05,
    ci: str | None = None,
    confidence: float = 0.95,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> TestResult:
    """Wilcoxon signed-rank test on the rounded differences d (``scipy.stats.wilcoxon(d)``).

    Ranks |d| with average ranks for ties; R⁺ and R⁻ are the rank sums of positive and negative
    d. The statistic is min(R⁺, R⁻) (two-sided) or R⁺ (one-sided). ``zero_method``: ``"wilcox"``
    drops zeros before ranking, ``"pratt"`` ranks them and drops their ranks, ``"zsplit"`` splits
    their ranks between R⁺ and R⁻. ``method``: ``"auto"`` (n > 50 asymptotic; else exact without
    zeros or ties; else an exhaustive sign-flip permutation when n ≤ 13; else asymptotic),
    ``"exact"`` (the tie-free table, flagged ``approximate_exact`` when zeros or ties are
    present), ``"asymptotic"`` (normal approximation with tie correction and optional continuity
    ``correction``) or ``"permutation"``
    (``PermutationMethod(n_resamples, rng=default_rng(seed))``).

    All differences zero: ``p_value=1.0``, ``degenerate=True``. Requires scipy ≥ 1.15; older
    versions give other p-values whenever zeros are present.

    >>> r = wilcoxon([62, 55, 71, 48, 80, 66, 59, 73, 50, 68],
    ...              [58, 55, 65, 50, 72, 60, 59, 70, 45, 61])
    >>> r.statistic, r.p_value, r.method, r.n_zero
    (1.0, 0.015625, 'permutation', 2)
    """
    paired = as_paired(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    alternative = check_alternative(alternative)
    check_alpha(alpha)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method={zero_method!r} (expected one of {', '.join(ZERO_METHODS)})")
    if method not in WILCOXON_METHODS:
        raise ValueError(f"method={method!r} (expected one of {', '.join(WILCOXON_METHODS)})")
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    _check_scipy()
    fields = base_fields(paired)
    d = paired.d
    n = paired.n
    ties = _has_ties(d, zero_method)
    n_zero = fields["n_zero"]
    used = method
    if method == "auto":
        if n > 50:
            used = "asymptotic"
        elif not (ties or n_zero > 0):
            used = "exact"
        elif n <= 13:
            used = "permutation"
        else:
            used = "asymptotic"
    resamples: int | None = None
    if used == "permutation":
        resamples = 2**n if (method == "auto" or 2**n <= n_resamples) else n_resamples
    details = {
        "zero_method": zero_method,
        "correction": bool(correction),
        "approximate_exact": bool(used == "exact" and (ties or n_zero > 0)),
        "requested_method": method,
        "decimals": paired.decimals,
    }
    degenerate, reason = False, None
    if not np.any(d):
        statistic, p = None, 1.0
        degenerate, reason = True, "all_differences_zero"
    else:
        from scipy import stats

        scipy_method: Any = method
        if method == "permutation":
            scipy_method = stats.PermutationMethod(
                n_resamples=n_resamples, rng=np.random.default_rng(seed)
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.wilcoxon(
                d,
                zero_method=zero_method,
                correction=correction,
                alternative=alternative,
                method=scipy_method,
            )
        statistic = finite_or_none(res.statistic)
        p = finite_or_none(res.pvalue)
        if p is None:  # cannot happen with a non-zero d, kept as a guard against NaN output
            p, degenerate, reason = 1.0, True, "undefined_p_value"
    interval = None
    if ci is not None:
        from ragmeter.stats.bootstrap import bootstrap_ci

        interval = bootstrap_ci(
            paired, method=ci, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    return TestResult(
        test="wilcoxon",
        alternative=alternative,
        statistic=statistic,
        statistic_name="W" if alternative == "two-sided" else "R_plus",
        p_value=p,
        method=used,
        n_resamples=resamples,
        seed=int(seed) if used == "permutation" and method == "permutation" else None,
        ci=interval,
        alpha=alpha,
        significant=is_significant(p, alpha),
        degenerate=degenerate,
        reason=reason,
        details=details,
        **effect_fields(paired),
        **fields,
    )
