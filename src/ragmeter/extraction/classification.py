"""Type classification: single-label, multi-label and hierarchical metrics (extraction.md §4).

Gold and predictions are joined by item id (the heritage functions relied on list order).
Semantics are scikit-learn's (``accuracy_score``, ``balanced_accuracy_score``,
``precision_recall_fscore_support``, ``confusion_matrix``), computed natively from one
confusion matrix. With a profile the label set is closed: an invalid gold label raises, an
invalid prediction becomes ``__INVALID__``, which equals nothing, has no ancestor, counts as an
error in accuracy and micro scores, and is not averaged in macro or weighted means (§4.1).

>>> gold = dict(enumerate("MMMAALGM"))
>>> pred = dict(enumerate("MMAALLMM"))
>>> r = evaluate_types(gold, pred)
>>> r.accuracy, r.balanced_accuracy, round(r.macro["f1"], 4), round(r.weighted["f1"], 4)
(0.625, 0.5625, 0.4792, 0.5833)
>>> r.labels_used
['A', 'G', 'L', 'M']
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.columns import factorize
from ragmeter.extraction.prf import check_zero_division, mean
from ragmeter.extraction.profiles import INVALID, HierarchyProfile, get_profile
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.results import library_versions
from ragmeter.records.errors import InvalidLabelError, Problem

__all__ = [
    "MultiLabelReport",
    "TypeReport",
    "evaluate_types",
    "evaluate_types_multilabel",
]

_LIMIT = 20


def _nan_mean(values: Sequence[float]) -> float | None:
    kept = [v for v in values if not math.isnan(v)]
    return mean(kept) if kept else None


def _nan_weighted(values: Sequence[float], weights: Sequence[float]) -> float | None:
    """Weighted mean without the undefined values; when the remaining weights are all zero,
    their unweighted mean (scikit-learn's ``_nanaverage``)."""
    num = den = 0.0
    kept = []
    for v, w in zip(values, weights, strict=True):
        if math.isnan(v):
            continue
        kept.append(v)
        num += v * w
        den += w
    if den:
        return num / den
    return mean(kept) if kept else None


def _ratio(num: np.ndarray, den: np.ndarray, zd: float) -> np.ndarray:
    out = np.full(num.shape, zd, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _prf_from_counts(
    tp: np.ndarray, n_pred: np.ndarray, n_true: np.ndarray, zd: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's per-class P, R and F1 (F1 = 2TP/(2TP+FP+FN), ``zd`` when 0/0)."""
    tp = tp.astype(np.float64)
    p = _ratio(tp, n_pred.astype(np.float64), zd)
    r = _ratio(tp, n_true.astype(np.float64), zd)
    f = _ratio(2 * tp, (n_pred + n_true).astype(np.float64), zd)
    return p, r, f


def _averages(
    p: np.ndarray, r: np.ndarray, f: np.ndarray, support: np.ndarray, zd: float
) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, str]]:
    undefined: dict[str, str] = {}
    macro = {
        "precision": _nan_mean(p.tolist()),
        "recall": _nan_mean(r.tolist()),
        "f1": _nan_mean(f.tolist()),
    }
    w = support.astype(np.float64).tolist()
    if sum(w) == 0:
        # scikit-learn's rule: with no support at all, the weights are dropped
        weighted: dict[str, float | None] = dict(macro)
        undefined["weighted"] = (
            "no gold support in the label set (unweighted mean, as scikit-learn)"
        )
    else:
        weighted = {
            "precision": _nan_weighted(p.tolist(), w),
            "recall": _nan_weighted(r.tolist(), w),
            "f1": _nan_weighted(f.tolist(), w),
        }
    for k, v in macro.items():
        if v is None:
            undefined[f"macro.{k}"] = "no label with a defined value"
    for k, v in weighted.items():
        if v is None and "weighted" not in undefined:
            undefined[f"weighted.{k}"] = "no label with a defined value"
    return macro, weighted, undefined


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _join(
    gold: Mapping[Any, Any],
    pred: Mapping[Any, Any],
    *,
    missing: str,
    extra: str,
    what: str = "label",
) -> tuple[list[str], list[Any], list[Any], list[str], list[str]]:
    """Join by item id: (ids, gold values, pred values or None, missing ids, extra ids)."""
    if not isinstance(gold, Mapping) or not isinstance(pred, Mapping):
        raise InputError(
            f"gold and predictions must be mappings item_id -> {what} (got "
            f"{type(gold).__name__} and {type(pred).__name__}); items are joined by id, never "
            "by position"
        )
    if missing not in ("error", "as_invalid"):
        raise ValueError(f"missing={missing!r} (expected 'error' or 'as_invalid')")
    if extra not in ("error", "ignore"):
        raise ValueError(f"extra={extra!r} (expected 'error' or 'ignore')")
    keys = list(gold)
    if _all_strings(keys):
        ids = keys
    else:
        ids = [str(k) for k in keys]
        if len(set(ids)) != len(ids):
            raise InputError("two gold item ids are equal as strings (expected unique ids)")
    g_vals = list(gold.values())
    if keys == list(pred):
        # the same items in the same order (the usual case): no lookups needed
        return ids, g_vals, list(pred.values()), [], []
    sentinel = object()
    p_vals = [pred.get(k, sentinel) for k in keys]
    missing_ids = [ids[i] for i, v in enumerate(p_vals) if v is sentinel]
    found = len(ids) - len(missing_ids)
    extra_ids: list[str] = []
    if found < len(pred):
        extra_ids = sorted(str(k) for k in pred if k not in gold)
        if extra == "error":
            shown = ", ".join(f"'{k}'" for k in extra_ids[:5])
            more = f" and {len(extra_ids) - 5} more" if len(extra_ids) > 5 else ""
            raise InputError(
                f"{len(extra_ids)} predicted item(s) not in gold: {shown}{more} (expected "
                "predictions for gold items only, or extra='ignore')"
            )
    if missing_ids and missing == "error":
        shown = ", ".join(f"'{k}'" for k in missing_ids[:5])
        more = f" and {len(missing_ids) - 5} more" if len(missing_ids) > 5 else ""
        raise InputError(
            f"{len(missing_ids)} gold item(s) have no prediction: {shown}{more} (expected a "
            "prediction for every gold item, or missing='as_invalid')"
        )
    p_out = [None if v is sentinel else v for v in p_vals]
    return ids, g_vals, p_out, missing_ids, extra_ids


def _all_strings(values: list[Any]) -> bool:
    """True when every value is a string (checked by pyarrow, much faster than a loop)."""
    import pyarrow as pa

    try:
        return pa.array(values, type=pa.string()).null_count == 0
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return False


def _check_labels(values: list[Any], side: str, ids: Sequence[str]) -> None:
    """Raise for the first label that is not a string (missing predictions are None)."""
    for i, v in zip(ids, values, strict=True):
        if (v is not None or side == "gold") and not isinstance(v, str):
            raise InputError(
                f"{side} label {v!r} is not a string (expected a label such as 'M')",
                location=f"item '{i}'",
            )


@dataclass
class TypeReport(ExtractionReport):
    """Result of :func:`evaluate_types`."""

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


def _normalize_labels(
    normalize: Callable[[str], str] | None, values: list[Any], changes: dict[str, dict[str, Any]]
) -> list[Any]:
    if normalize is None:
        return values
    cache: dict[str, str] = {}
    out = []
    for v in values:
        if v is None:
            out.append(v)
            continue
        if v not in cache:
            cache[v] = normalize(v)
        nv = cache[v]
        if nv != v:
            entry = changes.setdefault(v, {"to": nv, "count": 0})
            entry["count"] += 1
        out.append(nv)
    return out


def evaluate_types(
    gold: Mapping[Any, str],
    pred: Mapping[Any, str],
    *,
    profile: str | HierarchyProfile | None = None,
    labels: Literal["present"] | Sequence[str] = "present",
    zero_division: float | str = 0.0,
    missing: Literal["error", "as_invalid"] = "error",
    extra: Literal["error", "ignore"] = "error",
    top_k: int = 10,
    invalid_gold: Literal["error", "drop_items"] = "error",
    normalize: Callable[[str], str] | None = None,
    level: int = 1,
) -> TypeReport:
    """Single-label type classification metrics (extraction.md §4.1–4.3, §4.5).

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
    if invalid_gold not in ("error", "drop_items"):
        raise ValueError(f"invalid_gold={invalid_gold!r} (expected 'error' or 'drop_items')")
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


@dataclass
class MultiLabelReport(ExtractionReport):
    """Result of :func:`evaluate_types_multilabel`."""

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


def evaluate_types_multilabel(
    gold: Mapping[Any, Iterable[str]],
    pred: Mapping[Any, Iterable[str]],
    *,
    profile: str | HierarchyProfile | None = None,
    labels: Literal["present"] | Sequence[str] = "present",
    zero_division: float | str = 0.0,
    missing: Literal["error", "as_invalid"] = "error",
    extra: Literal["error", "ignore"] = "error",
) -> MultiLabelReport:
    """Multi-label metrics on label sets, e.g. primary + secondary types (§4.4).

    Semantics of scikit-learn on a ``MultiLabelBinarizer`` matrix: micro, macro and weighted
    P/R/F1 over the label set; ``samples`` = per-item P/R/F1 averaged; subset accuracy = exact
    set match. Invalid predicted labels (with a profile) become ``__INVALID__``, a column that
    counts in micro and samples scores but is not averaged in macro or weighted.

    >>> g = {1: {"M"}, 2: {"M", "A"}, 3: {"L"}, 4: {"A", "R"}}
    >>> p = {1: {"M"}, 2: {"M"}, 3: {"L", "A"}, 4: {"A"}}
    >>> r = evaluate_types_multilabel(g, p)
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
