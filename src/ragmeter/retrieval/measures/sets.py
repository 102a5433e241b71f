"""Measures of the retrieved set: set_P, set_recall, set_relative_P, set_map, set_F, utility."""

from __future__ import annotations

import numpy as np

from ragmeter.retrieval.measures.base import Context, measure, safe_div
from ragmeter.retrieval.names import Measure


@measure("set_P")
def set_precision(ctx: Context, m: Measure) -> np.ndarray:
    """set_P = hits(n)/n."""
    return safe_div(ctx.hits_n, ctx.n)


@measure("set_recall")
def set_recall(ctx: Context, m: Measure) -> np.ndarray:
    """set_recall = hits(n)/R."""
    return safe_div(ctx.hits_n, ctx.R)


@measure("set_relative_P")
def set_relative_precision(ctx: Context, m: Measure) -> np.ndarray:
    """set_relative_P = hits(n)/min(n, R)."""
    return safe_div(ctx.hits_n, np.minimum(ctx.n, ctx.R))


@measure("set_map")
def set_map(ctx: Context, m: Measure) -> np.ndarray:
    """set_map = hits(n)²/(n·R)."""
    h = ctx.hits_n.astype(np.float64)
    return safe_div(h * h, ctx.n.astype(np.float64) * ctx.R.astype(np.float64))


@measure("set_F")
def set_f(ctx: Context, m: Measure) -> np.ndarray:
    """set_F = (β+1)·P·Rc/(β·P + Rc), β used as given (not squared); 0 if hits(n) = 0."""
    beta = float(m.param("beta", 1.0))
    h = ctx.hits_n
    ok = h > 0
    out = np.zeros(ctx.E, dtype=np.float64)
    p = h[ok].astype(np.float64) / ctx.n[ok].astype(np.float64)
    r = h[ok].astype(np.float64) / ctx.R[ok].astype(np.float64)
    out[ok] = (beta + 1.0) * p * r / (beta * p + r)
    return out


@measure("utility")
def utility(ctx: Context, m: Measure) -> np.ndarray:
    """p1·a + p2·b + p3·c + p4·d: a = hits(n), b = n − a, c = R − a, d = Ncoll + a − n − R.

    A judged query missing from the run scores 0 under ``-c`` (trec_eval's rule).
    """
    p1, p2, p3, p4 = m.param("coeffs", (1.0, -1.0, 0.0, 0.0))
    a = ctx.hits_n
    n = ctx.n
    r = ctx.R
    out = (
        p1 * a.astype(np.float64)
        + p2 * (n - a).astype(np.float64)
        + p3 * (r - a).astype(np.float64)
        + p4 * (ctx.num_docs_in_coll + a - n - r).astype(np.float64)
    )
    out[ctx.missing] = 0.0
    return out
