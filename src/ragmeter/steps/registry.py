"""Metrics of the ``steps`` task: the record and aggregate keys of docs/steps.md.

Import-light on purpose (plain dataclasses only): the registry, CLI and docs read it without
loading the engine. Macro means are named ``macro.<metric>`` (the resolver below).
"""

from __future__ import annotations

from ragmeter.registry import MetricDef, ResolvedMetric, TaskDef

__all__ = ["TASKS"]

_UPSTREAM = "graphrag-eval 6.6.1"
_LLM = frozenset({"llm"})
# Citations: the graphrag-eval package where it defines the key and no paper exists, plus the
# literature a formula comes from.
_PKG = "Ontotext graphrag-eval 6.6.1 (no paper)"
_CLAIMS = f"{_PKG}; atomic claims as in Min et al. 2023, FActScore (EMNLP)"
_RAGAS = (
    "Es et al. 2024, RAGAS: Automated Evaluation of Retrieval Augmented Generation "
    "(EACL, system demonstrations)"
)
_CONTEXT = f"{_PKG}; context recall and precision of {_RAGAS}"
_IR = "Manning, Raghavan & Schütze 2008, Introduction to Information Retrieval, ch. 8"
_SPARQL = "W3C 2013, SPARQL 1.1 Query Results JSON Format (Recommendation)"


def _m(name: str, summary: str, **kwargs: object) -> MetricDef:
    kwargs.setdefault("reference", _UPSTREAM)
    kwargs.setdefault("citation", _PKG)
    return MetricDef("steps", name, summary, **kwargs)  # type: ignore[arg-type]


METRICS: tuple[MetricDef, ...] = (
    _m(
        "steps_score",
        "Mean over reference groups of the matched step scores (all-or-nothing per step, "
        "recall@k for retrieval)",
        formula="(1/n) Σ_g (1/|G_g|) Σ_{matches in G_g} s, n groups, s the step match score",
        default=True,
    ),
    _m(
        "answer_recall",
        "Matching claims / reference claims (LLM answer correctness)",
        needs=_LLM,
        extra="llm",
        formula="match/|reference claims|",
        citation=_CLAIMS,
    ),
    _m(
        "answer_precision",
        "Matching claims / answer claims (LLM answer correctness)",
        needs=_LLM,
        extra="llm",
        formula="match/|answer claims|",
        citation=_CLAIMS,
    ),
    _m(
        "answer_f1",
        "Harmonic mean of answer_recall and answer_precision",
        needs=_LLM,
        extra="llm",
        formula="2PR/(P+R) of answer_precision P and answer_recall R; 0 if P+R = 0",
        citation=_CLAIMS,
    ),
    _m(
        "answer_relevance",
        "How well the answer addresses the question (LLM + embeddings)",
        needs=frozenset({"llm", "embeddings"}),
        extra="llm",
        formula="0 if noncommittal else (1/N) Σ_i cos(e(q), e(q_i)), q_i the N generated questions",
        citation=f"{_PKG}; answer relevancy of {_RAGAS}",
    ),
    _m(
        "answer_relevance_cost",
        "USD cost of the answer-relevance judgement (graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
        direction="lower",
        range=(0.0, None),
        reference="graphrag-eval 5.1.2",
        formula="Σ_calls (input tokens·input price + output tokens·output price), in USD",
        citation="Ontotext graphrag-eval 5.1.2 (no paper)",
    ),
    _m(
        "answer_reference_claims_count",
        "Claims in the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
        formula="|reference claims|",
        citation=_CLAIMS,
        direction="none",
        range=(1.0, None),
    ),
    _m(
        "answer_actual_claims_count",
        "Claims in the actual answer (LLM)",
        needs=_LLM,
        extra="llm",
        formula="|answer claims|",
        citation=_CLAIMS,
        direction="none",
        range=(1.0, None),
    ),
    _m(
        "answer_matching_claims_count",
        "Claims of the answer that match the reference (LLM)",
        needs=_LLM,
        extra="llm",
        formula="match = |matched (answer claim, reference claim) pairs|, each claim used once",
        citation=_CLAIMS,
        direction="none",
        range=(0.0, None),
    ),
    _m(
        "retrieval_answer_recall",
        "Context recall of a retrieval step against the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
        formula="#reference-answer statements attributed to the step's texts / #statements",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_answer_precision",
        "Context precision of a retrieval step against the reference answer (LLM)",
        needs=_LLM,
        extra="llm",
        formula="Σ_k v_k·P@k / Σ_k v_k over the step's texts, v_k useful for the reference answer",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_answer_f1",
        "F1 of retrieval_answer_recall and _precision",
        needs=_LLM,
        extra="llm",
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_context_recall",
        "Context recall of a matched retrieval step against the "
        "reference documents (LLM; string similarity in graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
        formula="#statements of the reference step's texts attributed to the step's / #statements",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_context_precision",
        "Context precision of a matched retrieval step against "
        "the reference documents (LLM; string similarity in graphrag-eval-5)",
        needs=_LLM,
        extra="llm",
        formula="Σ_k v_k·P@k / Σ_k v_k over the step's texts, v_k useful for the reference texts",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_context_f1",
        "F1 of retrieval_context_recall and _precision",
        needs=_LLM,
        extra="llm",
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
        citation=_CONTEXT,
    ),
    _m(
        "retrieval_ids_recall_at_k",
        "Recall@k of document ids, k from the reference, distinct ids (default mode)",
        reference="graphrag-eval docs (retrieval-ids.md) formula",
        formula="|rel ∩ ret[:k]| / min(k, |rel|), distinct ids, k from the reference",
        citation=f"{_PKG}; {_IR}",
    ),
    _m(
        "retrieval_ids_average_precision",
        "Average precision of document ids (default mode)",
        reference="graphrag-eval 6.6.1 average_precision, first occurrences only",
        formula="(1/|rel|) Σ_i [ret_i ∈ rel, first seen]·hits_i/i, hits_i = relevant in ret[:i]",
        citation=f"{_PKG}; {_IR}",
    ),
    _m(
        "sparql_row_precision",
        "Diagnostic: share of actual SPARQL rows that are reference "
        "rows under the best column map (default mode)",
        reference="ragmeter (docs/steps.md)",
        formula="|act rows ∩ ref rows| / |act rows| under the best column map (1 if both empty)",
        citation=f"{_SPARQL}; precision: van Rijsbergen 1979, Information Retrieval, ch. 7",
    ),
    _m(
        "sparql_row_recall",
        "Diagnostic: share of reference SPARQL rows found under the best column map (default mode)",
        reference="ragmeter (docs/steps.md)",
        formula="|act rows ∩ ref rows| / |ref rows| under the best column map",
        citation=f"{_SPARQL}; recall: van Rijsbergen 1979, Information Retrieval, ch. 7",
    ),
    _m(
        "input_tokens",
        "Input tokens the agent used",
        direction="lower",
        range=(0.0, None),
        formula="input_tokens of the response, as the agent reports it",
    ),
    _m(
        "output_tokens",
        "Output tokens the agent used",
        direction="lower",
        range=(0.0, None),
        formula="output_tokens of the response, as the agent reports it",
    ),
    _m(
        "total_tokens",
        "Tokens the agent used",
        direction="lower",
        range=(0.0, None),
        formula="total_tokens of the response, as the agent reports it",
    ),
    _m(
        "elapsed_sec",
        "Seconds the agent took",
        direction="lower",
        range=(0.0, None),
        formula="elapsed_sec of the response, as the agent reports it",
    ),
    _m(
        "number_of_error_samples",
        "Questions whose response is an error",
        direction="lower",
        range=(0.0, None),
        level="corpus",
        formula="|{q : the response of q has error}|",
    ),
    _m(
        "number_of_success_samples",
        "Questions answered without error",
        direction="higher",
        range=(0.0, None),
        level="corpus",
        formula="|{q : the response of q has no error}|",
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
