"""Paired effect sizes (docs/stats.md)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragmeter.stats.paired import MissingPolicy, as_paired

__all__ = ["EffectSizes", "effect_sizes"]


@dataclass(frozen=True)
class EffectSizes:
    """Mean difference and standardised paired effect sizes; ``None`` where undefined."""

    mean_diff: float
    sd_diff: float | None
    cohens_dz: float | None
    hedges_gz: float | None
    cohens_d_av: float | None
    n: int
    degenerate: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def effect_sizes(
    a: Any,
    b: Any = None,
    *,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> EffectSizes:
    """Paired effect sizes of A over B.

    - Cohen's d_z = mean(d) / sd(d), sd with ddof 1 (so the t statistic is d_z·√n);
    - Hedges' g_z = d_z·J with J = 1 − 3/(4(n − 1) − 1);
    - d_av = mean(d) / ((sd(a) + sd(b))/2) (Lakens 2013), comparable with a between-subject d.

    With sd(d) = 0, or differences that are all equal up to floating-point noise
    (:meth:`Paired.noise`), d_z and g_z are ``None`` and ``degenerate`` is true.

    >>> es = effect_sizes([62, 55, 71, 48, 80, 66, 59, 73, 50, 68],
    ...                   [58, 55, 65, 50, 72, 60, 59, 70, 45, 61])
    >>> round(es.cohens_dz, 4), round(es.hedges_gz, 4), round(es.cohens_d_av, 4)
    (1.0985, 1.0044, 0.3967)
    """
    paired = as_paired(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    n = paired.n
    if n < 2:
        raise ValueError(f"effect sizes need at least 2 paired queries, got {n}")
    d = paired.d
    mean_d = float(np.mean(d))
    sd_d = float(np.std(d, ddof=1))
    degenerate, reason = False, None
    if sd_d == 0 or not math.isfinite(sd_d) or paired.constant_d():
        # a spread within floating-point noise is no spread: d_z would be noise / noise
        dz = gz = None
        degenerate = True
        reason = "all_differences_zero" if paired.zero_d() else "zero_variance"
    else:
        dz = mean_d / sd_d
        denom = 4 * (n - 1) - 1
        gz = dz * (1 - 3 / denom)
    sd_avg = (float(np.std(paired.a, ddof=1)) + float(np.std(paired.b, ddof=1))) / 2
    d_av = mean_d / sd_avg if sd_avg > 0 else None
    return EffectSizes(mean_d, sd_d, dz, gz, d_av, n, degenerate, reason)
