"""Reciprocal rank: recip_rank (RR) and the ragmeter extension RR@k (MS MARCO's MRR@10)."""

from __future__ import annotations

import numpy as np

from ragmeter.retrieval.measures.base import Context, measure
from ragmeter.retrieval.names import Measure


def _first_rank(ctx: Context) -> np.ndarray:
    """Rank of the first relevant retrieved document per query (0 if none)."""
    first = np.zeros(ctx.E, dtype=np.int64)
    has = ctx.hits_n > 0
    first[has] = ctx.rel_rank[ctx.rel_starts[:-1][has]]
    return first


@measure("recip_rank")
def reciprocal_rank(ctx: Context, m: Measure) -> np.ndarray:
    """RR = 1/i₁, or 0 if no relevant document was retrieved."""
    first = _first_rank(ctx)
    out = np.zeros(ctx.E, dtype=np.float64)
    has = first > 0
    out[has] = 1.0 / first[has].astype(np.float64)
    return out


@measure("recip_rank_cut")
def reciprocal_rank_cut(ctx: Context, m: Measure) -> np.ndarray:
    """RR@k = 1/i₁ if i₁ ≤ k, else 0."""
    first = _first_rank(ctx)
    out = np.zeros(ctx.E, dtype=np.float64)
    has = (first > 0) & (first <= int(m.cutoff))  # type: ignore[arg-type]
    out[has] = 1.0 / first[has].astype(np.float64)
    return out
