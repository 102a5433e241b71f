"""Hashable cell keys for the SPARQL comparison: numeric tolerance clusters and row semantics.

Default mode compares numbers by value with a relative tolerance of 1e-8; the keys here are equal
whenever two cells may be equal, so a search on them prunes no valid column map.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

from ragmeter.steps.modes import V5
from ragmeter.steps.sparql_results import REL_TOL


def _close(a: int | float, b: int | float) -> bool:
    """Numeric equality of default mode: exact for two integers, else relative 1e-8."""
    if a == b:
        return True
    if type(a) is int and type(b) is int:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=0.0)
    except OverflowError:
        return False


def _cells_equal(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return type(a) is tuple and type(b) is tuple and _close(a[1], b[1])


def _key_columns(
    r_cols: list[list[Any]], a_cols: list[list[Any]], default_cells: bool
) -> tuple[list[list[Any]], list[list[Any]], bool]:
    """Hashable keys per cell that are equal whenever the cells may be equal.

    Canonical values serve as their own keys (string hashes are cached). In default mode,
    numbers within the relative tolerance of each other (single-linkage clusters) share the key
    of the cluster's smallest member; the third value says whether some cluster holds several
    distinct numbers, in which case complete maps must be verified against the exact pairwise
    relation (keys are then a necessary condition only).
    """
    if not default_cells:
        return r_cols, a_cols, False
    numbers: set[Any] = set()
    for col in (*r_cols, *a_cols):
        numbers.update(v for v in col if type(v) is tuple)  # ("num", x); the rest are str
    if len(numbers) < 2:
        return r_cols, a_cols, False
    ordered = sorted(numbers, key=lambda t: t[1])
    representative: dict[Any, Any] = {}
    fuzzy = False
    head = ordered[0]
    for prev, cur in itertools.pairwise(ordered):
        if _close(prev[1], cur[1]):
            fuzzy = True
            representative[cur] = head
        else:
            head = cur
    if not fuzzy:
        return r_cols, a_cols, False

    def remap(col: list[Any]) -> list[Any]:
        return list(map(representative.get, col, col))

    return [remap(c) for c in r_cols], [remap(c) for c in a_cols], True


def _multiset(col: list[Any]) -> frozenset:
    return frozenset(Counter(col).items())


def _semantics(ordered: bool, ignore_duplicates: bool, mode: str) -> str:
    if ordered:
        return "ordered"
    if mode == V5 or not ignore_duplicates:
        return "bag"
    return "set"
