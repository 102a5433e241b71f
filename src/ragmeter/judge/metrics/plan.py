"""The stages of every judge pipeline, declared once (docs/judge.md).

A stage is one kind of call: its prompt, whether it is a first stage (its request depends only
on the sample, so a dry run renders it exactly, finds it in the cache and counts it before
anything is sent) and, for stages that send a list, how many items go in one call. The
pipelines (:mod:`ragmeter.judge.metrics`) make their calls from these declarations and the
dry run (:mod:`ragmeter.judge.estimate`) counts and prices the same ones, so the two cannot
drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "ANSWER_CORRECTNESS",
    "ANSWER_RELEVANCE",
    "CHUNK_BATCH",
    "CONTEXT_ENTITY_RECALL",
    "CONTEXT_PRECISION",
    "CONTEXT_RECALL",
    "CONTEXT_UTILIZATION",
    "FAITHFULNESS",
    "MAX_STATEMENTS",
    "RUBRIC",
    "STATEMENT_BATCH",
    "Stage",
    "stages",
]

CHUNK_BATCH = 10
"""Chunks judged in one usefulness call (one per call with ``per_chunk``)."""

STATEMENT_BATCH = 20
"""Statements verified in one call against a group of contexts."""

MAX_STATEMENTS = 50
"""The most statements one extraction may return (its reply schema's ``maxItems``)."""


@dataclass(frozen=True)
class Stage:
    """One kind of call of a pipeline.

    ``first``: the request depends only on the sample (not on an earlier reply). ``batch``:
    items sent per call for stages that send a list (chunks, statements), else ``None``.
    ``kind``: the verdict kind of a verification stage.
    """

    prompt_id: str
    first: bool = True
    batch: int | None = None
    kind: str | None = None


@dataclass(frozen=True)
class StatementStages:
    """Extract the statements of a text, then verify them against the contexts in batches."""

    extract: Stage
    verify: Stage

    def __iter__(self) -> Iterator[Stage]:
        return iter((self.extract, self.verify))


@dataclass(frozen=True)
class EntityStages:
    """The entities of the reference (shared by every system), then those of the contexts."""

    reference: Stage
    contexts: Stage

    def __iter__(self) -> Iterator[Stage]:
        return iter((self.reference, self.contexts))


@dataclass(frozen=True)
class RubricStages:
    """Steps generated once per run for a criteria-only rubric, then one score per sample."""

    steps: Stage
    score: Stage

    def __iter__(self) -> Iterator[Stage]:
        return iter((self.steps, self.score))


ANSWER_CORRECTNESS = Stage("answer_correctness.claims")
"""One call lists and pairs the claims of the reference and of the answer."""

ANSWER_RELEVANCE = Stage("answer_relevance.questions")
"""One call for N questions, or N calls for one question each (``independent``)."""

FAITHFULNESS = StatementStages(
    Stage("faithfulness.statements"),
    Stage("faithfulness.verify", first=False, batch=STATEMENT_BATCH, kind="faithfulness"),
)

CONTEXT_RECALL = StatementStages(
    Stage("context_recall.statements"),
    Stage("context_recall.attribute", first=False, batch=STATEMENT_BATCH, kind="attribution"),
)

CONTEXT_PRECISION = Stage("context_precision.usefulness", batch=CHUNK_BATCH)
CONTEXT_UTILIZATION = Stage("context_utilization.usefulness", batch=CHUNK_BATCH)

CONTEXT_ENTITY_RECALL = EntityStages(
    Stage("context_entity_recall.entities"),
    Stage("context_entity_recall.entities", first=False),
)

RUBRIC = RubricStages(Stage("rubric.steps", first=False), Stage("rubric.score"))


def stages(pipe: str) -> tuple[Stage, ...]:
    """Every stage the pipeline ``pipe`` may call, in call order (``rubric:<x>`` included).

    >>> [s.prompt_id for s in stages("retrieval_answer")]
    ['context_recall.statements', 'context_recall.attribute', 'context_precision.usefulness']
    """
    if pipe.startswith("rubric:"):
        return tuple(RUBRIC)
    single = {
        "answer_correctness": ANSWER_CORRECTNESS,
        "answer_relevance": ANSWER_RELEVANCE,
        "context_precision": CONTEXT_PRECISION,
        "context_utilization": CONTEXT_UTILIZATION,
    }
    if pipe in single:
        return (single[pipe],)
    if pipe in ("retrieval_answer", "retrieval_context"):
        # graphrag-eval's recall is context recall and its precision context precision
        return (*CONTEXT_RECALL, CONTEXT_PRECISION)
    composite = {
        "faithfulness": FAITHFULNESS,
        "context_recall": CONTEXT_RECALL,
        "context_entity_recall": CONTEXT_ENTITY_RECALL,
    }
    return tuple(composite[pipe])
