"""Interpolated precision: iprec_at_recall (IPrec@r) and 11pt_avg (trec_eval 10.0 rounding).

The recall point p becomes a number of relevant documents c = round(p·R), rounded half away
from zero on the double product (trec_eval 10.0 uses ``lround``; 9.0.8 and pytrec_eval used
⌊p·R + 0.9⌋). The value is the best precision at or below that recall:
max over ranks i ≥ i_c of P@i, which is max over j ≥ c of j/iⱼ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.metric_param import Param
from ragmeter.retrieval.measures.base import Context, seg_suffix_max
from ragmeter.retrieval.measures.family import (
    JUDGED,
    POINTS,
    RECALL_POINT,
    REL,
    SALTON_MCGILL_1983,
    TREC_APPENDIX,
    Family,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def round_half_away(x: np.ndarray) -> np.ndarray:
    """lround: half away from zero (Python's round() and numpy.round round half to even).

    >>> round_half_away(np.array([0.5, 1.5, 2.5, 0.49999999999999994])).tolist()
    [1, 2, 3, 0]
    """
    fl = np.floor(x)
    return (fl + (x - fl >= 0.5)).astype(np.int64)


def _suffix_max(ctx: Context) -> np.ndarray:
    key = "_iprec_suffix"
    if key not in ctx.__dict__:
        prec = ctx.rel_j.astype(np.float64) / ctx.rel_rank.astype(np.float64)
        ctx.__dict__[key] = seg_suffix_max(prec, ctx.rel_starts)
    return ctx.__dict__[key]


def interpolated_precision(ctx: Context, point: float) -> np.ndarray:
    c = round_half_away(point * ctx.R.astype(np.float64))
    h = ctx.hits_n
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = (c <= h) & (h > 0) & (ctx.n > 0)
    j = np.maximum(c, 1)
    out[ok] = _suffix_max(ctx)[ctx.rel_starts[:-1][ok] + j[ok] - 1]
    return out


def iprec_at_recall(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """IPrec@p: interpolated precision at recall p (0 if fewer than round(p·R) are found)."""
    return interpolated_precision(ctx, float(m.cutoff))  # type: ignore[arg-type]


def eleven_point_average(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Mean of IPrec over the points, summed from the highest point down as trec_eval does."""
    points = list(m.param("points"))
    total = np.zeros(ctx.E, dtype=np.float64)
    for p in reversed(points):
        total = total + interpolated_precision(ctx, p)
    return total / float(len(points))


_CITE = f"{SALTON_MCGILL_1983}; {TREC_APPENDIX}"

IPREC_AT_RECALL = Family(
    "iprec_at_recall",
    "point",
    "interpolated precision at recall levels",
    formula="max_{j ≥ max(c, 1)} j/iⱼ with c = round(r·R); 0 if c > hits(n)",
    citation=_CITE,
    registry_name="IPrec@r",
    params=(RECALL_POINT, REL, JUDGED),
    defaults=POINTS,
    ir="IPrec",
    ir_spellings=("IPrec",),
    ir_args=frozenset({"rel", "judged_only"}),
    kernel=iprec_at_recall,
)

ELEVEN_PT_AVG = Family(
    "11pt_avg",
    "reals",
    "mean interpolated precision over recall points",
    formula="mean over the recall points r of IPrec@r (default r = 0.0, 0.1, …, 1.0)",
    citation=_CITE,
    registry_name="11pt_avg",
    params=(REL, Param("points", "tuple[float, ...]", None, "recall points")),
    defaults=POINTS,
    bare_params=(("points", POINTS),),
    kernel=eleven_point_average,
)

FAMILIES = (IPREC_AT_RECALL, ELEVEN_PT_AVG)
