"""Rank-biased precision (Moffat and Zobel, "Rank-biased precision for measurement of retrieval
effectiveness", TOIS 2008): rbp and rbp_resid.

rbp = (1 − p)·Σ_{i ≤ n} ĝ(dᵢ)·p^(i−1). ĝ is the gain rescaled to [0, 1] as (g − gmin)/(gmax −
gmin) over the query's gain levels, only when some level lies outside [0, 1]; with binary qrels
this is plain RBP. (trec_eval 10.0 means the same but reads gmin and gmax uninitialised.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context, seg_totals
from ragmeter.retrieval.measures.family import (
    GAINS,
    MOFFAT_ZOBEL_2008,
    PERSISTENCE,
    TREC_EVAL_DOC,
    Family,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def powers(p: float, count: int) -> np.ndarray:
    """p^0, p^1, … by repeated multiplication, as trec_eval's running product."""
    out = np.empty(max(count, 1), dtype=np.float64)
    out[0] = 1.0
    if count > 1:
        out[1:] = np.cumprod(np.full(count - 1, p))
    return out


def _levels(ctx: Context) -> np.ndarray:
    """Number of gain levels per query: highest judged grade ≥ 0, plus one (0 if none)."""
    g = ctx.r.qrel_grades
    top = np.full(ctx.E, -1, dtype=np.int64)
    sel = g >= 0
    np.maximum.at(top, ctx.qrel_q[sel], g[sel])
    return top + 1


def rbp(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """RBP with persistence p (0.9 for rbp, 0.8 for RBP)."""
    p = float(m.param("p", 0.9))
    custom = dict(m.gains or ())
    levels = _levels(ctx)
    # gain levels of each query: every custom level, plus 0..levels-1 not overridden
    cust_gains = np.array(list(custom.values()), dtype=np.float64)
    lo = np.full(ctx.E, np.inf)
    hi = np.full(ctx.E, -np.inf)
    if cust_gains.size:
        lo[:] = cust_gains.min()
        hi[:] = cust_gains.max()
    # default levels: smallest and largest level below `levels` that is not overridden
    smallest = np.zeros(ctx.E, dtype=np.int64)
    largest = levels - 1
    for _ in range(len(custom) + 1):
        smallest = np.where(np.isin(smallest, list(custom)), smallest + 1, smallest)
        largest = np.where(np.isin(largest, list(custom)), largest - 1, largest)
    has_default = (smallest < levels) & (largest >= 0)
    lo = np.where(has_default, np.minimum(lo, smallest), lo)
    hi = np.where(has_default, np.maximum(hi, largest), hi)
    rescale = (lo < 0) | (hi > 1)
    g = ctx.r.grade
    base = np.where(g >= 0, g.astype(np.float64), 0.0)
    for level, gain in custom.items():
        base = np.where(g == level, gain, base)
    rq = rescale[ctx.r.q]
    span = (hi - lo)[ctx.r.q]
    gains = base.copy()
    judged = g >= 0
    sel = rq & judged
    gains[sel] = (base[sel] - lo[ctx.r.q][sel]) / span[sel]
    nz = gains != 0
    pw = powers(p, int(ctx.n.max()) if ctx.E else 1)
    terms = gains[nz] * pw[ctx.r.rank[nz] - 1]
    starts = np.searchsorted(ctx.r.q[nz], np.arange(ctx.E + 1))
    return (1.0 - p) * seg_totals(terms, starts)


def rbp_resid(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """The RBP residual: p^n + (1 − p)·Σ p^(i−1) over the unjudged documents in the ranking.

    trec_eval's rule (kept): 0 when the ranking holds no unjudged document. With ``tail=true``
    the published residual, which always counts the unseen tail p^n.
    """
    p = float(m.param("p", 0.9))
    n = ctx.n
    pw = powers(p, int(n.max()) + 1 if ctx.E else 1)
    # Σ over all ranks minus Σ over judged ranks (grade ≥ 0): query-local, within an ulp of
    # trec_eval's running sum over the unjudged ranks
    prefix = np.concatenate(([0.0], np.cumsum(pw)))
    judged = ctx.r.grade >= 0
    jterms = pw[ctx.r.rank[judged] - 1]
    jstarts = np.searchsorted(ctx.r.q[judged], np.arange(ctx.E + 1))
    judged_sum = seg_totals(jterms, jstarts)
    unj_count = n - np.diff(jstarts)
    unj_sum = prefix[n] - judged_sum
    out = pw[n] + (1.0 - p) * unj_sum
    if not m.param("tail"):
        out = np.where(unj_count > 0, out, 0.0)
    out[ctx.missing] = 0.0
    return out


RBP = Family(
    "rbp",
    "pairs",
    "rank-biased precision",
    formula="(1 − p)·Σᵢ ĝ(dᵢ)·p^(i−1), ĝ the gain rescaled to [0, 1] when a gain lies outside",
    citation=MOFFAT_ZOBEL_2008,
    registry_name="RBP(p)",
    params=(GAINS, PERSISTENCE),
    bare_params=(("p", 0.9),),
    ir_bare_params=(("p", 0.8),),
    ir="RBP",
    ir_spellings=("RBP",),
    ir_args=frozenset({"p", "gains", "judged_only"}),
    binary=False,
    gain="linear",
    kernel=rbp,
)

RBP_RESID = Family(
    "rbp_resid",
    "pairs",
    "rank-biased precision residual (unjudged mass)",
    formula="p^n + (1 − p)·Σ over unjudged retrieved dᵢ of p^(i−1) (0 if none is unjudged)",
    citation=f"{MOFFAT_ZOBEL_2008}; {TREC_EVAL_DOC}",
    registry_name="RBP_resid(p)",
    params=(PERSISTENCE,),
    bare_params=(("p", 0.9),),
    ir_bare_params=(("p", 0.8),),
    ir_spellings=("RBP_resid",),
    ir_args=frozenset({"p", "tail"}),
    binary=False,
    direction="none",
    kernel=rbp_resid,
)

FAMILIES = (RBP, RBP_RESID)
