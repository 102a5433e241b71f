"""Metrics of the ``steps`` task: the record and aggregate keys of docs/steps.md.

Import-light on purpose (plain dataclasses only): the registry, CLI and docs read it without
loading the engine. Macro means are named ``macro.<metric>`` (the resolver below).
"""

from __future__ import annotations

from ragmeter.registry import MetricDef, ResolvedMetric, TaskDef

__all__ = ["TASKS"]

_UPSTREAM = "graphrag-eval 6.6.1"
_LLM = frozenset({"llm"})


def _m(name: str, summary: str, **kwargs: object) -> MetricDef:
    kwargs.setdefault("reference", _UPSTREAM)
    return MetricDef("steps", name, summary, **kwargs)  # type: ignore[arg-type]


METRICS: tuple[MetricDef, ...] = (
    _m(
        "steps_score",
        "Mean over reference groups of the matched step scores (all-or-nothing per step, "
        "recall@k for retrieval)",
        formula="(1/n) Σ_g Σ_{matches in g} s / |G_g|",
        default=True,
    ),
    _m(
        "answer_recall",
        "Matching claims / reference claims (LLM answer correctness)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "answer_precision",
        "Matching claims / answer claims (LLM answer correctness)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "answer_f1",
        "Harmonic mean of answer_recall and answer_precision",
        needs=_LLM,
        extra="llm",
        formula="2·r·p / (r + p)",
    ),
    _m(
        "answer_relevance",
        "How well the answer addresses the question (LLM + embeddings)",
        needs=frozenset({"llm", "embeddings"}),
        extra="llm",
    ),
    _m(
        "answer_relevance_cost",
        "USD cost of the answer-relevance judgement (graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
        direction="lower",
        range=(0.0, None),
        reference="graphrag-eval 5.1.2",
    ),
    _m(
        "answer_reference_claims_count",
        "Claims in the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
        direction="none",
        range=(1.0, None),
    ),
    _m(
        "answer_actual_claims_count",
        "Claims in the actual answer (LLM)",
        needs=_LLM,
        extra="llm",
        direction="none",
        range=(1.0, None),
    ),
    _m(
        "answer_matching_claims_count",
        "Claims of the answer that match the reference (LLM)",
        needs=_LLM,
        extra="llm",
        direction="none",
        range=(0.0, None),
    ),
    _m(
        "retrieval_answer_recall",
        "Context recall of a retrieval step against the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_answer_precision",
        "Context precision of a retrieval step against the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_answer_f1",
        "F1 of retrieval_answer_recall and _precision",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_context_recall",
        "Context recall of a matched retrieval step against the "
        "reference documents (LLM; string similarity in graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_context_precision",
        "Context precision of a matched retrieval step against "
        "the reference documents (LLM; string similarity in graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_context_f1",
        "F1 of retrieval_context_recall and _precision",
        needs=_LLM,
        extra="llm",
    ),
    _m(
        "retrieval_ids_recall_at_k",
        "Recall@k of document ids, k from the reference, distinct ids (default mode)",
        reference="graphrag-eval docs (retrieval-ids.md) formula",
        formula="|rel ∩ ret[:k]| / min(k, |rel|)",
    ),
    _m(
        "retrieval_ids_average_precision",
        "Average precision of document ids (default mode)",
        reference="graphrag-eval 6.6.1 average_precision, first occurrences only",
    ),
    _m(
        "sparql_row_precision",
        "Diagnostic: share of actual SPARQL rows that are reference "
        "rows under the best column map (default mode)",
        reference="ragmeter (docs/steps.md)",
    ),
    _m(
        "sparql_row_recall",
        "Diagnostic: share of reference SPARQL rows found under the best column map (default mode)",
        reference="ragmeter (docs/steps.md)",
    ),
    _m("input_tokens", "Input tokens the agent used", direction="lower", range=(0.0, None)),
    _m("output_tokens", "Output tokens the agent used", direction="lower", range=(0.0, None)),
    _m("total_tokens", "Tokens the agent used", direction="lower", range=(0.0, None)),
    _m("elapsed_sec", "Seconds the agent took", direction="lower", range=(0.0, None)),
    _m(
        "number_of_error_samples",
        "Questions whose response is an error",
        direction="lower",
        range=(0.0, None),
        level="corpus",
    ),
    _m(
        "number_of_success_samples",
        "Questions answered without error",
        direction="higher",
        range=(0.0, None),
        level="corpus",
    ),
)

_BY_NAME = {m.name: m for m in METRICS}


def _resolve(name: str) -> ResolvedMetric | None:
    """``macro.<metric>``: the mean over templates of the per-template means."""
    if name.startswith("macro."):
        inner = _BY_NAME.get(name[len("macro.") :])
        if inner is not None and inner.level == "sample":
            return ResolvedMetric(inner, f"macro.{inner.name}", name)
    return None


TASKS: tuple[TaskDef, ...] = (
    TaskDef(
        name="steps",
        engine="ragmeter.steps",
        summary="Agent tool-call steps against reference steps, graphrag-eval compatible",
        metrics=METRICS,
        resolver=_resolve,
        spellings=("macro.steps_score",),
    ),
)
