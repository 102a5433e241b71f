"""GERBIL-style end-to-end linking: spans plus links, strong or weak annotation matching.

Micro and macro averages over documents and the ``inkb``, ``ee`` and ``gs_inkb`` subsets, as
GERBIL reports them (Usbeck et al., 2015).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.choices import (
    EMPTY_DOCUMENTS,
    LINK_MATCHES,
    LINK_MATCHINGS,
    LINK_SUBSETS,
    UNKNOWN_DOCUMENTS,
    EmptyDocuments,
    LinkMatch,
    LinkMatching,
    LinkSubset,
    UnknownDocuments,
)
from ragmeter.extraction.linking_inputs import _kb_set
from ragmeter.extraction.matching import candidate_pairs, match
from ragmeter.extraction.prf import mean, prf
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.errors import Problem, UnknownDocumentError
from ragmeter.records.kbids import NIL_ID
from ragmeter.records.model import Corpus, Span

__all__ = ["E2EReport", "evaluate_e2e"]


@dataclass(frozen=True)
class _Ann:
    start: int
    end: int
    meaning: frozenset[str]  # empty = NIL


def _annotations(data: Any, side: str, nil_id: str) -> dict[str, list[_Ann]]:
    if isinstance(data, Corpus):
        return {
            d: [_Ann(s.start, s.end, s.kb_ids) for s in data.spans.get(d, [])] for d in data.doc_ids
        }
    if not isinstance(data, Mapping):
        raise InputError(
            f"{side} is a {type(data).__name__} (expected a Corpus or doc_id -> annotations)"
        )
    out: dict[str, list[_Ann]] = {}
    for doc_id, items in data.items():
        anns = []
        for j, it in enumerate(items):
            where = f"{side} document '{doc_id}', annotation {j + 1}"
            if isinstance(it, Span):
                anns.append(_Ann(it.start, it.end, it.kb_ids))
                continue
            if not isinstance(it, Mapping):
                raise InputError(f"{it!r} is not a Span or a dict", location=where)
            start, end = it.get("start"), it.get("end")
            for name, v in (("start", start), ("end", end)):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InputError(
                        f"{name} is {v!r} (expected an integer offset)", location=where
                    )
            if not 0 <= start < end:
                raise InputError(
                    f"span {start}-{end} is empty or negative (expected 0 <= start < end)",
                    location=where,
                )
            value = None
            for key in ("kb_ids", "kb", "kb_id", "wikidata_id"):
                if key in it:
                    value = it[key]
                    break
            ids, _ = _kb_set(value, nil_id=nil_id, where=where)
            anns.append(_Ann(start, end, ids))
        out[str(doc_id)] = anns
    return out


def _meaning_match(a: frozenset[str], b: frozenset[str]) -> bool:
    return (not a and not b) or bool(a & b)


def _gerbil_rule(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    if tp == fp == fn == 0:
        return 1.0, 1.0, 1.0
    if tp == 0:
        return 0.0, 0.0, 0.0
    p = tp / (tp + fp)
    r = tp / (tp + fn)
    return p, r, 2 * p * r / (p + r)


def _doc_counts(
    gold: list[_Ann], pred: list[_Ann], *, match_kind: str, subset: str, matching: str
) -> tuple[int, int, int]:
    def spans_match(g: _Ann, p: _Ann) -> bool:
        if match_kind == "strong":
            return g.start == p.start and g.end == p.end
        return p.start < g.end and g.start < p.end

    if subset == "inkb":
        gold = [a for a in gold if a.meaning]
        pred = [a for a in pred if a.meaning]
    elif subset == "ee":
        gold = [a for a in gold if not a.meaning]
        pred = [a for a in pred if not a.meaning]
    elif subset == "gs_inkb":
        gold = [a for a in gold if a.meaning]
        pred = [p for p in pred if any(spans_match(g, p) for g in gold)]
    gold = sorted(gold, key=lambda a: (a.start, a.end, sorted(a.meaning)))
    pred = sorted(pred, key=lambda a: (a.start, a.end, sorted(a.meaning)))
    if matching == "gerbil":
        used = [False] * len(pred)
        tp = 0
        for g in gold:
            for j, p in enumerate(pred):
                if not used[j] and spans_match(g, p) and _meaning_match(g.meaning, p.meaning):
                    used[j] = True
                    tp += 1
                    break
        return tp, len(pred) - tp, len(gold) - tp
    if not gold or not pred:
        return 0, len(pred), len(gold)
    z = np.zeros(len(gold), dtype=np.int64)
    gs = np.array([a.start for a in gold], dtype=np.int64)
    ge = np.array([a.end for a in gold], dtype=np.int64)
    ps = np.array([a.start for a in pred], dtype=np.int64)
    pe = np.array([a.end for a in pred], dtype=np.int64)
    # candidate_pairs needs both sides sorted by (start, end): they are
    pg, pp, inter = candidate_pairs(z, gs, ge, np.zeros(len(pred), np.int64), ps, pe)
    keep = np.array(
        [
            spans_match(gold[a], pred[b]) and _meaning_match(gold[a].meaning, pred[b].meaning)
            for a, b in zip(pg.tolist(), pp.tolist(), strict=True)
        ],
        dtype=bool,
    )
    pg, pp, inter = pg[keep], pp[keep], inter[keep]
    union = (ge[pg] - gs[pg]) + (pe[pp] - ps[pp]) - inter
    iou = inter / np.maximum(union, 1)
    matched = match(len(gold), len(pred), pg, pp, np.full(len(pg), 2), iou)
    tp = int(matched.sum())
    return tp, len(pred) - tp, len(gold) - tp


@dataclass
class E2EReport(ExtractionReport):
    """GERBIL-style end-to-end linking scores (docs/extraction.md#entity-linking)."""

    match: str
    subset: str
    matching: str
    doc_ids: list[str]
    counts: np.ndarray  # (n_docs, 3) TP FP FN
    micro: dict[str, float]
    macro: dict[str, float | None]
    nil_on_aligned: dict[str, Any]
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    included: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, bool))
    doc_prf: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 3)))

    @property
    def prefix(self) -> str:
        return f"e2e.{self.match}" + ("" if self.subset == "all" else f".{self.subset}")

    @property
    def per_document(self) -> dict[str, dict[str, Any]]:
        out = {}
        for i, d in enumerate(self.doc_ids):
            tp, fp, fn = (int(x) for x in self.counts[i])
            p, r, f = (float(x) for x in self.doc_prf[i])
            out[d] = {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": f}
        return out

    def document_counts(self) -> dict[str, tuple[int, int, int]]:
        """Per document ``(tp, fp, fn)`` for resampling documents
        (docs/stats.md#corpus-level-metrics-corpus_test)."""
        return {d: tuple(int(x) for x in self.counts[i]) for i, d in enumerate(self.doc_ids)}

    def resampling_counts(self, metric: str) -> dict[str, tuple[int, int, int]]:
        """Per-document ``(tp, fp, fn)`` behind ``e2e.<match>[.<subset>].micro.*``."""
        if metric.removeprefix("linking.").startswith(f"{self.prefix}.micro."):
            return self.document_counts()
        raise KeyError(f"'{metric}' is not the micro metric of this end-to-end report")

    @property
    def metrics(self) -> dict[str, Any]:
        tp, fp, fn = (int(x) for x in self.counts.sum(axis=0)) if len(self.counts) else (0, 0, 0)
        return {
            "micro": self.micro,
            "macro": self.macro,
            "counts": {"tp": tp, "fp": fp, "fn": fn},
            "nil_on_aligned": self.nil_on_aligned,
        }

    _kind = "end-to-end linking"

    def _body(self) -> dict[str, Any]:
        return {**self.metrics, "per_document": self.per_document}

    def to_result(self, *, samples: bool = True):
        """A Result for the ``linking`` task: one row per document under
        ``e2e.<match>[.<subset>].micro.*`` (the document's GERBIL P/R/F1; counts as detail on
        ``f1``) and ``.macro.*`` (status ``no_gold`` for documents left out by ``skip``)."""
        from ragmeter import status as st
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = len(self.doc_ids)
        columns = []
        aggs = {}
        statuses = np.where(self.included, st.OK, st.NO_GOLD).astype(object)
        n_in = int(self.included.sum())
        for j, key in enumerate(("precision", "recall", "f1")):
            if samples:
                details = (
                    [
                        json.dumps({"tp": int(a), "fp": int(b), "fn": int(c)})
                        for a, b, c in self.counts.tolist()
                    ]
                    if key == "f1"
                    else None
                )
                columns.append(
                    Column(f"{self.prefix}.micro.{key}", self.doc_prf[:, j], details=details)
                )
                columns.append(Column(f"{self.prefix}.macro.{key}", self.doc_prf[:, j], statuses))
            aggs[f"{self.prefix}.micro.{key}"] = aggregate(self.micro[key], n=n)
            aggs[f"{self.prefix}.macro.{key}"] = aggregate(
                self.macro[key],
                n=n_in,
                status_counts={st.OK: n_in, **({st.NO_GOLD: n - n_in} if n > n_in else {})},
                reason="no documents to average",
            )
        return build_result(
            "linking",
            self.doc_ids if samples else [],
            columns,
            aggs,
            metadata={
                "settings": self.settings,
                "reports": self.reports,
                "undefined": self.undefined,
            },
        )


def evaluate_e2e(
    gold: Corpus | Mapping[str, Sequence[Any]],
    pred: Corpus | Mapping[str, Sequence[Any]],
    *,
    match: LinkMatch = "strong",
    subset: LinkSubset = "all",
    matching: LinkMatching = "optimal",
    empty_documents: EmptyDocuments = "perfect",
    unknown_documents: UnknownDocuments = "error",
    nil_id: str = NIL_ID,
) -> E2EReport:
    """End-to-end linking (spans + links) with GERBIL's counting rules.

    An annotation's meaning is its KB id set, or NIL when empty; two meanings match iff both
    are NIL or the sets intersect. A strong match needs the same start and end, a weak match
    overlapping spans; both need matching meanings. ``matching="optimal"`` takes a maximum
    one-to-one matching (order-independent); ``"gerbil"`` lets each gold annotation, in
    (start, end) order, take the first unused matching system annotation. Per document:
    TP = FP = FN = 0 gives P = R = F1 = 1, TP = 0 otherwise gives 0. micro applies that rule to
    the summed counts; macro averages per-document P, R and F1 separately.

    >>> gold = {"d1": [{"start": 4, "end": 15, "kb": "Q190804"},
    ...                {"start": 23, "end": 39, "kb": "Q9"}]}
    >>> pred = {"d1": [{"start": 4, "end": 15, "kb": "Q190804"},
    ...                {"start": 23, "end": 32, "kb": "Q9"}]}
    >>> strong = evaluate_e2e(gold, pred)
    >>> weak = evaluate_e2e(gold, pred, match="weak")
    >>> strong.micro["f1"], weak.micro["f1"]
    (0.5, 1.0)
    """
    for name, value, allowed in (
        ("match", match, LINK_MATCHES),
        ("subset", subset, LINK_SUBSETS),
        ("matching", matching, LINK_MATCHINGS),
        ("empty_documents", empty_documents, EMPTY_DOCUMENTS),
        ("unknown_documents", unknown_documents, UNKNOWN_DOCUMENTS),
    ):
        if value not in allowed:
            raise ValueError(f"{name}={value!r} (expected one of {', '.join(allowed)})")
    g = _annotations(gold, "gold", nil_id)
    p = _annotations(pred, "pred", nil_id)
    unknown = sorted(set(p) - set(g))
    reports: dict[str, Any] = {}
    if unknown:
        if unknown_documents == "error":
            raise UnknownDocumentError(
                [
                    Problem(
                        "predictions for a document that is not in the gold set (expected "
                        "gold documents only, or unknown_documents='ignore'/'as_empty_gold')",
                        location=f"document '{d}'",
                    )
                    for d in unknown[:50]
                ]
            )
        reports["unknown_documents"] = {"policy": unknown_documents, "documents": unknown}
    doc_ids = sorted(set(g) | (set(unknown) if unknown_documents == "as_empty_gold" else set()))
    counts = np.zeros((len(doc_ids), 3), dtype=np.int64)
    nil_counts = {"n_aligned_mentions": 0, "tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for i, d in enumerate(doc_ids):
        gd, pdoc = g.get(d, []), p.get(d, [])
        counts[i] = _doc_counts(gd, pdoc, match_kind=match, subset=subset, matching=matching)
        by_span: dict[tuple[int, int], list[_Ann]] = {}
        for a in pdoc:
            by_span.setdefault((a.start, a.end), []).append(a)
        for a in gd:
            cands = by_span.get((a.start, a.end))
            if not cands:
                continue
            nil_counts["n_aligned_mentions"] += 1
            pn = not cands[0].meaning
            gn = not a.meaning
            key = "tp" if gn and pn else "fp" if pn else "fn" if gn else "tn"
            nil_counts[key] += 1
    prf_rows = np.array([_gerbil_rule(*row) for row in counts.tolist()], dtype=np.float64).reshape(
        -1, 3
    )
    empty = counts.sum(axis=1) == 0
    included = ~empty if empty_documents == "skip" else np.ones(len(doc_ids), dtype=bool)
    tot = counts.sum(axis=0) if len(doc_ids) else np.zeros(3, np.int64)
    mp, mr, mf = _gerbil_rule(*(int(x) for x in tot))
    undefined: dict[str, str] = {}
    if included.any():
        macro = {
            key: mean(prf_rows[included, j].tolist())
            for j, key in enumerate(("precision", "recall", "f1"))
        }
    else:
        macro = {"precision": None, "recall": None, "f1": None}
        undefined["macro"] = "no documents to average"
    if int(tot.sum()) == 0:
        undefined["micro"] = "no gold and no predicted annotations (GERBIL scores this 1)"
    nb = nil_counts
    npr, nrc, nf = prf(nb["tp"], nb["tp"] + nb["fp"], nb["tp"] + nb["fn"], 0.0)
    return E2EReport(
        match=match,
        subset=subset,
        matching=matching,
        doc_ids=doc_ids,
        counts=counts,
        micro={"precision": mp, "recall": mr, "f1": mf},
        macro=macro,
        nil_on_aligned={**nb, "precision": npr, "recall": nrc, "f1": nf},
        undefined=undefined,
        reports=reports,
        settings={
            "match": match,
            "subset": subset,
            "matching": matching,
            "empty_documents": empty_documents,
            "unknown_documents": unknown_documents,
            "nil_id": nil_id,
            "versions": library_versions(),
        },
        included=included,
        doc_prf=prf_rows,
    )
