"""``faithfulness``: share of the answer's statements supported by the contexts.

Stage 1 rewrites the answer as statements; stage 2 checks them against the numbered contexts
in batches of at most 20 (:data:`ragmeter.judge.metrics.plan.FAITHFULNESS`), verdicts
``supported`` / ``contradicted`` / ``not_found``. Also gives
``faithfulness_contradiction_rate``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter import status as st
from ragmeter.judge.metrics._common import Options, Outcome, Part, Sample, blank, texts
from ragmeter.judge.metrics._stages import extract_statements, verify
from ragmeter.judge.metrics.plan import FAITHFULNESS
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop

__all__ = ["combine_verdicts", "faithfulness_scores", "judge_faithfulness"]

OUTPUTS = ("faithfulness", "faithfulness_contradiction_rate")
VERDICTS = ("supported", "contradicted", "not_found")


def faithfulness_scores(*, verdicts: Sequence[str]) -> tuple[float, float]:
    """``faithfulness`` = #supported / m and ``contradiction_rate`` = #contradicted / m.

    An unsupported (``not_found``) statement counts against faithfulness but not against the
    contradiction rate.

    >>> faithfulness_scores(verdicts=["supported", "not_found"])
    (0.5, 0.0)
    >>> faithfulness_scores(verdicts=["supported", "contradicted", "not_found"])
    (0.3333333333333333, 0.3333333333333333)
    """
    if not verdicts:
        raise ValueError("no statements (the status is no_claims)")
    bad = [v for v in verdicts if v not in VERDICTS]
    if bad:
        raise ValueError(f"unknown verdict {bad[0]!r} (expected one of {', '.join(VERDICTS)})")
    m = len(verdicts)
    return verdicts.count("supported") / m, verdicts.count("contradicted") / m


def combine_verdicts(group_verdicts: Sequence[str]) -> str:
    """One statement's verdict over context groups: any support wins, then any contradiction.

    >>> combine_verdicts(["not_found", "contradicted"])
    'contradicted'
    >>> combine_verdicts(["contradicted", "supported"])
    'supported'
    """
    if "supported" in group_verdicts:
        return "supported"
    if "contradicted" in group_verdicts:
        return "contradicted"
    return "not_found"


def _all(status: str, detail: str | None) -> Outcome:
    return Outcome({k: Part(status, detail) for k in OUTPUTS})


async def judge_faithfulness(rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options) -> Outcome:
    if blank(sample.answer):
        return _all(st.NO_CLAIMS, "empty answer")
    contexts = texts(sample.contexts)
    values = {"question": sample.question or "", "answer": sample.answer}
    try:
        statements = await extract_statements(rt, FAITHFULNESS.extract, values, ctx)
        if not statements:
            return _all(st.NO_CLAIMS, "no statements")
        if not contexts:
            return Outcome(
                {k: Part(st.OK, "no contexts", 0.0) for k in OUTPUTS},
                {"statements": statements, "verdicts": []},
            )
        per_statement = await verify(rt, FAITHFULNESS.verify, {}, contexts, statements, ctx)
    except Stop as stop:
        return _all(stop.status, stop.detail)
    verdicts = []
    final: list[str] = []
    for i, group in enumerate(per_statement, start=1):
        v = combine_verdicts([g.verdict for g in group])
        evidence = sorted({e for g in group if g.verdict == v for e in g.evidence})
        final.append(v)
        verdicts.append({"index": i, "verdict": v, "evidence": evidence})
    faith, contra = faithfulness_scores(verdicts=final)
    return Outcome(
        {
            "faithfulness": Part(st.OK, None, faith),
            "faithfulness_contradiction_rate": Part(st.OK, None, contra),
        },
        {"statements": statements, "verdicts": verdicts},
    )
