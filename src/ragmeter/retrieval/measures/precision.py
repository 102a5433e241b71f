"""Cutoff measures: P@k, recall@k, relative_P@k, success@k, Success(all=true)@k, Rprec,
Rprec_mult.

hits(k) is the number of relevant documents among ranks 1..min(k, n). P@k divides by k even
when fewer than k documents were retrieved (trec_eval's rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context, safe_div
from ragmeter.retrieval.measures.family import (
    BUCKLEY_VOORHEES_2005,
    CUTS,
    JUDGED,
    RAGMETER,
    RECALL_POINT,
    REL,
    TREC_EVAL_DOC,
    VAN_RIJSBERGEN,
    Family,
    K,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def precision(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """P@k = hits(k)/k."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    return ctx.hits(k).astype(np.float64) / float(k)


def recall(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """R@k = hits(k)/R (0 when R = 0)."""
    return safe_div(ctx.hits(int(m.cutoff)), ctx.R)  # type: ignore[arg-type]


def relative_precision(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """relative_P@k = hits(k)/min(k, R) (0 when R = 0)."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    return safe_div(ctx.hits(k), np.minimum(k, ctx.R))


def success(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Success@k = 1 if hits(k) > 0."""
    return (ctx.hits(int(m.cutoff)) > 0).astype(np.float64)  # type: ignore[arg-type]


def success_all(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Success(all=true)@k = 1 if every relevant document is in the top k (0 when R = 0)."""
    hits = ctx.hits(int(m.cutoff))  # type: ignore[arg-type]
    return ((ctx.R > 0) & (hits == ctx.R)).astype(np.float64)


def r_precision(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Rprec = hits(R)/R; ranks past n count as non-relevant."""
    look = np.minimum(ctx.n, ctx.R)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = look > 0
    out[ok] = ctx.hits(look)[ok].astype(np.float64) / ctx.R[ok].astype(np.float64)
    return out


def r_precision_mult(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Rprec_mult_m = P@c with c = ⌊m·R + 0.9⌋ (trec_eval 10.0 still adds 0.9), P@0 = 0."""
    mult = float(m.cutoff)  # type: ignore[arg-type]
    c = np.trunc(mult * ctx.R.astype(np.float64) + 0.9).astype(np.int64)
    return safe_div(ctx.hits(c), c)


# declarations (docs/retrieval.md#measures)
_TOMLINSON = f"{TREC_EVAL_DOC} (success: developed by Stephen Tomlinson)"

P = Family(
    "P",
    "cut",
    "precision at k",
    formula="hits(k)/k",
    citation=VAN_RIJSBERGEN,
    registry_name="P@k",
    params=(K, REL, JUDGED),
    defaults=CUTS,
    ir="P",
    ir_spellings=("P", "Precision"),
    ir_args=frozenset({"rel", "judged_only"}),
    default=True,
    kernel=precision,
)

RECALL = Family(
    "recall",
    "cut",
    "recall at k",
    formula="hits(k)/R",
    citation=VAN_RIJSBERGEN,
    registry_name="R@k",
    params=(K, REL, JUDGED),
    defaults=CUTS,
    ir="R",
    ir_spellings=("R", "Recall"),
    ir_args=frozenset({"rel", "judged_only"}),
    default=True,
    kernel=recall,
)

RELATIVE_P = Family(
    "relative_P",
    "cut",
    "precision at k relative to min(k, R)",
    formula="hits(k)/min(k, R)",
    citation=TREC_EVAL_DOC,
    registry_name="relative_P_k",
    params=(K, REL, JUDGED),
    defaults=CUTS,
    kernel=relative_precision,
)

SUCCESS = Family(
    "success",
    "cut",
    "1 if a relevant document is in the top k",
    formula="[hits(k) > 0]",
    citation=_TOMLINSON,
    registry_name="Success@k",
    params=(K, REL, JUDGED),
    defaults=(1, 5, 10),
    ir="Success",
    ir_spellings=("Success",),
    ir_args=frozenset({"rel", "judged_only", "all"}),
    kernel=success,
)

SUCCESS_ALL = Family(
    "success_all",
    "cut",
    "1 if every relevant document is in the top k",
    formula="[hits(k) = R > 0]",
    citation=f"{_TOMLINSON}; recall: {VAN_RIJSBERGEN}",
    registry_name="Success(all=true)@k",
    params=(K, REL, JUDGED),
    defaults=(1, 5, 10),
    ir="Success",
    ir_params=(("all", True),),
    extension=True,
    reference=RAGMETER,
    kernel=success_all,
)

RPREC = Family(
    "Rprec",
    "scalar",
    "precision after R documents",
    formula="hits(R)/R",
    citation=BUCKLEY_VOORHEES_2005,
    registry_name="Rprec",
    aliases=("RPrec",),
    params=(REL, JUDGED),
    ir="Rprec",
    ir_spellings=("Rprec", "RPrec"),
    ir_args=frozenset({"rel", "judged_only"}),
    kernel=r_precision,
)

RPREC_MULT = Family(
    "Rprec_mult",
    "point",
    "precision at m·R documents",
    formula="hits(c)/c with c = ⌊m·R + 0.9⌋ (0 when c = 0)",
    citation=f"{TREC_EVAL_DOC}; R-precision: {BUCKLEY_VOORHEES_2005}",
    registry_name="Rprec_mult_m",
    params=(RECALL_POINT, REL, JUDGED),
    defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    kernel=r_precision_mult,
)

FAMILIES = (P, RECALL, RELATIVE_P, SUCCESS, SUCCESS_ALL, RPREC, RPREC_MULT)
