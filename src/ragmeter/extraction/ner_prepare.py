"""NER input checks: schema names, span tables of gold and predictions, sorting and duplicates.

Everything :func:`~ragmeter.extraction.ner.evaluate` does before matching: the span tables
it scores are validated and sorted here, so the scoring code can assume clean arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.extraction.columns import SpanTable, to_span_table
from ragmeter.extraction.profiles import INVALID
from ragmeter.records.errors import (
    DuplicateSpanError,
    InvalidLabelError,
    Problem,
    SpanBoundsError,
    UnknownDocumentError,
)
from ragmeter.records.model import Corpus
from ragmeter.records.validation import validate

SCHEMAS: tuple[str, ...] = ("strict", "exact", "partial", "type")
COUNT_KEYS: tuple[str, ...] = ("COR", "INC", "PAR", "MIS", "SPU")
_ALIASES = {"ent_type": "type"}
_LIST_LIMIT = 50


def _schemas(schemas: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(schemas, str):
        schemas = [s.strip() for s in schemas.split(",") if s.strip()]
    out: list[str] = []
    for s in schemas:
        name = _ALIASES.get(s, s)
        if name not in SCHEMAS:
            raise ValueError(
                f"unknown NER schema '{s}' (expected strict, exact, partial, type or ent_type)"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError("no NER schema selected (expected strict, exact, partial and/or type)")
    return tuple(s for s in SCHEMAS if s in out)


def _problem_rows(rows: list[Problem], total: int) -> list[Problem]:
    if total > len(rows):
        rows = [*rows, Problem(f"... and {total - len(rows)} more")]
    return rows


def _check_table(table: SpanTable, side: str) -> None:
    """V1 on a span table: 0 <= start < end (<= text length when known)."""
    bad = (table.start < 0) | (table.start >= table.end)
    if table.doc_lengths is not None and len(table):
        lengths = table.doc_lengths[table.doc]
        bad |= (lengths >= 0) & (table.end > lengths)
    if bad.any():
        idx = np.flatnonzero(bad)
        rows = []
        for i in idx[:_LIST_LIMIT]:
            s, e = int(table.start[i]), int(table.end[i])
            what = "is empty or reversed (expected start < end, half-open offsets)"
            if s < 0:
                what = "starts before the text (expected 0 <= start)"
            elif table.doc_lengths is not None and s < e:
                what = (
                    f"ends after the text (expected end <= {int(table.doc_lengths[table.doc[i]])})"
                )
            rows.append(
                Problem(
                    f"{side} span {s}-{e} '{table.label_names[table.label[i]]}' {what}",
                    location=f"document '{table.doc_ids[table.doc[i]]}'",
                )
            )
        raise SpanBoundsError(_problem_rows(rows, len(idx)))


def _sort(doc: np.ndarray, start: np.ndarray, end: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Order by (doc, start, end, label), as two combined integer keys (faster than four)."""
    if not len(doc):
        return np.zeros(0, dtype=np.int64)
    big = int(end.max()) + 1
    n_labels = int(label.max()) + 1
    k1 = doc * big + start
    k2 = end * n_labels + label
    # inputs usually come grouped by document in text order: check before sorting
    ordered = (k1[1:] > k1[:-1]) | ((k1[1:] == k1[:-1]) & (k2[1:] >= k2[:-1]))
    if ordered.all():
        return np.arange(len(doc), dtype=np.int64)
    return np.lexsort((k2, k1))


def _dup_mask(doc, start, end, label) -> np.ndarray:
    """True for each row equal to the previous one (arrays already sorted)."""
    dup = np.zeros(len(doc), dtype=bool)
    if len(doc) > 1:
        dup[1:] = (
            (doc[1:] == doc[:-1])
            & (start[1:] == start[:-1])
            & (end[1:] == end[:-1])
            & (label[1:] == label[:-1])
        )
    return dup


@dataclass
class _Sides:
    """Both sides in one code space, sorted by (doc, start, end, label), predictions deduped."""

    doc_ids: list[str]
    labels: list[str]
    gd: np.ndarray
    gs: np.ndarray
    ge: np.ndarray
    gl: np.ndarray
    pd: np.ndarray
    ps: np.ndarray
    pe: np.ndarray
    pl: np.ndarray
    dup_doc: np.ndarray  # per document: kept duplicate predictions (duplicates="keep")
    dup_label: np.ndarray
    n_removed: int
    n_kept: int


def _prepare(
    gold: Any,
    pred: Any,
    *,
    vocabulary: set[str] | None,
    duplicates: str,
    unknown_documents: str,
    on_offset_mismatch: str,
    reports: dict[str, Any],
) -> _Sides:
    gold_report = pred_report = None
    if isinstance(gold, Corpus):
        gold_report = validate(
            gold, vocabulary=vocabulary, on_offset_mismatch=on_offset_mismatch, role="gold"
        )
        gold = gold_report.corpus
    if isinstance(pred, Corpus):
        if isinstance(gold, Corpus):
            for d, doc in pred.documents.items():
                g = gold.documents.get(d)
                if g is not None and g.text != doc.text:
                    raise UnknownDocumentError(
                        [
                            Problem(
                                "the prediction's text differs from the gold text (expected the "
                                "same text, since offsets refer to it)",
                                location=f"document '{d}'",
                            )
                        ]
                    )
            if not pred.documents:  # check predicted surfaces against the gold text
                docs = {d: gold.documents[d] for d in pred.spans if d in gold.documents}
                pred = Corpus(docs, pred.spans)
        pred_report = validate(
            pred,
            vocabulary=None,
            on_offset_mismatch=on_offset_mismatch,
            role="pred",
            duplicates="keep",
        )
        pred = pred_report.corpus
    reports["validation"] = {
        "gold": gold_report.to_dict() if gold_report else None,
        "pred": pred_report.to_dict() if pred_report else None,
    }
    reports["_warnings"] = [
        *(f"gold {w}" for w in (gold_report.warnings if gold_report else [])),
        *(f"predicted {w}" for w in (pred_report.warnings if pred_report else [])),
    ]
    gt = to_span_table(gold, side="gold")
    pt = to_span_table(pred, side="pred")
    _check_table(gt, "gold")
    _check_table(pt, "predicted")

    gold_docs = gt.doc_ids
    gold_doc_set = set(gold_docs)
    unknown = [d for d in pt.doc_ids if d not in gold_doc_set]
    keep_pred = np.ones(len(pt), dtype=bool)
    if unknown:
        if unknown_documents == "error":
            raise UnknownDocumentError(
                _problem_rows(
                    [
                        Problem(
                            "predictions for a document that is not in the gold set (expected "
                            "gold documents only, or unknown_documents='ignore'/'as_empty_gold')",
                            location=f"document '{d}'",
                        )
                        for d in unknown[:_LIST_LIMIT]
                    ],
                    len(unknown),
                )
            )
        reports["unknown_documents"] = {"policy": unknown_documents, "documents": unknown}
        if unknown_documents == "ignore":
            unknown_codes = np.array([i for i, d in enumerate(pt.doc_ids) if d not in gold_doc_set])
            keep_pred = ~np.isin(pt.doc, unknown_codes)
            reports["unknown_documents"]["n_spans_ignored"] = int((~keep_pred).sum())
            doc_ids = gold_docs
        else:
            doc_ids = sorted(gold_doc_set | set(unknown))
    else:
        doc_ids = gold_docs
    doc_index = {d: i for i, d in enumerate(doc_ids)}

    # labels: gold labels checked against the vocabulary; invalid predictions → sentinel
    invalid_pred: dict[str, int] = {}
    if vocabulary is not None:
        bad_gold = [lab for lab in gt.label_names if lab not in vocabulary]
        if bad_gold:
            counts = np.bincount(gt.label, minlength=len(gt.label_names))
            raise InvalidLabelError(
                [
                    Problem(
                        f"gold label '{lab}' ({int(counts[gt.label_names.index(lab)])} span(s)) "
                        "is not in the vocabulary (expected one of "
                        f"{', '.join(sorted(vocabulary)[:8])}"
                        f"{', ...' if len(vocabulary) > 8 else ''})"
                    )
                    for lab in bad_gold
                ],
                bad_gold,
            )
        pcounts = np.bincount(pt.label[keep_pred], minlength=len(pt.label_names))
        invalid_pred = {
            lab: int(pcounts[i])
            for i, lab in enumerate(pt.label_names)
            if lab not in vocabulary and pcounts[i]
        }
    pred_label_names = [
        (INVALID if (vocabulary is not None and lab not in vocabulary) else lab)
        for lab in pt.label_names
    ]
    labels = sorted(
        set(gt.label_names) | {pred_label_names[i] for i in np.unique(pt.label[keep_pred])}
    )
    label_index = {lab: i for i, lab in enumerate(labels)}
    reports["invalid_labels"] = {"gold": {}, "pred": dict(sorted(invalid_pred.items()))}

    g_doc_map = np.array([doc_index[d] for d in gt.doc_ids], dtype=np.int64)
    g_lab_map = np.array([label_index[lab] for lab in gt.label_names], dtype=np.int64)
    p_doc_map = np.array([doc_index.get(d, -1) for d in pt.doc_ids], dtype=np.int64)
    p_lab_map = np.array([label_index.get(lab, -1) for lab in pred_label_names], dtype=np.int64)

    gd = g_doc_map[gt.doc] if len(gt) else np.zeros(0, np.int64)
    gl = g_lab_map[gt.label] if len(gt) else np.zeros(0, np.int64)
    order = _sort(gd, gt.start, gt.end, gl)
    gd, gs, ge, gl = gd[order], gt.start[order], gt.end[order], gl[order]
    gdup = _dup_mask(gd, gs, ge, gl)
    if gdup.any():
        idx = np.flatnonzero(gdup)
        raise DuplicateSpanError(
            _problem_rows(
                [
                    Problem(
                        f"gold span {int(gs[i])}-{int(ge[i])} '{labels[gl[i]]}' appears twice "
                        "(expected each (doc_id, start, end, label) once in gold)",
                        location=f"document '{doc_ids[gd[i]]}'",
                    )
                    for i in idx[:_LIST_LIMIT]
                ],
                len(idx),
            )
        )

    ps_, pe_ = pt.start[keep_pred], pt.end[keep_pred]
    pd = p_doc_map[pt.doc[keep_pred]] if len(pt) else np.zeros(0, np.int64)
    pl = p_lab_map[pt.label[keep_pred]] if len(pt) else np.zeros(0, np.int64)
    order = _sort(pd, ps_, pe_, pl)
    pd, ps, pe, pl = pd[order], ps_[order], pe_[order], pl[order]
    pdup = _dup_mask(pd, ps, pe, pl)
    n_dup = int(pdup.sum())
    dup_doc = np.zeros(len(doc_ids), dtype=np.int64)
    dup_label = np.zeros(len(labels), dtype=np.int64)
    if n_dup and duplicates == "keep":
        dup_doc = np.bincount(pd[pdup], minlength=len(doc_ids))
        dup_label = np.bincount(pl[pdup], minlength=len(labels))
    if n_dup:
        keep = ~pdup
        pd, ps, pe, pl = pd[keep], ps[keep], pe[keep], pl[keep]
    reports["n_duplicates_removed"] = n_dup if duplicates == "dedupe" else 0
    reports["n_duplicates_kept"] = n_dup if duplicates == "keep" else 0
    return _Sides(
        doc_ids,
        labels,
        gd,
        gs,
        ge,
        gl,
        pd,
        ps,
        pe,
        pl,
        dup_doc,
        dup_label,
        n_dup if duplicates == "dedupe" else 0,
        n_dup if duplicates == "keep" else 0,
    )
