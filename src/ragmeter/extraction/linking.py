"""Entity linking: ranking, NIL detection and end-to-end scores (docs/extraction.md#entity-linking).

Everything is keyed by mention id (``doc_id:start-end`` by default), never by surface string or
list position (heritage defects 17–21).

* :func:`evaluate`: Hits@K and MRR over the **InKB** gold mentions (NIL gold mentions are
  excluded from the denominator and counted; a missing prediction scores 0), NIL detection as
  binary classification over all gold mentions joined by id, and D2KB accuracy.
* :func:`evaluate_e2e`: GERBIL-style end-to-end scores on spans plus links, with strong
  or weak annotation matching, micro and macro averages over documents, and the ``inkb``,
  ``ee`` and ``gs_inkb`` subsets.

>>> gold = {"doc1:4-25": "Q190804", "doc1:40-49": "Q3", "doc2:0-8": "Q5"}
>>> pred = {"doc1:4-25": [{"kb_id": "Q190804", "score": 0.9}, {"kb_id": "Q2", "score": 0.5}],
...         "doc1:40-49": [{"kb_id": "Q4", "score": 0.8}, {"kb_id": "Q3", "score": 0.7}],
...         "doc2:0-8": []}
>>> r = evaluate(gold, pred, k=(1, 5))
>>> r.ranking["hits@1"], r.ranking["hits@5"], r.ranking["mrr"]
(0.3333333333333333, 0.6666666666666666, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.deprecated import deprecated_alias
from ragmeter.extraction.linking_e2e import E2EReport, evaluate_e2e
from ragmeter.extraction.linking_inputs import gold_mentions, prediction_records
from ragmeter.extraction.prf import check_zero_division, mean, prf
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.kbids import NIL_ID

__all__ = [
    "E2EReport",
    "LinkingReport",
    "evaluate",
    "evaluate_e2e",
    "evaluate_linking",
    "evaluate_linking_e2e",
    "gold_mentions",
    "prediction_records",
]


@dataclass
class LinkingReport(ExtractionReport):
    """Ranking, NIL detection and D2KB accuracy over gold mentions
    (docs/extraction.md#entity-linking)."""

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
        """Per-mention ``(tp, fp, fn)`` behind ``nil.*``
        (docs/stats.md#corpus-level-metrics-corpus_test)."""
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


def evaluate(
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


# the names before every engine's entry point was spelled ``evaluate``
evaluate_linking = deprecated_alias(
    evaluate, "evaluate_linking", "ragmeter.extraction.linking.evaluate"
)
evaluate_linking_e2e = deprecated_alias(
    evaluate_e2e, "evaluate_linking_e2e", "ragmeter.extraction.linking.evaluate_e2e"
)
