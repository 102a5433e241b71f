"""Counts: num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret; num_q and runid (whose values
the engine fills in: they need no ranking)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragmeter.retrieval.measures.base import Context
from ragmeter.retrieval.measures.family import REL, TREC_APPENDIX, TREC_EVAL_DOC, Family

if TYPE_CHECKING:
    from ragmeter.retrieval.measures.family import MeasureArgs

RUNID = Family(
    "runid",
    "runid",
    "run tag of the run (summary only)",
    formula="the run's tag (6th column of the run file); a string, no number",
    citation=TREC_EVAL_DOC,
    registry_name="runid",
    direction="none",
    range=(None, None),
    level="corpus",
)

NUM_Q = Family(
    "num_q",
    "count",
    "number of evaluated queries",
    formula="|Q|, Q the evaluated queries: judged and in the run (every judged one under -c)",
    citation=TREC_EVAL_DOC,
    registry_name="NumQ",
    aliases=("num_q",),
    ir="NumQ",
    ir_spellings=("NumQ",),
    direction="none",
    range=(0, None),
    level="corpus",
)


def num_ret(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """n: documents retrieved (after -M and -J)."""
    return ctx.n.copy()


NUM_RET = Family(
    "num_ret",
    "count",
    "number of retrieved documents",
    formula="n = |{d ∈ run}| (after -M and -J)",
    citation=TREC_APPENDIX,
    registry_name="NumRet",
    aliases=("num_ret",),
    params=(REL,),
    ir="NumRet",
    ir_spellings=("NumRet",),
    ir_args=frozenset({"rel", "judged_only"}),
    kernel=num_ret,
    direction="none",
    range=(0, None),
    level="corpus",
)


def num_rel(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """R: qrels lines with grade ≥ level, retrieved or not."""
    return ctx.R.copy()


NUM_REL = Family(
    "num_rel",
    "count",
    "number of relevant documents (R)",
    formula="R = |{d ∈ qrels : rel(d) ≥ ℓ}|",
    citation=TREC_APPENDIX,
    registry_name="NumRel",
    aliases=("num_rel",),
    params=(REL,),
    ir="NumRel",
    ir_spellings=("NumRel",),
    ir_args=frozenset({"rel"}),
    kernel=num_rel,
    direction="none",
    range=(0, None),
    level="corpus",
)


def num_rel_ret(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """hits(n): relevant documents retrieved."""
    return ctx.hits_n.copy()


NUM_REL_RET = Family(
    "num_rel_ret",
    "count",
    "number of relevant retrieved documents",
    formula="hits(n) = |{d ∈ run : rel(d) ≥ ℓ}|",
    citation=TREC_APPENDIX,
    registry_name="NumRelRet",
    aliases=("num_rel_ret",),
    params=(REL,),
    ir="NumRelRet",
    ir_spellings=("NumRelRet",),
    ir_args=frozenset({"rel", "judged_only"}),
    kernel=num_rel_ret,
    range=(0, None),
    level="corpus",
)


def num_nonrel_judged_ret(ctx: Context, m: MeasureArgs) -> np.ndarray:
    """Retrieved documents judged non-relevant (0 ≤ grade < level)."""
    return np.bincount(ctx.r.q[ctx.is_nonrel], minlength=ctx.E).astype(np.int64)


NUM_NONREL_JUDGED_RET = Family(
    "num_nonrel_judged_ret",
    "count",
    "number of judged non-relevant retrieved documents",
    formula="|{d ∈ run : 0 ≤ rel(d) < ℓ}|",
    citation=TREC_EVAL_DOC,
    registry_name="num_nonrel_judged_ret",
    params=(REL,),
    kernel=num_nonrel_judged_ret,
    direction="none",
    range=(0, None),
    level="corpus",
)

FAMILIES = (RUNID, NUM_Q, NUM_RET, NUM_REL, NUM_REL_RET, NUM_NONREL_JUDGED_RET)
