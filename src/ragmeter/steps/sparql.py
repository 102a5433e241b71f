"""Exact, fast comparison of SPARQL 1.1 JSON results (docs/steps.md).

graphrag-eval enumerates every injective map of the required reference columns onto the actual
columns and rebuilds all rows for each, Θ(P(m, k)·n·k). This module decides the same relation by
fingerprint-and-prune:

1. every cell is canonicalised once and interned to a small integer;
2. a reference column can only map to an actual column with the same fingerprint (the vector
   itself when rows are ordered, its multiset for bag semantics, its set for set semantics);
3. ordered results need no search (a bipartite matching on the candidate columns); unordered
   results are searched depth by depth, where each partial row of the actual result must be a
   partial row of the reference (looked up in the reference's intern table), and the set or
   multiset of partial rows must agree. Both tests are necessary conditions, so no valid map is
   pruned and the answer is exact; in the common case every column has a single candidate and
   the comparison is linear in the number of cells.

Default mode compares numbers by value with a relative tolerance of 1e-8. Tolerance is
not transitive, so the search runs on tolerance *clusters* (single-linkage classes of the numeric
values present, a coarser but necessary condition) and every complete map whose clusters contain
more than one distinct value is verified against the exact pairwise relation before it is
accepted.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.errors import InputError
from ragmeter.steps.modes import DEFAULT, check_compat
from ragmeter.steps.sparql_diagnostics import row_overlap
from ragmeter.steps.sparql_keys import _cells_equal, _key_columns, _multiset, _semantics
from ragmeter.steps.sparql_results import (
    UNBOUND,
    SparqlResult,
    as_parsed,
    canonical_cell,
    compat_cell,
    load_result,
    reference_problem,
)

# Cells, parsed results and diagnostics live in sibling modules; this path keeps importing them.
__all__ = [
    "UNBOUND",
    "SparqlResult",
    "as_parsed",
    "canonical_cell",
    "compare_sparql_results",
    "compat_cell",
    "find_column_mapping",
    "load_result",
    "reference_problem",
    "row_overlap",
]

# -- the comparison ----------------------------------------------------------------------------


def _max_matching(cands: Sequence[Sequence[int]]) -> list[int] | None:
    """A matching that covers every left node (augmenting paths), or ``None``."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in cands[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(cands)):
        if not augment(i, set()):
            return None
    out = [0] * len(cands)
    for j, i in owner.items():
        out[i] = j
    return out


def _perfect_matching(left: list[tuple], right: list[tuple]) -> bool:
    cands = [[j for j, b in enumerate(right) if _rows_equal(a, b)] for a in left]
    return len(left) == len(right) and _max_matching(cands) is not None


def _rows_equal(a: tuple, b: tuple) -> bool:
    return all(_cells_equal(x, y) for x, y in zip(a, b, strict=False))


def _verify(
    r_exact: list[list[Any]],
    a_exact: list[list[Any]],
    r_ids: list[list[int]],
    a_ids: list[list[int]],
    sigma: Sequence[int],
    semantics: str,
) -> bool:
    """The exact row relation (docs/steps.md) under ``sigma`` with pairwise numeric tolerance."""
    k = len(sigma)
    r_rows = list(zip(*r_exact, strict=False)) if k else []
    a_rows = list(zip(*(a_exact[j] for j in sigma), strict=False)) if k else []
    if semantics == "ordered":
        return all(_rows_equal(a, b) for a, b in zip(r_rows, a_rows, strict=False))
    r_keys = list(zip(*r_ids, strict=False))
    a_keys = list(zip(*(a_ids[j] for j in sigma), strict=False))
    groups_r: dict[tuple, list[tuple]] = defaultdict(list)
    groups_a: dict[tuple, list[tuple]] = defaultdict(list)
    for key, row in zip(r_keys, r_rows, strict=False):
        groups_r[key].append(row)
    for key, row in zip(a_keys, a_rows, strict=False):
        groups_a[key].append(row)
    for key, rows in groups_r.items():
        other = groups_a.get(key, [])
        if semantics == "bag":
            if not _perfect_matching(rows, other):
                return False
        elif not all(any(_rows_equal(r, a) for a in other) for r in set(rows)) or not all(
            any(_rows_equal(a, r) for r in rows) for a in set(other)
        ):
            return False
    return True


def _search(
    r_cols: list[list[Any]],
    a_cols: list[list[Any]],
    semantics: str,
    default_cells: bool,
) -> list[int] | None:
    """An injective map (actual column per reference column) satisfying it, or ``None``."""
    k = len(r_cols)
    if k == 0:  # the caller has checked row counts where they matter
        return []
    n_r, n_a = len(r_cols[0]), len(a_cols[0])
    r_ids, a_ids, fuzzy = _key_columns(r_cols, a_cols, default_cells)

    if semantics == "set":
        fingerprint: Callable[[list[Any]], Any] = frozenset
    elif semantics == "bag":
        fingerprint = _multiset
    else:
        fingerprint = tuple
    by_print: dict[Any, list[int]] = defaultdict(list)
    for j, col in enumerate(a_ids):
        by_print[fingerprint(col)].append(j)
    cands = [by_print.get(fingerprint(col), []) for col in r_ids]
    if any(not c for c in cands):
        return None

    if semantics == "ordered":
        if fuzzy:
            cands = [
                [j for j in cs if all(map(_cells_equal, r_cols[i], a_cols[j]))]
                for i, cs in enumerate(cands)
            ]
        return _max_matching(cands)

    if _max_matching(cands) is None:
        return None
    # Identical actual vectors are interchangeable: try only the first of each class.
    first_of: dict[tuple, int] = {}
    klass = [first_of.setdefault(tuple(col), j) for j, col in enumerate(a_cols)]

    order = sorted(range(k), key=lambda i: len(cands[i]))
    tables: list[dict[tuple[int, Any], int]] = []
    ref_check: list[Any] = []
    parent: list[int] = [0] * n_r
    for i in order:  # partial reference rows, interned depth by depth (C-level loops)
        keys = list(zip(parent, r_ids[i], strict=True))
        table = dict(zip(dict.fromkeys(keys), itertools.count()))
        parent = list(map(table.__getitem__, keys))
        tables.append(table)
        ref_check.append(len(table) if semantics == "set" else sorted(parent))

    sigma = [0] * k
    used: set[int] = set()

    def dfs(depth: int, a_parent: list[int]) -> bool:
        if depth == k:
            return not fuzzy or _verify(
                [r_cols[i] for i in range(k)], a_cols, r_ids, a_ids, sigma, semantics
            )
        i = order[depth]
        table = tables[depth]
        tried: set[int] = set()
        for j in cands[i]:
            if j in used or klass[j] in tried:
                continue
            tried.add(klass[j])
            try:
                ids = list(map(table.__getitem__, zip(a_parent, a_ids[j], strict=False)))
            except KeyError:  # a partial row the reference does not have
                continue
            if semantics == "set":
                if len(set(ids)) != ref_check[depth]:
                    continue
            elif sorted(ids) != ref_check[depth]:
                continue
            used.add(j)
            sigma[i] = j
            if dfs(depth + 1, ids):
                return True
            used.discard(j)
        return False

    return list(sigma) if dfs(0, [0] * n_a) else None


def _as_reference(reference: Any) -> SparqlResult:
    problem = reference_problem(reference, cells=False)
    if problem is not None:
        raise InputError(f"{problem} (expected SPARQL 1.1 JSON results)", location="reference")
    result = load_result(reference)
    assert result is not None
    return result


def _effective_columns(ref: SparqlResult, required: Sequence[str] | None, mode: str) -> list[str]:
    if mode == DEFAULT:
        q = list(required) if required else list(ref.vars)
        if required and ref.vars:
            missing = [c for c in required if c not in ref.vars]
            if missing:
                raise InputError(
                    f"required column {missing[0]!r} is not a variable of the reference result "
                    f"(expected one of {', '.join(ref.vars)})",
                    location="required_columns",
                )
        return q
    return list(required) if required is not None else list(ref.vars)


def _compare(
    reference: Any,
    actual: Any,
    required_columns: Sequence[str] | None,
    ordered: bool,
    ignore_duplicates: bool,
    mode: str,
) -> tuple[list[str], list[str], list[int] | None]:
    """(q, actual vars, σ as actual positions) — σ is ``None`` when the results differ."""
    ref = reference if isinstance(reference, SparqlResult) else _as_reference(reference)
    act = load_result(actual)
    if act is None:  # not a JSON object (DESCRIBE/CONSTRUCT text, a JSON string)
        return [], [], None
    if ref.is_ask:
        if not act.is_ask:
            return [], [], None
        if mode == DEFAULT:
            same = type(ref.boolean) is type(act.boolean) and ref.boolean == act.boolean
        else:
            same = ref.boolean == act.boolean
        return [], [], [] if same else None
    q = _effective_columns(ref, required_columns, mode)
    a_vars = act.vars
    r_rows, a_rows = ref.bindings, act.bindings
    if not r_rows and not a_rows:  # both empty: any injective map will do
        return q, a_vars, list(range(len(q))) if len(a_vars) >= len(q) else None
    if not r_rows or not a_rows or len(q) > len(a_vars):
        return q, a_vars, None
    if not q and mode != DEFAULT:
        return q, a_vars, []
    semantics = _semantics(ordered, ignore_duplicates, mode)
    if semantics != "set" and len(r_rows) != len(a_rows):
        return q, a_vars, None
    compat = mode != DEFAULT
    r_cols = [ref.column(v, compat) for v in q]
    a_cols = [act.column(v, compat) for v in a_vars]
    return q, a_vars, _search(r_cols, a_cols, semantics, not compat)


def compare_sparql_results(
    reference: Any,
    actual: Any,
    required_columns: Sequence[str] | None = None,
    ordered: bool = False,
    ignore_duplicates: bool = True,
    *,
    compat: str | None = None,
) -> float:
    """1.0 if ``actual`` holds the reference result (columns renamed or reordered), else 0.0.

    Reference columns ``q`` (``required_columns``, or every reference variable when absent or
    empty in default mode) must map injectively onto actual columns so that the projected rows
    are equal: as sequences (``ordered``), as sets (``ignore_duplicates``, the default) or as
    multisets. Extra actual columns are ignored; a superset of the reference rows is not equal
    under set semantics. Cells compare as RDF terms in default mode (kind, language tag and
    datatype matter; numbers by value with relative tolerance 1e-8) and in graphrag-eval's text
    form in compat modes.

    Parameters
    ----------
    reference, actual
        SPARQL 1.1 JSON results, parsed or as JSON text. An actual value that is not a result
        (Turtle text, a JSON string) scores 0; an invalid reference raises ``InputError``.
    required_columns
        Reference variables that must be present in the actual result.
    ordered
        Row order matters.
    ignore_duplicates
        Unordered rows compare as sets (True) or multisets (False). Ignored by
        ``compat="graphrag-eval-5"``, which always uses multisets.
    compat
        ``None``, ``"graphrag-eval-6"`` or ``"graphrag-eval-5"`` (docs/steps.md).

    Returns
    -------
    float
        1.0 or 0.0.

    Examples
    --------
    >>> ref = {"head": {"vars": ["person", "name"]}, "results": {"bindings": [
    ...     {"person": {"type": "uri", "value": "http://ex/1"},
    ...      "name": {"type": "literal", "value": "Alice"}}]}}
    >>> act = {"head": {"vars": ["n", "p", "extra"]}, "results": {"bindings": [
    ...     {"p": {"type": "uri", "value": "http://ex/1"},
    ...      "n": {"type": "literal", "value": "Alice"},
    ...      "extra": {"type": "literal", "value": "x"}}]}}
    >>> compare_sparql_results(ref, act)
    1.0
    >>> find_column_mapping(ref, act)
    {'person': 'p', 'name': 'n'}
    """
    mode = check_compat(compat)
    _q, _vars, sigma = _compare(
        reference, actual, required_columns, bool(ordered), bool(ignore_duplicates), mode
    )
    return 0.0 if sigma is None else 1.0


def find_column_mapping(
    reference: Any,
    actual: Any,
    required_columns: Sequence[str] | None = None,
    ordered: bool = False,
    ignore_duplicates: bool = True,
    *,
    compat: str | None = None,
) -> dict[str, str] | None:
    """The reference→actual column map that makes the results equal, or ``None``.

    Same inputs as :func:`compare_sparql_results`; ``{}`` when equality needs no columns
    (ASK results, empty results, no required columns in compat mode).

    >>> ask = {"head": {}, "boolean": True}
    >>> find_column_mapping(ask, ask)
    {}
    """
    mode = check_compat(compat)
    q, a_vars, sigma = _compare(
        reference, actual, required_columns, bool(ordered), bool(ignore_duplicates), mode
    )
    if sigma is None:
        return None
    return {q[i]: a_vars[j] for i, j in enumerate(sigma)}
