"""bpref and gm_bpref (Buckley and Voorhees, "Retrieval Evaluation with Incomplete
Information", SIGIR 2004).

bpref = (1/R)·Σ over the judged relevant retrieved documents of (1 − min(m, R)/min(N, R)),
with m the judged non-relevant documents ranked above; the term is 1 when m = 0. Unpooled and
pooled-but-unjudged documents are skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context, log_floor, seg_totals
from ragmeter.retrieval.measures.family import (
    BUCKLEY_VOORHEES_2004,
    JUDGED,
    REL,
    ROBERTSON_2006,
    Family,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def bpref_values(ctx: Context) -> np.ndarray:
    m_above = ctx.before(ctx.is_nonrel)[ctx.is_rel]
    r = ctx.per_rel_query(ctx.R)
    nn = ctx.per_rel_query(ctx.N)
    terms = np.ones(m_above.size, dtype=np.float64)
    some = m_above > 0
    terms[some] = 1.0 - (
        np.minimum(m_above[some], r[some]).astype(np.float64)
        / np.minimum(nn[some], r[some]).astype(np.float64)
    )
    total = seg_totals(terms, ctx.rel_starts)
    out = np.zeros(ctx.E, dtype=np.float64)
    ok = ctx.R > 0
    out[ok] = total[ok] / ctx.R[ok].astype(np.float64)
    return out


def bpref(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """bpref (0.5-style partial credit for judged non-relevant documents above)."""
    return bpref_values(ctx)


def gm_bpref(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Per query ln(max(bpref, 1e-5)); the summary is exp of their mean."""
    return log_floor(bpref_values(ctx))


BPREF = Family(
    "bpref",
    "scalar",
    "binary preference",
    formula="(1/R)·Σ (1 − min(m, R)/min(N, R))",
    citation=BUCKLEY_VOORHEES_2004,
    registry_name="Bpref",
    aliases=("bpref", "BPref"),
    params=(REL, JUDGED),
    ir="Bpref",
    ir_spellings=("Bpref", "BPref"),
    ir_args=frozenset({"rel"}),
    kernel=bpref,
)

GM_BPREF = Family(
    "gm_bpref",
    "gm",
    "geometric mean of bpref (floor 1e-5)",
    formula="exp(mean ln max(bpref, 1e-5))",
    citation=f"{BUCKLEY_VOORHEES_2004}; geometric mean: {ROBERTSON_2006}",
    registry_name="gm_bpref",
    params=(REL,),
    level="corpus",
    kernel=gm_bpref,
)

FAMILIES = (BPREF, GM_BPREF)
