"""Group-aware multi-factor splits (docs/stats.md) and k-fold cross-validation splits.

Groups (e.g. institutions) are never split; each goes, rare labels first, to the split where it
least increases a chi-square-like distance between achieved and target counts, summed over every
(factor, value) label plus the split size. A coverage pass then moves a group where a split lacks
a value that enough groups carry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.errors import UsageError
from ragmeter.stats.datasets.items import RARE, Item, prepare_items
from ragmeter.stats.datasets.manifest import build_manifest
from ragmeter.stats.datasets.rare import HERITAGE_HIERARCHY, RareOutcome, apply_rare_policy
from ragmeter.stats_choices import SPLIT_METHODS

__all__ = [
    "HERITAGE_RATIOS",
    "METHODS",
    "SplitResult",
    "kfold",
    "normalize_ratios",
    "split",
]

HERITAGE_RATIOS: Mapping[str, float] = {"train": 0.70, "dev": 0.15, "test": 0.15}
METHODS = SPLIT_METHODS
DEFAULT_NAMES = ("train", "dev", "test")


def normalize_ratios(ratios: Any) -> dict[str, float]:
    """Ratios as ``{split: ratio}`` in declared order.

    Accepts a mapping, the preset ``"heritage"`` (0.70/0.15/0.15), or a sequence listing train,
    dev and test in that order. Ratios are non-negative and sum to 1.

    >>> normalize_ratios([0, 0.3, 0.7])
    {'train': 0.0, 'dev': 0.3, 'test': 0.7}
    """
    if ratios is None or ratios == "heritage":
        out = dict(HERITAGE_RATIOS)
    elif isinstance(ratios, str):
        raise UsageError(f"unknown ratios preset {ratios!r} (expected 'heritage' or numbers)")
    elif isinstance(ratios, Mapping):
        out = {str(k): float(v) for k, v in ratios.items()}
    else:
        vals = [float(v) for v in ratios]
        if not 1 <= len(vals) <= 3:
            raise UsageError(
                f"{len(vals)} ratios (expected train, dev and test in that order, e.g. "
                "0.70,0.15,0.15, or name=ratio pairs)"
            )
        out = dict(zip(DEFAULT_NAMES, vals))  # noqa: B905 - fewer than three names is allowed
    if not out:
        raise UsageError("no split ratios")
    for name, r in out.items():
        if not (r >= 0) or r != r:
            raise UsageError(f"ratio of split {name!r} is {r!r} (expected a number >= 0)")
    total = sum(out.values())
    if abs(total - 1) > 1e-6:
        raise UsageError(f"ratios sum to {total:g} (expected 1, e.g. 0.70,0.15,0.15)")
    if not any(r > 0 for r in out.values()):
        raise UsageError("every ratio is 0 (expected at least one positive ratio)")
    return out


@dataclass
class SplitResult:
    """A split: the manifest (docs/stats.md), the report and the item → split assignment."""

    manifest: dict[str, Any]
    report: dict[str, Any]
    assignment: dict[str, str]

    @property
    def splits(self) -> dict[str, list[str]]:
        return self.manifest["splits"]

    @property
    def sha256(self) -> str:
        return self.manifest["sha256"]

    def to_dict(self) -> dict[str, Any]:
        return {"manifest": self.manifest, "report": self.report}


# -- the report -----------------------------------------------------------------------------
def build_report(
    items: Sequence[Item],
    factors: Sequence[str],
    assignment: Mapping[str, str],
    ratios: Mapping[str, float],
    *,
    rare: RareOutcome | None = None,
    coverage: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Sizes, per-factor shares and deviations, absent values, leakage, rare handling."""
    active = [s for s, r in ratios.items() if r > 0]
    n = len(items)
    sizes = Counter(assignment[it.id] for it in items)
    groups_in: dict[str, set[str]] = {}
    for it in items:
        groups_in.setdefault(it.group, set()).add(assignment[it.id])
    leaked = sorted(g for g, s in groups_in.items() if len(s) > 1 and not g.startswith("\x00"))
    per_factor: dict[str, Any] = {}
    absent_all: dict[str, dict[str, list[str]]] = {}
    max_dev: dict[str, float] = {}
    for j, f in enumerate(factors):
        overall = Counter(it.values[j] for it in items)
        by_split = {
            s: Counter(it.values[j] for it in items if assignment[it.id] == s) for s in active
        }
        values: dict[str, dict[str, Any]] = {}
        worst = 0.0
        for v in sorted(overall, key=lambda x: (-overall[x], x)):
            row: dict[str, Any] = {"count": overall[v], "overall": overall[v] / n}
            for s in active:
                size = sizes.get(s, 0)
                share = by_split[s][v] / size if size else None
                row[s] = share
                if share is not None:
                    worst = max(worst, abs(share - overall[v] / n) * 100)
            values[v] = row
        absent = {s: sorted(v for v in overall if by_split[s][v] == 0) for s in active}
        absent = {s: vs for s, vs in absent.items() if vs}
        if absent:
            absent_all[f] = absent
        max_dev[f] = worst
        per_factor[f] = {"values": values, "max_abs_share_deviation_pp": worst, "absent": absent}
    report: dict[str, Any] = {
        "n_items": n,
        "n_groups": len(groups_in),
        "sizes": {s: sizes.get(s, 0) for s in ratios},
        "targets": {s: r * n for s, r in ratios.items()},
        "factors": per_factor,
        "max_abs_share_deviation_pp": max_dev,
        "values_absent_from_split": absent_all,
        "leakage": {"groups_in_more_than_one_split": len(leaked), "groups": leaked},
    }
    if rare is not None:
        report["rare"] = {
            "bucketed": rare.bucketed,
            "merged": rare.merged,
            "pinned": rare.pinned,
        }
        report["missing_values"] = rare.missing
    report["coverage"] = dict(coverage) if coverage is not None else None
    report.update(extra or {})
    return report


# -- the group-aware multi-factor algorithm ---------------------------------------------------
def _group_multifactor(
    items: Sequence[Item],
    factors: Sequence[str],
    labels_of: list[tuple[str, ...]],
    ratios: Mapping[str, float],
    *,
    seed: int,
    coverage: bool,
    rare: RareOutcome,
) -> tuple[dict[str, str], dict[str, Any]]:
    active = [s for s, r in ratios.items() if r > 0]
    k = len(active)
    r = np.array([ratios[s] for s in active])
    label_keys = sorted({(f, v) for row in labels_of for f, v in zip(factors, row, strict=True)})
    label_index = {lab: i for i, lab in enumerate(label_keys)}
    n_l = np.zeros(len(label_keys))
    group_items: dict[str, list[int]] = {}
    for idx, it in enumerate(items):
        group_items.setdefault(it.group, []).append(idx)
        for f, v in zip(factors, labels_of[idx], strict=True):
            n_l[label_index[(f, v)]] += 1
    group_ids = sorted(group_items)
    glabels: dict[str, np.ndarray] = {}
    gcounts: dict[str, np.ndarray] = {}
    for g in group_ids:
        c = Counter(
            label_index[(f, v)]
            for idx in group_items[g]
            for f, v in zip(factors, labels_of[idx], strict=True)
        )
        keys = sorted(c)
        glabels[g] = np.array(keys, dtype=np.intp)
        gcounts[g] = np.array([c[key] for key in keys], dtype=np.float64)
    size = {g: len(group_items[g]) for g in group_ids}
    n_total = float(len(items))
    targets = r[:, None] * n_l[None, :]  # T_s[l]
    size_targets = r * n_total  # D_s
    achieved = np.zeros((k, len(label_keys)))  # A_s[l]
    sizes = np.zeros(k)  # S_s

    def add_delta(g: str) -> np.ndarray:
        lab, c = glabels[g], gcounts[g]
        a, t = achieved[:, lab], targets[:, lab]
        label_term = (c[None, :] * (2 * (a - t) + c[None, :]) / t).sum(axis=1)
        ng = size[g]
        return label_term + ng * (2 * (sizes - size_targets) + ng) / size_targets

    def remove_delta(g: str, s: int) -> float:
        lab, c = glabels[g], gcounts[g]
        a, t = achieved[s, lab], targets[s, lab]
        ng = size[g]
        return (
            float((c * (c - 2 * (a - t)) / t).sum())
            + ng * (ng - 2 * (sizes[s] - size_targets[s])) / size_targets[s]
        )

    def place(g: str, s: int, sign: int = 1) -> None:
        achieved[s, glabels[g]] += sign * gcounts[g]
        sizes[s] += sign * size[g]

    assign: dict[str, int] = {}
    # pinned groups (rare_policy pin:<split>) are placed before the greedy pass
    pins: dict[str, str] = {}
    for key, target in rare.pinned.items():
        f, _, v = key.partition("=")
        j = list(factors).index(f)
        for g in group_ids:
            if any(items[idx].values[j] == v for idx in group_items[g]):
                if g in pins and pins[g] != target:
                    raise UsageError(
                        f"group {_show_group(g)!r} carries rare values pinned to splits "
                        f"{pins[g]!r} and {target!r}"
                    )
                pins[g] = target
    for g in sorted(pins):
        s = active.index(pins[g])
        assign[g] = s
        place(g, s)

    rng = np.random.default_rng(seed)
    perm = rng.permutation(np.array(group_ids, dtype=object))
    position = {g: i for i, g in enumerate(perm.tolist())}
    rarest = {g: (float(n_l[glabels[g]].min()) if len(glabels[g]) else 0.0) for g in group_ids}
    order = sorted(
        (g for g in group_ids if g not in pins),
        key=lambda g: (rarest[g], -size[g], position[g]),
    )
    for g in order:
        delta = add_delta(g)
        best = int(np.argmin(delta))  # ties go to the split declared first
        assign[g] = best
        place(g, best)

    moves: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    if coverage:
        carriers: dict[int, list[str]] = {}
        for g in group_ids:
            for lab in glabels[g]:
                carriers.setdefault(int(lab), []).append(g)
        for li in sorted(range(len(label_keys)), key=lambda i: (n_l[i], label_keys[i])):
            f, v = label_keys[li]
            if v == RARE or len(carriers.get(li, [])) < k:
                continue
            for s in range(k):
                if achieved[s, li] > 0:
                    continue
                per_split = Counter(assign[g] for g in carriers[li])
                best_key: tuple[float, int, str] | None = None
                for g in carriers[li]:
                    d = assign[g]
                    if d == s or g in pins or per_split[d] < 2:
                        continue
                    cost = remove_delta(g, d)
                    place(g, d, -1)
                    cost += float(add_delta(g)[s])
                    place(g, d, +1)
                    cand = (cost, size[g], g)
                    if best_key is None or cand < best_key:
                        best_key = cand
                if best_key is None:
                    failures.append({"factor": f, "value": v, "split": active[s]})
                    continue
                g = best_key[2]
                d = assign[g]
                place(g, d, -1)
                place(g, s, +1)
                assign[g] = s
                moves.append(
                    {
                        "group": _show_group(g),
                        "factor": f,
                        "value": v,
                        "from": active[d],
                        "to": active[s],
                        "items": size[g],
                    }
                )
    assignment = {items[idx].id: active[assign[g]] for g in group_ids for idx in group_items[g]}
    return assignment, {"enabled": coverage, "moves": moves, "failures": failures}


def _show_group(g: str) -> str:
    return g[1:] if g.startswith("\x00") else g


def split(
    items: Iterable[Mapping[str, Any]],
    *,
    ratios: Any = None,
    factors: Sequence[str] | None = None,
    by: Sequence[str] | None = None,
    group_key: str | None = None,
    seed: int = 0,
    rare_policy: str | Mapping[str, str] = "bucket",
    min_count: int | None = None,
    coverage: bool = True,
    method: str = "group_multifactor",
    hierarchy: Mapping[str, Mapping[str, str]] | str | None = None,
    primary_factor: str | None = None,
    ignore_groups: bool = False,
) -> SplitResult:
    """Split items into train/dev/test (or any named splits) on several factors at once.

    ``items`` are records with an ``id``, an optional group key and factor values (top-level
    or under ``strata``, as in the gold format); a missing value becomes ``__missing__``. No
    group is ever split across two splits; the marginal distribution of every factor is kept
    close to the overall one in every split; results depend only on the seed, not on input
    order.

    Parameters: ``ratios`` (mapping, ``"heritage"`` = 0.70/0.15/0.15, or train, dev, test in
    order; splits with ratio 0 are ignored), ``factors`` (alias ``by``), ``group_key``,
    ``seed``, ``rare_policy`` (``"bucket"``, ``"merge"``, ``"pin:<split>"``, ``"error"``; or one
    per factor), ``min_count`` (default: the number of non-empty splits), ``coverage`` (move a
    group into a split that lacks a value carried by enough groups), ``method``
    (``"group_multifactor"``, ``"iterstrat"``, ``"sklearn_group"``), ``hierarchy`` (factor →
    value → parent for ``merge``; ``"heritage"`` maps ``custodian_type`` codes to categories),
    ``primary_factor`` (``sklearn_group``) and ``ignore_groups`` (``iterstrat``).

    >>> rows = [{"id": f"i{n}", "kind": "AB"[n % 2], "inst": f"g{n // 2}"} for n in range(20)]
    >>> res = split(rows, ratios=[0.5, 0.25, 0.25], factors=["kind"], group_key="inst")
    >>> res.report["sizes"], res.report["leakage"]["groups_in_more_than_one_split"]
    ({'train': 10, 'dev': 6, 'test': 4}, 0)
    """
    if factors is not None and by is not None:
        raise UsageError("give factors or by, not both")
    factor_list = [str(f) for f in (factors if factors is not None else (by or []))]
    if len(set(factor_list)) != len(factor_list):
        raise UsageError("a factor is listed twice")
    if method not in METHODS:
        raise UsageError(f"unknown split method {method!r} (expected one of {', '.join(METHODS)})")
    ratio_map = normalize_ratios(ratios)
    active = [s for s, r in ratio_map.items() if r > 0]
    k = len(active)
    mc = k if min_count is None else int(min_count)
    if mc < 1:
        raise UsageError(f"min_count is {mc} (expected a positive integer)")
    hier = _hierarchy(hierarchy, factor_list)
    prepared = prepare_items(items, factor_list, group_key)
    if not prepared:
        raise UsageError("no items to split")
    rare = apply_rare_policy(
        [it.values for it in prepared],
        factor_list,
        policy=rare_policy,
        min_count=mc,
        splits=active,
        hierarchy=hier,
    )
    settings: dict[str, Any] = {
        "ratios": ratio_map,
        "factors": factor_list,
        "group_key": group_key,
        "rare_policy": rare_policy if isinstance(rare_policy, str) else dict(rare_policy),
        "min_count": mc,
        "coverage": bool(coverage),
    }
    if hierarchy is not None:
        settings["hierarchy"] = hierarchy if isinstance(hierarchy, str) else hier
    extra: dict[str, Any] = {}
    cov: dict[str, Any] | None = None
    if method == "group_multifactor":
        assignment, cov = _group_multifactor(
            prepared, factor_list, rare.values, ratio_map, seed=seed, coverage=coverage, rare=rare
        )
    else:
        from ragmeter.stats.datasets.library import iterstrat_split, sklearn_group_split

        if method == "iterstrat":
            settings["ignore_groups"] = bool(ignore_groups)
            assignment, extra = iterstrat_split(
                prepared,
                factor_list,
                rare.values,
                ratio_map,
                seed=seed,
                ignore_groups=ignore_groups,
                group_key=group_key,
            )
        else:
            primary = primary_factor or (factor_list[0] if factor_list else None)
            if primary is None or primary not in factor_list:
                raise UsageError(
                    "method sklearn_group needs primary_factor, one of the factors "
                    f"({', '.join(factor_list) or 'none given'})"
                )
            settings["primary_factor"] = primary
            assignment, extra = sklearn_group_split(
                prepared, factor_list, rare.values, ratio_map, seed=seed, primary_factor=primary
            )
        settings["coverage"] = False
    splits = {s: sorted(i for i, t in assignment.items() if t == s) for s in ratio_map}
    manifest = build_manifest(method=method, seed=seed, splits=splits, settings=settings)
    report = build_report(
        prepared, factor_list, assignment, ratio_map, rare=rare, coverage=cov, extra=extra
    )
    report["rare"]["policy"] = settings["rare_policy"]
    report["rare"]["min_count"] = mc
    return SplitResult(manifest, report, assignment)


def kfold(items: Iterable[Mapping[str, Any]], k: int, **options: Any) -> SplitResult:
    """``k`` folds (``fold0`` … ``fold{k-1}``) of equal ratio by the same algorithm as
    :func:`split`, for cross-validation; every option of :func:`split` but ``ratios`` applies.
    """
    if "ratios" in options:
        raise UsageError("kfold sets the ratios itself (k equal folds)")
    if not isinstance(k, int) or k < 2:
        raise UsageError(f"k is {k!r} (expected an integer >= 2)")
    res = split(items, ratios={f"fold{i}": 1 / k for i in range(k)}, **options)
    res.manifest["kfold"] = k
    return res


def _hierarchy(
    hierarchy: Mapping[str, Mapping[str, str]] | str | None, factors: Sequence[str]
) -> dict[str, dict[str, str]] | None:
    if hierarchy is None:
        return None
    if hierarchy == "heritage":
        return {"custodian_type": dict(HERITAGE_HIERARCHY)}
    if isinstance(hierarchy, str):
        raise UsageError(f"unknown hierarchy {hierarchy!r} (expected 'heritage' or a mapping)")
    out = {}
    for f, parents in hierarchy.items():
        if isinstance(parents, str):
            if parents != "heritage":
                raise UsageError(f"unknown hierarchy {parents!r} for factor {f!r}")
            out[str(f)] = dict(HERITAGE_HIERARCHY)
        else:
            out[str(f)] = {str(k): str(v) for k, v in parents.items()}
    return out
