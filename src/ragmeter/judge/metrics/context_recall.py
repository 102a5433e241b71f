"""``context_recall``: share of reference statements the contexts contain.

Stage 1 splits the reference into statements; it depends only on the question and the
reference, so its cache entries are shared by every system evaluated on the same data. Stage 2
asks, per statement, whether the numbered contexts contain or directly support it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter import status as st
from ragmeter.judge.metrics._common import Options, Outcome, Sample, blank, single, texts
from ragmeter.judge.metrics._stages import extract_statements, verify
from ragmeter.judge.metrics.plan import CONTEXT_RECALL
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop

__all__ = ["attribution_recall", "judge_context_recall", "recall_stages"]


def attribution_recall(*, attributed: Sequence[bool | int]) -> float:
    """#attributed / #statements.

    >>> attribution_recall(attributed=[True, True, False, True])
    0.75
    """
    if len(attributed) == 0:
        raise ValueError("no statements (the status is no_claims)")
    return sum(1 for a in attributed if a) / len(attributed)


async def recall_stages(
    rt: JudgeRuntime, question: str, reference: str | None, contexts: Sequence[str], ctx: Ctx
) -> tuple[str, str | None, float | None, dict[str, object] | None]:
    """(status, detail, value, explanation) of context recall for these inputs."""
    if blank(reference):
        return st.NO_CLAIMS, "empty reference", None, None
    values = {"question": question, "reference": str(reference)}
    try:
        statements = await extract_statements(rt, CONTEXT_RECALL.extract, values, ctx)
        if not statements:
            return st.NO_CLAIMS, "no statements", None, None
        if not contexts:
            return st.OK, "no contexts", 0.0, {"statements": statements, "verdicts": []}
        per_statement = await verify(
            rt,
            CONTEXT_RECALL.verify,
            {"question": question},
            contexts,
            statements,
            ctx,
        )
    except Stop as stop:
        return stop.status, stop.detail, None, None
    verdicts = []
    flags = []
    for i, group in enumerate(per_statement, start=1):
        attributed = any(g.attributed for g in group)
        flags.append(attributed)
        evidence = sorted({e for g in group if g.attributed for e in g.evidence})
        verdicts.append({"index": i, "attributed": attributed, "evidence": evidence})
    return (
        st.OK,
        None,
        attribution_recall(attributed=flags),
        {"statements": statements, "verdicts": verdicts},
    )


async def judge_context_recall(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options
) -> Outcome:
    status, detail, value, expl = await recall_stages(
        rt, sample.question or "", sample.reference, texts(sample.contexts), ctx
    )
    return single("context_recall", status, detail, value, expl)
