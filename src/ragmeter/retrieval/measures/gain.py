"""Gain measures: ndcg, ndcg_cut (nDCG@k), ndcg_rel, Rndcg, G, binG, dcg, ideal_dcg, and the
exponential-gain extension nDCG(gain=exp)[@k].

Gain measures ignore the relevance level (trec_eval#35): the gain of a judged document is its
grade, or the configured gain of that grade; unpooled and pooled-unjudged documents have gain 0.
The ideal list I holds the positive gains of **all** judged documents of the query, in
descending order (Järvelin and Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
TOIS 2002; the 2^g − 1 gain is Burges et al., ICML 2005).

DCG(k) = Σ_{i ≤ min(k, n)} gain(dᵢ)/log₂(i+1) and IDCG(k) = Σ_{j ≤ min(k, |I|)} Iⱼ/log₂(j+1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import (
    Context,
    log2_table,
    seg_count_le,
    seg_cumsum,
    seg_position,
    seg_totals,
)
from ragmeter.retrieval.measures.family import (
    CUTS,
    GAINS,
    JARVELIN_KEKALAINEN_2002,
    JUDGED,
    REL,
    TREC_EVAL_DOC,
    Family,
    K,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs

GainFn = Callable[[np.ndarray], np.ndarray]


def gain_function(m: MeasureArgs) -> tuple[tuple[object, ...], GainFn]:
    """(cache key, grades → gains) for a measure."""
    if m.family in ("ndcg_exp", "ndcg_cut_exp"):

        def exp_gain(g: np.ndarray) -> np.ndarray:
            return np.where(g > 0, np.exp2(np.maximum(g, 0).astype(np.float64)) - 1.0, 0.0)

        return ("exp",), exp_gain
    custom = dict(m.gains or ())

    def linear(g: np.ndarray) -> np.ndarray:
        out = np.where(g > 0, g.astype(np.float64), 0.0)
        for level, gain in custom.items():
            out = np.where(g == level, gain, out)
        return out

    return ("linear", tuple(sorted(custom.items()))), linear


class GainView:
    """DCG and IDCG prefix sums of one ranking under one gain function."""

    def __init__(self, ctx: Context, fn: GainFn) -> None:
        r = ctx.r
        self.E = ctx.E
        gains = fn(r.grade)
        nz = gains != 0
        self.gain = gains[nz]
        self.q = r.q[nz]
        self.rank = r.rank[nz]
        self.starts = np.searchsorted(self.q, np.arange(self.E + 1)).astype(np.int64)
        disc = log2_table(self.rank + 1)
        self.cum = seg_cumsum(self.gain / disc, self.starts)
        # the ideal list: positive gains of all judged documents, descending
        qg = fn(r.qrel_grades)
        qq = ctx.qrel_q
        pos = qg > 0
        qg, qq = qg[pos], qq[pos]
        order = np.lexsort((-qg, qq))
        self.ideal = qg[order]
        self.iq = qq[order]
        self.istarts = np.searchsorted(self.iq, np.arange(self.E + 1)).astype(np.int64)
        self.isize = np.diff(self.istarts)
        ipos = seg_position(self.istarts) + 1
        self.icum = seg_cumsum(self.ideal / log2_table(ipos + 1), self.istarts)

    def dcg(self, k: np.ndarray, qs: np.ndarray | None = None) -> np.ndarray:
        """DCG over ranks ≤ k (per query, or per (qs, k) pair)."""
        k = np.asarray(k, dtype=np.int64)
        if qs is None:
            k = np.broadcast_to(k, (self.E,))
            count = seg_count_le(self.rank, self.q, self.starts, k)
            base = self.starts[:-1]
        else:
            count = seg_count_le(self.rank, self.q, self.starts, k, target_seg=qs)
            base = self.starts[qs]
        out = np.zeros(count.size, dtype=np.float64)
        ok = count > 0
        out[ok] = self.cum[base[ok] + count[ok] - 1]
        return out

    def dcg_n(self, ctx: Context) -> np.ndarray:
        return self.dcg(ctx.n)

    def idcg(self, k: np.ndarray, qs: np.ndarray | None = None) -> np.ndarray:
        """IDCG over ideal positions ≤ min(k, |I|)."""
        k = np.asarray(k, dtype=np.int64)
        if qs is None:
            qs = np.arange(self.E)
            k = np.broadcast_to(k, (self.E,))
        idx = np.minimum(k, self.isize[qs])
        out = np.zeros(idx.size, dtype=np.float64)
        ok = idx > 0
        out[ok] = self.icum[self.istarts[qs][ok] + idx[ok] - 1]
        return out

    def idcg_all(self) -> np.ndarray:
        return self.idcg(self.isize)


def view(ctx: Context, m: MeasureArgs) -> GainView:
    key, fn = gain_function(m)
    cache = ctx.__dict__.setdefault("_gain_views", {})
    if key not in cache:
        cache[key] = GainView(ctx, fn)
    return cache[key]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.size, dtype=np.float64)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def ndcg_cut(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """nDCG@k = DCG(k)/IDCG(k)."""
    v = view(ctx, m)
    k = int(m.cutoff)  # type: ignore[arg-type]
    return _ratio(v.dcg(k), v.idcg(k))


def ndcg(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """nDCG = DCG(n)/IDCG(|I|): the ideal is not cut at n (trec_eval#11)."""
    v = view(ctx, m)
    return _ratio(v.dcg_n(ctx), v.idcg_all())


def dcg(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """DCG(n)."""
    return view(ctx, m).dcg_n(ctx)


def ideal_dcg(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """IDCG(|I|)."""
    return view(ctx, m).idcg_all()


def ndcg_rel(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """ndcg_rel: Σ over positive-gain retrieved documents of DCG(i)/IDCG(i), plus
    (|I| − their number)·DCG(n)/IDCG(|I|) for the ideal documents not retrieved, over |I|."""
    v = view(ctx, m)
    pos = v.gain > 0
    terms = v.cum[pos] / v.idcg(v.rank[pos], qs=v.q[pos])
    pstarts = np.searchsorted(v.q[pos], np.arange(ctx.E + 1))
    total = seg_totals(terms, pstarts)
    npos = np.diff(pstarts)
    ideal_all = v.idcg_all()
    ok = v.isize > 0
    total[ok] = (
        total[ok] + (v.isize[ok] - npos[ok]).astype(np.float64) * v.dcg_n(ctx)[ok] / ideal_all[ok]
    )
    out = np.zeros(ctx.E, dtype=np.float64)
    good = ok & (total > 0)
    out[good] = total[good] / v.isize[good].astype(np.float64)
    return out


def rndcg(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Mean of DCG(min(b, n))/IDCG(b) over the depths b where the ideal gain changes (and n)."""
    v = view(ctx, m)
    # boundaries inside the ideal list: the last position of each run of equal gains
    last = np.ones(v.ideal.size, dtype=bool)
    last[:-1] = (v.ideal[1:] != v.ideal[:-1]) | (v.iq[1:] != v.iq[:-1])
    bq = v.iq[last]
    b = (seg_position(v.istarts) + 1)[last]
    # and n, when the ranking goes on past the ideal list by two or more (trec_eval's loop)
    extra = np.flatnonzero(ctx.n > v.isize + 1)
    bq = np.concatenate((bq, extra))
    b_ideal = np.concatenate((b, v.isize[extra]))
    b_docs = np.concatenate((b, ctx.n[extra]))
    order = np.lexsort((b_docs, bq))
    bq, b_ideal, b_docs = bq[order], b_ideal[order], b_docs[order]
    num = v.dcg(np.minimum(b_docs, ctx.n[bq]), qs=bq)
    den = v.idcg(b_ideal, qs=bq)
    good = den > 0
    bq, num, den = bq[good], num[good], den[good]
    starts = np.searchsorted(bq, np.arange(ctx.E + 1))
    total = seg_totals(num / den, starts)
    count = np.diff(starts)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = (count > 0) & (ctx.R > 0)
    out[ok] = total[ok] / count[ok].astype(np.float64)
    return out


def g_measure(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """G: Σ gain(dᵢ)/log₂(2 + S_cost(i) − S_res(i)) over ΣI, with S_cost the running sum of
    max(Iⱼ, 1) and S_res the running sum of gains."""
    v = view(ctx, m)
    s_res = seg_cumsum(v.gain, v.starts)
    cost = np.maximum(v.ideal, 1.0)
    ccum = seg_cumsum(cost, v.istarts)
    size = v.isize[v.q]
    within = np.minimum(v.rank, size)
    s_cost = np.zeros(v.rank.size, dtype=np.float64)
    ok = within > 0
    s_cost[ok] = ccum[v.istarts[v.q][ok] + within[ok] - 1]
    s_cost = s_cost + np.maximum(v.rank - size, 0).astype(np.float64)
    terms = v.gain / log2_table((2.0 + s_cost) - s_res)
    total = seg_totals(terms, v.starts)
    ideal_sum = seg_totals(v.ideal, v.istarts)
    return _ratio(total, ideal_sum)


def bin_g(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """binG = (1/R)·Σⱼ 1/log₂(2 + iⱼ − j) over the relevant retrieved documents."""
    terms = 1.0 / log2_table(2 + ctx.rel_rank - ctx.rel_j)
    total = seg_totals(terms, ctx.rel_starts)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = ctx.hits_n > 0
    out[ok] = total[ok] / ctx.R[ok].astype(np.float64)
    return out


# declarations (docs/retrieval.md#measures)
_BURGES = (
    'Burges et al., "Learning to Rank using Gradient Descent", ICML 2005 (gain 2^g − 1); '
    + JARVELIN_KEKALAINEN_2002
)
_EXPERIMENTAL = f"{TREC_EVAL_DOC} (experimental measure, 2008); nDCG: {JARVELIN_KEKALAINEN_2002}"

G = Family(
    "G",
    "pairs",
    "G (gain with cost of non-relevant documents)",
    formula=(
        "Σᵢ g(dᵢ)/log₂(2 + S_cost(i) − S_res(i)) / ΣI, S_cost the running Σ max(Iⱼ, 1), "
        "S_res the running Σ of gains"
    ),
    citation=f"{TREC_EVAL_DOC} (G, experimental measure, 2008)",
    registry_name="G",
    params=(GAINS,),
    kernel=g_measure,
    binary=False,
    gain="linear",
)

BIN_G = Family(
    "binG",
    "scalar",
    "binary G",
    formula="(1/R)·Σⱼ 1/log₂(2 + iⱼ − j)",
    citation=f"{TREC_EVAL_DOC} (binG, experimental measure, 2008)",
    registry_name="binG",
    params=(REL, JUDGED),
    kernel=bin_g,
)

DCG = Family(
    "dcg",
    "pairs",
    "discounted cumulative gain",
    formula="DCG(n) = Σ_{i ≤ n} g(dᵢ)/log₂(i+1)",
    citation=JARVELIN_KEKALAINEN_2002,
    registry_name="dcg",
    params=(GAINS,),
    range=(None, None),
    kernel=dcg,
    binary=False,
    gain="linear",
)

IDEAL_DCG = Family(
    "ideal_dcg",
    "pairs",
    "ideal discounted cumulative gain",
    formula="IDCG(|I|) = Σ_{j ≤ |I|} Iⱼ/log₂(j+1), I the judged gains in descending order",
    citation=JARVELIN_KEKALAINEN_2002,
    registry_name="ideal_dcg",
    params=(GAINS,),
    range=(None, None),
    kernel=ideal_dcg,
    binary=False,
    gain="linear",
)

NDCG = Family(
    "ndcg",
    "pairs",
    "normalised DCG over the whole ranking",
    formula="DCG(n)/IDCG(|I|)",
    citation=JARVELIN_KEKALAINEN_2002,
    registry_name="nDCG",
    aliases=("ndcg", "NDCG"),
    params=(GAINS,),
    ir="nDCG",
    ir_spellings=("nDCG", "NDCG"),
    ir_args=frozenset({"gain", "gains", "dcg", "judged_only"}),
    kernel=ndcg,
    binary=False,
    gain="linear",
)

NDCG_REL = Family(
    "ndcg_rel",
    "pairs",
    "nDCG averaged over relevant documents",
    formula=(
        "(Σ over positive-gain retrieved dᵢ of DCG(i)/IDCG(i) + (|I| − their number)·"
        "DCG(n)/IDCG(|I|))/|I|"
    ),
    citation=_EXPERIMENTAL,
    registry_name="ndcg_rel",
    params=(GAINS,),
    kernel=ndcg_rel,
    binary=False,
    gain="linear",
)

RNDCG = Family(
    "Rndcg",
    "pairs",
    "nDCG averaged over gain-change boundaries",
    formula="mean of DCG(min(b, n))/IDCG(b) over the depths b where the ideal gain changes",
    citation=_EXPERIMENTAL,
    registry_name="Rndcg",
    params=(GAINS,),
    kernel=rndcg,
    binary=False,
    gain="linear",
)

NDCG_CUT = Family(
    "ndcg_cut",
    "cut",
    "normalised DCG at k",
    formula="DCG(k)/IDCG(k)",
    citation=JARVELIN_KEKALAINEN_2002,
    registry_name="nDCG@k",
    params=(K, GAINS),
    defaults=CUTS,
    ir="nDCG",
    default=True,
    kernel=ndcg_cut,
    binary=False,
    gain="linear",
)

NDCG_EXP = Family(
    "ndcg_exp",
    "pairs",
    "nDCG with exponential gain 2^g − 1",
    formula="DCG(n)/IDCG(|I|) with gains 2^g − 1",
    citation=_BURGES,
    registry_name="nDCG(gain=exp)",
    params=(GAINS,),
    ir="nDCG",
    ir_params=(("gain", "exp"),),
    kernel=ndcg,
    binary=False,
    gain="exp",
    extension=True,
    reference="ranx 0.3.21 ndcg_burges",
)

NDCG_CUT_EXP = Family(
    "ndcg_cut_exp",
    "cut",
    "nDCG at k with exponential gain 2^g − 1",
    formula="DCG(k)/IDCG(k) with gains 2^g − 1",
    citation=_BURGES,
    registry_name="nDCG(gain=exp)@k",
    params=(K, GAINS),
    defaults=CUTS,
    ir="nDCG",
    ir_params=(("gain", "exp"),),
    kernel=ndcg_cut,
    binary=False,
    gain="exp",
    extension=True,
    reference="ranx 0.3.21 ndcg_burges",
)

FAMILIES = (G, BIN_G, DCG, IDEAL_DCG, NDCG, NDCG_REL, RNDCG, NDCG_CUT, NDCG_EXP, NDCG_CUT_EXP)
