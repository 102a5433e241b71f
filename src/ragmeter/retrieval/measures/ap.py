"""Average precision: map (AP), map_cut (AP@k), gm_map.

AP = (1/R)·Σⱼ j/iⱼ over the relevant retrieved documents at ranks i₁ < i₂ < …; relevant
documents that were not retrieved contribute 0 (Buckley and Voorhees, "Retrieval System
Evaluation", TREC: Experiment and Evaluation in IR, 2005).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context, seg_cumsum
from ragmeter.retrieval.measures.family import (
    BUCKLEY_VOORHEES_2005,
    CUTS,
    JUDGED,
    REL,
    ROBERTSON_2006,
    TREC_EVAL_DOC,
    Family,
    K,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def _terms(ctx: Context) -> np.ndarray:
    return ctx.rel_j.astype(np.float64) / ctx.rel_rank.astype(np.float64)


def _cum(ctx: Context) -> np.ndarray:
    key = "_ap_cum"
    if key not in ctx.__dict__:
        ctx.__dict__[key] = seg_cumsum(_terms(ctx), ctx.rel_starts)
    return ctx.__dict__[key]


def _prefix(ctx: Context, count: np.ndarray) -> np.ndarray:
    """Σ of the first ``count`` AP terms of each query, added left to right."""
    cum = _cum(ctx)
    out = np.zeros(ctx.E, dtype=np.float64)
    nz = count > 0
    out[nz] = cum[ctx.rel_starts[:-1][nz] + count[nz] - 1]
    return out


def average_precision(ctx: Context) -> np.ndarray:
    total = _prefix(ctx, ctx.hits_n)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = ctx.hits_n > 0
    out[ok] = total[ok] / ctx.R[ok].astype(np.float64)
    return out


def ap(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """AP = (1/R)·Σⱼ j/iⱼ."""
    return average_precision(ctx)


MAP = Family(
    "map",
    "scalar",
    "average precision",
    formula="(1/R)·Σⱼ j/iⱼ",
    citation=BUCKLEY_VOORHEES_2005,
    registry_name="AP",
    aliases=("map", "MAP"),
    params=(REL, JUDGED),
    ir="AP",
    ir_spellings=("AP", "MAP"),
    ir_args=frozenset({"rel", "judged_only"}),
    default=True,
    kernel=ap,
)


def ap_cut(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """AP@k: the AP sum over ranks ≤ k, still divided by R (not min(R, k))."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    total = _prefix(ctx, ctx.hits(k))
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = ctx.R > 0
    out[ok] = total[ok] / ctx.R[ok].astype(np.float64)
    return out


MAP_CUT = Family(
    "map_cut",
    "cut",
    "average precision restricted to the top k (divided by R)",
    formula="(1/R)·Σ_{iⱼ ≤ k} j/iⱼ",
    citation=f"{BUCKLEY_VOORHEES_2005}; {TREC_EVAL_DOC}",
    registry_name="AP@k",
    params=(K, REL, JUDGED),
    defaults=CUTS,
    ir="AP",
    kernel=ap_cut,
)


def gm_map(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Per query ln(max(AP, 1e-5)); the summary is exp of their mean.

    As trec_eval summarises it (docs/retrieval.md#semantics-trec_eval-100).
    """
    from ragmeter.retrieval.measures.base import log_floor

    return log_floor(average_precision(ctx))


GM_MAP = Family(
    "gm_map",
    "gm",
    "geometric mean of average precision (floor 1e-5)",
    formula="exp(mean ln max(AP, 1e-5))",
    citation=(
        'Voorhees, "Overview of the TREC 2004 Robust Retrieval Track", TREC 2004; ' + ROBERTSON_2006
    ),
    registry_name="gm_map",
    params=(REL,),
    level="corpus",
    kernel=gm_map,
)

FAMILIES = (MAP, GM_MAP, MAP_CUT)
