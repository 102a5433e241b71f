"""Multiple-comparison corrections (docs/stats.md).

Adjusted p-values are returned in the input order; the decision is p̃ ≤ α·(1 + 1e-9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.stats.result import is_significant
from ragmeter.stats_choices import CORRECTIONS

__all__ = [
    "CORRECTIONS",
    "Adjusted",
    "adjust",
    "benjamini_hochberg",
    "benjamini_yekutieli",
    "bonferroni",
    "holm",
]

_ALIASES = {
    "fdr_bh": "bh",
    "benjamini-hochberg": "bh",
    "fdr_by": "by",
    "benjamini-yekutieli": "by",
    None: "none",
}


@dataclass(frozen=True)
class Adjusted:
    """Adjusted p-values and decisions, in input order."""

    p_values: tuple[float, ...]
    p_adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    method: str
    alpha: float

    @property
    def m(self) -> int:
        return len(self.p_values)


def _validate(p_values: Sequence[float]) -> np.ndarray:
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ValueError("p-values must be finite numbers in [0, 1]")
    return p


def bonferroni(p_values: Sequence[float]) -> np.ndarray:
    """p̃ᵢ = min(1, m·pᵢ) (family-wise error rate)."""
    p = _validate(p_values)
    return np.minimum(1.0, p * len(p))


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down: p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎) (FWER)."""
    p = _validate(p_values)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(stepped)
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg: p̃₍ᵢ₎ = min_{j ≥ i} min(1, m·p₍ⱼ₎/j) (false discovery rate)."""
    p = _validate(p_values)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * m / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


def benjamini_yekutieli(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Yekutieli: BH times c(m) = Σ_{j=1..m} 1/j, capped at 1 (FDR, any dependence)."""
    p = _validate(p_values)
    m = len(p)
    if m == 0:
        return p
    c = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * m * c / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


def adjust(p_values: Sequence[float], method: str | None = "holm", alpha: float = 0.05) -> Adjusted:
    """Adjust a family of p-values and decide each at level ``alpha``.

    ``method``: ``"holm"`` (default), ``"bonferroni"``, ``"bh"`` (``"fdr_bh"``), ``"by"``
    (``"fdr_by"``) or ``"none"``. Matches ``statsmodels.stats.multitest.multipletests``.

    >>> r = adjust([0.01, 0.04, 0.03, 0.005, 0.2], "holm")
    >>> [round(x, 6) for x in r.p_adjusted], r.reject
    ([0.04, 0.09, 0.09, 0.025, 0.2], (True, False, False, True, False))
    >>> adjust([0.01, 0.04, 0.03, 0.005, 0.2], "bh").reject
    (True, True, True, True, False)
    """
    key = _ALIASES.get(method, method)
    if key not in CORRECTIONS:
        raise ValueError(f"correction {method!r} (expected one of {', '.join(CORRECTIONS)})")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} (expected a number between 0 and 1)")
    p = _validate(p_values)
    fn = {
        "holm": holm,
        "bonferroni": bonferroni,
        "bh": benjamini_hochberg,
        "by": benjamini_yekutieli,
        "none": lambda x: np.asarray(x, dtype=np.float64),
    }[key]
    adj = fn(p)
    return Adjusted(
        tuple(float(x) for x in p),
        tuple(float(x) for x in adj),
        tuple(is_significant(float(x), alpha) for x in adj),
        key,
        float(alpha),
    )
