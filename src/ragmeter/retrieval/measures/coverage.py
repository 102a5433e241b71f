"""Judgment coverage: unj@k (trec_eval), Judged@k (ir_measures), relstring."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.metric_param import Param
from ragmeter.retrieval.measures.base import Context, safe_div
from ragmeter.retrieval.measures.family import (
    JUDGED,
    REL,
    TREC_EVAL_DOC,
    Family,
    K,
)

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs


def _count_le(ctx: Context, mask: np.ndarray, k: int) -> np.ndarray:
    sel = mask & (ctx.r.rank <= k)
    return np.bincount(ctx.r.q[sel], minlength=ctx.E).astype(np.int64)


def unjudged(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """unj@k = (unpooled or pooled-unjudged documents among the first min(k, n))/k."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    judged = _count_le(ctx, ctx.r.grade >= 0, k)
    return (np.minimum(k, ctx.n) - judged).astype(np.float64) / float(k)


def judged(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Judged@k = documents with any qrels line among the first min(k, n), over min(k, n)."""
    k = int(m.cutoff)  # type: ignore[arg-type]
    have = _count_le(ctx, np.ones(ctx.r.grade.size, dtype=bool), k)
    return safe_div(have, np.minimum(k, ctx.n))


def relstring(ctx: Context, m: MeasureArgs) -> list[str]:
    """One character per rank for the first min(L, n): grade 0-9, '>' above 9, '-' unpooled,
    '.' pooled but unjudged."""
    length = int(m.param("length", 10))
    width = int(min(length, int(ctx.n.max()) if ctx.E else 0))
    if width <= 0:
        return ["" for _ in range(ctx.E)]
    chars = np.full((ctx.E, width), ord("-"), dtype=np.uint8)
    g = ctx.r.grade
    sel = ctx.r.rank <= width
    codes = np.where(g > 9, ord(">"), np.where(g >= 0, ord("0") + np.clip(g, 0, 9), ord(".")))
    chars[ctx.r.q[sel], ctx.r.rank[sel] - 1] = codes[sel]
    lens = np.minimum(width, ctx.n)
    rows = chars.view(f"S{width}").ravel()
    return [rows[i][: lens[i]].decode("ascii") for i in range(ctx.E)]


UNJ = Family(
    "unj",
    "cut",
    "fraction of unjudged documents in the top k",
    formula="|{dᵢ : i ≤ min(k, n), d unpooled or pooled-unjudged}|/k",
    citation=TREC_EVAL_DOC,
    registry_name="unj_k",
    params=(K, REL, JUDGED),
    defaults=(5, 10, 20),
    direction="lower",
    kernel=unjudged,
)

JUDGED_AT = Family(
    "judged",
    "cut",
    "fraction of the top min(k, n) documents that are judged",
    formula="|{dᵢ : i ≤ min(k, n), d ∈ qrels}|/min(k, n)",
    citation=(
        'MacAvaney, Macdonald and Ounis, "Streamlining Evaluation with ir-measures", ECIR 2022'
    ),
    registry_name="Judged@k",
    params=(K,),
    defaults=(10,),
    ir="Judged",
    ir_spellings=("Judged",),
    ir_args=frozenset({"judged_only"}),
    binary=False,
    extension=True,
    reference="ir_measures 0.4.3",
    kernel=judged,
)

RELSTRING = Family(
    "relstring",
    "reals",
    "relevance string of the top ranks (per query only)",
    formula=(
        "one character per rank i ≤ min(L, n): the grade 0–9, '>' above 9, '-' unpooled, "
        "'.' pooled-unjudged; a string, no number"
    ),
    citation=TREC_EVAL_DOC,
    registry_name="relstring",
    params=(REL, Param("length", "int", 10)),
    defaults=(10.0,),
    bare_params=(("length", 10),),
    direction="none",
    range=(None, None),
    kernel=relstring,
)

FAMILIES = (UNJ, JUDGED_AT, RELSTRING)
