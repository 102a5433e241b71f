"""NER evaluation: SemEval-2013 schemas and seqeval-compatible entity scores
(docs/extraction.md#ner).

:func:`evaluate` scores character spans per document under the four SemEval-2013 Task 9.1
schemas (``strict``, ``exact``, ``partial``, ``type``) with COR/INC/PAR/MIS/SPU counts, using the
optimal one-to-one matching of :mod:`ragmeter.extraction.matching`. Its ``entity`` block is the
exact-match entity score of docs/extraction.md#ner, equal to seqeval's ``classification_report`` on
equivalent tag
sequences. :func:`evaluate_tags` decodes tag sequences (seqeval's lenient or strict mode)
and scores them with the same machinery.

>>> gold = {"d1": [(4, 25, "MUS"), (36, 40, "TMP")]}
>>> pred = {"d1": [(4, 15, "MUS"), (16, 25, "LOC"), (36, 40, "TMP")]}
>>> r = evaluate(gold, pred)
>>> [r.get(f"overall.{s}.f1") for s in ("strict", "exact", "partial", "type")]
[0.4, 0.4, 0.6, 0.8]
>>> {k: r.overall["partial"][k] for k in ("COR", "INC", "PAR", "MIS", "SPU")}
{'COR': 1, 'INC': 0, 'PAR': 1, 'MIS': 0, 'SPU': 1}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.extraction.choices import (
    EMPTY_DOCUMENTS,
    NER_DUPLICATES,
    UNKNOWN_DOCUMENTS,
    EmptyDocuments,
    NerDuplicates,
    NerMode,
    UnknownDocuments,
)
from ragmeter.extraction.columns import SpanTable
from ragmeter.extraction.deprecated import deprecated_alias
from ragmeter.extraction.ner_prepare import COUNT_KEYS, SCHEMAS, _prepare, _schemas
from ragmeter.extraction.ner_report import NerReport
from ragmeter.extraction.ner_scoring import _score
from ragmeter.extraction.prf import check_zero_division
from ragmeter.records.choices import OnMismatch, expected
from ragmeter.records.errors import (
    TagSchemeError,
    TokenMismatchError,
)
from ragmeter.records.model import Corpus

__all__ = [
    "COUNT_KEYS",
    "SCHEMAS",
    "NerReport",
    "evaluate",
    "evaluate_ner",
    "evaluate_ner_tags",
    "evaluate_tags",
]


def evaluate(
    gold: Corpus | Mapping[str, Sequence[Any]] | SpanTable,
    pred: Corpus | Mapping[str, Sequence[Any]] | SpanTable,
    *,
    schemas: Sequence[str] | str = SCHEMAS,
    vocabulary: Sequence[str] | None = None,
    min_overlap: float = 0.0,
    duplicates: NerDuplicates = "dedupe",
    unknown_documents: UnknownDocuments = "error",
    zero_division: float | str = 0.0,
    empty_documents: EmptyDocuments = "perfect",
    on_offset_mismatch: OnMismatch = "error",
) -> NerReport:
    """Score predicted entity spans against gold, per document (docs/extraction.md#ner).

    For each schema, each document's gold spans and predictions are matched one-to-one
    (optimal matching maximizing credit COR=1, PAR=½, INC=0, then the number of pairs, then
    IoU); unmatched gold spans are MIS, unmatched predictions SPU. POS = COR+INC+PAR+MIS and
    ACT = COR+INC+PAR+SPU. strict/exact: P = COR/ACT, R = COR/POS; partial/type:
    P = (COR + ½PAR)/ACT, R = (COR + ½PAR)/POS; F1 = 2PR/(P+R).

    Parameters
    ----------
    gold, pred:
        A :class:`Corpus` (texts known: surfaces and bounds are validated), a mapping
        ``doc_id -> spans`` (:class:`Span`, ``(start, end, label)`` or dicts) or a
        :class:`SpanTable`. Every gold document counts, including those without spans.
    schemas:
        Any of ``strict``, ``exact``, ``partial``, ``type`` (``ent_type`` is an alias).
    vocabulary:
        Allowed labels: gold labels outside it raise; predicted ones are listed in
        ``reports["invalid_labels"]`` and scored as ``__INVALID__``, which equals no label.
    min_overlap:
        θ: a pair overlaps only if ``|g ∩ p| / |g| >= θ`` (nervaluate's percentage / 100).
    duplicates:
        Identical predicted spans: ``"dedupe"`` keeps one (counted), ``"keep"`` scores every
        extra copy as SPU.
    unknown_documents:
        Predictions for documents not in gold: ``"error"``, ``"ignore"`` (listed, skipped) or
        ``"as_empty_gold"`` (their predictions are SPU).
    zero_division:
        Value of a ratio with a zero denominator (0 or 1; listed under ``undefined``).
    empty_documents:
        For ``macro_over_documents``: a document with no gold and no predictions scores 1
        (``"perfect"``, GERBIL's rule) or is left out (``"skip"``).

    Returns
    -------
    NerReport
    """
    schema_list = _schemas(schemas)
    zd = check_zero_division(zero_division)
    if duplicates not in NER_DUPLICATES:
        raise ValueError(f"duplicates={duplicates!r} (expected {expected(NER_DUPLICATES)})")
    if unknown_documents not in UNKNOWN_DOCUMENTS:
        raise ValueError(
            f"unknown_documents={unknown_documents!r} (expected {expected(UNKNOWN_DOCUMENTS)})"
        )
    if empty_documents not in EMPTY_DOCUMENTS:
        raise ValueError(
            f"empty_documents={empty_documents!r} (expected {expected(EMPTY_DOCUMENTS)})"
        )
    if not (0.0 <= float(min_overlap) <= 1.0):
        raise ValueError(f"min_overlap={min_overlap!r} (expected a fraction between 0 and 1)")
    vocab = set(vocabulary) if vocabulary is not None else None
    reports: dict[str, Any] = {}
    sides = _prepare(
        gold,
        pred,
        vocabulary=vocab,
        duplicates=duplicates,
        unknown_documents=unknown_documents,
        on_offset_mismatch=on_offset_mismatch,
        reports=reports,
    )
    return _score(
        sides,
        schema_list,
        zd,
        float(min_overlap),
        empty_documents,
        reports,
        {
            "schemas": list(schema_list),
            "min_overlap": float(min_overlap),
            "duplicates": duplicates,
            "unknown_documents": unknown_documents,
            "zero_division": zd,
            "empty_documents": empty_documents,
            "on_offset_mismatch": on_offset_mismatch,
            "matching": "optimal",
            "vocabulary_size": len(vocab) if vocab is not None else None,
        },
        vocab,
    )


def tag_spans(
    sequences: Sequence[Sequence[str]],
    doc_of: Sequence[str],
    *,
    scheme: str,
    mode: str,
    strict: bool = False,
    side: str = "gold",
) -> tuple[list[str], list[int], list[int], list[str]]:
    """Decode sentences into token-index spans; sentences of one document follow each other."""
    from ragmeter.records.tags import decode, is_well_formed

    docs: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    labels: list[str] = []
    offset: dict[str, int] = {}
    for i, (seq, d) in enumerate(zip(sequences, doc_of, strict=True)):
        base = offset.get(d, 0)
        if strict and not is_well_formed(seq, scheme):
            raise TagSchemeError(
                f"{side} sentence {i + 1} is not well-formed {scheme} ({' '.join(seq)}) "
                "(expected strict_gold data to need no repair)"
            )
        for typ, a, b in decode(seq, scheme=scheme, mode=mode, sentence=i):
            docs.append(d)
            starts.append(base + a)
            ends.append(base + b)
            labels.append(typ)
        offset[d] = base + len(seq)
    return docs, starts, ends, labels


def evaluate_tags(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    scheme: str = "IOB2",
    mode: NerMode = "lenient",
    doc_ids: Sequence[str] | None = None,
    strict_gold: bool = False,
    **options: Any,
) -> NerReport:
    """Score tag sequences (one inner list per sentence) with :func:`evaluate`.

    Tags are decoded as docs/extraction.md#ner says (``mode="lenient"``: seqeval's default;
    ``"strict"``: seqeval
    strict mode with ``scheme``), one document per sentence unless ``doc_ids`` names the
    document of each sentence. Offsets and ``min_overlap`` count tokens. The report's
    ``entity`` block equals ``seqeval.metrics.classification_report`` and ``token_accuracy``
    equals ``seqeval.metrics.accuracy_score``.

    >>> r = evaluate_tags([["B-MUS", "I-MUS", "O", "B-LOC", "O", "B-TMP"]],
    ...                       [["B-MUS", "O", "O", "B-LOC", "O", "B-LOC"]])
    >>> round(r.get("entity.micro.f1"), 4), round(r.get("entity.macro.f1"), 4)
    (0.3333, 0.2222)
    >>> round(r.get("token_accuracy"), 4)
    0.6667
    """
    if len(y_true) != len(y_pred):
        raise TokenMismatchError(
            f"{len(y_true)} gold sentences but {len(y_pred)} predicted (expected the same "
            "sentences)"
        )
    n_tokens = 0
    n_equal = 0
    for i, (t, p) in enumerate(zip(y_true, y_pred, strict=True)):
        if isinstance(t, str) or isinstance(p, str):
            raise TokenMismatchError(
                f"sentence {i + 1} is a string (expected a list of tags per sentence)"
            )
        if len(t) != len(p):
            raise TokenMismatchError(
                f"sentence {i + 1} has {len(t)} gold tags but {len(p)} predicted (expected one "
                "tag per token on both sides)"
            )
        n_tokens += len(t)
        n_equal += sum(1 for a, b in zip(t, p, strict=True) if a == b)
    if doc_ids is None:
        width = len(str(max(len(y_true) - 1, 0)))
        doc_of = [str(i).zfill(width) for i in range(len(y_true))]
    else:
        doc_of = [str(d) for d in doc_ids]
        if len(doc_of) != len(y_true):
            raise TokenMismatchError(
                f"{len(doc_of)} doc_ids for {len(y_true)} sentences (expected one per sentence)"
            )
    documents = sorted(set(doc_of))
    g = tag_spans(y_true, doc_of, scheme=scheme, mode=mode, strict=strict_gold, side="gold")
    p = tag_spans(y_pred, doc_of, scheme=scheme, mode=mode, side="predicted")
    gold = SpanTable.from_arrays(
        g[0], np.array(g[1], np.int64), np.array(g[2], np.int64), g[3], documents=documents
    )
    pred = SpanTable.from_arrays(
        p[0], np.array(p[1], np.int64), np.array(p[2], np.int64), p[3], documents=documents
    )
    report = evaluate(gold, pred, **options)
    report.metrics["token_accuracy"] = n_equal / n_tokens if n_tokens else None
    if not n_tokens:
        report.undefined["token_accuracy"] = "no tokens"
    report.settings.update({"input": "tags", "scheme": scheme, "mode": mode, "units": "tokens"})
    return report


# the names before every engine's entry point was spelled ``evaluate``
evaluate_ner = deprecated_alias(evaluate, "evaluate_ner", "ragmeter.extraction.ner.evaluate")
evaluate_ner_tags = deprecated_alias(
    evaluate_tags, "evaluate_ner_tags", "ragmeter.extraction.ner.evaluate_tags"
)
