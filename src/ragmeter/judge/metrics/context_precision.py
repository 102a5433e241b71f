"""``context_precision`` and ``context_utilization``: AP over judged-useful chunks.

Each chunk, in rank order, is judged useful or not for reaching the reference answer (or, for
``context_utilization``, the generated answer). Up to 10 chunks go in one call
(:data:`~ragmeter.judge.metrics.plan.CHUNK_BATCH`); with
``per_chunk`` every chunk gets its own call, RAGAS-style.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.metrics._common import Options, Outcome, Sample, batches, blank, single, texts
from ragmeter.judge.metrics.plan import CHUNK_BATCH, CONTEXT_PRECISION, CONTEXT_UTILIZATION, Stage
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop
from ragmeter.judge.schemas import verdicts_spec

__all__ = ["CHUNK_BATCH", "average_precision", "judge_context_precision", "usefulness"]


def average_precision(*, useful: Sequence[bool | int]) -> float:
    """AP = Σₖ vₖ·P@k / Σₖ vₖ with P@k = (Σ_{i≤k} vᵢ)/k; 0.0 when no chunk is useful.

    There is no ``1e-10`` term: an all-useless list scores exactly 0.0.

    >>> average_precision(useful=[1, 0, 1])
    0.8333333333333333
    >>> average_precision(useful=[0, 1, 1])
    0.5833333333333333
    >>> round(average_precision(useful=[1, 1, 0, 0, 1]), 4)
    0.8667
    >>> average_precision(useful=[0, 0, 0])
    0.0
    """
    if len(useful) == 0:
        raise ValueError("no chunks (the status is no_claims)")
    hits = 0
    total = 0.0
    for k, v in enumerate(useful, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


async def usefulness(
    rt: JudgeRuntime,
    stage: Stage,
    values: dict[str, str],
    chunks: Sequence[str],
    ctx: Ctx,
    *,
    per_chunk: bool,
) -> list[dict[str, object]]:
    """One ``{index, useful, reason}`` per chunk, in rank order; raises :class:`Stop`."""
    prompt = prompts.get(stage.prompt_id)
    out_verdicts: list[dict[str, object]] = []
    for batch in batches(len(chunks), 1 if per_chunk else stage.batch or CHUNK_BATCH):
        sent = [chunks[i] for i in batch]
        out = await rt.call(
            prompt,
            {**values, "chunks": prompts.numbered("chunk", sent)},
            verdicts_spec("usefulness", len(sent)),
            ctx,
            items=len(sent),
        )
        if not out.ok:
            raise Stop(out.status, out.detail)
        by_index = {v.index: v for v in out.value.verdicts}
        for j, i in enumerate(batch):
            v = by_index[j + 1]
            out_verdicts.append({"index": i + 1, "useful": v.useful, "reason": v.reason})
    return out_verdicts


async def judge_context_precision(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options, *, utilization: bool = False
) -> Outcome:
    name = "context_utilization" if utilization else "context_precision"
    target = sample.answer if utilization else sample.reference
    chunks = texts(sample.contexts)
    if not chunks:
        return single(name, st.NO_CLAIMS, "no contexts")
    if blank(target):
        return single(name, st.NO_CLAIMS, "empty answer" if utilization else "empty reference")
    key = "answer" if utilization else "reference"
    try:
        verdicts = await usefulness(
            rt,
            CONTEXT_UTILIZATION if utilization else CONTEXT_PRECISION,
            {"question": sample.question or "", key: str(target)},
            chunks,
            ctx,
            per_chunk=opts.per_chunk,
        )
    except Stop as stop:
        return single(name, stop.status, stop.detail)
    ap = average_precision(useful=[bool(v["useful"]) for v in verdicts])
    return single(name, st.OK, None, ap, {"verdicts": verdicts})
