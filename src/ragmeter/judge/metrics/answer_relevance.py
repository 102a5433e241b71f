"""``answer_relevance``: questions generated from the answer vs the real question.

One call writes N questions the answer would answer (and flags noncommittal answers); the
offline all-MiniLM-L6-v2 embedder gives cosines between the question and each generated one.
Score: 0.0 when noncommittal, otherwise the mean raw cosine (not clipped).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.metrics._common import Options, Outcome, Sample, blank, single
from ragmeter.judge.metrics.plan import ANSWER_RELEVANCE
from ragmeter.judge.runtime import Ctx, JudgeRuntime
from ragmeter.judge.schemas import questions_spec

__all__ = ["judge_answer_relevance", "relevance_score"]

NAME = "answer_relevance"


def relevance_score(*, cosines: Sequence[float], noncommittal: bool) -> float:
    """``0.0`` if ``noncommittal``, else (1/N) Σᵢ cos(e(q), e(qᵢ)), raw cosines, summed in order.

    >>> round(relevance_score(cosines=[0.994, 0.800, 0.600], noncommittal=False), 3)
    0.798
    >>> relevance_score(cosines=[0.9, 0.9, 0.9], noncommittal=True)
    0.0
    """
    if len(cosines) == 0:
        raise ValueError("no generated questions")
    if noncommittal:
        return 0.0
    total = 0.0
    for c in cosines:
        total += float(c)
    return total / len(cosines)


def cosines(embedder: object, question: str, generated: Sequence[str]) -> list[float]:
    """Raw cosines between the question and each generated question (vectors re-normalised)."""
    vecs = np.asarray(embedder.encode([question, *generated]), dtype=np.float64)  # type: ignore[attr-defined]
    norms = np.linalg.norm(vecs, axis=1)
    norms[norms == 0] = 1.0
    vecs = vecs / norms[:, None]
    return [float(np.dot(vecs[0], v)) for v in vecs[1:]]


async def _embed(opts: Options, question: str, generated: Sequence[str]) -> list[float]:
    # one embedding at a time, off the event loop: the model is not shared across threads
    if opts.embed_lock is None:
        opts.embed_lock = asyncio.Lock()
    async with opts.embed_lock:
        return await asyncio.to_thread(cosines, opts.embedder, question, list(generated))


async def judge_answer_relevance(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options
) -> Outcome:
    if opts.embedder is None:
        return single(NAME, st.NEEDS_LLM, opts.embedder_error or "no embedder")
    if blank(sample.answer):
        return single(NAME, st.OK, "empty answer", 0.0)
    if blank(sample.question):
        return single(NAME, st.NO_CLAIMS, "empty question")
    n = opts.relevance_questions
    prompt = prompts.get(ANSWER_RELEVANCE.prompt_id)
    if opts.independent:
        questions: list[str] = []
        noncommittal = False
        for i in range(n):
            out = await rt.call(
                prompt,
                {"answer": sample.answer, "n": 1},
                questions_spec(1),
                ctx.sub(independent=i),
                items=1,
            )
            if not out.ok:
                return single(NAME, out.status, out.detail)
            questions.extend(out.value.questions)
            noncommittal = noncommittal or out.value.noncommittal
    else:
        out = await rt.call(
            prompt, {"answer": sample.answer, "n": n}, questions_spec(n), ctx, items=n
        )
        if not out.ok:
            return single(NAME, out.status, out.detail)
        questions = list(out.value.questions)
        noncommittal = out.value.noncommittal
    explanation = {"questions": questions, "noncommittal": noncommittal}
    if noncommittal:
        return single(NAME, st.OK, "noncommittal", 0.0, explanation)
    cos = await _embed(opts, str(sample.question), questions)
    explanation["cosines"] = [round(c, 6) for c in cos]
    return single(NAME, st.OK, None, relevance_score(cosines=cos, noncommittal=False), explanation)
