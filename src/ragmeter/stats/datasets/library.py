"""Library-backed split methods (docs/stats.md), imported only when asked for.

``iterstrat``: two-stage ``MultilabelStratifiedShuffleSplit`` (iterative-stratification) on
one-hot factor labels; no group support. ``sklearn_group``: scikit-learn's
``StratifiedGroupKFold`` on one primary factor, folds allocated to the splits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import UsageError
from ragmeter.stats.datasets.items import Item

__all__ = ["iterstrat_split", "sklearn_group_split"]


def _need(module: str, extra: str = "splits") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise UsageError(
            f"this split method needs {module.split('.')[0]} (pip install 'ragmeter[{extra}]')"
        ) from None


def _one_hot(labels: Sequence[tuple[str, ...]], factors: Sequence[str]) -> np.ndarray:
    keys = sorted({(f, v) for row in labels for f, v in zip(factors, row, strict=True)})
    index = {key: i for i, key in enumerate(keys)}
    y = np.zeros((len(labels), max(len(keys), 1)), dtype=np.int64)
    for i, row in enumerate(labels):
        for f, v in zip(factors, row, strict=True):
            y[i, index[(f, v)]] = 1
    return y


def iterstrat_split(
    items: Sequence[Item],
    factors: Sequence[str],
    labels: Sequence[tuple[str, ...]],
    ratios: Mapping[str, float],
    *,
    seed: int,
    ignore_groups: bool,
    group_key: str | None,
) -> tuple[dict[str, str], dict[str, Any]]:
    """Peel off the last split, then the one before it, with MultilabelStratifiedShuffleSplit."""
    ms = _need("iterstrat.ml_stratifiers")
    sizes: dict[str, int] = {}
    for it in items:
        sizes[it.group] = sizes.get(it.group, 0) + 1
    multi = sum(1 for g, n in sizes.items() if n > 1 and not g.startswith("\x00"))
    if multi and not ignore_groups:
        raise UsageError(
            f"method iterstrat cannot keep groups together and {multi} groups of "
            f"{group_key!r} have several items (use method group_multifactor, or "
            "ignore_groups=True to accept leakage)"
        )
    active = [s for s, r in ratios.items() if r > 0]
    if len(active) > 3:
        raise UsageError("method iterstrat splits into at most 3 parts")
    y = _one_hot(labels, factors)
    remaining = np.arange(len(items))
    assignment: dict[str, str] = {}
    rest = 1.0
    for s in reversed(active[1:]):
        share = ratios[s] / rest
        splitter = ms.MultilabelStratifiedShuffleSplit(
            n_splits=1, test_size=share, random_state=seed
        )
        keep, take = next(splitter.split(np.zeros((len(remaining), 1)), y[remaining]))
        for i in remaining[take]:
            assignment[items[i].id] = s
        remaining = remaining[keep]
        rest -= ratios[s]
    for i in remaining:
        assignment[items[i].id] = active[0]
    for it in items:
        assignment.setdefault(it.id, active[0])
    return assignment, {"ignore_groups": bool(ignore_groups), "groups_with_several_items": multi}


def sklearn_group_split(
    items: Sequence[Item],
    factors: Sequence[str],
    labels: Sequence[tuple[str, ...]],
    ratios: Mapping[str, float],
    *,
    seed: int,
    primary_factor: str,
) -> tuple[dict[str, str], dict[str, Any]]:
    """StratifiedGroupKFold with n_splits = round(1 / smallest ratio); the later splits take
    round(ratio · n_splits) folds each (at least one), in reverse declared order; the first
    split takes the rest."""
    ms = _need("sklearn.model_selection")
    active = [s for s, r in ratios.items() if r > 0]
    n_splits = max(2, round(1 / min(ratios[s] for s in active)))
    j = list(factors).index(primary_factor)
    y = np.array([row[j] for row in labels])
    groups = np.array([it.group for it in items])
    cv = ms.StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    folds = [test for _, test in cv.split(np.zeros((len(items), 1)), y, groups)]
    owner: dict[int, str] = {}
    next_fold = 0
    for s in reversed(active[1:]):
        take = max(1, round(ratios[s] * n_splits))
        for f in range(next_fold, min(next_fold + take, n_splits)):
            owner[f] = s
        next_fold += take
    assignment: dict[str, str] = {}
    for f, idx in enumerate(folds):
        for i in idx:
            assignment[items[i].id] = owner.get(f, active[0])
    return assignment, {"n_folds": n_splits, "fold_owner": {str(k): v for k, v in owner.items()}}
