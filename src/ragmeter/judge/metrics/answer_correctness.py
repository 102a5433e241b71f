"""``answer_correctness``: claims of the reference and of the answer, matched (docs/judge.md).

One call lists the atomic claims of both texts and pairs them; ragmeter counts the lists itself
rather than trusting counts the model reports. The headline value is ``answer_f1``.
"""

from __future__ import annotations

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.metrics._common import Options, Outcome, Part, Sample, blank, f1_score
from ragmeter.judge.metrics.plan import ANSWER_CORRECTNESS
from ragmeter.judge.runtime import Ctx, JudgeRuntime
from ragmeter.judge.schemas import claims_spec

__all__ = ["claims_scores", "judge_answer_correctness"]

OUTPUTS = ("answer_correctness", "answer_recall", "answer_precision")


def claims_scores(*, reference: int, actual: int, matching: int) -> tuple[float, float, float]:
    """Recall, precision and F1 from claim counts.

    ``answer_recall`` = matching / reference, ``answer_precision`` = matching / actual,
    ``answer_f1`` = 2PR/(P+R) (0 when both are 0).

    Parameters
    ----------
    reference, actual : int
        Number of reference and answer claims, both ≥ 1.
    matching : int
        Matched pairs, ``0 ≤ matching ≤ min(reference, actual)``.

    >>> claims_scores(reference=4, actual=3, matching=2)
    (0.5, 0.6666666666666666, 0.5714285714285715)
    >>> claims_scores(reference=2, actual=2, matching=2)
    (1.0, 1.0, 1.0)
    """
    if reference < 1 or actual < 1 or not 0 <= matching <= min(reference, actual):
        raise ValueError(f"invalid claim counts {reference}, {actual}, {matching}")
    recall = matching / reference
    precision = matching / actual
    return recall, precision, f1_score(recall, precision)


def _no_claims(detail: str, **fields: object) -> Outcome:
    return Outcome({k: Part(st.NO_CLAIMS, detail) for k in OUTPUTS}, None, dict(fields))


async def judge_answer_correctness(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options
) -> Outcome:
    if blank(sample.reference):
        return _no_claims("empty reference")
    if blank(sample.answer):
        return _no_claims("empty answer")
    out = await rt.call(
        prompts.get(ANSWER_CORRECTNESS.prompt_id),
        {"question": sample.question or "", "reference": sample.reference, "answer": sample.answer},
        claims_spec(),
        ctx,
    )
    if not out.ok:
        return Outcome({k: Part(out.status, out.detail) for k in OUTPUTS})
    obj = out.value
    ref, act, match = len(obj.reference_claims), len(obj.answer_claims), len(obj.matches)
    fields = {
        "answer_reference_claims_count": ref,
        "answer_actual_claims_count": act,
        "answer_matching_claims_count": match,
        "answer_correctness_reason": obj.reason,
    }
    explanation = {
        "reference_claims": list(obj.reference_claims),
        "answer_claims": list(obj.answer_claims),
        "matches": [{"reference": m.reference, "answer": m.answer} for m in obj.matches],
        "reason": obj.reason,
    }
    if ref == 0 or act == 0:
        which = "reference" if ref == 0 else "answer"
        return Outcome(
            {k: Part(st.NO_CLAIMS, f"no {which} claims") for k in OUTPUTS}, explanation, fields
        )
    recall, precision, f1 = claims_scores(reference=ref, actual=act, matching=match)
    parts = {
        "answer_correctness": Part(st.OK, None, f1),
        "answer_recall": Part(st.OK, None, recall),
        "answer_precision": Part(st.OK, None, precision),
    }
    return Outcome(parts, explanation, fields)
