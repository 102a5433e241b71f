"""Reciprocal rank: recip_rank (RR) and the ragmeter extension RR@k (MS MARCO's MRR@10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context
from ragmeter.retrieval.measures.family import (
    JUDGED,
    KANTOR_VOORHEES_2000,
    REL,
    Family,
    K,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def _first_rank(ctx: Context) -> np.ndarray:
    """Rank of the first relevant retrieved document per query (0 if none)."""
    first = np.zeros(ctx.E, dtype=np.int64)
    has = ctx.hits_n > 0
    first[has] = ctx.rel_rank[ctx.rel_starts[:-1][has]]
    return first


def reciprocal_rank(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """RR = 1/i₁, or 0 if no relevant document was retrieved."""
    first = _first_rank(ctx)
    out = np.zeros(ctx.E, dtype=np.float64)
    has = first > 0
    out[has] = 1.0 / first[has].astype(np.float64)
    return out


def reciprocal_rank_cut(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """RR@k = 1/i₁ if i₁ ≤ k, else 0."""
    first = _first_rank(ctx)
    out = np.zeros(ctx.E, dtype=np.float64)
    has = (first > 0) & (first <= int(m.cutoff))  # type: ignore[arg-type]
    out[has] = 1.0 / first[has].astype(np.float64)
    return out


RECIP_RANK = Family(
    "recip_rank",
    "scalar",
    "reciprocal rank of the first relevant document",
    formula="1/i₁ (0 if nothing relevant is retrieved)",
    citation=KANTOR_VOORHEES_2000,
    registry_name="RR",
    aliases=("recip_rank", "MRR", "mrr"),
    params=(REL, JUDGED),
    ir="RR",
    ir_spellings=("RR", "MRR"),
    ir_args=frozenset({"rel", "judged_only"}),
    default=True,
    kernel=reciprocal_rank,
)

RECIP_RANK_CUT = Family(
    "recip_rank_cut",
    "cut",
    "reciprocal rank within the top k (MRR@k)",
    formula="1/i₁ if i₁ ≤ k, else 0",
    citation=(
        f"{KANTOR_VOORHEES_2000}; the cut at 10 is MS MARCO's MRR@10 (Nguyen et al., "
        '"MS MARCO: A Human Generated MAchine Reading COmprehension Dataset", CoCo@NIPS 2016)'
    ),
    registry_name="RR@k",
    params=(K, REL, JUDGED),
    defaults=(10,),
    ir="RR",
    extension=True,
    reference="ir_measures 0.4.3",
    kernel=reciprocal_rank_cut,
)

FAMILIES = (RECIP_RANK, RECIP_RANK_CUT)
