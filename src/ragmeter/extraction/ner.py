"""NER evaluation: SemEval-2013 schemas and seqeval-compatible entity scores (extraction.md §3).

:func:`evaluate_ner` scores character spans per document under the four SemEval-2013 Task 9.1
schemas (``strict``, ``exact``, ``partial``, ``type``) with COR/INC/PAR/MIS/SPU counts, using the
optimal one-to-one matching of :mod:`ragmeter.extraction.matching`. Its ``entity`` block is the
exact-match entity score of §3.1, equal to seqeval's ``classification_report`` on equivalent tag
sequences. :func:`evaluate_ner_tags` decodes tag sequences (seqeval's lenient or strict mode)
and scores them with the same machinery.

>>> gold = {"d1": [(4, 25, "MUS"), (36, 40, "TMP")]}
>>> pred = {"d1": [(4, 15, "MUS"), (16, 25, "LOC"), (36, 40, "TMP")]}
>>> r = evaluate_ner(gold, pred)
>>> [r.get(f"overall.{s}.f1") for s in ("strict", "exact", "partial", "type")]
[0.4, 0.4, 0.6, 0.8]
>>> {k: r.overall["partial"][k] for k in ("COR", "INC", "PAR", "MIS", "SPU")}
{'COR': 1, 'INC': 0, 'PAR': 1, 'MIS': 0, 'SPU': 1}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.extraction.columns import SpanTable, to_span_table
from ragmeter.extraction.matching import candidate_pairs, match
from ragmeter.extraction.prf import check_zero_division, mean, prf, prf_arrays, weighted_mean
from ragmeter.extraction.profiles import INVALID
from ragmeter.extraction.report import ExtractionReport
from ragmeter.records.errors import (
    DuplicateSpanError,
    InvalidLabelError,
    Problem,
    SpanBoundsError,
    TagSchemeError,
    TokenMismatchError,
    UnknownDocumentError,
)
from ragmeter.records.model import Corpus
from ragmeter.records.validation import validate

__all__ = ["COUNT_KEYS", "SCHEMAS", "NerReport", "evaluate_ner", "evaluate_ner_tags"]

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


@dataclass
class NerReport(ExtractionReport):
    """Result of :func:`evaluate_ner`.

    ``metrics`` holds ``overall``, ``per_label``, ``macro_over_labels``,
    ``weighted_over_labels``, ``macro_over_documents``, ``entity`` and ``confusions``; the
    per-document counts are in ``per_document`` (built on first access from arrays). ``get``
    reads a report key path such as ``"overall.strict.f1"``.
    """

    schemas: tuple[str, ...]
    doc_ids: list[str]
    labels: list[str]
    doc_counts: dict[str, np.ndarray]  # schema -> (n_docs, 5) COR INC PAR MIS SPU
    doc_pos: np.ndarray
    doc_act: np.ndarray
    metrics: dict[str, Any]
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    doc_values: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )  # schema -> (P, R, F1, included) per document
    warnings: list[str] = field(default_factory=list)
    _per_document: dict[str, Any] | None = field(default=None, repr=False)

    _kind = "NER"
    _aliases = _ALIASES

    # -- views -------------------------------------------------------------------------------
    @property
    def overall(self) -> dict[str, dict[str, Any]]:
        return self.metrics["overall"]

    @property
    def per_label(self) -> dict[str, dict[str, dict[str, Any]]]:
        return self.metrics["per_label"]

    @property
    def entity(self) -> dict[str, Any]:
        return self.metrics["entity"]

    @property
    def confusions(self) -> list[list[Any]]:
        return self.metrics["confusions"]

    @property
    def per_document(self) -> dict[str, dict[str, dict[str, int]]]:
        """``doc_id -> schema -> {COR, INC, PAR, MIS, SPU, POS, ACT}``."""
        if self._per_document is None:
            out: dict[str, dict[str, dict[str, int]]] = {d: {} for d in self.doc_ids}
            pos = self.doc_pos.tolist()
            act = self.doc_act.tolist()
            for schema in self.schemas:
                rows = self.doc_counts[schema].tolist()
                for i, d in enumerate(self.doc_ids):
                    c = rows[i]
                    out[d][schema] = {
                        "COR": c[0],
                        "INC": c[1],
                        "PAR": c[2],
                        "MIS": c[3],
                        "SPU": c[4],
                        "POS": pos[i],
                        "ACT": act[i],
                    }
            self._per_document = out
        return self._per_document

    def document_counts(self, schema: str = "strict") -> dict[str, tuple[float, float, float]]:
        """Additive per-document statistics ``(tp, fp, fn)`` of a schema, for resampling
        documents (stats.md §9): tp = COR + ½·PAR, fp = ACT − tp, fn = POS − tp, so that
        micro P, R and F1 follow from their sums."""
        schema = _ALIASES.get(schema, schema)
        c = self.doc_counts[schema]
        tp = c[:, 0] + 0.5 * c[:, 2]
        fp = self.doc_act - tp
        fn = self.doc_pos - tp
        return {
            d: (float(a), float(b), float(f))
            for d, a, b, f in zip(self.doc_ids, tp.tolist(), fp.tolist(), fn.tolist(), strict=True)
        }

    def resampling_counts(self, metric: str) -> dict[str, tuple[float, float, float]]:
        """Per-document ``(tp, fp, fn)`` behind a micro metric (``overall.<schema>.*``,
        ``entity.micro.*``, with or without the ``ner.`` prefix), for stats.md §9."""
        name = metric.removeprefix("ner.")
        parts = name.split(".")
        if parts[0] == "overall" and len(parts) == 3:
            return self.document_counts(parts[1])
        if name.startswith("entity.micro."):
            return self.document_counts("strict")
        raise KeyError(f"'{metric}' is not a micro NER metric with per-document counts")

    @property
    def summary(self) -> dict[str, float | None]:
        """Registry metric name → value (the aggregates of :meth:`to_result`)."""
        return {k: a.value for k, a in self.to_result(samples=False).aggregates.items()}

    def _body(self) -> dict[str, Any]:
        # nested under "metrics": the NER report keeps nervaluate's per-schema layout
        return {"task": "ner", "metrics": self.metrics, "per_document": self.per_document}

    def cli_summary(self) -> dict[str, Any]:
        """The ``ragmeter ner --json`` shape: one block per schema with ``micro``, ``macro``
        and ``weighted`` P/R/F1, ``per_label`` and ``counts``."""
        out: dict[str, Any] = {}
        for s in self.schemas:
            o = self.overall[s]
            out[s] = {
                "micro": {k: o[k] for k in ("precision", "recall", "f1")},
                "macro": dict(self.metrics["macro_over_labels"][s]),
                "weighted": dict(self.metrics["weighted_over_labels"][s]),
                "per_label": {lab: self.per_label[lab][s] for lab in self.per_label},
                "counts": {k: o[k] for k in (*COUNT_KEYS, "POS", "ACT")},
                "macro_over_documents": dict(self.metrics["macro_over_documents"][s]),
            }
        out["entity"] = self.entity
        out["confusions"] = self.confusions
        if "token_accuracy" in self.metrics:
            out["token_accuracy"] = self.metrics["token_accuracy"]
        out["undefined"] = self.undefined
        out["reports"] = self.reports
        out["settings"] = self.settings
        return out

    def to_result(self, *, samples: bool = True):
        """A :class:`ragmeter.Result` for the ``ner`` task: one row per document with its
        P/R/F1 per schema (``overall.<schema>.*``, with the counts as detail on the ``f1`` row,
        and ``macro_over_documents.<schema>.*``); aggregates under the registry's names."""
        from ragmeter import status as st
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = len(self.doc_ids)
        columns: list[Column] = []
        aggs: dict[str, Any] = {}
        for s in self.schemas:
            p, r, f, included = self.doc_values[s]
            statuses = np.where(included, st.OK, st.NO_GOLD)
            counts = self.doc_counts[s].tolist()
            pos, act = self.doc_pos.tolist(), self.doc_act.tolist()
            # counts are integers, so this is the JSON json.dumps would write, built faster
            details = (
                [
                    f'{{"COR": {c[0]}, "INC": {c[1]}, "PAR": {c[2]}, "MIS": {c[3]}, '
                    f'"SPU": {c[4]}, "POS": {pos[i]}, "ACT": {act[i]}}}'
                    for i, c in enumerate(counts)
                ]
                if samples
                else None
            )
            for key, vals in (("precision", p), ("recall", r), ("f1", f)):
                if samples:
                    columns.append(
                        Column(
                            f"overall.{s}.{key}",
                            vals,
                            st.OK,
                            details if key == "f1" else None,
                        )
                    )
                    columns.append(Column(f"macro_over_documents.{s}.{key}", vals, statuses))
                aggs[f"overall.{s}.{key}"] = aggregate(self.overall[s][key], n=n)
                mod = self.metrics["macro_over_documents"][s]
                n_in = int(mod["n_documents"])
                aggs[f"macro_over_documents.{s}.{key}"] = aggregate(
                    mod[key],
                    n=n_in,
                    status_counts={st.OK: n_in, **({st.NO_GOLD: n - n_in} if n > n_in else {})},
                    reason="no documents to average" if mod[key] is None else None,
                )
                aggs[f"macro_over_labels.{s}.{key}"] = aggregate(
                    self.metrics["macro_over_labels"][s][key], n=n
                )
                aggs[f"weighted_over_labels.{s}.{key}"] = aggregate(
                    self.metrics["weighted_over_labels"][s][key], n=n
                )
        for avg in ("micro", "macro", "weighted"):
            for key in ("precision", "recall", "f1"):
                aggs[f"entity.{avg}.{key}"] = aggregate(self.entity[avg][key], n=n)
        if "token_accuracy" in self.metrics:
            aggs["token_accuracy"] = aggregate(self.metrics["token_accuracy"], n=n)
        metadata = {
            "settings": self.settings,
            "reports": self.reports,
            "undefined": self.undefined,
        }
        return build_result(
            "ner", self.doc_ids, columns, aggs, metadata=metadata, warnings=self.warnings
        )


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


def _credit2(schema: str, same_bounds: np.ndarray, same_label: np.ndarray) -> np.ndarray:
    """Twice the credit of each candidate pair under ``schema`` (COR 2, PAR 1, INC 0)."""
    if schema == "strict":
        return np.where(same_bounds & same_label, 2, 0)
    if schema == "exact":
        return np.where(same_bounds, 2, 0)
    if schema == "partial":
        return np.where(same_bounds, 2, 1)
    return np.where(same_label, 2, 0)


def _outcome_counts(
    credit2: np.ndarray, matched: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """(n_groups, 3) counts of COR, INC and PAR among matched pairs, by group."""
    out = np.zeros((n_groups, 3), dtype=np.int64)
    for col, c in ((0, 2), (1, 0), (2, 1)):
        sel = matched & (credit2 == c)
        out[:, col] = np.bincount(group[sel], minlength=n_groups)
    return out


def _block(cor, inc, par, mis, spu, zd) -> dict[str, Any]:
    pos = cor + inc + par + mis
    act = cor + inc + par + spu
    p, r, f = prf(cor + 0.5 * par, act, pos, zd)
    return {
        "COR": int(cor),
        "INC": int(inc),
        "PAR": int(par),
        "MIS": int(mis),
        "SPU": int(spu),
        "POS": int(pos),
        "ACT": int(act),
        "precision": p,
        "recall": r,
        "f1": f,
    }


def _note_undefined(undefined: dict[str, str], path: str, act: int, pos: int) -> None:
    if act == 0 and pos == 0:
        undefined[f"{path}.precision"] = "no gold and no predictions"
        undefined[f"{path}.recall"] = "no gold and no predictions"
    elif act == 0:
        undefined[f"{path}.precision"] = "no predictions"
    elif pos == 0:
        undefined[f"{path}.recall"] = "no gold spans"


def _averages(
    rows: list[tuple[float, float, float, int, int]], zd: float
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Macro and weighted P/R/F1 over per-label rows ``(p, r, f, support, act)`` (seqeval's
    rules: weighted by gold support; with zero total support P and F1 are ``zd`` when nothing
    was predicted, else 0, and R is ``zd``)."""
    notes: list[str] = []
    if not rows:
        notes.append("no labels in gold or predictions")
        blank = {"precision": zd, "recall": zd, "f1": zd}
        return dict(blank), dict(blank), notes
    macro = {
        "precision": mean([r[0] for r in rows]),
        "recall": mean([r[1] for r in rows]),
        "f1": mean([r[2] for r in rows]),
    }
    support = [r[3] for r in rows]
    if sum(support) == 0:
        notes.append("no gold spans (weighted average has no weights)")
        nothing_predicted = sum(r[4] for r in rows) == 0
        weighted = {
            "precision": zd if nothing_predicted else 0.0,
            "recall": zd,
            "f1": zd if nothing_predicted else 0.0,
        }
    else:
        weighted = {
            "precision": weighted_mean([r[0] for r in rows], support),
            "recall": weighted_mean([r[1] for r in rows], support),
            "f1": weighted_mean([r[2] for r in rows], support),
        }
    return macro, weighted, notes


def evaluate_ner(
    gold: Corpus | Mapping[str, Sequence[Any]] | SpanTable,
    pred: Corpus | Mapping[str, Sequence[Any]] | SpanTable,
    *,
    schemas: Sequence[str] | str = SCHEMAS,
    vocabulary: Sequence[str] | None = None,
    min_overlap: float = 0.0,
    duplicates: Literal["dedupe", "keep"] = "dedupe",
    unknown_documents: Literal["error", "ignore", "as_empty_gold"] = "error",
    zero_division: float | str = 0.0,
    empty_documents: Literal["perfect", "skip"] = "perfect",
    on_offset_mismatch: Literal["error", "skip", "relocate"] = "error",
) -> NerReport:
    """Score predicted entity spans against gold, per document (extraction.md §3.1, §3.3).

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
    if duplicates not in ("dedupe", "keep"):
        raise ValueError(f"duplicates={duplicates!r} (expected 'dedupe' or 'keep')")
    if unknown_documents not in ("error", "ignore", "as_empty_gold"):
        raise ValueError(
            f"unknown_documents={unknown_documents!r} (expected 'error', 'ignore' or "
            "'as_empty_gold')"
        )
    if empty_documents not in ("perfect", "skip"):
        raise ValueError(f"empty_documents={empty_documents!r} (expected 'perfect' or 'skip')")
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


def _score(
    sides: _Sides,
    schema_list: tuple[str, ...],
    zd: float,
    min_overlap: float,
    empty_documents: str,
    reports: dict[str, Any],
    settings: dict[str, Any],
    vocab: set[str] | None,
    extra_metrics: dict[str, Any] | None = None,
) -> NerReport:
    from ragmeter.extraction.results import hash_labels, library_versions

    s = sides
    n_docs, n_labels = len(s.doc_ids), len(s.labels)
    pg, pp, inter = candidate_pairs(s.gd, s.gs, s.ge, s.pd, s.ps, s.pe, min_overlap=min_overlap)
    same_bounds = (s.gs[pg] == s.ps[pp]) & (s.ge[pg] == s.pe[pp])
    same_label = s.gl[pg] == s.pl[pp]
    union = (s.ge[pg] - s.gs[pg]) + (s.pe[pp] - s.ps[pp]) - inter
    iou = inter / np.maximum(union, 1)
    n_g, n_p = len(s.gs), len(s.ps)

    doc_pos = np.bincount(s.gd, minlength=n_docs)
    doc_act = np.bincount(s.pd, minlength=n_docs) + s.dup_doc
    lab_pos = np.bincount(s.gl, minlength=n_labels)
    lab_act = np.bincount(s.pl, minlength=n_labels) + s.dup_label
    pair_doc = s.gd[pg]

    undefined: dict[str, str] = {}
    overall: dict[str, Any] = {}
    doc_counts: dict[str, np.ndarray] = {}
    doc_values: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    macro_docs: dict[str, Any] = {}
    confusions: list[list[Any]] = []
    for schema in schema_list:
        c2 = _credit2(schema, same_bounds, same_label)
        matched = match(n_g, n_p, pg, pp, c2, iou)
        cip = _outcome_counts(c2, matched, pair_doc, n_docs)
        n_matched = cip.sum(axis=1)
        counts = np.column_stack([cip, doc_pos - n_matched, doc_act - n_matched])
        doc_counts[schema] = counts
        tot = counts.sum(axis=0)
        overall[schema] = _block(*tot.tolist(), zd)
        _note_undefined(
            undefined, f"overall.{schema}", overall[schema]["ACT"], overall[schema]["POS"]
        )
        num = counts[:, 0] + 0.5 * counts[:, 2]
        p, r, f = prf_arrays(num, doc_act, doc_pos, zd)
        empty = (doc_pos == 0) & (doc_act == 0)
        included = np.ones(n_docs, dtype=bool)
        if empty_documents == "perfect":
            p, r, f = (np.where(empty, 1.0, x) for x in (p, r, f))
        else:
            included = ~empty
        doc_values[schema] = (p, r, f, included)
        n_in = int(included.sum())
        if n_in:
            macro_docs[schema] = {
                "precision": mean(p[included]),
                "recall": mean(r[included]),
                "f1": mean(f[included]),
                "n_documents": n_in,
            }
        else:
            macro_docs[schema] = {"precision": None, "recall": None, "f1": None, "n_documents": 0}
            undefined[f"macro_over_documents.{schema}"] = "no documents to average"
        if schema == "exact":
            conf = matched & same_bounds & ~same_label
            if conf.any():
                key = s.gl[pg[conf]] * n_labels + s.pl[pp[conf]]
                uk, cnt = np.unique(key, return_counts=True)
                confusions = [
                    [s.labels[int(k // n_labels)], s.labels[int(k % n_labels)], int(c)]
                    for k, c in zip(uk.tolist(), cnt.tolist(), strict=True)
                ]
                confusions.sort(key=lambda row: (-row[2], row[0], row[1]))

    # per label: both sides restricted to the label, matched again (nervaluate-compatible)
    sub = np.flatnonzero(same_label)
    spg, spp, ssb, siou = pg[sub], pp[sub], same_bounds[sub], iou[sub]
    pair_label = s.gl[spg]
    label_schemas = set(schema_list) | {"strict"}
    label_counts: dict[str, np.ndarray] = {}
    cache: dict[str, np.ndarray] = {}
    for schema in SCHEMAS:
        if schema not in label_schemas:
            continue
        # within one label, strict and exact coincide
        key = "strict" if schema in ("strict", "exact") else schema
        if key not in cache:
            c2 = _credit2(key, ssb, np.ones(len(sub), dtype=bool))
            matched = match(n_g, n_p, spg, spp, c2, siou)
            cip = _outcome_counts(c2, matched, pair_label, n_labels)
            n_matched = cip.sum(axis=1)
            cache[key] = np.column_stack([cip, lab_pos - n_matched, lab_act - n_matched])
        label_counts[schema] = cache[key]

    reportable = [i for i, lab in enumerate(s.labels) if lab != INVALID]
    per_label: dict[str, dict[str, Any]] = {}
    for i, lab in enumerate(s.labels):
        per_label[lab] = {}
        for schema in schema_list:
            per_label[lab][schema] = _block(*label_counts[schema][i].tolist(), zd)
            if lab != INVALID:
                blk = per_label[lab][schema]
                _note_undefined(undefined, f"per_label.{lab}.{schema}", blk["ACT"], blk["POS"])
        if lab == INVALID:
            per_label[lab]["invalid"] = True
    macro_labels: dict[str, Any] = {}
    weighted_labels: dict[str, Any] = {}
    for schema in schema_list:
        rows = [
            (
                per_label[s.labels[i]][schema]["precision"],
                per_label[s.labels[i]][schema]["recall"],
                per_label[s.labels[i]][schema]["f1"],
                per_label[s.labels[i]][schema]["POS"],
                per_label[s.labels[i]][schema]["ACT"],
            )
            for i in reportable
        ]
        macro, weighted, notes = _averages(rows, zd)
        macro_labels[schema] = {**macro, "n_labels": len(rows)}
        weighted_labels[schema] = weighted
        for note in notes:
            undefined[
                f"macro_over_labels.{schema}"
                if "labels" in note
                else f"weighted_over_labels.{schema}"
            ] = note

    # entity-level exact match (§3.1): TP = per-label strict COR, |P| = ACT, |G| = POS
    strict_lab = label_counts["strict"]
    ent_rows = []
    ent_per_label: dict[str, Any] = {}
    for i in reportable:
        tp, act, pos = (
            int(strict_lab[i, 0]),
            int(strict_lab[i, :3].sum() + strict_lab[i, 4]),
            int(strict_lab[i, :4].sum()),
        )
        p, r, f = prf(tp, act, pos, zd)
        ent_per_label[s.labels[i]] = {"precision": p, "recall": r, "f1": f, "support": pos}
        ent_rows.append((p, r, f, pos, act))
    tp_all = int(strict_lab[reportable, 0].sum()) if reportable else 0
    act_all = int(lab_act.sum())
    pos_all = int(lab_pos.sum())
    ep, er, ef = prf(tp_all, act_all, pos_all, zd)
    emacro, eweighted, enotes = _averages(ent_rows, zd)
    _note_undefined(undefined, "entity.micro", act_all, pos_all)
    for note in enotes:
        undefined["entity.macro" if "labels" in note else "entity.weighted"] = note
    entity = {
        "micro": {"precision": ep, "recall": er, "f1": ef, "support": pos_all},
        "macro": {**emacro, "support": pos_all},
        "weighted": {**eweighted, "support": pos_all},
        "per_label": ent_per_label,
    }

    metrics: dict[str, Any] = {
        "overall": overall,
        "per_label": per_label,
        "macro_over_labels": macro_labels,
        "weighted_over_labels": weighted_labels,
        "macro_over_documents": macro_docs,
        "entity": entity,
        "confusions": confusions,
    }
    if extra_metrics:
        metrics.update(extra_metrics)
    settings = {
        **settings,
        "zero_division": zd,
        "vocabulary_hash": hash_labels(sorted(vocab)) if vocab is not None else None,
        "labels": list(s.labels),
        "n_documents": n_docs,
        "versions": library_versions(),
    }
    reports.setdefault("invalid_labels", {"gold": {}, "pred": {}})
    warnings = list(reports.pop("_warnings", []))
    if reports.get("n_duplicates_removed"):
        warnings.append(
            f"{reports['n_duplicates_removed']} duplicate prediction(s) removed "
            "(duplicates='dedupe')"
        )
    if reports["invalid_labels"]["pred"]:
        listed = ", ".join(f"{k} ({v})" for k, v in reports["invalid_labels"]["pred"].items())
        warnings.append(f"predicted labels outside the vocabulary scored as {INVALID}: {listed}")
    return NerReport(
        schemas=schema_list,
        doc_ids=s.doc_ids,
        labels=list(s.labels),
        doc_counts=doc_counts,
        doc_pos=doc_pos,
        doc_act=doc_act,
        metrics=metrics,
        undefined=dict(sorted(undefined.items())),
        reports=reports,
        settings=settings,
        doc_values=doc_values,
        warnings=warnings,
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


def evaluate_ner_tags(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
    doc_ids: Sequence[str] | None = None,
    strict_gold: bool = False,
    **options: Any,
) -> NerReport:
    """Score tag sequences (one inner list per sentence) with :func:`evaluate_ner`.

    Tags are decoded as §3.2 says (``mode="lenient"``: seqeval's default; ``"strict"``: seqeval
    strict mode with ``scheme``), one document per sentence unless ``doc_ids`` names the
    document of each sentence. Offsets and ``min_overlap`` count tokens. The report's
    ``entity`` block equals ``seqeval.metrics.classification_report`` and ``token_accuracy``
    equals ``seqeval.metrics.accuracy_score``.

    >>> r = evaluate_ner_tags([["B-MUS", "I-MUS", "O", "B-LOC", "O", "B-TMP"]],
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
    report = evaluate_ner(gold, pred, **options)
    report.metrics["token_accuracy"] = n_equal / n_tokens if n_tokens else None
    if not n_tokens:
        report.undefined["token_accuracy"] = "no tokens"
    report.settings.update({"input": "tags", "scheme": scheme, "mode": mode, "units": "tokens"})
    return report
