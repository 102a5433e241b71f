"""Counts: num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret (num_q is the engine's)."""

from __future__ import annotations

import numpy as np

from ragmeter.retrieval.measures.base import Context, measure
from ragmeter.retrieval.names import Measure


@measure("num_ret")
def num_ret(ctx: Context, m: Measure) -> np.ndarray:
    """n: documents retrieved (after -M and -J)."""
    return ctx.n.copy()


@measure("num_rel")
def num_rel(ctx: Context, m: Measure) -> np.ndarray:
    """R: qrels lines with grade ≥ level, retrieved or not."""
    return ctx.R.copy()


@measure("num_rel_ret")
def num_rel_ret(ctx: Context, m: Measure) -> np.ndarray:
    """hits(n): relevant documents retrieved."""
    return ctx.hits_n.copy()


@measure("num_nonrel_judged_ret")
def num_nonrel_judged_ret(ctx: Context, m: Measure) -> np.ndarray:
    """Retrieved documents judged non-relevant (0 ≤ grade < level)."""
    return np.bincount(ctx.r.q[ctx.is_nonrel], minlength=ctx.E).astype(np.int64)
