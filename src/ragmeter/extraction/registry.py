"""Metrics of the ``ner``, ``classification``, ``linking`` and ``agreement`` tasks.

See docs/extraction.md#command-line.

Metric names are the report key paths of the extraction reports (``overall.strict.f1``,
``accuracy``, ``macro.f1``, ``ranking.mrr``, ``ranking.hits@10``, ``nil.f1``); the heritage
summary keys are aliases (``ner_f1_strict``, ``ner_f1_partial`` = ``overall.type.f1``,
``type_classification_accuracy``, ``entity_linking_mrr``, ``entity_linking_hits@1``).
Import-light: plain dataclasses only.
"""

from __future__ import annotations

import re

from ragmeter.errors import UsageError
from ragmeter.registry import MetricDef, Param, ResolvedMetric, TaskDef

__all__ = ["TASKS"]

_PRF = ("precision", "recall", "f1")
_SCHEMAS = ("strict", "exact", "partial", "type")
SEQEVAL = "seqeval 1.2.2 (classification_report)"
NERVALUATE = "nervaluate 1.2.1 (SemEval-2013 Task 9.1), optimal matching (docs/extraction.md#ner)"
SKLEARN = "scikit-learn >= 1.3 (precision_recall_fscore_support)"
GERBIL = "GERBIL (Röder et al., Semantic Web Journal 2018), MatchingsCounterImpl"
SEMEVAL_CITE = "Segura-Bedmar et al., SemEval-2013 Task 9 (2013); Batista, nervaluate"


def _ner() -> TaskDef:
    metrics: list[MetricDef] = []
    schema_doc = {
        "strict": "same boundaries and label",
        "exact": "same boundaries, label ignored",
        "partial": "boundaries, half credit for overlap",
        "type": "overlap and same label",
    }
    for schema in _SCHEMAS:
        for key in _PRF:
            aliases: list[str] = []
            if schema == "type":
                aliases.append(f"overall.ent_type.{key}")
            if key == "f1" and schema == "strict":
                aliases.append("ner_f1_strict")
            if key == "f1" and schema == "type":
                aliases.append("ner_f1_partial")
            metrics.append(
                MetricDef(
                    "ner",
                    f"overall.{schema}.{key}",
                    f"micro {key} over documents, SemEval {schema} schema ({schema_doc[schema]})",
                    NERVALUATE,
                    aliases=tuple(aliases),
                    formula=(
                        "P = (COR + ½PAR)/ACT, R = (COR + ½PAR)/POS, F1 = 2PR/(P+R); counts "
                        "summed over documents"
                    ),
                    citation=SEMEVAL_CITE,
                    level="corpus",
                    default=key == "f1",
                )
            )
            metrics.append(
                MetricDef(
                    "ner",
                    f"macro_over_documents.{schema}.{key}",
                    f"mean over documents of the per-document {key} ({schema} schema)",
                    NERVALUATE,
                    aliases=(f"macro_over_documents.ent_type.{key}",) if schema == "type" else (),
                    formula="mean of per-document values; empty documents 1 (perfect) or skipped",
                    level="sample",
                )
            )
            for prefix, what in (
                ("macro_over_labels", "unweighted mean over labels"),
                ("weighted_over_labels", "mean over labels weighted by gold support"),
            ):
                metrics.append(
                    MetricDef(
                        "ner",
                        f"{prefix}.{schema}.{key}",
                        f"{what} of the per-label {key} ({schema} schema)",
                        NERVALUATE,
                        aliases=(f"{prefix}.ent_type.{key}",) if schema == "type" else (),
                        level="corpus",
                    )
                )
    for avg in ("micro", "macro", "weighted"):
        for key in _PRF:
            metrics.append(
                MetricDef(
                    "ner",
                    f"entity.{avg}.{key}",
                    f"entity-level exact match, {avg} {key} (seqeval)",
                    SEQEVAL,
                    level="corpus",
                )
            )
    metrics.append(
        MetricDef(
            "ner",
            "token_accuracy",
            "share of tokens whose tag equals gold, O included (tag input only)",
            "seqeval 1.2.2 (accuracy_score)",
            level="corpus",
        )
    )
    return TaskDef(
        "ner",
        "ragmeter.extraction.ner",
        "Named-entity recognition: SemEval-2013 schemas and seqeval entity scores",
        tuple(metrics),
    )


def _classification() -> TaskDef:
    metrics = [
        MetricDef(
            "classification",
            "accuracy",
            "share of items whose predicted type equals gold",
            "scikit-learn >= 1.3 (accuracy_score)",
            aliases=("type_classification_accuracy", "exact_accuracy"),
            level="sample",
            default=True,
        ),
        MetricDef(
            "classification",
            "balanced_accuracy",
            "mean recall over the labels present in gold",
            "scikit-learn >= 1.3 (balanced_accuracy_score)",
            level="corpus",
        ),
    ]
    for avg in ("micro", "macro", "weighted"):
        for key in _PRF:
            metrics.append(
                MetricDef(
                    "classification",
                    f"{avg}.{key}",
                    f"{avg}-averaged {key} over labels_used",
                    SKLEARN,
                    level="corpus",
                    default=avg == "macro" and key == "f1",
                    params=(Param("labels", "str|list", "present"),),
                )
            )
    metrics += [
        MetricDef(
            "classification",
            "category_accuracy",
            "share of items whose predicted type has the gold type's category",
            "arithmetic from docs/extraction.md#type-classification",
            level="sample",
            params=(Param("level", "int", 1),),
        ),
        MetricDef(
            "classification",
            "hierarchy_gap",
            "category_accuracy − accuracy",
            "arithmetic from docs/extraction.md#type-classification",
            range=(0.0, 1.0),
            direction="none",
            level="corpus",
        ),
    ]
    for key, what in (("hP", "precision"), ("hR", "recall"), ("hF", "F1")):
        metrics.append(
            MetricDef(
                "classification",
                f"hierarchical.{key}",
                f"hierarchical {what} over labels augmented with their ancestors",
                "Kiritchenko et al. (2006), docs/extraction.md#type-classification",
                level="corpus",
            )
        )
    for avg in ("micro", "macro", "weighted", "samples"):
        for key in _PRF:
            metrics.append(
                MetricDef(
                    "classification",
                    f"multilabel.{avg}.{key}",
                    f"multi-label {avg} {key} (primary + secondary types)",
                    "scikit-learn >= 1.3 (MultiLabelBinarizer + precision_recall_fscore_support)",
                    level="sample" if avg == "samples" else "corpus",
                )
            )
    metrics.append(
        MetricDef(
            "classification",
            "multilabel.subset_accuracy",
            "share of items whose predicted label set equals the gold set",
            "scikit-learn >= 1.3 (accuracy_score on label sets)",
            level="sample",
        )
    )
    return TaskDef(
        "classification",
        "ragmeter.extraction.classification",
        "Type classification: accuracy, per-class and averaged P/R/F1, hierarchy",
        tuple(metrics),
    )


_HITS = re.compile(r"^(?:ranking\.)?(?:hits@|hit_rate@|entity_linking_hits@)(\d+)$")


def _linking() -> TaskDef:
    hits = MetricDef(
        "linking",
        "ranking.hits@k",
        "share of InKB gold mentions whose gold id is among the first k candidates",
        "ranx 0.3.21 (hit_rate@k)",
        params=(Param("k", "int", 1, "cutoff"),),
        formula="(1/|M|) Σ 1[rank_m ≤ k] over InKB gold mentions M",
        level="sample",
        default=True,
    )
    metrics = [
        hits,
        MetricDef(
            "linking",
            "ranking.mrr",
            "mean reciprocal rank of the gold id over InKB gold mentions (missing = 0)",
            "ranx 0.3.21 (mrr)",
            aliases=("mrr", "entity_linking_mrr"),
            formula="(1/|M|) Σ 1/rank_m",
            level="sample",
            default=True,
        ),
        MetricDef(
            "linking",
            "d2kb_accuracy",
            "share of gold mentions correctly resolved (NIL detected, or InKB ranked first)",
            "arithmetic from docs/extraction.md#entity-linking",
            level="sample",
        ),
    ]
    for key in _PRF:
        metrics.append(
            MetricDef(
                "linking",
                f"nil.{key}",
                f"NIL detection {key} (positive class NIL, joined by mention id)",
                "scikit-learn >= 1.3 (average='binary')",
                aliases=(f"nil_{key}",),
                level="corpus",
                default=key == "f1",
            )
        )
    for match in ("strong", "weak"):
        for subset in ("", ".inkb", ".ee", ".gs_inkb"):
            for avg in ("micro", "macro"):
                for key in _PRF:
                    metrics.append(
                        MetricDef(
                            "linking",
                            f"e2e.{match}{subset}.{avg}.{key}",
                            f"end-to-end linking, {match} annotation match"
                            + (f", {subset[1:]} subset" if subset else "")
                            + f", {avg} {key} over documents",
                            GERBIL,
                            level="corpus" if avg == "micro" else "sample",
                        )
                    )

    def resolver(name: str) -> ResolvedMetric | None:
        if name in ("accuracy@1", "ranking.accuracy@1"):
            return ResolvedMetric(hits, "ranking.hits@1", name, {"k": 1})
        m = _HITS.match(name)
        if m is None:
            return None
        k = int(m.group(1))
        if k < 1:
            raise UsageError(f"bad cutoff in '{name}' (expected hits@k with k >= 1)")
        return ResolvedMetric(hits, f"ranking.hits@{k}", name, {"k": k})

    return TaskDef(
        "linking",
        "ragmeter.extraction.linking",
        "Entity linking: Hits@K, MRR, NIL detection, GERBIL-style end-to-end",
        tuple(metrics),
        resolver=resolver,
        spellings=("ranking.hits@1", "ranking.hits@5", "ranking.hits@10", "entity_linking_hits@1"),
    )


def _agreement() -> TaskDef:
    """Inter-annotator agreement (``ragmeter agreement``); not a task of ``ragmeter run``."""

    def coef(
        name: str, summary: str, reference: str, formula: str, citation: str = "", default=False
    ) -> MetricDef:
        # chance-corrected coefficients run from -1 (systematic disagreement) to 1
        return MetricDef(
            "agreement",
            name,
            summary,
            reference,
            range=(-1.0, 1.0),
            formula=formula,
            citation=citation,
            level="corpus",
            default=default,
        )

    metrics = [
        MetricDef(
            "agreement",
            "observed_agreement",
            "share of agreeing rater pairs per item, averaged over items (p_o, Fleiss' P̄)",
            "statsmodels >= 0.14 (fleiss_kappa internals)",
            formula="P_i = Σ_j n_ij(n_ij − 1)/(n(n − 1)); p_o = mean_i P_i",
            level="sample",
            default=True,
        ),
        coef(
            "cohen_kappa",
            "Cohen's κ, two raters, complete data",
            "scikit-learn >= 1.3 (cohen_kappa_score)",
            "κ = 1 − Σw·O / Σw·E",
            citation="Cohen (1960)",
            default=True,
        ),
        coef(
            "cohen_kappa_linear",
            "Cohen's κ with linear weights (ordered categories)",
            "scikit-learn >= 1.3 (cohen_kappa_score, weights='linear')",
            "κ_w = 1 − Σw·O / Σw·E, w = |i − j|",
        ),
        coef(
            "cohen_kappa_quadratic",
            "Cohen's κ with quadratic weights (ordered categories)",
            "scikit-learn >= 1.3 (cohen_kappa_score, weights='quadratic')",
            "κ_w = 1 − Σw·O / Σw·E, w = (i − j)²",
        ),
        coef(
            "scotts_pi",
            "Scott's π, two raters (pooled marginals)",
            "statsmodels >= 0.14 (fleiss_kappa, two raters)",
            "π = (p_o − p_e)/(1 − p_e), p_e = Σ_k p̄_k²",
            citation="Scott (1955)",
        ),
        coef(
            "fleiss_kappa",
            "Fleiss' κ, any number of raters, complete data",
            "statsmodels >= 0.14 (fleiss_kappa, method='fleiss')",
            "κ = (P̄ − p_e)/(1 − p_e), p_e = Σ_j p_j²",
            citation="Fleiss (1971)",
            default=True,
        ),
        coef(
            "randolph_kappa",
            "Randolph's free-marginal κ",
            "statsmodels >= 0.14 (fleiss_kappa, method='randolph')",
            "κ = (P̄ − 1/q)/(1 − 1/q)",
            citation="Randolph (2005)",
        ),
        coef(
            "krippendorff_alpha",
            "Krippendorff's α (missing ratings allowed; nominal/ordinal/interval/ratio)",
            "krippendorff >= 0.6 (alpha)",
            "α = 1 − (n − 1)·Σ o_ck δ_ck / Σ n_c n_k δ_ck",
            citation="Krippendorff (2011)",
            default=True,
        ),
        coef(
            "gwet_ac1",
            "Gwet's AC1 (robust to the kappa paradox)",
            "Gwet (2008), multi-rater form",
            "AC1 = (p_a − p_e)/(1 − p_e), p_e = Σ_k π_k(1 − π_k)/(q − 1)",
            citation="Gwet (2008)",
        ),
        MetricDef(
            "agreement",
            "token_kappa",
            "Cohen's κ on the token tags of two annotators' spans",
            "scikit-learn >= 1.3 (cohen_kappa_score)",
            range=(-1.0, 1.0),
            level="corpus",
        ),
    ]
    for schema in _SCHEMAS:
        metrics.append(
            MetricDef(
                "agreement",
                f"span_f1.{schema}",
                f"pairwise span F1 between annotators, mean over pairs ({schema} schema)",
                NERVALUATE,
                formula="F1 = 2·|A∩B| / (|A| + |B|)",
                citation="Hripcsak & Rothschild (2005)",
                level="sample",
                default=schema == "strict",
            )
        )
    return TaskDef(
        "agreement",
        "ragmeter.extraction.iaa",
        "Inter-annotator agreement: κ, π, α and AC1 for labels, pairwise span F1 for entities",
        tuple(metrics),
        runner=False,
    )


TASKS: tuple[TaskDef, ...] = (_ner(), _classification(), _linking(), _agreement())
