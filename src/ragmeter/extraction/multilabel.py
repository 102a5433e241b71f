"""Multi-label type classification (label sets such as primary + secondary types).

Semantics are scikit-learn's ``precision_recall_fscore_support`` on binarized label sets, with
the ``samples`` average and subset accuracy; :func:`evaluate_multilabel` joins gold and
predictions by item id as :func:`~ragmeter.extraction.classification.evaluate` does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.choices import ExtraPolicy, MissingPolicy
from ragmeter.extraction.classification_common import (
    _averages,
    _finite,
    _join,
    _nan_mean,
    _prf_from_counts,
)
from ragmeter.extraction.prf import check_zero_division
from ragmeter.extraction.profiles import INVALID, HierarchyProfile, get_profile
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.errors import InvalidLabelError, Problem

__all__ = ["MultiLabelReport", "evaluate_multilabel"]


@dataclass
class MultiLabelReport(ExtractionReport):
    """Result of :func:`evaluate_multilabel`."""

    _kind = "multi-label"

    micro: dict[str, float | None]
    macro: dict[str, float | None]
    weighted: dict[str, float | None]
    samples: dict[str, float | None]
    subset_accuracy: float | None
    per_class: dict[str, dict[str, Any]]
    labels_used: list[str]
    invalid_labels: dict[str, dict[str, int]]
    n_items: int
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    ids: list[str] = field(default_factory=list, repr=False)
    item_values: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    warnings: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> dict[str, Any]:
        return {
            "micro": self.micro,
            "macro": self.macro,
            "weighted": self.weighted,
            "samples": self.samples,
            "subset_accuracy": self.subset_accuracy,
            "per_class": self.per_class,
            "labels_used": self.labels_used,
            "invalid_labels": self.invalid_labels,
            "n_items": self.n_items,
        }

    def to_result(self, *, samples: bool = True):
        """A Result for the ``classification`` task with ``multilabel.*`` metrics: one row per
        item with its samples-average P/R/F1 and subset match."""
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = self.n_items
        order = (
            np.argsort(np.array(self.ids, dtype=object), kind="stable") if n else np.zeros(0, int)
        )
        ids = [self.ids[i] for i in order.tolist()] if samples else []
        columns = []
        if samples and n:
            for key in ("precision", "recall", "f1"):
                columns.append(Column(f"multilabel.samples.{key}", self.item_values[key][order]))
            columns.append(Column("multilabel.subset_accuracy", self.item_values["subset"][order]))
        aggs = {}
        for avg in ("micro", "macro", "weighted", "samples"):
            for key in ("precision", "recall", "f1"):
                aggs[f"multilabel.{avg}.{key}"] = aggregate(getattr(self, avg)[key], n=n)
        aggs["multilabel.subset_accuracy"] = aggregate(self.subset_accuracy, n=n, reason="no items")
        return build_result(
            "classification",
            ids,
            columns,
            aggs,
            metadata={
                "settings": self.settings,
                "reports": self.reports,
                "undefined": self.undefined,
            },
            warnings=self.warnings,
        )


def evaluate_multilabel(
    gold: Mapping[Any, Iterable[str]],
    pred: Mapping[Any, Iterable[str]],
    *,
    profile: str | HierarchyProfile | None = None,
    labels: Literal["present"] | Sequence[str] = "present",
    zero_division: float | str = 0.0,
    missing: MissingPolicy = "error",
    extra: ExtraPolicy = "error",
) -> MultiLabelReport:
    """Multi-label metrics on label sets, e.g. primary + secondary types
    (docs/extraction.md#type-classification).

    Semantics of scikit-learn on a ``MultiLabelBinarizer`` matrix: micro, macro and weighted
    P/R/F1 over the label set; ``samples`` = per-item P/R/F1 averaged; subset accuracy = exact
    set match. Invalid predicted labels (with a profile) become ``__INVALID__``, a column that
    counts in micro and samples scores but is not averaged in macro or weighted.

    >>> g = {1: {"M"}, 2: {"M", "A"}, 3: {"L"}, 4: {"A", "R"}}
    >>> p = {1: {"M"}, 2: {"M"}, 3: {"L", "A"}, 4: {"A"}}
    >>> r = evaluate_multilabel(g, p)
    >>> round(r.micro["f1"], 4), r.macro["f1"], r.samples["precision"], r.subset_accuracy
    (0.7273, 0.625, 0.875, 0.25)
    """
    prof = get_profile(profile)
    zd = check_zero_division(zero_division, allow_nan=True)
    ids, g_vals, p_vals, missing_ids, extra_ids = _join(
        gold, pred, missing=missing, extra=extra, what="set of labels"
    )
    g_sets: list[frozenset[str]] = []
    p_sets: list[frozenset[str]] = []
    for side, vals, out in (("gold", g_vals, g_sets), ("predicted", p_vals, p_sets)):
        for i, v in zip(ids, vals, strict=True):
            if v is None:
                out.append(frozenset({INVALID}))
                continue
            if isinstance(v, str) or not isinstance(v, Iterable):
                raise InputError(
                    f"{side} labels {v!r} are not a set or list of strings", location=f"item '{i}'"
                )
            items = list(v)
            if not all(isinstance(x, str) for x in items):
                raise InputError(
                    f"{side} labels {v!r} contain a non-string", location=f"item '{i}'"
                )
            out.append(frozenset(items))
    vocab = set(prof.vocabulary) if prof is not None else None
    invalid_pred: dict[str, int] = {}
    if vocab is not None:
        bad = sorted({lab for s in g_sets for lab in s} - vocab)
        if bad:
            raise InvalidLabelError(
                [
                    Problem(
                        f"gold label '{lab}' is not in the {prof.name} vocabulary (expected "
                        f"one of {' '.join(prof.vocabulary)})"
                    )
                    for lab in bad
                ],
                bad,
            )
        cleaned = []
        for s in p_sets:
            inv = [lab for lab in s if lab not in vocab and lab != INVALID]
            for lab in inv:
                invalid_pred[lab] = invalid_pred.get(lab, 0) + 1
            cleaned.append(frozenset((s - set(inv)) | ({INVALID} if inv else set())))
        p_sets = cleaned
    present = sorted(
        ({lab for s in g_sets for lab in s} | {lab for s in p_sets for lab in s}) - {INVALID}
    )
    labels_used = present if isinstance(labels, str) else list(labels)
    has_invalid = any(INVALID in s for s in p_sets)
    columns = [*labels_used, *([INVALID] if has_invalid else [])]
    cindex = {lab: i for i, lab in enumerate(columns)}
    n, k = len(ids), len(columns)
    gm = np.zeros((n, k), dtype=bool)
    pm = np.zeros((n, k), dtype=bool)
    for row, (gs, ps) in enumerate(zip(g_sets, p_sets, strict=True)):
        for lab in gs:
            if lab in cindex:
                gm[row, cindex[lab]] = True
        for lab in ps:
            if lab in cindex:
                pm[row, cindex[lab]] = True
    tp = (gm & pm).sum(axis=0)
    n_pred = pm.sum(axis=0)
    n_true = gm.sum(axis=0)
    nl = len(labels_used)
    p_c, r_c, f_c = _prf_from_counts(tp[:nl], n_pred[:nl], n_true[:nl], zd)
    per_class = {
        lab: {
            "precision": _finite(p_c[i]),
            "recall": _finite(r_c[i]),
            "f1": _finite(f_c[i]),
            "support": int(n_true[i]),
        }
        for i, lab in enumerate(labels_used)
    }
    mp, mr, mf = _prf_from_counts(
        np.array([tp.sum()]), np.array([n_pred.sum()]), np.array([n_true.sum()]), zd
    )
    micro = {"precision": _finite(mp[0]), "recall": _finite(mr[0]), "f1": _finite(mf[0])}
    macro, weighted, undefined = _averages(p_c, r_c, f_c, n_true[:nl], zd)
    itp = (gm & pm).sum(axis=1)
    ipred = pm.sum(axis=1)
    itrue = gm.sum(axis=1)
    sp, sr, sf = _prf_from_counts(itp, ipred, itrue, zd)
    samples = {
        "precision": _nan_mean(sp.tolist()) if n else None,
        "recall": _nan_mean(sr.tolist()) if n else None,
        "f1": _nan_mean(sf.tolist()) if n else None,
    }
    subset = np.array([a == b for a, b in zip(g_sets, p_sets, strict=True)], dtype=np.float64)
    reports: dict[str, Any] = {}
    if missing_ids:
        reports["missing_predictions"] = missing_ids
    if extra_ids:
        reports["extra_predictions"] = extra_ids
    return MultiLabelReport(
        micro=micro,
        macro=macro,
        weighted=weighted,
        samples=samples,
        subset_accuracy=float(subset.mean()) if n else None,
        per_class=per_class,
        labels_used=labels_used,
        invalid_labels={"gold": {}, "pred": dict(sorted(invalid_pred.items()))},
        n_items=n,
        undefined=undefined,
        reports=reports,
        settings={
            "profile": prof.name if prof else None,
            "profile_hash": prof.hash if prof else None,
            "labels": "present" if isinstance(labels, str) else "fixed",
            "zero_division": "nan" if math.isnan(zd) else zd,
            "versions": library_versions(),
        },
        ids=ids,
        item_values={
            "precision": np.nan_to_num(sp, nan=0.0),
            "recall": np.nan_to_num(sr, nan=0.0),
            "f1": np.nan_to_num(sf, nan=0.0),
            "subset": subset,
        },
        warnings=[],
    )
