"""How close a SPARQL miss was (default mode): row precision and recall under the best map."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

from ragmeter.steps.modes import DEFAULT
from ragmeter.steps.sparql_keys import _key_columns, _semantics
from ragmeter.steps.sparql_results import SparqlResult

__all__ = ["row_overlap"]

_MAX_DIAGNOSTIC_MAPS: Final = 5040
_MAX_DIAGNOSTIC_CELLS: Final = 200_000  # maps × rows tried exhaustively; beyond, one greedy map


def row_overlap(
    reference: SparqlResult,
    actual: SparqlResult,
    required_columns: Sequence[str] | None,
    ordered: bool,
    ignore_duplicates: bool,
) -> tuple[float, float] | None:
    """Row precision and recall of ``actual`` under the column map that overlaps best.

    Precision is the share of actual rows (projected on the mapped columns) that are reference
    rows, recall the share of reference rows found; sets, multisets or positions as the
    comparison semantics say. All maps are tried when there are at most 5,040 (and at most
    200,000 rows to build in all), otherwise each reference column takes the free actual column
    whose values overlap most. ``None`` for ASK
    results or when the actual result has fewer columns than the reference needs.
    """
    if reference.is_ask or actual.is_ask:
        return None
    q = list(required_columns) if required_columns else list(reference.vars)
    a_vars = actual.vars
    if len(q) > len(a_vars):
        return None
    r_cols = [reference.column(v, False) for v in q]
    a_cols = [actual.column(v, False) for v in a_vars]
    r_ids, a_ids, _fuzzy = _key_columns(r_cols, a_cols, True)
    semantics = _semantics(ordered, ignore_duplicates, DEFAULT)
    n_r = len(reference.bindings)
    n_a = len(actual.bindings)

    def score(sigma: Sequence[int]) -> tuple[float, float]:
        r_rows = list(zip(*r_ids, strict=False)) if q else [()] * n_r
        a_rows = list(zip(*(a_ids[j] for j in sigma), strict=False)) if q else [()] * n_a
        if semantics == "ordered":
            hits = sum(1 for a, b in zip(r_rows, a_rows, strict=False) if a == b)
            return _ratio(hits, len(a_rows), len(r_rows)), _ratio(hits, len(r_rows), len(a_rows))
        if semantics == "set":
            rs, as_ = set(r_rows), set(a_rows)
            hits = len(rs & as_)
            return _ratio(hits, len(as_), len(rs)), _ratio(hits, len(rs), len(as_))
        rc: dict[tuple, int] = defaultdict(int)
        for row in r_rows:
            rc[row] += 1
        hits = 0
        for row in a_rows:
            if rc.get(row, 0) > 0:
                rc[row] -= 1
                hits += 1
        return _ratio(hits, len(a_rows), len(r_rows)), _ratio(hits, len(r_rows), len(a_rows))

    best: tuple[float, float] | None = None
    for sigma in _diagnostic_maps(r_ids, a_ids):
        p, r = score(sigma)
        if best is None or (p + r, r) > (best[0] + best[1], best[1]):
            best = (p, r)
    return best


def _ratio(hits: int, denominator: int, other: int) -> float:
    if denominator == 0:
        return 1.0 if other == 0 else 0.0
    return hits / denominator


def _diagnostic_maps(r_ids: list[list[Any]], a_ids: list[list[Any]]):
    k, m = len(r_ids), len(a_ids)
    rows = max(len(r_ids[0]) if k else 0, len(a_ids[0]) if m else 0, 1)
    maps = math.perm(m, k)
    if maps <= _MAX_DIAGNOSTIC_MAPS and maps * rows <= _MAX_DIAGNOSTIC_CELLS:
        yield from itertools.permutations(range(m), k)
        return
    r_sets = [set(c) for c in r_ids]
    a_sets = [set(c) for c in a_ids]
    free = set(range(m))
    sigma = []
    for i in range(k):
        j = max(
            sorted(free),
            key=lambda j: len(r_sets[i] & a_sets[j]) / (len(r_sets[i] | a_sets[j]) or 1),
        )
        sigma.append(j)
        free.discard(j)
    yield tuple(sigma)
