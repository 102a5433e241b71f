"""Chance-corrected agreement coefficients on categorical ratings.

Cohen's kappa (1960), Scott's pi (1955), Fleiss' kappa (1971), Randolph's free-marginal kappa
(2005), Gwet's AC1 (2008) and Krippendorff's alpha (2011) with nominal, ordinal, interval and
ratio distances; each is ``None`` when undefined (no variation), next to observed agreement.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.choices import LEVELS, Level
from ragmeter.records.choices import expected

__all__ = [
    "Level",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "observed_agreement",
    "randolph_kappa",
    "scotts_pi",
]


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _categories(values: Sequence[Any], categories: Sequence[Any] | None) -> list[Any]:
    present = {v for v in values if not _is_missing(v)}
    if categories is not None:
        cats = list(categories)
        unknown = present - set(cats)
        if unknown:
            raise InputError(
                f"rating {sorted(map(str, unknown))[0]!r} is not one of the categories "
                f"{cats!r} (expected ratings from the given categories)"
            )
        return cats
    try:
        return sorted(present)
    except TypeError:
        raise InputError("ratings mix types that cannot be ordered (expected one type)") from None


def _two(r1: Sequence[Any], r2: Sequence[Any]) -> None:
    if len(r1) != len(r2):
        raise InputError(
            f"{len(r1)} ratings against {len(r2)} (expected both raters to rate the same items)"
        )
    if not len(r1):
        raise InputError("no ratings (expected at least one item)")
    if any(_is_missing(v) for v in (*r1, *r2)):
        raise InputError(
            "a missing rating (Cohen's κ, Scott's π and Gwet's AC1 need complete data; use "
            "Krippendorff's α)"
        )


def observed_agreement(r1: Sequence[Any], r2: Sequence[Any]) -> float:
    """p_o: the share of items both raters put in the same category."""
    _two(r1, r2)
    return sum(1 for a, b in zip(r1, r2, strict=True) if a == b) / len(r1)


def cohen_kappa(
    r1: Sequence[Any],
    r2: Sequence[Any],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[Any] | None = None,
) -> float | None:
    """Cohen's κ = 1 − Σ w·O / Σ w·E (scikit-learn's ``cohen_kappa_score``).

    O is the confusion matrix of the two raters and E the outer product of their marginals
    scaled to the same total; w is 1 − I (unweighted, equivalently κ = (p_o − p_e)/(1 − p_e)),
    |i − j| (linear) or (i − j)² (quadratic) over the category order (sorted values, or
    ``categories``). ``None`` when chance agreement is perfect.
    """
    _two(r1, r2)
    cats = _categories([*r1, *r2], categories)
    idx = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    o = np.zeros((k, k), dtype=np.float64)
    for a, b in zip(r1, r2, strict=True):
        o[idx[a], idx[b]] += 1
    e = np.outer(o.sum(axis=1), o.sum(axis=0)) / o.sum()
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights in ("linear", "quadratic"):
        d = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
        w = d if weights == "linear" else d**2
    else:
        raise ValueError(f"weights={weights!r} (expected None, 'linear' or 'quadratic')")
    den = float((w * e).sum())
    if den == 0:
        return None
    return 1.0 - float((w * o).sum()) / den


def _count_table(ratings: Sequence[Sequence[Any]], cats: list[Any]) -> np.ndarray:
    idx = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(ratings), len(cats)), dtype=np.float64)
    for i, row in enumerate(ratings):
        for v in row:
            if not _is_missing(v):
                table[i, idx[v]] += 1
    return table


def _units(ratings: Any) -> list[list[Any]]:
    """items × raters rows from a matrix or ``{rater: {item: label}}``."""
    if isinstance(ratings, Mapping):
        raters = list(ratings)
        items = sorted({i for r in raters for i in ratings[r]}, key=str)
        return [[ratings[r].get(i) for r in raters] for i in items]
    rows = [list(r) for r in ratings]
    if not rows:
        raise InputError("no items to rate (expected items × raters ratings)")
    n = len(rows[0])
    if any(len(r) != n for r in rows):
        raise InputError(
            "rows have different numbers of raters (expected an items × raters matrix; use None "
            "for a missing rating)"
        )
    return rows


def fleiss_kappa(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Fleiss' κ = (P̄ − p_e)/(1 − p_e) for an items × raters matrix with every item rated by
    the same number of raters: P_i = Σ_j n_ij(n_ij − 1)/(n(n − 1)), p_e = Σ_j p_j² with p_j the
    pooled category proportions (statsmodels ``fleiss_kappa(method="fleiss")``). With two
    raters it equals Scott's π."""
    rows = _units(ratings)
    if any(_is_missing(v) for r in rows for v in r):
        raise InputError("a missing rating (Fleiss' κ needs complete data; use Krippendorff's α)")
    n = len(rows[0])
    if n < 2:
        raise InputError("one rater (expected at least 2 raters per item)")
    cats = _categories([v for r in rows for v in r], categories)
    table = _count_table(rows, cats)
    p_i = ((table * (table - 1)).sum(axis=1)) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / table.sum()
    p_e = float((p_j**2).sum())
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1 - p_e)


def randolph_kappa(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Randolph's free-marginal κ: Fleiss' P̄ against p_e = 1/q, q the number of categories
    (statsmodels ``fleiss_kappa(method="randolph")``)."""
    rows = _units(ratings)
    n = len(rows[0])
    cats = _categories([v for r in rows for v in r], categories)
    if len(cats) < 2:
        return None
    table = _count_table(rows, cats)
    p_bar = float((((table * (table - 1)).sum(axis=1)) / (n * (n - 1))).mean())
    p_e = 1.0 / len(cats)
    return (p_bar - p_e) / (1 - p_e)


def scotts_pi(r1: Sequence[Any], r2: Sequence[Any]) -> float | None:
    """Scott's π: (p_o − p_e)/(1 − p_e) with p_e from the pooled marginals of both raters."""
    _two(r1, r2)
    return fleiss_kappa([[a, b] for a, b in zip(r1, r2, strict=True)])


def gwet_ac1(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Gwet's AC1 for items × raters data (missing ratings allowed).

    p_a = mean over items with at least two ratings of Σ_k r_ik(r_ik − 1)/(r_i(r_i − 1));
    π_k = mean over those items of r_ik/r_i; p_e = Σ_k π_k(1 − π_k)/(q − 1), q the number of
    categories. With two raters and no missing ratings, π_k is the mean of the two raters'
    proportions and p_a = p_o (docs/extraction.md#inter-annotator-agreement).
    """
    rows = _units(ratings)
    cats = _categories([v for r in rows for v in r], categories)
    q = len(cats)
    if q < 2:
        return None
    table = _count_table(rows, cats)
    r_i = table.sum(axis=1)
    use = r_i >= 2
    if not use.any():
        return None
    t, r = table[use], r_i[use]
    p_a = float(((t * (t - 1)).sum(axis=1) / (r * (r - 1))).mean())
    pi = (t / r[:, None]).mean(axis=0)
    p_e = float((pi * (1 - pi)).sum()) / (q - 1)
    if p_e == 1.0:
        return None
    return (p_a - p_e) / (1 - p_e)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]],
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> float | None:
    """Krippendorff's α = 1 − (n − 1)·Σ o_ck δ_ck / Σ n_c n_k δ_ck from the coincidence matrix.

    ``reliability_data`` is raters × items (the ``krippendorff`` package's layout), ``None``
    marking a missing rating; items with fewer than two ratings are ignored. o_ck counts the
    ordered pairs of values (c, k) from different raters within an item, each weighted
    1/(m_u − 1); n_c are its marginals. δ: nominal 0/1; ordinal
    (Σ_{g=c}^{k} n_g − (n_c + n_k)/2)² over the ordered categories; interval (c − k)²; ratio
    ((c − k)/(c + k))².
    """
    data = [list(r) for r in reliability_data]
    if not data:
        raise InputError("no raters (expected raters × items reliability data)")
    n_items = len(data[0])
    if any(len(r) != n_items for r in data):
        raise InputError(
            "raters rated different numbers of items (expected raters × items, None for missing)"
        )
    if level not in LEVELS:
        raise ValueError(f"level={level!r} (expected {expected(LEVELS, quote=False)})")
    values = [v for r in data for v in r if not _is_missing(v)]
    if level in ("interval", "ratio"):
        bad = [v for v in values if isinstance(v, bool) or not isinstance(v, numbers.Real)]
        if bad:
            raise InputError(f"rating {bad[0]!r} is not a number (the {level} level needs numbers)")
    cats = _categories(values, categories)
    idx = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    o = np.zeros((k, k), dtype=np.float64)
    for j in range(n_items):
        unit = [idx[r[j]] for r in data if not _is_missing(r[j])]
        m = len(unit)
        if m < 2:
            continue
        counts = np.bincount(unit, minlength=k).astype(np.float64)
        pairs = np.outer(counts, counts) - np.diag(counts)
        o += pairs / (m - 1)
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    if n == 0:
        return None
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        delta = (cum[hi + 1] - cum[lo] - (n_c[i] + n_c[j]) / 2.0) ** 2
    else:
        v = np.array([float(c) for c in cats])
        diff = v[:, None] - v[None, :]
        if level == "interval":
            delta = diff**2
        else:
            s = v[:, None] + v[None, :]
            delta = np.zeros_like(diff)
            np.divide(diff, s, out=delta, where=s != 0)
            delta = delta**2
    d_e = float((np.outer(n_c, n_c) * delta).sum())
    if d_e == 0:
        return None
    return 1.0 - (n - 1) * float((o * delta).sum()) / d_e
