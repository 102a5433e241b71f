"""``rubric:<name>``: G-Eval-like scoring with fixed steps (docs/judge.md).

Every sample is judged by the same numbered steps: either the configured ones, or steps
generated **once per run** from ``criteria`` in one cached call. The model writes one finding
per step and an integer score; the headline value is (score − min)/(max − min). With
``weighting: logprobs`` (scales ending at 9 or below, endpoints that return logprobs) the score
is the probability-weighted mean of the integer alternatives at the score token.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.config import RubricDef
from ragmeter.judge.metrics._common import Options, Outcome, Sample, blank, single, texts
from ragmeter.judge.metrics.plan import RUBRIC
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop
from ragmeter.judge.schemas import rubric_score_spec, rubric_steps_spec

__all__ = ["generate_steps", "judge_rubric", "logprob_weighted_score", "rubric_value"]

_SCORE_KEY = re.compile(r'"score"\s*:\s*\Z')


def rubric_value(*, score: float, scale: tuple[int, int]) -> float:
    """(score − min)/(max − min).

    >>> rubric_value(score=4, scale=(1, 5))
    0.75
    >>> rubric_value(score=4.1, scale=(1, 5))
    0.7749999999999999
    """
    lo, hi = scale
    if hi <= lo:
        raise ValueError(f"scale {scale} (expected min < max)")
    return (score - lo) / (hi - lo)


def logprob_weighted_score(
    logprobs: Sequence[Mapping[str, Any]] | None, scale: tuple[int, int]
) -> float | None:
    """Σ p·s / Σ p over the integer alternatives in the scale at the first token after
    ``"score":``; ``None`` when that token or its alternatives are not available.

    >>> lp = [{"token": '{"findings": [], "score":', "logprob": 0.0, "top_logprobs": []},
    ...       {"token": " 4", "logprob": math.log(0.7), "top_logprobs": [
    ...           {"token": " 4", "logprob": math.log(0.7)},
    ...           {"token": " 5", "logprob": math.log(0.2)},
    ...           {"token": " 3", "logprob": math.log(0.1)},
    ...           {"token": " x", "logprob": -9.0}]}]
    >>> round(logprob_weighted_score(lp, (1, 5)), 6)
    4.1
    """
    lo, hi = scale
    if not logprobs or hi > 9 or lo < 0:
        return None
    text = ""
    for tok in logprobs:
        token = str(tok.get("token", ""))
        if _SCORE_KEY.search(text) and token.strip():
            if not token.strip().isdigit():
                return None
            alternatives = tok.get("top_logprobs") or [tok]
            num = den = 0.0
            for alt in alternatives:
                t = str(alt.get("token", "")).strip()
                if t.isdigit() and lo <= int(t) <= hi:
                    p = math.exp(float(alt.get("logprob", -math.inf)))
                    num += p * int(t)
                    den += p
            return num / den if den > 0 else None
        text += token
    return None


def _levels(rubric: RubricDef) -> str:
    if not rubric.levels:
        return f"(no level descriptions: {rubric.scale[0]} is worst, {rubric.scale[1]} is best)"
    return "\n".join(f"{lv}: {desc}" for lv, desc in rubric.levels)


def _inputs(rubric: RubricDef, sample: Sample) -> prompts.Raw | None:
    blocks = []
    for name in rubric.inputs:
        if name == "contexts":
            chunks = texts(sample.contexts)
            if not chunks:
                return None
            blocks.append(prompts.numbered("context", chunks))
        else:
            value = getattr(sample, name)
            if blank(value):
                return None
            blocks.append(prompts.block(name, str(value)))
    return prompts.Raw("\n\n".join(blocks))


async def generate_steps(rt: JudgeRuntime, rubric: RubricDef, ctx: Ctx) -> tuple[str, ...]:
    """Steps for a criteria-only rubric: one cached call per run; raises :class:`Stop`."""
    out = await rt.call(
        prompts.get(RUBRIC.steps.prompt_id),
        {"criteria": rubric.criteria or "", "min": rubric.scale[0], "max": rubric.scale[1]},
        rubric_steps_spec(),
        ctx,
    )
    if not out.ok:
        raise Stop(out.status, out.detail)
    return tuple(s.strip() for s in out.value.steps)


async def judge_rubric(
    rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options, *, name: str
) -> Outcome:
    metric = f"rubric:{name}"
    rubric = opts.rubrics[name]
    steps = rubric.steps or opts.rubric_steps.get(name)
    if not steps:
        return single(metric, st.PARSE_ERROR, "rubric steps were not generated")
    inputs = _inputs(rubric, sample)
    if inputs is None:
        return single(metric, st.NO_CLAIMS, "a rubric input is empty")
    lo, hi = rubric.scale
    weighted = rubric.weighting == "logprobs" and hi <= 9 and lo >= 0
    extra = {"logprobs": True, "top_logprobs": min(20, hi - lo + 3)} if weighted else None
    out = await rt.call(
        prompts.get(RUBRIC.score.prompt_id),
        {
            "name": rubric.name,
            "steps": "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1)),
            "levels": _levels(rubric),
            "min": lo,
            "max": hi,
            "inputs": inputs,
        },
        rubric_score_spec(len(steps), lo, hi),
        ctx,
        items=len(steps),
        extra=extra,
    )
    if not out.ok:
        return single(metric, out.status, out.detail)
    obj = out.value
    score: float = obj.score
    used_weights = False
    if weighted:
        w = logprob_weighted_score(out.logprobs, (lo, hi))
        if w is not None:
            score, used_weights = w, True
    explanation = {
        "findings": [{"step": f.step, "note": f.note} for f in obj.findings],
        "score": obj.score,
        "reason": obj.reason,
        "weighted": used_weights,
    }
    if used_weights:
        explanation["weighted_score"] = round(score, 6)
    return single(metric, st.OK, None, rubric_value(score=score, scale=(lo, hi)), explanation)
