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
from ragmeter.warnings import renamed_attributes

__all__ = ["HEADLINE", "PIPELINE_OUTPUTS", "TASKS"]

_LLM = frozenset({"llm"})
_LLM_EMB = frozenset({"llm", "embeddings"})


_RAGAS_CITE = (
    "Es et al. 2024, RAGAS: Automated Evaluation of Retrieval Augmented Generation "
    "(EACL, system demonstrations)"
)
_GRAPHRAG_CITE = "Ontotext graphrag-eval 6.6.1 (no paper)"
# Literature, not the tools ragmeter is compatible with (``reference``); the prompts are
# ragmeter's own (docs/judge.md, "Metrics").
_CITATIONS = {
    "graphrag-eval 6": (
        f"{_GRAPHRAG_CITE}; atomic claims as in Min et al. 2023, FActScore (EMNLP)"
    ),
    "RAGAS": _RAGAS_CITE,
    "DeepEval": f"confident-ai DeepEval faithfulness (no paper); statements as in {_RAGAS_CITE}",
    "G-Eval": (
        "Liu et al. 2023, G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment (EMNLP)"
    ),
}
_RETRIEVAL_STEP_CITE = f"{_GRAPHRAG_CITE}; context recall and precision of {_RAGAS_CITE}"


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
        formula="2PR/(P+R), P = match/|answer claims|, R = match/|reference claims|; 0 if P+R = 0",
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
        formula="0 if noncommittal else (1/N) Σ_i cos(e(q), e(q_i)), q_i the N generated questions",
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
        formula="Σ_k v_k·P@k / Σ_k v_k, v_k = 1 if chunk k helps reach the reference (0 if none)",
        default=True,
    ),
    _m(
        "context_utilization",
        "average precision of the retrieved chunks judged useful for the generated answer",
        _RAGAS,
        formula="Σ_k v_k·P@k / Σ_k v_k, v_k = 1 if chunk k helps reach the answer (0 if none)",
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
        formula="|RE ∩ RCE| / |RE|, RE the reference's entities, RCE the contexts'",
        params=(Param("match", "str", "normalized", "normalized | exact"),),
    ),
    _m(
        "retrieval_answer_recall",
        "context recall of a retrieval step against the reference answer",
        _GRAPHRAG,
        formula="#reference-answer statements attributed to the step's texts / #statements",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "retrieval_answer_precision",
        "context precision of a retrieval step against the reference answer",
        _GRAPHRAG,
        formula="Σ_k v_k·P@k / Σ_k v_k over the step's texts, v_k useful for the reference answer",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "retrieval_answer_f1",
        "F1 of retrieval_answer_recall and retrieval_answer_precision",
        _GRAPHRAG,
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "retrieval_context_recall",
        "context recall of a retrieval step against the reference step's contexts",
        _GRAPHRAG,
        formula="#statements of the reference step's texts attributed to the step's / #statements",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "retrieval_context_precision",
        "context precision of a retrieval step against the reference step's contexts",
        _GRAPHRAG,
        formula="Σ_k v_k·P@k / Σ_k v_k over the step's texts, v_k useful for the reference texts",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "retrieval_context_f1",
        "F1 of retrieval_context_recall and retrieval_context_precision",
        _GRAPHRAG,
        formula="2PR/(P+R), 0 when both are 0; only when both parts are ok",
        citation=_RETRIEVAL_STEP_CITE,
    ),
    _m(
        "rubric",
        "G-Eval-like rubric score with fixed steps, normalised to [0, 1] (rubric:<name>)",
        "G-Eval",
        formula="(score − min)/(max − min); logprob-weighted when configured",
        params=(Param("name", "str", None, "the rubric's name in the judge configuration"),),
    ),
)

PIPELINE_OUTPUTS: dict[str, tuple[str, ...]] = {
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
    out: family for family, outs in PIPELINE_OUTPUTS.items() for out in outs
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


# "families" also names the retrieval measure families; the judge pipelines are PIPELINE_OUTPUTS
__getattr__ = renamed_attributes(__name__, {"FAMILIES": "PIPELINE_OUTPUTS"}, globals())
