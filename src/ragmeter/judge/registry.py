"""The ``judge`` task of the metrics registry (docs/judge.md, "Metrics").

Plain dataclasses only: reading the registry never imports the judge runtime, the ``openai`` SDK
or an embedder. A metric with several outputs names each output key: ``answer_correctness``
(headline value ``answer_f1``) also gives ``answer_recall`` and ``answer_precision``;
``faithfulness`` also gives ``faithfulness_contradiction_rate``; the graphrag-eval step metrics
give their ``_recall``, ``_precision`` and ``_f1`` keys. Asking for any output of a family
computes the whole family (one set of LLM calls) and reports every output.

Rubrics are parameterised: ``rubric:<name>`` names the rubric ``<name>`` of the judge
configuration.
"""

from __future__ import annotations

import re

from ragmeter.registry import MetricDef, Param, ResolvedMetric, TaskDef

__all__ = ["FAMILIES", "HEADLINE", "TASKS"]

_LLM = frozenset({"llm"})
_LLM_EMB = frozenset({"llm", "embeddings"})


_CITATIONS = {
    "graphrag-eval 6": "Ontotext-AD/graphrag-eval 6.x; ragmeter counts the claim lists",
    "RAGAS": "Es et al. 2023, RAGAS (vibrantlabsai/ragas); ragmeter's own prompts",
    "DeepEval": "confident-ai/deepeval faithfulness (contradiction view); ragmeter's own prompts",
    "G-Eval": "Liu et al. 2023, G-Eval; fixed steps, ragmeter's own prompts",
}


def _m(name: str, summary: str, reference: str, **kw) -> MetricDef:
    kw.setdefault("needs", _LLM)
    kw.setdefault("extra", "llm")
    kw.setdefault("citation", _CITATIONS[reference])
    return MetricDef("judge", name, summary, reference, **kw)


_GRAPHRAG = "graphrag-eval 6"
_RAGAS = "RAGAS"

_METRICS = (
    _m(
        "answer_correctness",
        "F1 of matched atomic claims between reference and answer (headline of the claims judge)",
        _GRAPHRAG,
        aliases=("answer_f1",),
        formula="2PR/(P+R), P = match/|answer claims|, R = match/|reference claims|",
        default=False,
    ),
    _m(
        "answer_recall",
        "share of reference claims matched by an answer claim",
        _GRAPHRAG,
        formula="match/|reference claims|",
    ),
    _m(
        "answer_precision",
        "share of answer claims matched by a reference claim",
        _GRAPHRAG,
        formula="match/|answer claims|",
    ),
    _m(
        "answer_relevance",
        "mean cosine between the question and N questions generated from the answer (MiniLM)",
        _RAGAS,
        aliases=("answer_relevancy", "response_relevancy"),
        range=(-1.0, 1.0),
        formula="0 if noncommittal else (1/N) Σ cos(e(q), e(q_i))",
        needs=_LLM_EMB,
        default=True,
    ),
    _m(
        "faithfulness",
        "share of the answer's statements supported by the retrieved contexts",
        _RAGAS,
        formula="#supported / #statements",
        default=True,
    ),
    _m(
        "faithfulness_contradiction_rate",
        "share of the answer's statements contradicted by the retrieved contexts",
        "DeepEval",
        direction="lower",
        formula="#contradicted / #statements",
    ),
    _m(
        "context_precision",
        "average precision of the retrieved chunks judged useful for the reference answer",
        _RAGAS,
        aliases=("llm_context_precision_with_reference",),
        formula="Σ_k v_k·P@k / Σ_k v_k (0 when no chunk is useful)",
        default=True,
    ),
    _m(
        "context_utilization",
        "average precision of the retrieved chunks judged useful for the generated answer",
        _RAGAS,
        formula="Σ_k v_k·P@k / Σ_k v_k, usefulness judged against the answer",
    ),
    _m(
        "context_recall",
        "share of reference statements attributable to the retrieved contexts",
        _RAGAS,
        aliases=("llm_context_recall",),
        formula="#attributed / #reference statements",
        default=True,
    ),
    _m(
        "context_entity_recall",
        "share of the reference's named entities also found in the retrieved contexts",
        _RAGAS,
        formula="|RE ∩ RCE| / |RE|",
        params=(Param("match", "str", "normalized", "normalized | exact"),),
    ),
    _m(
        "retrieval_answer_recall",
        "context recall of a retrieval step against the reference answer",
        _GRAPHRAG,
    ),
    _m(
        "retrieval_answer_precision",
        "context precision of a retrieval step against the reference answer",
        _GRAPHRAG,
    ),
    _m(
        "retrieval_answer_f1",
        "F1 of retrieval_answer_recall and retrieval_answer_precision",
        _GRAPHRAG,
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
    ),
    _m(
        "retrieval_context_recall",
        "context recall of a retrieval step against the reference step's contexts",
        _GRAPHRAG,
    ),
    _m(
        "retrieval_context_precision",
        "context precision of a retrieval step against the reference step's contexts",
        _GRAPHRAG,
    ),
    _m(
        "retrieval_context_f1",
        "F1 of retrieval_context_recall and retrieval_context_precision",
        _GRAPHRAG,
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
    ),
    _m(
        "rubric",
        "G-Eval-like rubric score with fixed steps, normalised to [0, 1] (rubric:<name>)",
        "G-Eval",
        formula="(score − min)/(max − min); logprob-weighted when configured",
        params=(Param("name", "str", None, "the rubric's name in the judge configuration"),),
    ),
)

FAMILIES: dict[str, tuple[str, ...]] = {
    "answer_correctness": ("answer_correctness", "answer_recall", "answer_precision"),
    "faithfulness": ("faithfulness", "faithfulness_contradiction_rate"),
    "retrieval_answer": (
        "retrieval_answer_recall",
        "retrieval_answer_precision",
        "retrieval_answer_f1",
    ),
    "retrieval_context": (
        "retrieval_context_recall",
        "retrieval_context_precision",
        "retrieval_context_f1",
    ),
}
"""Pipeline → the metric names it outputs (one set of calls gives all of them)."""

HEADLINE: dict[str, str] = {
    out: family for family, outs in FAMILIES.items() for out in outs
}  # output name → pipeline
for _name in (
    "answer_relevance",
    "context_precision",
    "context_utilization",
    "context_recall",
    "context_entity_recall",
):
    HEADLINE[_name] = _name

_RUBRIC = re.compile(r"rubric:([A-Za-z0-9_][A-Za-z0-9_.-]*)\Z")


def _resolve(name: str) -> ResolvedMetric | None:
    hit = _RUBRIC.match(name)
    if hit is None:
        return None
    rubric = next(m for m in _METRICS if m.name == "rubric")
    return ResolvedMetric(rubric, f"rubric:{hit.group(1)}", name, {"name": hit.group(1)})


TASKS = (
    TaskDef(
        "judge",
        "ragmeter.judge",
        "LLM-as-judge metrics: claims, relevance, faithfulness, context metrics, rubrics",
        _METRICS,
        resolver=_resolve,
        extra="llm",
        needs=_LLM,
        spellings=("rubric:helpfulness",),
    ),
)
