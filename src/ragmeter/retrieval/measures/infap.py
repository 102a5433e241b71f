"""infAP: inferred average precision (Yilmaz and Aslam, CIKM 2006), as trec_eval computes it.

For each judged relevant retrieved document at rank i: 1 if i = 1, otherwise
1/i + ((i−1)/i)·((r + m + u)/(i−1))·((r + ε)/(r + m + 2ε)), with r the relevant, m the judged
non-relevant and u the pooled-unjudged documents ranked above, and ε = 1e-5. The sum is divided
by R. Unpooled documents above count only through i.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context, seg_totals
from ragmeter.retrieval.measures.family import (
    JUDGED,
    REL,
    Family,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs

EPSILON = 0.00001


def inf_ap(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """infAP with ε = 1e-5 (so full-precision values differ slightly from round numbers)."""
    rel = ctx.is_rel
    r_above = (ctx.rel_j - 1).astype(np.int64)
    m_above = ctx.before(ctx.is_nonrel)[rel]
    u_above = ctx.before(ctx.is_unj)[rel]
    fj = (ctx.rel_rank - 1).astype(np.float64)  # trec_eval's 0-based j
    terms = np.ones(fj.size, dtype=np.float64)
    k = fj > 0
    fjk = fj[k]
    rk = r_above[k]
    mk = m_above[k]
    terms[k] = 1.0 / (fjk + 1.0) + (fjk / (fjk + 1.0)) * (
        (rk + mk + u_above[k]).astype(np.float64) / fjk
    ) * ((rk.astype(np.float64) + EPSILON) / ((rk + mk).astype(np.float64) + 2 * EPSILON))
    total = seg_totals(terms, ctx.rel_starts)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = ctx.R > 0
    out[ok] = total[ok] / ctx.R[ok].astype(np.float64)
    return out


INFAP = Family(
    "infAP",
    "scalar",
    "inferred average precision",
    formula=(
        "(1/R)·Σ over judged relevant retrieved dᵢ of 1 (i = 1) or "
        "1/i + ((i−1)/i)·((r+m+u)/(i−1))·((r+ε)/(r+m+2ε)), ε = 1e-5"
    ),
    citation=(
        'Yilmaz and Aslam, "Estimating Average Precision with Incomplete and Imperfect '
        'Judgments", CIKM 2006'
    ),
    registry_name="infAP",
    params=(REL, JUDGED),
    ir="infAP",
    ir_spellings=("infAP",),
    ir_args=frozenset({"rel"}),
    kernel=inf_ap,
)

FAMILIES = (INFAP,)
