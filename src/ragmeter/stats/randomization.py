"""Paired randomization (sign-flip permutation) test (docs/stats.md): the default test."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ragmeter.stats._common import (
    base_fields,
    check_alpha,
    check_alternative,
    check_n_resamples,
    effect_fields,
)
from ragmeter.stats._signflip import Patterns, exact_integer_columns, iter_kept_sums, unpack_bits
from ragmeter.stats.paired import MissingPolicy, Paired, as_paired
from ragmeter.stats.result import TestResult, is_significant
from ragmeter.stats_choices import TWO_SIDED

__all__ = [
    "TWO_SIDED",
    "build_result",
    "pvalues_from_counts",
    "randomization_test",
    "signflip_counts",
    "signflip_pvalues",
]

_EPS = float(np.finfo(np.float64).eps)

Statistic = str | Callable[[np.ndarray, np.ndarray], Any]


def _tolerance(observed: float) -> float:
    """γ = 100·ε·|T_obs|: the relative tie tolerance scipy's permutation_test uses."""
    return 100 * _EPS * abs(observed)


def pvalues_from_counts(
    counts: dict[str, np.ndarray], *, total: int, exact: bool, alternative: str, two_sided: str
) -> np.ndarray:
    """p-values from the counts of resampled statistics at least as extreme.

    ``counts`` holds ``"abs"``, ``"greater"`` and ``"less"`` count arrays (as needed). Exact:
    c / 2ⁿ; sampled: (c + 1)/(B + 1), never 0.
    """

    def p(c: np.ndarray) -> np.ndarray:
        return c / total if exact else (c + 1) / (total + 1)

    if alternative == "greater":
        return p(counts["greater"])
    if alternative == "less":
        return p(counts["less"])
    if two_sided == "abs":
        return np.minimum(p(counts["abs"]), 1.0)
    return np.minimum(1.0, 2 * np.minimum(p(counts["less"]), p(counts["greater"])))


def signflip_pvalues(
    d: np.ndarray,
    patterns: Patterns,
    *,
    alternative: str = "two-sided",
    two_sided: str = "abs",
    decimals: int | None = 12,
) -> np.ndarray:
    """Sign-flip p-values of the mean difference for each column of ``d`` (n, P) at once.

    Columns with the same n share the same patterns, so this equals P separate tests.
    When ``decimals`` is set and the scaled differences are small enough, statistics are
    computed on exact integers (d·10^decimals), so ties are detected exactly; otherwise in
    float64 with the tolerance γ.
    """
    counts = signflip_counts(
        d, patterns, alternative=alternative, two_sided=two_sided, decimals=decimals
    )
    return pvalues_from_counts(
        counts,
        total=patterns.count,
        exact=patterns.exact,
        alternative=alternative,
        two_sided=two_sided,
    )


def signflip_counts(
    d: np.ndarray,
    patterns: Patterns,
    *,
    alternative: str = "two-sided",
    two_sided: str = "abs",
    decimals: int | None = 12,
    rows: tuple[int, int] | None = None,
) -> dict[str, np.ndarray]:
    """Per column of ``d``, how many patterns give a statistic at least as extreme as the
    observed one (the counts :func:`signflip_pvalues` turns into p-values).

    ``rows=(start, stop)`` counts only those patterns. The counts are integers, so the counts
    of consecutive row ranges add up exactly to the counts over all patterns: this is how an
    executor spreads one set of tests over several workers (docs/scaleout.md).
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    need = ("abs",) if (alternative == "two-sided" and two_sided == "abs") else ()
    if alternative == "greater":
        need = ("greater",)
    elif alternative == "less":
        need = ("less",)
    elif two_sided == "double":
        need = ("greater", "less")
    counts = {key: np.zeros(d.shape[1], dtype=np.int64) for key in need}
    # each column takes the exact-integer path when it can, whatever the other columns are, so
    # a column's p-value is the same alone or stacked with others (compare == one test per pair)
    integer_cols = np.zeros(d.shape[1], dtype=bool)
    scaled = None
    if decimals is not None and decimals <= 15:
        scaled = np.rint(d * 10.0**decimals)
        integer_cols = np.array(
            [exact_integer_columns(scaled[:, [c]]) for c in range(d.shape[1])], dtype=bool
        )
    if integer_cols.any():
        cols = np.flatnonzero(integer_cols)
        k = scaled[:, cols]  # type: ignore[index]
        total = k.astype(np.int64).sum(axis=0)  # exact: |Σk| <= 2^53
        gamma = np.array([_tolerance(float(t)) for t in total])
        thr_abs = np.ceil(np.abs(total) - gamma).astype(np.int64)
        thr_ge = np.ceil(total - gamma).astype(np.int64)
        thr_le = np.floor(total + gamma).astype(np.int64)
        for kept in iter_kept_sums(k, patterns, exact_integers=True, rows=rows):
            t = 2 * np.rint(kept).astype(np.int64) - total[None, :]
            if "abs" in counts:
                counts["abs"][cols] += (np.abs(t) >= thr_abs[None, :]).sum(axis=0)
            if "greater" in counts:
                counts["greater"][cols] += (t >= thr_ge[None, :]).sum(axis=0)
            if "less" in counts:
                counts["less"][cols] += (t <= thr_le[None, :]).sum(axis=0)
    if not integer_cols.all():
        cols = np.flatnonzero(~integer_cols)
        x = d[:, cols]
        total_f = np.array([math.fsum(col) for col in x.T])
        gamma = np.array([_tolerance(t) for t in total_f])
        for kept in iter_kept_sums(x, patterns, exact_integers=False, rows=rows):
            t = 2 * kept - total_f[None, :]
            if "abs" in counts:
                counts["abs"][cols] += (np.abs(t) >= (np.abs(total_f) - gamma)[None, :]).sum(axis=0)
            if "greater" in counts:
                counts["greater"][cols] += (t >= (total_f - gamma)[None, :]).sum(axis=0)
            if "less" in counts:
                counts["less"][cols] += (t <= (total_f + gamma)[None, :]).sum(axis=0)
    return counts


def _reduces_rows(stat: Callable[..., Any], a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``stat`` maps (rows, n) arrays to (rows,) values (one call per chunk)."""
    try:
        t = np.asarray(stat(np.stack([a, b]), np.stack([b, a])), dtype=np.float64)
    except Exception:  # a plain stat(a, b) may not take 2-D input at all
        return False
    return t.shape == (2,)


def _callable_pvalue(
    stat: Callable[..., Any],
    a: np.ndarray,
    b: np.ndarray,
    patterns: Patterns,
    *,
    alternative: str,
    two_sided: str,
) -> tuple[float, float]:
    observed = float(np.asarray(stat(a, b)))
    if not math.isfinite(observed):
        raise ValueError(f"the statistic returned {observed!r} on the observed data")
    gamma = _tolerance(observed)
    counts = {k: np.zeros(1, dtype=np.int64) for k in ("abs", "greater", "less")}
    chunk = max(16, min(4096, (1 << 21) // max(len(a), 1)))
    vectorised = _reduces_rows(stat, a, b)
    for byte_rows in patterns.iter_bytes(chunk):
        keep = unpack_bits(byte_rows, len(a))
        xs, ys = np.where(keep, a, b), np.where(keep, b, a)
        if vectorised:
            t = np.asarray(stat(xs, ys), dtype=np.float64)
        else:
            # a plain stat(a, b) -> float, as docs/stats.md allows: one call per resample (slower)
            t = np.fromiter(
                (stat(x, y) for x, y in zip(xs, ys, strict=True)), np.float64, len(keep)
            )
        counts["abs"] += int((np.abs(t) >= abs(observed) - gamma).sum())
        counts["greater"] += int((t >= observed - gamma).sum())
        counts["less"] += int((t <= observed + gamma).sum())
    p = pvalues_from_counts(
        counts,
        total=patterns.count,
        exact=patterns.exact,
        alternative=alternative,
        two_sided=two_sided,
    )
    return observed, float(p[0])


def randomization_test(
    a: Any,
    b: Any = None,
    *,
    statistic: Statistic = "mean_diff",
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    exact: bool | str = "auto",
    seed: int = 42,
    two_sided: str = "abs",
    alpha: float = 0.05,
    ci: str | None = None,
    confidence: float = 0.95,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> TestResult:
    """Paired randomization test: under H0 each pair's labels are exchangeable.

    Each d_i keeps or flips its sign with probability ½. The statistic is T = mean(d) (or a
    callable ``stat(a, b)`` reducing the last axis, antisymmetric under swapping). All 2ⁿ sign
    patterns are enumerated when 2ⁿ ≤ ``n_resamples`` (``exact="auto"``; ``True`` forces it up
    to n = 20); otherwise B = ``n_resamples`` patterns are drawn from ``default_rng(seed)``.
    A resampled T_b is at least as extreme when |T_b| ≥ |T_obs| − γ (two-sided), T_b ≥ T_obs − γ
    (``greater``) or T_b ≤ T_obs + γ (``less``), with γ = 100·ε·|T_obs|. With c such patterns,
    p = c/2ⁿ (exact) or (c + 1)/(B + 1) (sampled). ``two_sided="double"`` gives
    2·min(p_less, p_greater) capped at 1 (scipy's ``permutation_test`` convention).

    Parameters: ``a, b`` are a :class:`~ragmeter.stats.Paired`, two mappings id → score
    (aligned with ``missing``/``fill_value``) or two sequences (by position). ``ci`` adds a
    bootstrap CI of the mean difference (``"bca"``, ``"percentile"`` or ``"basic"``).

    Returns a :class:`~ragmeter.stats.TestResult` (``test="randomization"``, ``method``
    ``"exact"`` or ``"monte_carlo"``).

    >>> a = [62, 55, 71, 48, 80, 66, 59, 73, 50, 68]
    >>> b = [58, 55, 65, 50, 72, 60, 59, 70, 45, 61]
    >>> r = randomization_test(a, b)
    >>> r.p_value, r.method, r.n_resamples, r.statistic
    (0.015625, 'exact', 1024, 3.7)
    """
    paired = as_paired(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    alternative = check_alternative(alternative)
    check_alpha(alpha)
    n_resamples = check_n_resamples(n_resamples)
    if two_sided not in TWO_SIDED:
        raise ValueError(f"two_sided={two_sided!r} (expected 'abs' or 'double')")
    patterns = Patterns.choose(paired.n, n_resamples=n_resamples, exact=exact, seed=seed)
    if callable(statistic):
        stat_name = getattr(statistic, "__name__", "statistic")
    elif statistic in ("mean_diff", "mean"):
        stat_name = "mean_diff"
    else:
        raise ValueError(f"statistic={statistic!r} (expected 'mean_diff' or a callable)")
    fields = base_fields(paired)
    observed: float | None = float(np.mean(paired.d))
    p = 1.0
    if callable(statistic):
        if np.any(paired.d):
            observed, p = _callable_pvalue(
                statistic,
                paired.a,
                paired.b,
                patterns,
                alternative=alternative,
                two_sided=two_sided,
            )
        else:
            observed = float(np.asarray(statistic(paired.a, paired.b)))
    elif np.any(paired.d):
        p = float(
            signflip_pvalues(
                paired.d,
                patterns,
                alternative=alternative,
                two_sided=two_sided,
                decimals=paired.decimals,
            )[0]
        )
    interval = None
    if ci is not None:
        from ragmeter.stats.bootstrap import bootstrap_ci

        interval = bootstrap_ci(
            paired, method=ci, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    return build_result(
        paired,
        p_value=p,
        patterns=patterns,
        statistic=observed,
        statistic_name=stat_name,
        alternative=alternative,
        two_sided=two_sided,
        exact=exact,
        alpha=alpha,
        ci=interval,
        fields=fields,
    )


def build_result(
    paired: Paired,
    *,
    p_value: float,
    patterns: Patterns,
    statistic: float | None,
    statistic_name: str = "mean_diff",
    alternative: str = "two-sided",
    two_sided: str = "abs",
    exact: bool | str = "auto",
    alpha: float = 0.05,
    ci: Any = None,
    fields: dict[str, Any] | None = None,
) -> TestResult:
    """The TestResult of a randomization test whose p-value is already known."""
    fields = base_fields(paired) if fields is None else fields
    degenerate = not np.any(paired.d)
    p = 1.0 if degenerate else float(p_value)
    return TestResult(
        test="randomization",
        alternative=alternative,
        statistic=statistic,
        statistic_name=statistic_name,
        p_value=p,
        method="exact" if patterns.exact else "monte_carlo",
        n_resamples=patterns.count,
        seed=patterns.seed,
        ci=ci,
        alpha=alpha,
        significant=is_significant(p, alpha),
        degenerate=degenerate,
        reason="all_differences_zero" if degenerate else None,
        details={"two_sided": two_sided, "exact": exact, "decimals": paired.decimals},
        **effect_fields(paired),
        **fields,
    )
