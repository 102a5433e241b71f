"""Paired t-test (docs/stats.md), delegated to scipy, with honest degenerate cases."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ragmeter.stats._common import (
    base_fields,
    check_alpha,
    check_alternative,
    check_confidence,
    effect_fields,
)
from ragmeter.stats.paired import MissingPolicy, as_paired
from ragmeter.stats.result import ConfidenceInterval, TestResult, finite_or_none, is_significant

__all__ = ["ttest"]


def ttest(
    a: Any,
    b: Any = None,
    *,
    alternative: str = "two-sided",
    confidence: float = 0.95,
    alpha: float = 0.05,
    ci: str | None = "t",
    n_resamples: int = 9999,
    seed: int = 42,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> TestResult:
    """Paired Student t-test on the rounded differences d.

    t = mean(d) / (sd(d)/√n) with sd of ddof 1 and df = n − 1; the p-value comes from Student's
    t with df degrees of freedom, and the CI of mean(d) is mean(d) ± t_{df,1−α/2}·sd(d)/√n
    (``ci="t"``, the default; ``"bca"``/``"percentile"``/``"basic"`` give a bootstrap CI instead,
    ``None`` none). Computed by ``scipy.stats.ttest_1samp(d, 0)``, which equals
    ``ttest_rel(a, b)``.

    Degenerate cases: all d = 0 gives ``statistic=None, p_value=1.0`` (reason
    ``all_differences_zero``); all d equal and non-zero gives ``statistic=None, p_value=0.0``
    (reason ``zero_variance``; scipy's limit t = ±∞). Use the randomization test there.

    >>> r = ttest([62, 55, 71, 48, 80, 66, 59, 73, 50, 68],
    ...           [58, 55, 65, 50, 72, 60, 59, 70, 45, 61])
    >>> round(r.statistic, 4), round(r.p_value, 6), r.details["df"]
    (3.4738, 0.007006, 9)
    >>> round(r.ci.low, 4), round(r.ci.high, 4)
    (1.2906, 6.1094)
    """
    paired = as_paired(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    alternative = check_alternative(alternative)
    check_alpha(alpha)
    check_confidence(confidence)
    fields = base_fields(paired)
    d = paired.d
    df = paired.n - 1
    mean_d = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    degenerate, reason = False, None
    interval: ConfidenceInterval | None = None
    if sd == 0 or paired.constant_d():
        # differences equal up to floating-point noise: t would be noise / noise
        degenerate = True
        statistic = None
        if mean_d == 0 or paired.zero_d():
            reason, p = "all_differences_zero", 1.0
        else:
            reason = "zero_variance"
            # scipy's limit t = ±inf: the side the mean lies on has p = 0
            if alternative == "two-sided":
                p = 0.0
            elif alternative == "greater":
                p = 0.0 if mean_d > 0 else 1.0
            else:
                p = 0.0 if mean_d < 0 else 1.0
        if ci == "t":
            interval = ConfidenceInterval(
                mean_d,
                mean_d,
                confidence,
                "t",
                standard_error=0.0,
                estimate=mean_d,
                degenerate=True,
            )
    else:
        from scipy import stats

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.ttest_1samp(d, 0.0, alternative=alternative)
        statistic = finite_or_none(res.statistic)
        p = float(res.pvalue)
        if ci == "t":
            lo, hi = res.confidence_interval(confidence)
            interval = ConfidenceInterval(
                finite_or_none(lo),
                finite_or_none(hi),
                confidence,
                "t",
                standard_error=sd / math.sqrt(paired.n),
                estimate=mean_d,
            )
    if ci not in (None, "t"):
        from ragmeter.stats.bootstrap import bootstrap_ci

        interval = bootstrap_ci(
            paired, method=ci, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    return TestResult(
        test="t",
        alternative=alternative,
        statistic=statistic,
        statistic_name="t",
        p_value=p,
        method="student_t",
        n_resamples=None,
        seed=None if ci in (None, "t") else int(seed),
        ci=interval,
        alpha=alpha,
        significant=is_significant(p, alpha),
        degenerate=degenerate,
        reason=reason,
        details={"df": df, "sd_diff": sd, "decimals": paired.decimals},
        **effect_fields(paired),
        **fields,
    )
