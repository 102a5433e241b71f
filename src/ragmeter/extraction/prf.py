"""Precision, recall and F1 from counts, with the ``zero_division`` convention.

A ratio whose denominator is 0 takes ``zero_division`` (default 0.0, scikit-learn's
convention); F1 = 2PR/(P+R), and 0 when P + R = 0 (seqeval and nervaluate agree). Means over
labels or documents are summed one value at a time in canonical (sorted) order, so that a
partitioned computation gives the same bits.

>>> prf(1, 3, 2, 0.0)
(0.3333333333333333, 0.5, 0.4)
>>> prf(0, 0, 0, 1.0)
(1.0, 1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.warnings import warn

__all__ = ["check_zero_division", "mean", "prf", "prf_arrays", "weighted_mean"]


def check_zero_division(value: Any, *, allow_nan: bool = False) -> float:
    """Validate ``zero_division``: 0, 1, ``"warn"`` (0 with a warning) or, where a caller
    supports excluding undefined values, ``"nan"``."""
    if value == "warn":
        warn("zero_division='warn' acts as 0 (the undefined cases are listed under 'undefined')")
        return 0.0
    if allow_nan and (value == "nan" or (isinstance(value, float) and math.isnan(value))):
        return math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        return float(value)
    raise ValueError(
        f"zero_division={value!r} (expected 0, 1, 'warn'" + (" or 'nan')" if allow_nan else ")")
    )


def prf(num: float, act: float, pos: float, zero_division: float) -> tuple[float, float, float]:
    """P = num/act, R = num/pos, F1 = 2PR/(P+R); a zero denominator gives ``zero_division``."""
    p = num / act if act else zero_division
    r = num / pos if pos else zero_division
    f = 2 * p * r / (p + r) if (p + r) else 0.0
    return float(p), float(r), float(f)


def prf_arrays(
    num: np.ndarray, act: np.ndarray, pos: np.ndarray, zero_division: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`prf` element-wise."""
    num = np.asarray(num, dtype=np.float64)
    act = np.asarray(act, dtype=np.float64)
    pos = np.asarray(pos, dtype=np.float64)
    p = np.full(num.shape, zero_division, dtype=np.float64)
    r = np.full(num.shape, zero_division, dtype=np.float64)
    np.divide(num, act, out=p, where=act != 0)
    np.divide(num, pos, out=r, where=pos != 0)
    s = p + r
    f = np.zeros(num.shape, dtype=np.float64)
    np.divide(2 * p * r, s, out=f, where=s != 0)
    return p, r, f


def mean(values: Sequence[float] | np.ndarray) -> float:
    """Left-to-right mean (callers pass values in canonical order)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("mean of no values")
    # cumsum adds one value at a time (numpy's sum is pairwise)
    return float(np.cumsum(arr)[-1] / arr.size)


def weighted_mean(values: Sequence[float] | np.ndarray, weights: Sequence[float]) -> float:
    """Σ v·w / Σ w, summed left to right."""
    num = 0.0
    den = 0.0
    for v, w in zip(values, weights, strict=True):
        num += float(v) * float(w)
        den += float(w)
    if den == 0:
        raise ValueError("weighted mean with zero total weight")
    return num / den
