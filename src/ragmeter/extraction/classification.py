"""Type classification: single-label, multi-label and hierarchical metrics
(docs/extraction.md#type-classification).

Gold and predictions are joined by item id (the heritage functions relied on list order).
Semantics are scikit-learn's (``accuracy_score``, ``balanced_accuracy_score``,
``precision_recall_fscore_support``, ``confusion_matrix``), computed natively from one
confusion matrix. With a profile the label set is closed: an invalid gold label raises, an
invalid prediction becomes ``__INVALID__``, which equals nothing, has no ancestor, counts as an
error in accuracy and micro scores, and is not averaged in macro or weighted means
(docs/extraction.md#type-classification).

>>> gold = dict(enumerate("MMMAALGM"))
>>> pred = dict(enumerate("MMAALLMM"))
>>> r = evaluate(gold, pred)
>>> r.accuracy, r.balanced_accuracy, round(r.macro["f1"], 4), round(r.weighted["f1"], 4)
(0.625, 0.5625, 0.4792, 0.5833)
>>> r.labels_used
['A', 'G', 'L', 'M']
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.choices import (
    INVALID_GOLD_POLICIES,
    ExtraPolicy,
    InvalidGoldPolicy,
    MissingPolicy,
)
from ragmeter.extraction.classification_common import (
    _averages,
    _check_labels,
    _finite,
    _join,
    _normalize_labels,
    _prf_from_counts,
)
from ragmeter.extraction.columns import factorize
from ragmeter.extraction.deprecated import deprecated_alias

# the multi-label engine lives in its own module; its public names stay importable from here
from ragmeter.extraction.multilabel import MultiLabelReport, evaluate_multilabel
from ragmeter.extraction.prf import check_zero_division, mean
from ragmeter.extraction.profiles import INVALID, HierarchyProfile, get_profile
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.choices import expected
from ragmeter.records.errors import InvalidLabelError, Problem

__all__ = [
    "MultiLabelReport",
    "TypeReport",
    "evaluate",
    "evaluate_multilabel",
    "evaluate_types",
    "evaluate_types_multilabel",
]


@dataclass
class TypeReport(ExtractionReport):
    """Result of :func:`evaluate`."""

    _kind = "classification"

    accuracy: float | None
    balanced_accuracy: float | None
    micro: dict[str, float | None]
    macro: dict[str, float | None]
    weighted: dict[str, float | None]
    per_class: dict[str, dict[str, Any]]
    labels_used: list[str]
    confusion_labels: list[str]
    confusion_matrix: list[list[int]]
    top_confusions: list[list[Any]]
    total_errors: int
    unique_confusion_pairs: int
    invalid_labels: dict[str, dict[str, int]]
    hierarchy: dict[str, Any] | None
    n_items: int
    undefined: dict[str, str]
    reports: dict[str, Any]
    settings: dict[str, Any]
    ids: list[str] = field(default_factory=list, repr=False)
    item_correct: np.ndarray | None = field(default=None, repr=False)
    item_category: np.ndarray | None = field(default=None, repr=False)
    item_codes: tuple[np.ndarray, np.ndarray, list[str]] | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)

    def item_details(self) -> np.ndarray:
        """Per item, ``{"gold": ..., "pred": ...}`` as JSON (one string per distinct pair)."""
        g, p, universe = self.item_codes
        nu = max(len(universe), 1)
        keys = g * nu + p
        uniq, inverse = np.unique(keys, return_inverse=True)
        texts = np.array(
            [
                json.dumps(
                    {"gold": universe[k // nu], "pred": universe[k % nu]}, ensure_ascii=False
                )
                for k in uniq.tolist()
            ],
            dtype=object,
        )
        return texts[inverse] if len(keys) else np.zeros(0, dtype=object)

    @property
    def metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "accuracy": self.accuracy,
            "balanced_accuracy": self.balanced_accuracy,
            "micro": self.micro,
            "macro": self.macro,
            "weighted": self.weighted,
            "per_class": self.per_class,
            "labels_used": self.labels_used,
            "confusion_matrix": {"labels": self.confusion_labels, "matrix": self.confusion_matrix},
            "top_confusions": self.top_confusions,
            "total_errors": self.total_errors,
            "unique_confusion_pairs": self.unique_confusion_pairs,
            "invalid_labels": self.invalid_labels,
            "n_items": self.n_items,
        }
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy
        return out

    def to_result(self, *, samples: bool = True):
        """A :class:`ragmeter.Result` for the ``classification`` task: one row per item with
        ``accuracy`` (1 when correct; detail: the gold and predicted label) and, with a
        hierarchy, ``category_accuracy``; aggregates under the registry's names."""
        from ragmeter.extraction.results import Column, aggregate, build_result

        n = self.n_items
        order = (
            np.argsort(np.array(self.ids, dtype=object), kind="stable") if n else np.zeros(0, int)
        )
        ids = [self.ids[i] for i in order.tolist()]
        columns = []
        if samples and n:
            columns.append(
                Column(
                    "accuracy",
                    self.item_correct[order],
                    details=self.item_details()[order].tolist(),
                )
            )
            if self.item_category is not None:
                columns.append(Column("category_accuracy", self.item_category[order]))
        aggs = {
            "accuracy": aggregate(self.accuracy, n=n, reason="no items"),
            "balanced_accuracy": aggregate(self.balanced_accuracy, n=n, reason="no gold labels"),
        }
        for avg in ("micro", "macro", "weighted"):
            block = getattr(self, avg)
            for key in ("precision", "recall", "f1"):
                aggs[f"{avg}.{key}"] = aggregate(
                    block[key], n=n, reason=self.undefined.get(f"{avg}.{key}") or "undefined"
                )
        if self.hierarchy is not None:
            h = self.hierarchy
            for key in ("category_accuracy", "hierarchy_gap"):
                aggs[key] = aggregate(h[key], n=n, reason="no items")
            for key in ("hP", "hR", "hF"):
                aggs[f"hierarchical.{key}"] = aggregate(h["hierarchical"][key], n=n)
        if not samples:
            ids = []
        metadata = {
            "settings": self.settings,
            "reports": self.reports,
            "undefined": self.undefined,
            "labels_used": self.labels_used,
            "invalid_labels": self.invalid_labels,
        }
        return build_result(
            "classification", ids, columns, aggs, metadata=metadata, warnings=self.warnings
        )


def evaluate(
    gold: Mapping[Any, str],
    pred: Mapping[Any, str],
    *,
    profile: str | HierarchyProfile | None = None,
    labels: Literal["present"] | Sequence[str] = "present",
    zero_division: float | str = 0.0,
    missing: MissingPolicy = "error",
    extra: ExtraPolicy = "error",
    top_k: int = 10,
    invalid_gold: InvalidGoldPolicy = "error",
    normalize: Callable[[str], str] | None = None,
    level: int = 1,
) -> TypeReport:
    """Single-label type classification metrics (docs/extraction.md#type-classification).

    accuracy = share of items with pred = gold; balanced accuracy = mean recall over the labels
    present in gold; per class c: P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN);
    micro pools the counts of the label set (plus ``__INVALID__``); macro is the unweighted and
    weighted the support-weighted mean over the label set.

    Parameters
    ----------
    gold, pred:
        ``item_id -> label``.
    profile:
        ``"heritage"``, a :class:`HierarchyProfile`, a profile file, or ``None`` (open label
        set, no hierarchy).
    labels:
        ``"present"`` (valid labels in gold ∪ predictions, sorted) or an explicit list (e.g.
        the 19 heritage codes). ``labels_used`` is always reported.
    zero_division:
        0 or 1 (a 0/0 ratio takes this value) or ``"nan"`` (undefined per-class values are
        left out of the means).
    missing, extra:
        Gold items without a prediction: ``"error"`` or ``"as_invalid"``. Predictions for
        unknown items: ``"error"`` or ``"ignore"`` (listed).
    top_k:
        Length of ``top_confusions``.
    invalid_gold:
        ``"error"`` raises :class:`InvalidLabelError` listing every invalid gold label;
        ``"drop_items"`` excludes and lists those items.
    normalize:
        Optional callable applied to every label; every change is listed.
    level:
        Hierarchy level of ``category_accuracy`` (1 = parent).
    """
    prof = get_profile(profile)
    zd = check_zero_division(zero_division, allow_nan=True)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"top_k={top_k!r} (expected a non-negative integer)")
    if invalid_gold not in INVALID_GOLD_POLICIES:
        raise ValueError(
            f"invalid_gold={invalid_gold!r} (expected {expected(INVALID_GOLD_POLICIES)})"
        )
    ids, g_vals, p_vals, missing_ids, extra_ids = _join(gold, pred, missing=missing, extra=extra)
    if normalize is not None:
        _check_labels(g_vals, "gold", ids)
        _check_labels(p_vals, "predicted", ids)
    changes: dict[str, dict[str, Any]] = {}
    g_vals = _normalize_labels(normalize, g_vals, changes)
    p_vals = _normalize_labels(normalize, p_vals, changes)
    reports: dict[str, Any] = {}
    if missing_ids:
        reports["missing_predictions"] = missing_ids
    if extra_ids:
        reports["extra_predictions"] = extra_ids
    if changes:
        reports["normalized_labels"] = changes

    # codes over the distinct values; None (missing) becomes the sentinel
    p_clean = [INVALID if v is None else v for v in p_vals] if missing_ids else p_vals
    try:
        g_codes, g_names = factorize(g_vals) if ids else (np.zeros(0, np.int64), [])
    except InputError:
        _check_labels(g_vals, "gold", ids)  # locates the bad label
        raise
    try:
        p_codes, p_names = factorize(p_clean) if ids else (np.zeros(0, np.int64), [])
    except InputError:
        _check_labels(p_clean, "predicted", ids)
        raise

    vocab = set(prof.vocabulary) if prof is not None else None
    invalid_pred: dict[str, int] = {}
    if vocab is not None:
        bad = [lab for lab in g_names if lab not in vocab]
        if bad:
            counts = np.bincount(g_codes, minlength=len(g_names))
            if invalid_gold == "error":
                first_ids = {}
                for i, c in zip(ids, g_codes.tolist(), strict=True):
                    name = g_names[c]
                    if name not in vocab and name not in first_ids:
                        first_ids[name] = i
                raise InvalidLabelError(
                    [
                        Problem(
                            f"gold label '{lab}' ({int(counts[g_names.index(lab)])} item(s), "
                            f"first '{first_ids[lab]}') is not in the {prof.name} vocabulary "
                            f"(expected one of {' '.join(prof.vocabulary)}; labels are compared "
                            "exactly, never case-folded)"
                        )
                        for lab in bad
                    ],
                    bad,
                )
            bad_codes = np.array([g_names.index(lab) for lab in bad])
            keep = ~np.isin(g_codes, bad_codes)
            reports["dropped_items"] = {
                "invalid_gold": {lab: int(counts[g_names.index(lab)]) for lab in bad},
                "ids": [i for i, k in zip(ids, keep.tolist(), strict=True) if not k],
            }
            ids = [i for i, k in zip(ids, keep.tolist(), strict=True) if k]
            g_codes, p_codes = g_codes[keep], p_codes[keep]
        pc = np.bincount(p_codes, minlength=len(p_names))
        invalid_pred = {
            lab: int(pc[i])
            for i, lab in enumerate(p_names)
            if lab not in vocab and lab != INVALID and pc[i]
        }
        p_names = [lab if lab in vocab else INVALID for lab in p_names]
    if missing_ids:
        invalid_pred_missing = len(missing_ids)
        reports["n_missing_as_invalid"] = invalid_pred_missing

    # one universe: valid labels (sorted), then the sentinel
    g_present = np.unique(g_codes) if len(g_codes) else np.zeros(0, np.int64)
    p_present = np.unique(p_codes) if len(p_codes) else np.zeros(0, np.int64)
    present = {g_names[i] for i in g_present.tolist()} | {p_names[i] for i in p_present.tolist()}
    present.discard(INVALID)
    if isinstance(labels, str):
        if labels != "present":
            raise ValueError(f"labels={labels!r} (expected 'present' or a list of labels)")
        labels_used = sorted(present)
    else:
        labels_used = list(labels)
        if len(set(labels_used)) != len(labels_used):
            raise ValueError("labels lists a label twice")
        if vocab is not None:
            outside = [lab for lab in labels_used if lab not in vocab]
            if outside:
                raise InvalidLabelError(
                    [
                        Problem(
                            f"label '{lab}' of the label set is not in the {prof.name} vocabulary"
                        )
                        for lab in outside
                    ],
                    outside,
                )
    universe = list(dict.fromkeys([*labels_used, *sorted(present)]))
    has_invalid = INVALID in {p_names[i] for i in p_present.tolist()}
    if has_invalid:
        universe.append(INVALID)
    uindex = {lab: i for i, lab in enumerate(universe)}
    nu = len(universe)
    g_map = np.array([uindex.get(lab, -1) for lab in g_names], dtype=np.int64)
    p_map = np.array([uindex.get(lab, -1) for lab in p_names], dtype=np.int64)
    g = g_map[g_codes] if len(g_codes) else g_codes
    p = p_map[p_codes] if len(p_codes) else p_codes
    n = len(g)
    cm = (
        np.bincount(g * nu + p, minlength=nu * nu).reshape(nu, nu)
        if nu
        else np.zeros((0, 0), np.int64)
    )
    tp_all = np.diag(cm)
    true_all = cm.sum(axis=1)
    pred_all = cm.sum(axis=0)

    undefined: dict[str, str] = {}
    accuracy = float(tp_all.sum()) / n if n else None
    if not n:
        undefined["accuracy"] = "no items"
    with_gold = true_all > 0
    balanced = mean((tp_all[with_gold] / true_all[with_gold]).tolist()) if with_gold.any() else None
    if balanced is None:
        undefined["balanced_accuracy"] = "no gold labels"

    used_idx = np.array([uindex[lab] for lab in labels_used], dtype=np.int64)
    p_c, r_c, f_c = _prf_from_counts(tp_all[used_idx], pred_all[used_idx], true_all[used_idx], zd)
    per_class = {}
    for k, lab in enumerate(labels_used):
        per_class[lab] = {
            "precision": _finite(p_c[k]),
            "recall": _finite(r_c[k]),
            "f1": _finite(f_c[k]),
            "support": int(true_all[used_idx[k]]),
            "predicted": int(pred_all[used_idx[k]]),
        }
        if pred_all[used_idx[k]] == 0:
            undefined[f"per_class.{lab}.precision"] = "no predictions of this label"
        if true_all[used_idx[k]] == 0:
            undefined[f"per_class.{lab}.recall"] = "no gold items of this label"
    micro_idx = used_idx if not has_invalid else np.append(used_idx, uindex[INVALID])
    mtp, mpred, mtrue = (
        np.array([tp_all[micro_idx].sum()]),
        np.array([pred_all[micro_idx].sum()]),
        np.array([true_all[micro_idx].sum()]),
    )
    mp, mr, mf = _prf_from_counts(mtp, mpred, mtrue, zd)
    micro = {"precision": _finite(mp[0]), "recall": _finite(mr[0]), "f1": _finite(mf[0])}
    for k, v in micro.items():
        if v is None:
            undefined[f"micro.{k}"] = "no predictions or gold items in the label set"
    macro, weighted, und = _averages(p_c, r_c, f_c, true_all[used_idx], zd)
    undefined.update(und)

    cm_labels = [*labels_used, *([INVALID] if has_invalid else [])]
    cm_idx = np.array([uindex[lab] for lab in cm_labels], dtype=np.int64)
    matrix = cm[np.ix_(cm_idx, cm_idx)].tolist() if len(cm_idx) else []
    off = cm.copy()
    np.fill_diagonal(off, 0)
    nz = np.argwhere(off > 0)
    confusions = [[universe[i], universe[j], int(off[i, j])] for i, j in nz.tolist()]
    confusions.sort(key=lambda row: (-row[2], row[0], row[1]))
    total_errors = int(off.sum())

    invalid = {"gold": {}, "pred": dict(sorted(invalid_pred.items()))}
    hierarchy = None
    item_category = None
    if prof is not None and prof.parent:
        anc = {lab: prof.ancestors(lab) for lab in universe if lab != INVALID}
        cat_names = sorted({prof.category(lab, level) for lab in anc} - {None})
        cindex = {c: i for i, c in enumerate(cat_names)}
        cat = np.array(
            [cindex[prof.category(lab, level)] if lab in anc else -1 for lab in universe],
            dtype=np.int64,
        )
        aug_size = np.array(
            [len(anc[lab]) + 1 if lab in anc else 1 for lab in universe], dtype=np.int64
        )
        inter = np.zeros((nu, nu), dtype=np.int64)
        for i, a in enumerate(universe):
            for j, b in enumerate(universe):
                if a == INVALID or b == INVALID:
                    continue
                inter[i, j] = aug_size[i] if i == j else len(set(anc[a]) & set(anc[b]))
        same_cat = (cat[:, None] == cat[None, :]) & (cat[None, :] >= 0)
        item_category = same_cat[g, p].astype(np.float64) if n else np.zeros(0)
        cat_acc = float((cm * same_cat).sum()) / n if n else None
        s_inter = int((cm * inter).sum())
        s_pred = int((cm.sum(axis=0) * aug_size).sum())
        s_gold = int((cm.sum(axis=1) * aug_size).sum())
        hp = s_inter / s_pred if s_pred else zd
        hr = s_inter / s_gold if s_gold else zd
        hf = 2 * hp * hr / (hp + hr) if (hp + hr) else 0.0
        hierarchy = {
            "profile": prof.name,
            "level": level,
            "exact_accuracy": accuracy,
            "category_accuracy": cat_acc,
            "hierarchy_gap": (cat_acc - accuracy) if n else None,
            "hierarchical": {
                "intersection": s_inter,
                "sum_pred": s_pred,
                "sum_gold": s_gold,
                "hP": _finite(hp),
                "hR": _finite(hr),
                "hF": _finite(hf),
            },
        }

    warnings = []
    if invalid["pred"]:
        listed = ", ".join(f"'{k}' ({v})" for k, v in invalid["pred"].items())
        warnings.append(
            f"predicted labels outside the {prof.name} vocabulary scored as {INVALID}: {listed}"
        )
    if missing_ids:
        warnings.append(f"{len(missing_ids)} item(s) without a prediction scored as {INVALID}")
    settings = {
        "profile": prof.name if prof else None,
        "profile_hash": prof.hash if prof else None,
        "labels": "present" if isinstance(labels, str) else "fixed",
        "zero_division": "nan" if math.isnan(zd) else zd,
        "missing": missing,
        "extra": extra,
        "invalid_gold": invalid_gold,
        "top_k": top_k,
        "level": level,
        "ner_to_type": dict(prof.ner_to_type) if prof else None,
        "versions": library_versions(),
        "normalize": getattr(normalize, "__name__", repr(normalize)) if normalize else None,
    }
    return TypeReport(
        accuracy=accuracy,
        balanced_accuracy=balanced,
        micro=micro,
        macro=macro,
        weighted=weighted,
        per_class=per_class,
        labels_used=labels_used,
        confusion_labels=cm_labels,
        confusion_matrix=matrix,
        top_confusions=confusions[:top_k],
        total_errors=total_errors,
        unique_confusion_pairs=len(confusions),
        invalid_labels=invalid,
        hierarchy=hierarchy,
        n_items=n,
        undefined=dict(sorted(undefined.items())),
        reports=reports,
        settings=settings,
        ids=ids,
        item_correct=(g == p).astype(np.float64),
        item_category=item_category,
        item_codes=(g, p, universe),
        warnings=warnings,
    )


# the names before every engine's entry point was spelled ``evaluate``
evaluate_types = deprecated_alias(
    evaluate, "evaluate_types", "ragmeter.extraction.classification.evaluate"
)
evaluate_types_multilabel = deprecated_alias(
    evaluate_multilabel,
    "evaluate_types_multilabel",
    "ragmeter.extraction.classification.evaluate_multilabel",
)
