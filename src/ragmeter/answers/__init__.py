"""Deterministic answer metrics (docs/answers.md): EM, F1, containment, ROUGE, grounded QA,
factual accuracy and embedding similarity.

>>> import ragmeter.answers as ra
>>> ra.normalize("U.S. Navy", profile="ultrarag")
'u s navy'
>>> ra.tokens("北京大学", profile="squad", tokenizer="unicode")
['北', '京', '大', '学']

The submodules: ``normalizers`` and ``tokenize`` (profiles and tokenizers), ``lexical`` and
``rouge_engine`` (rouge-score compatible) / ``rouge_pltrdy`` (FlashRAG's pltrdy ROUGE), ``scoring``
(``score``, ``evaluate``), ``grounded`` (``ragmeter grounded``), ``factual``, ``semantic``
(all-MiniLM-L6-v2, imported only when used) and ``registry``.
"""

from __future__ import annotations

from typing import Any

from ragmeter.answers import grounded
from ragmeter.answers.factual import FactualScore, factual_accuracy
from ragmeter.answers.normalizers import PROFILES, normalize
from ragmeter.answers.result import AnswersResult
from ragmeter.answers.rouge_engine import RougeScore
from ragmeter.answers.scoring import SampleScore, evaluate, rouge, score
from ragmeter.answers.tokenize import answer_tokens

__all__ = [
    "PROFILES",
    "AnswersResult",
    "FactualScore",
    "RougeScore",
    "SampleScore",
    "evaluate",
    "factual_accuracy",
    "grounded",
    "load_minilm",
    "normalize",
    "qa_similarity",
    "rouge",
    "score",
    "semantic_similarity",
    "tokens",
]


def tokens(text: str, *, profile: str = "squad", tokenizer: str = "default") -> list[str]:
    """Answer tokens tok(x) of ``text`` under ``profile`` (docs/answers.md, "Tokenizers").

    ``default``: ``normalize(text).split()``; ``unicode``: the Unicode-aware tokens of the
    normalised text (CJK characters one by one, accents kept).

    >>> tokens("The U.S. Navy")
    ['us', 'navy']
    """
    return answer_tokens(text, profile=profile, tokenizer=tokenizer)


def load_minilm(*, path: Any = None, device: str | None = None):
    """The all-MiniLM-L6-v2 embedder, loaded offline once per process (needs ``[semantic]``).

    ``encode(list[str]) -> ndarray`` gives L2-normalised float32 rows; see
    :func:`ragmeter.answers.semantic.load_minilm`.
    """
    from ragmeter.answers.semantic import load_minilm as _load

    return _load(path=path, device=device)


def semantic_similarity(prediction: str, golds: Any, **kwargs: Any) -> float:
    """Cosine similarity of prediction and gold embeddings (max over golds; needs ``[semantic]``).

    See :func:`ragmeter.answers.semantic.semantic_similarity`.
    """
    from ragmeter.answers.semantic import semantic_similarity as _sim

    return _sim(prediction, golds, **kwargs)


def qa_similarity(question: str, prediction: str, **kwargs: Any) -> float:
    """Cosine similarity of question and prediction embeddings (needs ``[semantic]``)."""
    from ragmeter.answers.semantic import qa_similarity as _qa

    return _qa(question, prediction, **kwargs)
