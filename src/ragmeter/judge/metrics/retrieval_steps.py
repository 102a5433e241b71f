"""graphrag-eval's ``retrieval_answer_*`` and ``retrieval_context_*``.

Recall is :mod:`context_recall`, precision is :mod:`context_precision`, both on a retrieval
step's texts; F1 is reported only when both parts are ``ok``. The reference is the reference
answer (``retrieval_answer``) or the reference step's texts joined with newlines
(``retrieval_context``). The reference-statement call is the one ``context_recall`` makes on
the same reference, so the two metrics share it.
"""

from __future__ import annotations

from ragmeter import status as st
from ragmeter.judge.metrics._common import Options, Outcome, Part, Sample, f1_score, texts
from ragmeter.judge.metrics.context_precision import average_precision, usefulness
from ragmeter.judge.metrics.context_recall import recall_stages
from ragmeter.judge.metrics.plan import CONTEXT_PRECISION
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop

__all__ = ["judge_retrieval"]


async def judge_retrieval(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options, *, family: str
) -> Outcome:
    names = [f"{family}_recall", f"{family}_precision", f"{family}_f1"]
    chunks = texts(sample.contexts)
    if family == "retrieval_answer":
        reference = sample.reference
        missing = "empty reference answer"
    else:
        reference = (
            "\n".join(texts(sample.reference_contexts)) if sample.reference_contexts else None
        )
        missing = "no reference contexts"
    if reference is None or not reference.strip():
        return Outcome({n: Part(st.NO_CLAIMS, missing) for n in names})
    question = sample.question or ""
    # separate accounting per part: graphrag-eval reports <key>_cost for recall and precision
    r_ctx = Ctx(ctx.sample_id, ctx.metric, ctx.repeat, key_extra=ctx.key_extra)
    p_ctx = Ctx(ctx.sample_id, ctx.metric, ctx.repeat, key_extra=ctx.key_extra)
    r_status, r_detail, r_value, r_expl = await recall_stages(
        rt, question, reference, chunks, r_ctx
    )
    recall = Part(r_status, r_detail, r_value)
    p_expl = None
    if not chunks:
        precision = Part(st.NO_CLAIMS, "no contexts")
    else:
        try:
            verdicts = await usefulness(
                rt,
                CONTEXT_PRECISION,
                {"question": question, "reference": reference},
                chunks,
                p_ctx,
                per_chunk=opts.per_chunk,
            )
            precision = Part(
                st.OK, None, average_precision(useful=[bool(v["useful"]) for v in verdicts])
            )
            p_expl = {"verdicts": verdicts}
        except Stop as stop:
            precision = Part(stop.status, stop.detail)
    if recall.status == st.OK and precision.status == st.OK:
        f1 = Part(st.OK, None, f1_score(recall.value or 0.0, precision.value or 0.0))
    else:
        bad = recall if recall.status != st.OK else precision
        f1 = Part(bad.status, bad.detail)
    ctx.stats.merge(r_ctx.stats)
    ctx.stats.merge(p_ctx.stats)
    known = rt.price is not None
    r_cost = r_ctx.stats.cost_usd if known else None
    p_cost = p_ctx.stats.cost_usd if known else None
    fields = {
        f"{names[0]}_cost": r_cost,
        f"{names[1]}_cost": p_cost,
        f"{names[2]}_cost": None if r_cost is None or p_cost is None else r_cost + p_cost,
    }
    return Outcome(
        {names[0]: recall, names[1]: precision, names[2]: f1},
        {"recall": r_expl, "precision": p_expl},
        fields,
    )
