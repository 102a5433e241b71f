"""Cutoff measures: P@k, recall@k, relative_P@k, success@k, Success(all=true)@k, Rprec,
Rprec_mult.

hits(k) is the number of relevant documents among ranks 1..min(k, n). P@k divides by k even
when fewer than k documents were retrieved (trec_eval's rule).
"""

from __future__ import annotations

import numpy as np

from ragmeter.retrieval.measures.base import Context, measure, safe_div
from ragmeter.retrieval.names import Measure


@measure("P")
def precision(ctx: Context, m: Measure) -> np.ndarray:
    """P@k = hits(k)/k."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    return ctx.hits(k).astype(np.float64) / float(k)


@measure("recall")
def recall(ctx: Context, m: Measure) -> np.ndarray:
    """R@k = hits(k)/R (0 when R = 0)."""
    return safe_div(ctx.hits(int(m.cutoff)), ctx.R)  # type: ignore[arg-type]


@measure("relative_P")
def relative_precision(ctx: Context, m: Measure) -> np.ndarray:
    """relative_P@k = hits(k)/min(k, R) (0 when R = 0)."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    return safe_div(ctx.hits(k), np.minimum(k, ctx.R))


@measure("success")
def success(ctx: Context, m: Measure) -> np.ndarray:
    """Success@k = 1 if hits(k) > 0."""
    return (ctx.hits(int(m.cutoff)) > 0).astype(np.float64)  # type: ignore[arg-type]


@measure("success_all")
def success_all(ctx: Context, m: Measure) -> np.ndarray:
    """Success(all=true)@k = 1 if every relevant document is in the top k (0 when R = 0)."""
    hits = ctx.hits(int(m.cutoff))  # type: ignore[arg-type]
    return ((ctx.R > 0) & (hits == ctx.R)).astype(np.float64)


@measure("Rprec")
def r_precision(ctx: Context, m: Measure) -> np.ndarray:
    """Rprec = hits(R)/R; ranks past n count as non-relevant."""
    look = np.minimum(ctx.n, ctx.R)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = look > 0
    out[ok] = ctx.hits(look)[ok].astype(np.float64) / ctx.R[ok].astype(np.float64)
    return out


@measure("Rprec_mult")
def r_precision_mult(ctx: Context, m: Measure) -> np.ndarray:
    """Rprec_mult_m = P@c with c = ⌊m·R + 0.9⌋ (trec_eval 10.0 still adds 0.9), P@0 = 0."""
    mult = float(m.cutoff)  # type: ignore[arg-type]
    c = np.trunc(mult * ctx.R.astype(np.float64) + 0.9).astype(np.int64)
    return safe_div(ctx.hits(c), c)
