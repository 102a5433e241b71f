"""Entity linking: ranking, NIL detection and end-to-end scores (extraction.md §6).

Everything is keyed by mention id (``doc_id:start-end`` by default), never by surface string or
list position (heritage defects 17–21).

* :func:`evaluate_linking`: Hits@K and MRR over the **InKB** gold mentions (NIL gold mentions are
  excluded from the denominator and counted; a missing prediction scores 0), NIL detection as
  binary classification over all gold mentions joined by id, and D2KB accuracy.
* :func:`evaluate_linking_e2e`: GERBIL-style end-to-end scores on spans plus links, with strong
  or weak annotation matching, micro and macro averages over documents, and the ``inkb``,
  ``ee`` and ``gs_inkb`` subsets.

>>> gold = {"doc1:4-25": "Q190804", "doc1:40-49": "Q3", "doc2:0-8": "Q5"}
>>> pred = {"doc1:4-25": [{"kb_id": "Q190804", "score": 0.9}, {"kb_id": "Q2", "score": 0.5}],
...         "doc1:40-49": [{"kb_id": "Q4", "score": 0.8}, {"kb_id": "Q3", "score": 0.7}],
...         "doc2:0-8": []}
>>> r = evaluate_linking(gold, pred, k=(1, 5))
>>> r.ranking["hits@1"], r.ranking["hits@5"], r.ranking["mrr"]
(0.3333333333333333, 0.6666666666666666, 0.5)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.matching import candidate_pairs, match
from ragmeter.extraction.prf import check_zero_division, mean, prf
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.errors import DuplicateMentionError, Problem, UnknownDocumentError
from ragmeter.records.kbids import NIL_ID, canonical_kb_id, is_nil_id
from ragmeter.records.model import Corpus, Span

__all__ = [
    "E2EReport",
    "LinkingReport",
    "evaluate_linking",
    "evaluate_linking_e2e",
    "gold_mentions",
    "prediction_records",
]


# -- inputs ------------------------------------------------------------------------------------
def _kb_set(value: Any, *, nil_id: str, where: str) -> tuple[frozenset[str], bool]:
    """(canonical id set, explicit NIL) of a gold value: an id, a list of ids, None or NIL."""
    if value is None or (isinstance(value, str) and is_nil_id(value, nil_id=nil_id)):
        return frozenset(), True
    if isinstance(value, str):
        return frozenset({canonical_kb_id(value, nil_id=nil_id)}), False
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        ids = set()
        for v in value:
            if not isinstance(v, str):
                raise InputError(f"KB id {v!r} is not a string", location=where)
            c = canonical_kb_id(v, nil_id=nil_id)
            if c is not None:
                ids.add(c)
        return frozenset(ids), not ids
    raise InputError(f"gold KB id {value!r} is not a string or a list of strings", location=where)


def _gold_record(rec: Mapping[str, Any], nil_id: str, where: str) -> tuple[str, frozenset[str]]:
    mid = rec.get("mention_id", rec.get("id"))
    if not isinstance(mid, str) or not mid:
        raise InputError("gold mention has no 'mention_id' (expected a string)", location=where)
    for key in ("kb_ids", "kb_id", "wikidata_id", "gold_wikidata", "gold_kb_id", "kb"):
        if key in rec:
            ids, _ = _kb_set(rec[key], nil_id=nil_id, where=f"{where}: mention '{mid}'")
            break
    else:
        ids = frozenset()
    if rec.get("nil") is True and ids:
        raise InputError(
            f"mention '{mid}' is marked NIL and has KB ids (expected one or the other)",
            location=where,
        )
    return mid, ids


def gold_mentions(gold: Any, *, nil_id: str = NIL_ID) -> dict[str, frozenset[str]]:
    """``mention_id -> acceptable canonical KB ids`` (empty = NIL) from a :class:`Corpus`, a
    sequence of :class:`Span` or records, or a mapping ``mention_id -> id | [ids] | None``."""
    out: dict[str, frozenset[str]] = {}

    def put(mid: str, ids: frozenset[str], where: str) -> None:
        if mid in out:
            raise DuplicateMentionError(
                f"gold mention id '{mid}' appears twice (expected one entry per mention id)",
                location=where,
            )
        out[mid] = ids

    if isinstance(gold, Corpus):
        for s in gold.iter_spans():
            put(s.mention_id, s.kb_ids, f"document '{s.doc_id}'")
        return out
    if isinstance(gold, Mapping):
        for mid, value in gold.items():
            if isinstance(value, Span):
                put(str(mid), value.kb_ids, f"mention '{mid}'")
            elif isinstance(value, Mapping):
                m, ids = _gold_record({"mention_id": str(mid), **value}, nil_id, f"mention '{mid}'")
                put(m, ids, f"mention '{mid}'")
            else:
                put(str(mid), _kb_set(value, nil_id=nil_id, where=f"mention '{mid}'")[0], "")
        return out
    for i, item in enumerate(gold):
        where = f"gold mention {i + 1}"
        if isinstance(item, Span):
            put(item.mention_id, item.kb_ids, where)
        elif isinstance(item, Mapping):
            mid, ids = _gold_record(item, nil_id, where)
            put(mid, ids, where)
        else:
            raise InputError(f"{item!r} is not a Span or a record", location=where)
    return out


@dataclass
class _Pred:
    candidates: list[str]  # canonical ids in rank order; nil_id marks a NIL candidate
    nil: bool | None
    duplicates_removed: int = 0


def _candidates(raw: Any, *, nil_id: str, where: str) -> tuple[list[str], int]:
    if raw is None:
        return [], 0
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, Iterable):
        raise InputError(
            f"candidates {raw!r} are not a list (expected [{{kb_id, score?}}, ...] or [ids])",
            location=where,
        )
    items = list(raw)
    ids: list[str] = []
    scores: list[float | None] = []
    for j, c in enumerate(items):
        if isinstance(c, str) or c is None:
            kb, score = c, None
        elif isinstance(c, Mapping):
            kb, score = c.get("kb_id", c.get("id")), c.get("score")
        else:
            raise InputError(
                f"candidate {j + 1} is {c!r} (expected {{kb_id, score?}})", location=where
            )
        if kb is not None and not isinstance(kb, str):
            raise InputError(
                f"candidate {j + 1} has kb_id {kb!r} (expected a string)", location=where
            )
        if score is not None:
            if (
                isinstance(score, bool)
                or not isinstance(score, (int, float))
                or not math.isfinite(score)
            ):
                raise InputError(
                    f"candidate {j + 1} has score {score!r} (expected a finite number)",
                    location=where,
                )
            score = float(score)
        canon = canonical_kb_id(kb, nil_id=nil_id)
        ids.append(nil_id if canon is None else canon)
        scores.append(score)
    has = [s is not None for s in scores]
    if any(has) and not all(has):
        raise InputError(
            "some candidates have a score and some do not (expected scores on all or none)",
            location=where,
        )
    if all(has) and ids:
        order = sorted(range(len(ids)), key=lambda j: -scores[j])  # stable: ties keep input order
        ids = [ids[j] for j in order]
    seen: set[str] = set()
    out: list[str] = []
    for kb in ids:
        if kb not in seen:
            seen.add(kb)
            out.append(kb)
    return out, len(ids) - len(out)


def prediction_records(pred: Any, *, nil_id: str = NIL_ID) -> dict[str, _Pred]:
    """``mention_id -> candidates and NIL flag`` from a mapping ``mention_id -> candidates`` (or
    ``-> {candidates, nil}``) or a sequence of records ``{mention_id, candidates, nil?}``.
    A second record for one mention id raises :class:`DuplicateMentionError`."""
    out: dict[str, _Pred] = {}

    def put(mid: Any, rec: Any, where: str) -> None:
        if not isinstance(mid, str) or not mid:
            raise InputError("prediction has no 'mention_id' (expected a string)", location=where)
        if mid in out:
            raise DuplicateMentionError(
                f"second prediction for mention '{mid}' (expected one candidate list per "
                "mention id; the heritage framework counted both, giving Hits@1 = 2.0)",
                location=where,
            )
        nil = None
        raw = rec
        if isinstance(rec, Mapping):
            raw = rec.get("candidates", [])
            nil = rec.get("nil", rec.get("is_nil", rec.get("is_nil_pred")))
            if nil is not None and not isinstance(nil, bool):
                raise InputError(f"'nil' is {nil!r} (expected true or false)", location=where)
        cands, dups = _candidates(raw, nil_id=nil_id, where=f"{where}: mention '{mid}'")
        out[mid] = _Pred(cands, nil, dups)

    if isinstance(pred, Mapping):
        for mid, rec in pred.items():
            put(str(mid), rec, f"prediction '{mid}'")
        return out
    for i, rec in enumerate(pred):
        where = f"prediction {i + 1}"
        if not isinstance(rec, Mapping):
            raise InputError(f"{rec!r} is not a record {{mention_id, candidates}}", location=where)
        put(rec.get("mention_id", rec.get("mention")), rec, where)
    return out


# -- ranking and NIL ---------------------------------------------------------------------------
@dataclass
class LinkingReport(ExtractionReport):
    """Ranking (§6.2), NIL detection (§6.3) and D2KB accuracy over gold mentions."""

    _kind = "linking"
    _dotted_keys = True

    ranking: dict[str, Any]
    nil: dict[str, Any]
    d2kb_accuracy: float | None
    ks: tuple[int, ...]
    mention_ids: list[str]
    ranks: np.ndarray  # per mention (sorted ids): rank, 0 = not found / NIL gold
    gold_nil: np.ndarray
    pred_nil: np.ndarray
    has_pred: np.ndarray
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> dict[str, Any]:
        return {"ranking": self.ranking, "nil": self.nil, "d2kb_accuracy": self.d2kb_accuracy}

    def per_mention(self) -> dict[str, dict[str, Any]]:
        out = {}
        for i, mid in enumerate(self.mention_ids):
            rank = int(self.ranks[i])
            out[mid] = {
                "gold_nil": bool(self.gold_nil[i]),
                "pred_nil": bool(self.pred_nil[i]),
                "predicted": bool(self.has_pred[i]),
                "rank": rank if rank > 0 else None,
            }
        return out

    def mention_counts(self) -> dict[str, tuple[int, int, int]]:
        """Per mention, the additive NIL-detection counts ``(tp, fp, fn)`` for resampling."""
        tp = self.gold_nil & self.pred_nil
        fp = ~self.gold_nil & self.pred_nil
        fn = self.gold_nil & ~self.pred_nil
        return {
            m: (int(a), int(b), int(c))
            for m, a, b, c in zip(self.mention_ids, tp, fp, fn, strict=True)
        }

    def resampling_counts(self, metric: str) -> dict[str, tuple[int, int, int]]:
        """Per-mention ``(tp, fp, fn)`` behind ``nil.*`` (stats.md §9)."""
        if metric.removeprefix("linking.").startswith("nil."):
            return self.mention_counts()
        raise KeyError(f"'{metric}' has no additive counts (ranking metrics are per-mention means)")

    def _body(self) -> dict[str, Any]:
        return {**self.metrics, "per_mention": self.per_mention()}

    def to_result(self, *, samples: bool = True):
        """A Result for the ``linking`` task: one row per gold mention with ``ranking.mrr``
        (1/rank) and ``ranking.hits@k`` (status ``no_gold`` for NIL gold mentions) and
        ``d2kb_accuracy`` (detail: the NIL counts and rank)."""
        from ragmeter import status as st
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = len(self.mention_ids)
        inkb = ~self.gold_nil
        statuses = np.where(inkb, st.OK, st.NO_GOLD).astype(object)
        rr = np.where(self.ranks > 0, 1.0 / np.maximum(self.ranks, 1), 0.0)
        columns = []
        n_inkb = int(inkb.sum())
        counts = {
            **({st.OK: n_inkb} if n_inkb else {}),
            **({st.NO_GOLD: n - n_inkb} if n > n_inkb else {}),
        }
        aggs = {
            "ranking.mrr": aggregate(
                self.ranking["mrr"], n=n_inkb, status_counts=counts, reason="no InKB gold mentions"
            ),
        }
        if samples:
            columns.append(Column("ranking.mrr", rr, statuses))
        for k in self.ks:
            hits = ((self.ranks > 0) & (self.ranks <= k)).astype(np.float64)
            if samples:
                columns.append(Column(f"ranking.hits@{k}", hits, statuses))
            aggs[f"ranking.hits@{k}"] = aggregate(
                self.ranking[f"hits@{k}"],
                n=n_inkb,
                status_counts=counts,
                reason="no InKB gold mentions",
            )
        correct = np.where(self.gold_nil, self.pred_nil, ~self.pred_nil & (self.ranks == 1))
        if samples:
            tp = (self.gold_nil & self.pred_nil).tolist()
            fp = (~self.gold_nil & self.pred_nil).tolist()
            fn = (self.gold_nil & ~self.pred_nil).tolist()
            details = [
                json.dumps({"tp": int(a), "fp": int(b), "fn": int(c), "rank": int(r) or None})
                for a, b, c, r in zip(tp, fp, fn, self.ranks.tolist(), strict=True)
            ]
            columns.append(Column("d2kb_accuracy", correct.astype(np.float64), details=details))
        aggs["d2kb_accuracy"] = aggregate(self.d2kb_accuracy, n=n, reason="no gold mentions")
        for key in ("precision", "recall", "f1"):
            aggs[f"nil.{key}"] = aggregate(self.nil[key], n=n)
        return build_result(
            "linking",
            self.mention_ids if samples else [],
            columns,
            aggs,
            metadata={
                "settings": self.settings,
                "reports": self.reports,
                "undefined": self.undefined,
            },
            warnings=self.warnings,
        )


def evaluate_linking(
    gold: Any,
    pred: Any,
    *,
    k: Sequence[int] | int = (1, 5, 10),
    nil_id: str = NIL_ID,
    zero_division: float | str = 0.0,
    strict: bool = False,
) -> LinkingReport:
    """Ranking metrics over InKB gold mentions and NIL detection over all gold mentions.

    rank_m = 1 + position of the first candidate in the gold id set of m (∞ if none, if the
    candidate list is empty or if m has no prediction record). Over the set M of InKB gold
    mentions: Hits@K = (1/|M|) Σ 1[rank_m ≤ K] and MRR = (1/|M|) Σ 1/rank_m. NIL detection
    (positive class NIL): TP = gold NIL ∧ predicted NIL, FP = gold InKB ∧ predicted NIL,
    FN = gold NIL ∧ not predicted NIL (including no record); P, R, F1 as scikit-learn
    ``average="binary"``. A prediction's NIL decision is its ``nil`` flag, else whether its
    first candidate is ``nil_id``. D2KB accuracy is the share of gold mentions that are NIL and
    predicted NIL, or InKB, not predicted NIL and ranked first.

    Parameters
    ----------
    gold:
        See :func:`gold_mentions`.
    pred:
        See :func:`prediction_records`. Candidates are sorted by descending score when every
        candidate has one (ties keep input order), else used in list order; repeated ids are
        removed (counted).
    k:
        Cutoffs for Hits@K.
    strict:
        Raise on predictions for mention ids not in gold (default: ignore and count them).
    """
    ks = (k,) if isinstance(k, int) else tuple(k)
    if not ks or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in ks):
        raise ValueError(f"k={k!r} (expected positive integer cutoffs)")
    ks = tuple(sorted(set(ks)))
    zd = check_zero_division(zero_division)
    g = gold_mentions(gold, nil_id=nil_id)
    p = prediction_records(pred, nil_id=nil_id)
    unmatched = sorted(set(p) - set(g))
    if unmatched and strict:
        raise InputError(
            f"{len(unmatched)} prediction(s) for mention ids not in gold, first '{unmatched[0]}' "
            "(expected gold mention ids only; strict=True)"
        )
    ids = sorted(g)
    n = len(ids)
    ranks = np.zeros(n, dtype=np.int64)
    gold_nil = np.zeros(n, dtype=bool)
    pred_nil = np.zeros(n, dtype=bool)
    has_pred = np.zeros(n, dtype=bool)
    dup_removed = 0
    for i, mid in enumerate(ids):
        kb = g[mid]
        gold_nil[i] = not kb
        rec = p.get(mid)
        if rec is None:
            continue
        has_pred[i] = True
        dup_removed += rec.duplicates_removed
        pred_nil[i] = (
            rec.nil if rec.nil is not None else bool(rec.candidates and rec.candidates[0] == nil_id)
        )
        if kb:
            for pos, cand in enumerate(rec.candidates):
                if cand in kb:
                    ranks[i] = pos + 1
                    break
    inkb = ~gold_nil
    n_inkb = int(inkb.sum())
    undefined: dict[str, str] = {}
    ranking: dict[str, Any] = {}
    r_inkb = ranks[inkb]
    for cut in ks:
        ranking[f"hits@{cut}"] = (
            float(((r_inkb > 0) & (r_inkb <= cut)).sum()) / n_inkb if n_inkb else None
        )
    ranking["mrr"] = (
        mean(np.where(r_inkb > 0, 1.0 / np.maximum(r_inkb, 1), 0.0).tolist()) if n_inkb else None
    )
    ranking["accuracy@1"] = float(((r_inkb > 0) & (r_inkb <= 1)).sum()) / n_inkb if n_inkb else None
    if not n_inkb:
        undefined["ranking"] = "no InKB gold mentions"
    ranking.update(
        {
            "n_inkb_mentions": n_inkb,
            "n_nil_mentions": int(gold_nil.sum()),
            "n_missing_predictions": int((inkb & ~has_pred).sum()),
            "n_inkb_predicted_nil": int((inkb & pred_nil).sum()),
            "n_unmatched_predictions": len(unmatched),
            "n_duplicate_candidates_removed": dup_removed,
        }
    )
    tp = int((gold_nil & pred_nil).sum())
    fp = int((~gold_nil & pred_nil).sum())
    fn = int((gold_nil & ~pred_nil).sum())
    tn = n - tp - fp - fn
    npr, nrc, nf = prf(tp, tp + fp, tp + fn, zd)
    if tp + fp == 0:
        undefined["nil.precision"] = "no mention predicted NIL"
    if tp + fn == 0:
        undefined["nil.recall"] = "no NIL gold mention"
    nil = {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": npr, "recall": nrc, "f1": nf}
    correct = np.where(gold_nil, pred_nil, ~pred_nil & (ranks == 1))
    d2kb = float(correct.sum()) / n if n else None
    if not n:
        undefined["d2kb_accuracy"] = "no gold mentions"
    reports = {"unmatched_predictions": unmatched} if unmatched else {}
    warnings = []
    if unmatched:
        warnings.append(f"{len(unmatched)} prediction(s) for mention ids not in gold were ignored")
    return LinkingReport(
        ranking=ranking,
        nil=nil,
        d2kb_accuracy=d2kb,
        ks=ks,
        mention_ids=ids,
        ranks=ranks,
        gold_nil=gold_nil,
        pred_nil=pred_nil,
        has_pred=has_pred,
        undefined=undefined,
        reports=reports,
        settings={
            "k": list(ks),
            "nil_id": nil_id,
            "zero_division": zd,
            "strict": strict,
            "versions": library_versions(),
        },
        warnings=warnings,
    )


# -- end to end --------------------------------------------------------------------------------
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
    """GERBIL-style end-to-end linking scores (§6.4)."""

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
        """Per document ``(tp, fp, fn)`` for resampling documents (stats.md §9)."""
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


def evaluate_linking_e2e(
    gold: Corpus | Mapping[str, Sequence[Any]],
    pred: Corpus | Mapping[str, Sequence[Any]],
    *,
    match: Literal["strong", "weak"] = "strong",
    subset: Literal["all", "inkb", "ee", "gs_inkb"] = "all",
    matching: Literal["optimal", "gerbil"] = "optimal",
    empty_documents: Literal["perfect", "skip"] = "perfect",
    unknown_documents: Literal["error", "ignore", "as_empty_gold"] = "error",
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
    >>> strong = evaluate_linking_e2e(gold, pred)
    >>> weak = evaluate_linking_e2e(gold, pred, match="weak")
    >>> strong.micro["f1"], weak.micro["f1"]
    (0.5, 1.0)
    """
    for name, value, allowed in (
        ("match", match, ("strong", "weak")),
        ("subset", subset, ("all", "inkb", "ee", "gs_inkb")),
        ("matching", matching, ("optimal", "gerbil")),
        ("empty_documents", empty_documents, ("perfect", "skip")),
        ("unknown_documents", unknown_documents, ("error", "ignore", "as_empty_gold")),
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
