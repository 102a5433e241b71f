"""Bootstrap confidence intervals (docs/stats.md) and the paired bootstrap test.

Resampling is delegated to ``scipy.stats.bootstrap`` with ``rng=default_rng(seed)``, so bounds
are scipy's to the last bit; resamples are generated in batches (which draw the same stream) to
keep memory at O(batch·n).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.stats._common import (
    base_fields,
    check_alpha,
    check_alternative,
    check_confidence,
    check_n_resamples,
    check_seed,
    effect_fields,
)
from ragmeter.stats.paired import MissingPolicy, Paired, as_paired
from ragmeter.stats.result import ConfidenceInterval, TestResult, finite_or_none, is_significant
from ragmeter.stats_choices import CI_METHODS

__all__ = ["CI_METHODS", "bootstrap_ci", "bootstrap_test"]

_EPS = float(np.finfo(np.float64).eps)


def _batch(n: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, (1 << 21) // max(n, 1)))


def _as_data(
    data: Any,
    b: Any,
    statistic: str | Callable[..., Any],
    missing: MissingPolicy,
    fill_value: float | None,
    decimals: int | None,
) -> tuple[tuple[np.ndarray, ...], Callable[..., Any], bool, str]:
    """(samples, vectorised statistic, paired flag, statistic name) for scipy.stats.bootstrap."""
    if isinstance(data, Paired) or b is not None:
        paired = as_paired(data, b, missing=missing, fill_value=fill_value, decimals=decimals)
        if statistic in ("mean_diff", "mean"):
            return (paired.d,), np.mean, False, "mean_diff"
        if callable(statistic):
            return (paired.a, paired.b), statistic, True, getattr(statistic, "__name__", "stat")
        raise ValueError(f"statistic={statistic!r} (expected 'mean_diff' or a callable)")
    if isinstance(data, Mapping):
        keys = sorted(data, key=str)
        x = np.array([float(data[k]) for k in keys], dtype=np.float64)
    elif isinstance(data, (Sequence, np.ndarray)):
        x = np.asarray(data, dtype=np.float64).ravel()
    else:
        raise TypeError("bootstrap_ci takes a Paired, two score collections, or one sample")
    if not np.all(np.isfinite(x)):
        raise ValueError("the sample holds a non-finite value (expected finite floats)")
    if statistic in ("mean", "mean_diff"):
        return (x,), np.mean, False, "mean"
    if callable(statistic):
        return (x,), statistic, False, getattr(statistic, "__name__", "stat")
    raise ValueError(f"statistic={statistic!r} (expected 'mean' or a callable)")


def _run(
    data: Any,
    b: Any,
    *,
    statistic: str | Callable[..., Any],
    method: str,
    confidence: float,
    n_resamples: int,
    seed: int,
    alternative: str,
    missing: MissingPolicy,
    fill_value: float | None,
    decimals: int | None,
) -> tuple[ConfidenceInterval, float, np.ndarray]:
    from scipy import stats

    if method not in CI_METHODS:
        raise ValueError(f"method={method!r} (expected one of {', '.join(CI_METHODS)})")
    check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    samples, stat, paired, _ = _as_data(data, b, statistic, missing, fill_value, decimals)
    n = len(samples[0])
    if n < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n}")
    theta_hat = float(np.asarray(stat(*samples, axis=-1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            samples,
            stat,
            n_resamples=n_resamples,
            batch=_batch(n, n_resamples),
            vectorized=True,
            paired=paired,
            confidence_level=confidence,
            alternative=alternative,
            method="BCa" if method == "bca" else method,
            rng=np.random.default_rng(seed),
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    lo, hi = res.confidence_interval.low, res.confidence_interval.high
    se = finite_or_none(res.standard_error)
    degenerate = bool(np.ptp(dist) == 0) or any(
        isinstance(v, float) and math.isnan(v) for v in (float(lo), float(hi))
    )
    if degenerate:
        low = None if alternative == "less" else theta_hat
        high = None if alternative == "greater" else theta_hat
    else:
        low, high = finite_or_none(lo), finite_or_none(hi)
    ci = ConfidenceInterval(
        low, high, confidence, method, n_resamples, int(seed), se, theta_hat, degenerate
    )
    return ci, theta_hat, dist


def bootstrap_ci(
    data: Any,
    b: Any = None,
    *,
    statistic: str | Callable[..., Any] = "mean_diff",
    method: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 42,
    alternative: str = "two-sided",
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> ConfidenceInterval:
    """Seeded bootstrap confidence interval.

    ``data`` is a :class:`~ragmeter.stats.Paired` (or ``data, b`` two score collections), whose
    statistic is the mean difference (``bootstrap((d,), np.mean)``) or a callable
    ``stat(a, b, axis)`` resampled in pairs; or one sample (sequence, or mapping id → value taken
    in sorted id order) with the mean or a callable ``stat(x, axis)``.

    B = ``n_resamples`` resamples are drawn with replacement from ``default_rng(seed)`` and the
    statistic recomputed (θ*_b). Quantiles q use linear interpolation.

    - ``percentile``: [q(α/2), q(1−α/2)];
    - ``basic``: [2θ̂ − q(1−α/2), 2θ̂ − q(α/2)];
    - ``bca`` (default): z₀ = Φ⁻¹((#{θ*_b < θ̂} + #{θ*_b ≤ θ̂})/(2B)); acceleration
      a = Σ(θ̄₍.₎ − θ₍ᵢ₎)³ / (6[Σ(θ̄₍.₎ − θ₍ᵢ₎)²]^{3/2}) from the jackknife values;
      α₁,₂ = Φ(z₀ + (z₀ + z_{α/2, 1−α/2})/(1 − a(z₀ + z_{α/2, 1−α/2}))); CI = [q(α₁), q(α₂)].

    When all θ*_b are equal or BCa is undefined, the CI is [θ̂, θ̂] with ``degenerate=True``.

    >>> ci = bootstrap_ci([62, 55, 71, 48, 80, 66, 59, 73, 50, 68],
    ...                   [58, 55, 65, 50, 72, 60, 59, 70, 45, 61], seed=12345)
    >>> ci.low, ci.high, ci.method, round(ci.standard_error, 4)
    (1.5, 5.4, 'bca', 0.9997)
    """
    check_alternative(alternative)
    ci, _, _ = _run(
        data,
        b,
        statistic=statistic,
        method=method,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        alternative=alternative,
        missing=missing,
        fill_value=fill_value,
        decimals=decimals,
    )
    return ci


def bootstrap_test(
    a: Any,
    b: Any = None,
    *,
    method: str = "bca",
    alternative: str = "two-sided",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 42,
    alpha: float = 0.05,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> TestResult:
    """Paired bootstrap test of the mean difference, with its bootstrap CI.

    The p-value shifts the bootstrap distribution to the null (Efron & Tibshirani 1993, §16.4;
    the paired bootstrap of Berg-Kirkpatrick et al. 2012): with θ̂ = mean(d) and γ = 100·ε·|θ̂|,
    c = #{|θ*_b − θ̂| ≥ |θ̂| − γ} (two-sided), #{θ*_b − θ̂ ≥ θ̂ − γ} (``greater``) or
    #{θ*_b − θ̂ ≤ θ̂ + γ} (``less``), and p = (c + 1)/(B + 1). The CI (``method``) comes from the
    same resamples.

    >>> r = bootstrap_test([62, 55, 71, 48, 80, 66, 59, 73, 50, 68],
    ...                    [58, 55, 65, 50, 72, 60, 59, 70, 45, 61], seed=12345)
    >>> r.test, r.significant, (r.ci.low, r.ci.high)
    ('bootstrap', True, (1.5, 5.4))
    """
    paired = as_paired(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    alternative = check_alternative(alternative)
    check_alpha(alpha)
    fields = base_fields(paired)
    ci, theta_hat, dist = _run(
        paired,
        None,
        statistic="mean_diff",
        method=method,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        alternative=alternative,
        missing=missing,
        fill_value=fill_value,
        decimals=decimals,
    )
    degenerate, reason = False, None
    if not np.any(paired.d):
        p = 1.0
        degenerate, reason = True, "all_differences_zero"
    else:
        p = shifted_pvalue(dist, theta_hat, alternative)
    return TestResult(
        test="bootstrap",
        alternative=alternative,
        statistic=theta_hat,
        statistic_name="mean_diff",
        p_value=p,
        method="monte_carlo",
        n_resamples=ci.n_resamples,
        seed=int(seed),
        ci=ci,
        alpha=alpha,
        significant=is_significant(p, alpha),
        degenerate=degenerate,
        reason=reason,
        details={"p_value": "shifted_null", "decimals": paired.decimals},
        **effect_fields(paired),
        **fields,
    )


def shifted_pvalue(dist: np.ndarray, theta_hat: float, alternative: str) -> float:
    """(c + 1)/(B + 1) with c counted on the null-shifted bootstrap distribution θ*_b − θ̂."""
    gamma = 100 * _EPS * abs(theta_hat)
    shifted = dist - theta_hat
    if alternative == "greater":
        c = np.count_nonzero(shifted >= theta_hat - gamma)
    elif alternative == "less":
        c = np.count_nonzero(shifted <= theta_hat + gamma)
    else:
        c = np.count_nonzero(np.abs(shifted) >= abs(theta_hat) - gamma)
    return float(min(1.0, (c + 1) / (len(dist) + 1)))
