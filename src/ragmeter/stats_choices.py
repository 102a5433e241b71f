"""The named choices of the statistics engine (docs/stats.md), in one place.

The engine validates against these tuples and the command line offers exactly them. They live
outside :mod:`ragmeter.stats` because importing that package loads numpy and scipy, and the
command line reads its choices every time it starts; :mod:`ragmeter.stats.dispatch` exposes
them beside the tests they configure.
"""

from __future__ import annotations

from typing import Literal, get_args

from ragmeter.warnings import renamed_attributes

__all__ = [
    "ALTERNATIVES",
    "CI_METHODS",
    "CORRECTIONS",
    "CORRECTION_FAMILIES",
    "MISSING_POLICIES",
    "SPLIT_METHODS",
    "TESTS",
    "TWO_SIDED",
    "MissingPolicy",
]

TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
"""Paired tests, by canonical name (aliases: :data:`ragmeter.stats.dispatch.canonical_test`)."""

CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")
"""Multiple-comparison corrections of :func:`ragmeter.stats.adjust`."""

CORRECTION_FAMILIES = ("per_metric", "all")
"""The family a correction runs over: each metric's pairs, or all pairs × metrics."""

ALTERNATIVES = ("two-sided", "greater", "less")
"""Alternative hypotheses of every paired test."""

TWO_SIDED = ("abs", "double")
"""Two-sided p-value rules of the randomization tests (``double``: scipy's)."""

CI_METHODS = ("bca", "percentile", "basic")
"""Bootstrap confidence-interval methods."""

MissingPolicy = Literal["error", "fill", "intersect"]
"""What to do with a query one system lacks."""
MISSING_POLICIES: tuple[str, ...] = get_args(MissingPolicy)

SPLIT_METHODS = ("group_multifactor", "iterstrat", "sklearn_group")
"""Methods of :func:`ragmeter.stats.datasets.split` (the first is the default)."""


# "families" also names the retrieval measure families; corrections run over CORRECTION_FAMILIES
__getattr__ = renamed_attributes(__name__, {"FAMILIES": "CORRECTION_FAMILIES"}, globals())
