"""Measures of the retrieved set: set_P, set_recall, set_relative_P, set_map, set_F, utility."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.metric_param import Param
from ragmeter.retrieval.measures.base import Context, safe_div
from ragmeter.retrieval.measures.family import (
    JUDGED,
    REL,
    TREC_APPENDIX,
    TREC_EVAL_DOC,
    VAN_RIJSBERGEN,
    Family,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def set_precision(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """set_P = hits(n)/n."""
    return safe_div(ctx.hits_n, ctx.n)


def set_recall(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """set_recall = hits(n)/R."""
    return safe_div(ctx.hits_n, ctx.R)


def set_relative_precision(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """set_relative_P = hits(n)/min(n, R)."""
    return safe_div(ctx.hits_n, np.minimum(ctx.n, ctx.R))


def set_map(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """set_map = hits(n)²/(n·R)."""
    h = ctx.hits_n.astype(np.float64)
    return safe_div(h * h, ctx.n.astype(np.float64) * ctx.R.astype(np.float64))


def set_f(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """set_F = (β+1)·P·Rc/(β·P + Rc), β used as given (not squared); 0 if hits(n) = 0."""
    beta = float(m.param("beta", 1.0))
    h = ctx.hits_n
    ok = h > 0
    out = np.zeros(ctx.E, dtype=np.float64)
    p = h[ok].astype(np.float64) / ctx.n[ok].astype(np.float64)
    r = h[ok].astype(np.float64) / ctx.R[ok].astype(np.float64)
    out[ok] = (beta + 1.0) * p * r / (beta * p + r)
    return out


def utility(ctx: Context, m: MeasureArgs) -> np.ndarray:
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


_SET = {"rel", "judged_only"}

SET_P = Family(
    "set_P",
    "scalar",
    "precision of the retrieved set",
    formula="hits(n)/n",
    citation=f"{VAN_RIJSBERGEN}; {TREC_APPENDIX}",
    registry_name="SetP",
    aliases=("set_P",),
    params=(REL, JUDGED),
    ir="SetP",
    ir_spellings=("SetP",),
    ir_args=frozenset({*_SET, "relative"}),
    kernel=set_precision,
)

SET_RELATIVE_P = Family(
    "set_relative_P",
    "scalar",
    "set precision relative to min(n, R)",
    formula="hits(n)/min(n, R)",
    citation=TREC_EVAL_DOC,
    registry_name="SetP(relative=true)",
    aliases=("set_relative_P", "SetRelP"),
    params=(REL, JUDGED),
    ir="SetP",
    ir_params=(("relative", True),),
    ir_spellings=("SetRelP",),
    ir_args=frozenset(_SET),
    kernel=set_relative_precision,
)

SET_RECALL = Family(
    "set_recall",
    "scalar",
    "recall of the retrieved set",
    formula="hits(n)/R",
    citation=f"{VAN_RIJSBERGEN}; {TREC_APPENDIX}",
    registry_name="SetR",
    aliases=("set_recall",),
    params=(REL, JUDGED),
    ir="SetR",
    ir_spellings=("SetR",),
    ir_args=frozenset(_SET),
    kernel=set_recall,
)

SET_MAP = Family(
    "set_map",
    "scalar",
    "set precision × set recall",
    formula="hits(n)²/(n·R)",
    citation=TREC_EVAL_DOC,
    registry_name="SetAP",
    aliases=("set_map",),
    params=(REL, JUDGED),
    ir="SetAP",
    ir_spellings=("SetAP",),
    ir_args=frozenset(_SET),
    kernel=set_map,
)

SET_F = Family(
    "set_F",
    "reals",
    "F-measure of the retrieved set",
    formula="(β+1)·P·Rc/(β·P + Rc), P = set_P, Rc = set_recall (β as given, not squared)",
    citation=f"{VAN_RIJSBERGEN} (a variant of the E measure)",
    registry_name="SetF",
    aliases=("set_F",),
    params=(REL, Param("beta", "float", 1.0)),
    defaults=(1.0,),
    bare_params=(("beta", 1.0),),
    ir="SetF",
    ir_spellings=("SetF",),
    ir_args=frozenset({*_SET, "beta"}),
    kernel=set_f,
)

UTILITY = Family(
    "utility",
    "reals",
    "linear utility p1·a + p2·b + p3·c + p4·d",
    formula="p1·a + p2·b + p3·c + p4·d: a = hits(n), b = n − a, c = R − a, d = Ncoll + a − n − R",
    citation=(
        'Lewis, "Evaluating and Optimizing Autonomous Text Classification Systems", SIGIR 1995; '
        'Hull and Robertson, "The TREC-8 Filtering Track Final Report", TREC-8 1999'
    ),
    registry_name="utility",
    params=(REL, Param("coeffs", "tuple[float, float, float, float]", (1, -1, 0, 0))),
    defaults=(1.0, -1.0, 0.0, 0.0),
    bare_params=(("coeffs", (1.0, -1.0, 0.0, 0.0)),),
    range=(None, None),
    kernel=utility,
)

FAMILIES = (SET_P, SET_RELATIVE_P, SET_RECALL, SET_MAP, SET_F, UTILITY)
