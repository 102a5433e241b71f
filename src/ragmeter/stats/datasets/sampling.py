"""Stratified sampling with largest-remainder allocation (docs/stats.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ragmeter.errors import UsageError
from ragmeter.stats.datasets.items import prepare_items
from ragmeter.stats.datasets.manifest import build_manifest
from ragmeter.stats.datasets.rare import apply_rare_policy

__all__ = ["ALLOCATIONS", "SampleResult", "allocate", "stratified_sample"]

ALLOCATIONS = ("proportional", "equal")


@dataclass
class SampleResult:
    """The sampled ids (sorted), the per-stratum report and a manifest (split ``sample``)."""

    ids: list[str]
    report: dict[str, Any]
    manifest: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"manifest": self.manifest, "report": self.report}


def allocate(
    sizes: Mapping[str, int],
    n: int,
    *,
    allocation: str = "proportional",
    min_per_stratum: int = 0,
) -> tuple[dict[str, int], dict[str, Fraction]]:
    """Units per stratum by the largest-remainder rule, in exact rational arithmetic.

    Each stratum first gets min(min_per_stratum, N_h); the remaining n′ units are split by
    quotas q_h = n′·N_h/N (proportional) or n′/H (equal); each stratum takes ⌊q_h⌋ capped by its
    capacity, and leftover units go one by one to the largest fractional parts (ties: larger
    N_h, then smaller key), skipping full strata and cycling until n is reached.

    >>> alloc, quotas = allocate({"M": 45, "A": 30, "L": 15, "G": 7, "D": 3}, 10)
    >>> alloc
    {'A': 3, 'D': 0, 'G': 1, 'L': 1, 'M': 5}
    """
    if allocation not in ALLOCATIONS:
        raise UsageError(f"allocation {allocation!r} (expected proportional or equal)")
    total = sum(sizes.values())
    if n < 0:
        raise UsageError(f"sample size {n} (expected a non-negative integer)")
    if n > total:
        raise UsageError(f"sample size {n} is larger than the {total} items")
    keys = sorted(sizes)
    base = {h: min(min_per_stratum, sizes[h]) for h in keys}
    rest = n - sum(base.values())
    if rest < 0:
        raise UsageError(
            f"min_per_stratum {min_per_stratum} over {len(keys)} strata needs "
            f"{sum(base.values())} units, more than n = {n}"
        )
    if allocation == "proportional":
        quotas = {h: Fraction(rest * sizes[h], total) for h in keys}
    else:
        quotas = {h: Fraction(rest, len(keys)) for h in keys}
    alloc = {h: base[h] + min(int(quotas[h]), sizes[h] - base[h]) for h in keys}
    left = n - sum(alloc.values())
    order = sorted(keys, key=lambda h: (-(quotas[h] - int(quotas[h])), -sizes[h], h))
    while left > 0:
        progressed = False
        for h in order:
            if left == 0:
                break
            if alloc[h] < sizes[h]:
                alloc[h] += 1
                left -= 1
                progressed = True
        if not progressed:  # cannot happen while n <= total; a guard against looping
            raise UsageError("no stratum has room for the remaining units")
    return alloc, quotas


def stratified_sample(
    items: Iterable[Mapping[str, Any]],
    *,
    by: Sequence[str],
    n: int,
    allocation: str = "proportional",
    min_per_stratum: int = 0,
    rare_policy: str | None = None,
    min_count: int | None = None,
    hierarchy: Mapping[str, Mapping[str, str]] | str | None = None,
    seed: int = 0,
) -> SampleResult:
    """Draw ``n`` items with the same proportions as the strata (joint key of ``by``).

    Allocation by :func:`allocate`; selection visits strata in key order and, within each,
    applies ``rng.permutation`` to the sorted ids (one ``default_rng(seed)`` shared across
    strata) and takes the first a_h. ``rare_policy`` (bucket, merge or error) rewrites rare
    values first, with ``min_count`` (default 2).

    >>> rows = [{"id": f"i{k:02d}", "t": "AAB"[k % 3]} for k in range(30)]
    >>> s = stratified_sample(rows, by=["t"], n=6)
    >>> [r["allocated"] for r in s.report["strata"]]
    [4, 2]
    """
    factors = [str(f) for f in by]
    if not factors:
        raise UsageError("stratified sampling needs at least one factor (by)")
    prepared = prepare_items(items, factors, None)
    values = [it.values for it in prepared]
    rare = None
    if rare_policy is not None:
        if rare_policy.startswith("pin:"):
            raise UsageError("rare_policy pin:<split> applies to splits, not to sampling")
        from ragmeter.stats.datasets.split import _hierarchy

        rare = apply_rare_policy(
            values,
            factors,
            policy=rare_policy,
            min_count=2 if min_count is None else int(min_count),
            splits=["sample"],
            hierarchy=_hierarchy(hierarchy, factors),
        )
        values = rare.values
    strata: dict[tuple[str, ...], list[str]] = {}
    for it, key in zip(prepared, values, strict=True):
        strata.setdefault(key, []).append(it.id)
    names = {key: "|".join(key) for key in strata}
    sizes = {names[key]: len(ids) for key, ids in strata.items()}
    alloc, quotas = allocate(sizes, n, allocation=allocation, min_per_stratum=min_per_stratum)
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    rows = []
    for key in sorted(strata):
        ids = sorted(strata[key])
        perm = rng.permutation(len(ids))
        take = alloc[names[key]]
        chosen.extend(ids[i] for i in perm[:take])
        rows.append(
            {
                "stratum": names[key],
                "values": dict(zip(factors, key, strict=True)),
                "size": len(ids),
                "quota": float(quotas[names[key]]),
                "allocated": take,
            }
        )
    settings: dict[str, Any] = {
        "by": factors,
        "n": int(n),
        "allocation": allocation,
        "min_per_stratum": int(min_per_stratum),
        "rare_policy": rare_policy,
    }
    manifest = build_manifest(
        method="stratified_sample", seed=seed, splits={"sample": chosen}, settings=settings
    )
    report = {
        "n_items": len(prepared),
        "n": int(n),
        "strata": rows,
        "rare": (
            {"bucketed": rare.bucketed, "merged": rare.merged, "missing": rare.missing}
            if rare
            else None
        ),
    }
    return SampleResult(sorted(chosen), report, manifest)
