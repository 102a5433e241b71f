"""Rare factor values (docs/stats.md): bucket, merge up a hierarchy, pin, or error."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ragmeter.errors import UsageError
from ragmeter.stats.datasets.items import MISSING, RARE

__all__ = [
    "HERITAGE_HIERARCHY",
    "RARE_POLICIES",
    "RareOutcome",
    "apply_rare_policy",
    "parse_policy",
]

RARE_POLICIES = ("bucket", "merge", "pin:<split>", "error")

HERITAGE_HIERARCHY: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys("GLAM", "CULTURAL"),
        **dict.fromkeys("ORE", "INSTITUTIONAL"),
        **dict.fromkeys("SIN", "COMMUNITY"),
        **dict.fromkeys("BHTF", "SPECIALIZED"),
        "D": "DIGITAL",
        **dict.fromkeys("CP", "PRIVATE"),
        **dict.fromkeys("UX", "UNKNOWN"),
    }
)
"""Custodian type → category of the built-in ``heritage`` profile (docs/extraction.md)."""


@dataclass
class RareOutcome:
    """Rewritten label values per item and what the policy did."""

    values: list[tuple[str, ...]]
    bucketed: dict[str, list[str]] = field(default_factory=dict)
    merged: dict[str, dict[str, str]] = field(default_factory=dict)
    pinned: dict[str, str] = field(default_factory=dict)  # rare label "factor=value" → split
    missing: dict[str, int] = field(default_factory=dict)


def parse_policy(policy: str, splits: Sequence[str]) -> tuple[str, str | None]:
    """``("bucket"|"merge"|"error"|"pin", split)`` from a policy string."""
    if policy in ("bucket", "merge", "error"):
        return policy, None
    if policy.startswith("pin:"):
        target = policy[4:]
        if target not in splits:
            raise UsageError(
                f"rare_policy {policy!r} names split {target!r} (expected one of "
                f"{', '.join(splits)})"
            )
        return "pin", target
    raise UsageError(
        f"unknown rare_policy {policy!r} (expected bucket, merge, pin:<split> or error)"
    )


def apply_rare_policy(
    values: list[tuple[str, ...]],
    factors: Sequence[str],
    *,
    policy: str | Mapping[str, str],
    min_count: int,
    splits: Sequence[str],
    hierarchy: Mapping[str, Mapping[str, str]] | None = None,
) -> RareOutcome:
    """Rewrite values with fewer than ``min_count`` items according to ``policy`` (one policy,
    or one per factor). Pinned values keep their label but are bucketed for the targets; the
    outcome lists which labels pin their groups to which split."""
    per_factor = (
        {f: policy.get(f, "bucket") for f in factors}
        if isinstance(policy, Mapping)
        else dict.fromkeys(factors, policy)
    )
    rows = [list(v) for v in values]
    out = RareOutcome(values=[])
    for j, factor in enumerate(factors):
        kind, target = parse_policy(per_factor[factor], splits)
        col = [r[j] for r in rows]
        missing = sum(1 for v in col if v == MISSING)
        if missing:
            out.missing[factor] = missing
        counts = Counter(col)
        rare = sorted(v for v, c in counts.items() if c < min_count)
        if not rare:
            continue
        if kind == "error":
            shown = ", ".join(f"{v} ({counts[v]})" for v in rare)
            raise UsageError(
                f"factor {factor!r} has values with fewer than {min_count} items: {shown} "
                "(choose rare_policy bucket, merge or pin:<split>, or lower min_count)"
            )
        if kind == "merge":
            parents = (hierarchy or {}).get(factor, {})
            original_counts = Counter(col)
            current = {v: v for v in original_counts}
            for _ in range(len(parents) + 2):
                merged_counts: Counter[str] = Counter()
                for v, c in original_counts.items():
                    merged_counts[current[v]] += c
                climb = {c for c, n in merged_counts.items() if n < min_count and c in parents}
                if not climb:
                    break
                current = {v: parents[c] if c in climb else c for v, c in current.items()}
            else:
                raise UsageError(f"the hierarchy of factor {factor!r} has a cycle")
            mapping = {v: c for v, c in sorted(current.items()) if v != c}
            if mapping:
                out.merged[factor] = mapping
            col = [current[v] for v in col]
            counts = Counter(col)
            rare = sorted(v for v, c in counts.items() if c < min_count)
        if kind == "pin":
            for v in rare:
                out.pinned[f"{factor}={v}"] = target  # type: ignore[assignment]
        if rare:
            out.bucketed[factor] = rare
            rare_set = set(rare)
            col = [RARE if v in rare_set else v for v in col]
        for r, v in zip(rows, col, strict=True):
            r[j] = v
    out.values = [tuple(r) for r in rows]
    return out
