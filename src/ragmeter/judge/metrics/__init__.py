"""The metrics of docs/judge.md: pure formulas plus the LLM pipelines that feed them.

Each pipeline is ``async (runtime, sample, ctx, options) -> Outcome``; :data:`PIPELINES` maps a
pipeline name (a key of :data:`ragmeter.judge.registry.PIPELINE_OUTPUTS`, or the metric itself)
to it. The pure formulas (``claims_scores``, ``average_precision``, ``entity_recall``, …) are plain
functions with doctested examples.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from ragmeter.judge.metrics._common import Options, Outcome, Part, Sample, f1_score
from ragmeter.judge.metrics.answer_correctness import claims_scores, judge_answer_correctness
from ragmeter.judge.metrics.answer_relevance import judge_answer_relevance, relevance_score
from ragmeter.judge.metrics.context_precision import average_precision, judge_context_precision
from ragmeter.judge.metrics.context_recall import attribution_recall, judge_context_recall
from ragmeter.judge.metrics.entity_recall import (
    entity_recall,
    judge_entity_recall,
    normalize_entity,
)
from ragmeter.judge.metrics.faithfulness import faithfulness_scores, judge_faithfulness
from ragmeter.judge.metrics.retrieval_steps import judge_retrieval
from ragmeter.judge.metrics.rubric import judge_rubric, logprob_weighted_score, rubric_value

__all__ = [
    "PIPELINES",
    "Options",
    "Outcome",
    "Part",
    "Sample",
    "attribution_recall",
    "average_precision",
    "claims_scores",
    "entity_recall",
    "f1_score",
    "faithfulness_scores",
    "logprob_weighted_score",
    "normalize_entity",
    "pipeline",
    "relevance_score",
    "rubric_value",
]

Pipeline = Callable[..., Awaitable[Outcome]]

PIPELINES: dict[str, Pipeline] = {
    "answer_correctness": judge_answer_correctness,
    "answer_relevance": judge_answer_relevance,
    "faithfulness": judge_faithfulness,
    "context_precision": judge_context_precision,
    "context_utilization": functools.partial(judge_context_precision, utilization=True),
    "context_recall": judge_context_recall,
    "context_entity_recall": judge_entity_recall,
    "retrieval_answer": functools.partial(judge_retrieval, family="retrieval_answer"),
    "retrieval_context": functools.partial(judge_retrieval, family="retrieval_context"),
}


def pipeline(name: str) -> Pipeline:
    """The pipeline for ``name`` (``rubric:<x>`` included)."""
    if name.startswith("rubric:"):
        return functools.partial(judge_rubric, name=name.split(":", 1)[1])
    return PIPELINES[name]
