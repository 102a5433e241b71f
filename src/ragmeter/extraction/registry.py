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
SEMEVAL_CITE = (
    "Segura-Bedmar, Martínez & Herrero-Zazo 2013, SemEval-2013 Task 9 (SemEval); COR/INC/PAR/MIS/"
    "SPU from Chinchor & Sundheim 1993, MUC-5 Evaluation Metrics (MUC-5)"
)
CONLL_CITE = (
    "Tjong Kim Sang & De Meulder 2003, Introduction to the CoNLL-2003 Shared Task (CoNLL); "
    "Ramshaw & Marcus 1995, Text Chunking using Transformation-Based Learning (VLC)"
)
AVERAGING_CITE = (
    "Sokolova & Lapalme 2009, A systematic analysis of performance measures for classification "
    "tasks (Information Processing & Management)"
)
SKLEARN_CITE = f"{AVERAGING_CITE}; Pedregosa et al. 2011, Scikit-learn (JMLR)"
HIERARCHY_CITE = (
    "Silla & Freitas 2011, A survey of hierarchical classification across different application "
    "domains (Data Mining and Knowledge Discovery)"
)
MULTILABEL_CITE = (
    "Tsoumakas, Katakis & Vlahavas 2010, Mining Multi-label Data (Data Mining and Knowledge "
    "Discovery Handbook)"
)
LINKING_CITE = (
    "Cornolti, Ferragina & Ciaramita 2013, A Framework for Benchmarking Entity-Annotation Systems "
    "(WWW); Usbeck et al. 2015, GERBIL (WWW)"
)
RANKING_CITE = (
    "Voorhees 1999, The TREC-8 Question Answering Track Report (TREC); Bassani 2022, ranx (ECIR)"
)
NIL_CITE = "Ji et al. 2010, Overview of the TAC 2010 Knowledge Base Population Track (TAC)"

# P, R, F1 from counts; the ``num`` of a count block (COR + ½·PAR for the SemEval schemas)
_SEMEVAL_PRF = {
    "precision": "(COR + ½·PAR)/ACT, ACT = COR + INC + PAR + SPU",
    "recall": "(COR + ½·PAR)/POS, POS = COR + INC + PAR + MIS",
    "f1": "2PR/(P+R), P and R as (COR + ½·PAR)/ACT and /POS",
}
_LABEL_PRF = {
    "precision": "P_t = TP_t/|P_t|",
    "recall": "R_t = TP_t/|G_t|",
    "f1": "F1_t = 2·P_t·R_t/(P_t + R_t)",
}
_CLASS_PRF = {
    "precision": "P_c = TP_c/(TP_c + FP_c)",
    "recall": "R_c = TP_c/(TP_c + FN_c)",
    "f1": "F1_c = 2TP_c/(2TP_c + FP_c + FN_c)",
}
_POOLED_PRF = {
    "precision": "ΣTP/(ΣTP + ΣFP)",
    "recall": "ΣTP/(ΣTP + ΣFN)",
    "f1": "2PR/(P+R) of the pooled P and R",
}


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
                    formula=f"{_SEMEVAL_PRF[key]}; counts summed over documents (PAR = 0 "
                    "outside partial)",
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
                    formula=(
                        f"(1/|D|) Σ_d X_d; X_d: {_SEMEVAL_PRF[key]} of document d; a document "
                        "without gold and predictions scores 1 (or is skipped)"
                    ),
                    citation=SEMEVAL_CITE,
                    level="sample",
                )
            )
            for prefix, what, mean in (
                ("macro_over_labels", "unweighted mean over labels", "(1/|L|) Σ_l X_l"),
                (
                    "weighted_over_labels",
                    "mean over labels weighted by gold support",
                    "Σ_l n_l·X_l / Σ_l n_l, n_l the gold spans of label l",
                ),
            ):
                metrics.append(
                    MetricDef(
                        "ner",
                        f"{prefix}.{schema}.{key}",
                        f"{what} of the per-label {key} ({schema} schema)",
                        NERVALUATE,
                        aliases=(f"{prefix}.ent_type.{key}",) if schema == "type" else (),
                        formula=(
                            f"{mean}; X_l: {_SEMEVAL_PRF[key]}, gold and predictions restricted "
                            "to label l and matched again"
                        ),
                        citation=f"{SEMEVAL_CITE}; {AVERAGING_CITE}",
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
                    formula={
                        "micro": _POOLED_PRF[key] + ", TP_t = |G_t ∩ P_t| pooled over labels t",
                        "macro": f"(1/|T|) Σ_t X_t, X_t: {_LABEL_PRF[key]}, TP_t = |G_t ∩ P_t|, "
                        "T the labels of gold ∪ predictions",
                        "weighted": f"Σ_t |G_t|·X_t / Σ_t |G_t|, X_t: {_LABEL_PRF[key]}, "
                        "TP_t = |G_t ∩ P_t|",
                    }[avg],
                    citation=f"{CONLL_CITE}; Nakayama 2018, seqeval",
                    level="corpus",
                )
            )
    metrics.append(
        MetricDef(
            "ner",
            "token_accuracy",
            "share of tokens whose tag equals gold, O included (tag input only)",
            "seqeval 1.2.2 (accuracy_score)",
            formula="|{i : tag_i(pred) = tag_i(gold)}| / #tokens, O tags included",
            citation=f"{CONLL_CITE}; Nakayama 2018, seqeval",
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
            formula="|{i : pred_i = gold_i}| / n",
            citation=SKLEARN_CITE,
            level="sample",
            default=True,
        ),
        MetricDef(
            "classification",
            "balanced_accuracy",
            "mean recall over the labels present in gold",
            "scikit-learn >= 1.3 (balanced_accuracy_score)",
            formula="(1/|C_g|) Σ_{c ∈ C_g} R_c, R_c = TP_c/(TP_c + FN_c), C_g the labels in gold",
            citation=(
                "Brodersen et al. 2010, The Balanced Accuracy and Its Posterior Distribution (ICPR)"
            ),
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
                    formula={
                        "micro": _POOLED_PRF[key] + " over the labels c of labels_used",
                        "macro": f"(1/|C|) Σ_c X_c, X_c: {_CLASS_PRF[key]}, C = labels_used",
                        "weighted": f"Σ_c n_c·X_c / Σ_c n_c, X_c: {_CLASS_PRF[key]}, n_c the gold "
                        "support",
                    }[avg],
                    citation=SKLEARN_CITE,
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
            formula="|{i : anc_ℓ(pred_i) = anc_ℓ(gold_i)}| / n, anc_ℓ the ancestor at level ℓ",
            citation=HIERARCHY_CITE,
            level="sample",
            params=(Param("level", "int", 1),),
        ),
        MetricDef(
            "classification",
            "hierarchy_gap",
            "category_accuracy − accuracy",
            "arithmetic from docs/extraction.md#type-classification",
            formula="category_accuracy − accuracy",
            citation=HIERARCHY_CITE,
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
                formula={
                    "hP": "Σ_i |Ĝ_i ∩ P̂_i| / Σ_i |P̂_i|, Ĝ, P̂ the labels with their ancestors "
                    "(root excluded)",
                    "hR": "Σ_i |Ĝ_i ∩ P̂_i| / Σ_i |Ĝ_i|, Ĝ, P̂ the labels with their ancestors "
                    "(root excluded)",
                    "hF": "2·hP·hR / (hP + hR)",
                }[key],
                citation=(
                    "Kiritchenko, Matwin, Nock & Famili 2006, Learning and Evaluation in the "
                    "Presence of Class Hierarchies (Canadian AI)"
                ),
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
                    formula={
                        "micro": _POOLED_PRF[key] + " over the item × label indicator matrix",
                        "macro": f"(1/|C|) Σ_c X_c, X_c: {_CLASS_PRF[key]}, over label columns c",
                        "weighted": f"Σ_c n_c·X_c / Σ_c n_c, X_c: {_CLASS_PRF[key]}, n_c the gold "
                        "support",
                        "samples": "(1/n) Σ_i "
                        + {
                            "precision": "|Y_i ∩ Ŷ_i| / |Ŷ_i|",
                            "recall": "|Y_i ∩ Ŷ_i| / |Y_i|",
                            "f1": "2·|Y_i ∩ Ŷ_i| / (|Y_i| + |Ŷ_i|)",
                        }[key]
                        + ", Y_i, Ŷ_i the gold and predicted label sets",
                    }[avg],
                    citation=f"{MULTILABEL_CITE}; Pedregosa et al. 2011, Scikit-learn (JMLR)",
                    level="sample" if avg == "samples" else "corpus",
                )
            )
    metrics.append(
        MetricDef(
            "classification",
            "multilabel.subset_accuracy",
            "share of items whose predicted label set equals the gold set",
            "scikit-learn >= 1.3 (accuracy_score on label sets)",
            formula="|{i : Ŷ_i = Y_i}| / n",
            citation=MULTILABEL_CITE,
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
        formula="(1/|M|) Σ_m [rank_m ≤ k], M the InKB gold mentions",
        citation=RANKING_CITE,
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
            formula="(1/|M|) Σ_m 1/rank_m, 1/∞ = 0, M the InKB gold mentions",
            citation=RANKING_CITE,
            level="sample",
            default=True,
        ),
        MetricDef(
            "linking",
            "d2kb_accuracy",
            "share of gold mentions correctly resolved (NIL detected, or InKB ranked first)",
            "arithmetic from docs/extraction.md#entity-linking",
            formula=(
                "|{m : (gold NIL ∧ predicted NIL) ∨ (gold InKB ∧ not predicted NIL ∧ rank_m = 1)}| "
                "/ |gold mentions|"
            ),
            citation=f"{LINKING_CITE}; NIL: {NIL_CITE}",
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
                formula=_POOLED_PRF[key].replace("Σ", "")
                + ", TP = gold NIL ∧ predicted NIL, FP = gold InKB ∧ predicted NIL, FN = gold NIL "
                "∧ not predicted NIL",
                citation=NIL_CITE,
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
                            formula=(
                                _POOLED_PRF[key] + ", counts summed over documents"
                                if avg == "micro"
                                else f"(1/|D|) Σ_d X_d; X_d: {_POOLED_PRF[key]} of document d "
                                "(1 when TP = FP = FN = 0)"
                            ),
                            citation=(
                                f"{LINKING_CITE}; Röder, Usbeck & Ngonga Ngomo 2018, GERBIL – "
                                "Benchmarking Named Entity Recognition and Linking Consistently "
                                "(Semantic Web Journal)"
                            ),
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


_WEIGHTED_KAPPA = (
    "Cohen 1968, Weighted kappa: Nominal scale agreement with provision for scaled disagreement "
    "or partial credit (Psychological Bulletin)"
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
            formula="p_o = (1/N) Σ_i P_i, P_i = Σ_j n_ij(n_ij − 1)/(n(n − 1))",
            citation="Fleiss 1971, Measuring nominal scale agreement among many raters "
            "(Psychological Bulletin)",
            level="sample",
            default=True,
        ),
        coef(
            "cohen_kappa",
            "Cohen's κ, two raters, complete data",
            "scikit-learn >= 1.3 (cohen_kappa_score)",
            "κ = 1 − Σw·O / Σw·E, w_ij = [i ≠ j] (= (p_o − p_e)/(1 − p_e))",
            citation="Cohen 1960, A Coefficient of Agreement for Nominal Scales "
            "(Educational and Psychological Measurement)",
            default=True,
        ),
        coef(
            "cohen_kappa_linear",
            "Cohen's κ with linear weights (ordered categories)",
            "scikit-learn >= 1.3 (cohen_kappa_score, weights='linear')",
            "κ_w = 1 − Σw·O / Σw·E, w_ij = |i − j|",
            citation=_WEIGHTED_KAPPA,
        ),
        coef(
            "cohen_kappa_quadratic",
            "Cohen's κ with quadratic weights (ordered categories)",
            "scikit-learn >= 1.3 (cohen_kappa_score, weights='quadratic')",
            "κ_w = 1 − Σw·O / Σw·E, w_ij = (i − j)²",
            citation=_WEIGHTED_KAPPA,
        ),
        coef(
            "scotts_pi",
            "Scott's π, two raters (pooled marginals)",
            "statsmodels >= 0.14 (fleiss_kappa, two raters)",
            "π = (p_o − p_e)/(1 − p_e), p_e = Σ_k p̄_k²",
            citation="Scott 1955, Reliability of Content Analysis: The Case of Nominal Scale "
            "Coding (Public Opinion Quarterly)",
        ),
        coef(
            "fleiss_kappa",
            "Fleiss' κ, any number of raters, complete data",
            "statsmodels >= 0.14 (fleiss_kappa, method='fleiss')",
            "κ = (P̄ − p_e)/(1 − p_e), p_e = Σ_j p_j²",
            citation="Fleiss 1971, Measuring nominal scale agreement among many raters "
            "(Psychological Bulletin)",
            default=True,
        ),
        coef(
            "randolph_kappa",
            "Randolph's free-marginal κ",
            "statsmodels >= 0.14 (fleiss_kappa, method='randolph')",
            "κ = (P̄ − 1/q)/(1 − 1/q)",
            citation="Randolph 2005, Free-Marginal Multirater Kappa (Joensuu Learning and "
            "Instruction Symposium)",
        ),
        coef(
            "krippendorff_alpha",
            "Krippendorff's α (missing ratings allowed; nominal/ordinal/interval/ratio)",
            "krippendorff >= 0.6 (alpha)",
            "α = 1 − (n − 1)·Σ o_ck δ_ck / Σ n_c n_k δ_ck",
            citation="Krippendorff 2011, Computing Krippendorff's Alpha-Reliability (University "
            "of Pennsylvania, Annenberg School for Communication)",
            default=True,
        ),
        coef(
            "gwet_ac1",
            "Gwet's AC1 (robust to the kappa paradox)",
            "Gwet (2008), multi-rater form",
            "AC1 = (p_a − p_e)/(1 − p_e), p_e = Σ_k π_k(1 − π_k)/(q − 1)",
            citation="Gwet 2008, Computing inter-rater reliability and its variance in the "
            "presence of high agreement (British Journal of Mathematical and Statistical "
            "Psychology)",
        ),
        MetricDef(
            "agreement",
            "token_kappa",
            "Cohen's κ on the token tags of two annotators' spans",
            "scikit-learn >= 1.3 (cohen_kappa_score)",
            range=(-1.0, 1.0),
            formula="Cohen's κ of the two annotators' token tags (O included), tokens aligned",
            citation="Cohen 1960 (Educational and Psychological Measurement); for NER, "
            "Hripcsak & Rothschild 2005, Agreement, the F-Measure, and Reliability in Information "
            "Retrieval (JAMIA)",
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
                citation="Hripcsak & Rothschild 2005, Agreement, the F-Measure, and Reliability in "
                "Information Retrieval (JAMIA)",
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
