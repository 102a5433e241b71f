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
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Final

from ragmeter.errors import InputError
from ragmeter.steps.modes import DEFAULT, V5, check_compat

__all__ = [
    "SparqlResult",
    "compare_sparql_results",
    "find_column_mapping",
    "load_result",
    "reference_problem",
    "row_overlap",
]

XSD: Final = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER_TYPES: Final = frozenset(
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
XSD_FLOAT_TYPES: Final = frozenset(XSD + t for t in ("decimal", "double", "float"))
XSD_BOOLEAN: Final = XSD + "boolean"
XSD_STRING: Final = XSD + "string"

REL_TOL: Final = 1e-8
"""Relative tolerance of numeric equality in default mode."""


class _Unbound:
    """The value of a variable a solution does not bind; equal only to itself, in all modes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNBOUND"


UNBOUND: Final = _Unbound()
_MISSING: Final = object()


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


# -- cell canonicalisation ---------------------------------------------------------------


# Default-mode canonical values are strings with a one-character kind tag (string hashes are
# cached, which makes every later set and dict operation cheap), except numbers, which stay
# ("num", value) tuples because they compare by value with a tolerance.
_IRI, _STR, _LANG, _BNODE_TAG, _TYPED, _BOOL, _SPECIAL, _RAW, _OTHER = (
    "\x01",
    "\x02",
    "\x03",
    "\x04",
    "\x05",
    "\x06",
    "\x07",
    "\x08",
    "\x09",
)


def canonical_cell(cell: Any) -> Any:
    """Default-mode canonical value of one bound cell (RDF-term aware, hashable).

    Kind, language tag and datatype are part of the value; numbers are ``("num", value)``
    (integer 1, decimal 1.0 and double 1e0 are equal); any blank node equals any blank node.

    >>> canonical_cell({"type": "literal", "value": "1",
    ...                 "datatype": "http://www.w3.org/2001/XMLSchema#integer"})
    ('num', 1)
    >>> iri = canonical_cell({"type": "uri", "value": "http://x"})
    >>> iri == canonical_cell({"type": "literal", "value": "http://x"})
    False
    >>> (canonical_cell({"type": "literal", "value": "chat", "xml:lang": "FR"})
    ...  == canonical_cell({"type": "literal", "value": "chat", "xml:lang": "fr"}))
    True
    """
    if type(cell) is not dict:
        return _RAW + _canonical_json(cell)
    value = cell.get("value")
    if type(value) is not str:
        return _OTHER + _canonical_json(cell)
    kind = cell.get("type")
    if kind == "uri":
        return _IRI + value
    if kind == "literal" or kind == "typed-literal":
        lang = cell.get("xml:lang")
        if lang is not None:
            lang = str(lang).lower()
            return f"{_LANG}{len(lang)}:{lang}{value}"
        datatype = cell.get("datatype")
        if not datatype or datatype == XSD_STRING:
            return _STR + value
        if datatype in XSD_INTEGER_TYPES:
            try:
                return ("num", int(value))
            except ValueError:
                pass
        elif datatype in XSD_FLOAT_TYPES:
            try:
                number = float(value)
            except ValueError:
                pass
            else:
                if math.isfinite(number):
                    return ("num", number)
                if math.isnan(number):
                    return _SPECIAL + "NaN"
                return _SPECIAL + ("INF" if number > 0 else "-INF")
        elif datatype == XSD_BOOLEAN:
            lexical = value.strip().lower()
            if lexical in ("true", "1"):
                return _BOOL + "true"
            if lexical in ("false", "0"):
                return _BOOL + "false"
        datatype = str(datatype)
        return f"{_TYPED}{len(datatype)}:{datatype}{value}"
    if kind == "bnode":
        return _BNODE_TAG
    return _OTHER + _canonical_json(cell)


def _trunc5(number: float) -> float:
    return math.trunc(number * 100000.0) / 100000.0


def compat_cell(cell: Any) -> str:
    """graphrag-eval's text form of one bound cell (compat modes).

    IRIs and literals of equal text are equal, language tags and most datatypes are ignored,
    integers go through ``int()``, floats are truncated to 5 decimals.

    >>> compat_cell({"type": "literal", "value": "01",
    ...              "datatype": "http://www.w3.org/2001/XMLSchema#integer"})
    '1'
    >>> compat_cell({"type": "literal", "value": "80.123456789",
    ...              "datatype": "http://www.w3.org/2001/XMLSchema#double"})
    '80.12345'
    """
    if not isinstance(cell, dict):
        return str(cell)
    value = cell.get("value")
    if cell.get("type") in ("literal", "typed-literal"):
        datatype = cell.get("datatype")
        if not datatype:
            return str(value)
        if datatype in XSD_INTEGER_TYPES:
            try:
                return str(int(value))  # type: ignore[arg-type]
            except (ValueError, TypeError):
                return str(value)
        if datatype in XSD_FLOAT_TYPES:
            try:
                number = float(value)  # type: ignore[arg-type]
            except (ValueError, TypeError):
                return str(value)
            try:
                return str(_trunc5(number))
            except (ValueError, OverflowError):  # NaN (as upstream) and ±INF (upstream crashed)
                return str(number)
        if datatype == XSD_BOOLEAN:
            return str(str(value).lower() in ("true", "1"))
    return str(value)


# -- parsed results ----------------------------------------------------------------------------


class SparqlResult:
    """A parsed SPARQL 1.1 JSON result with canonical columns computed on demand and cached.

    Parse once per step output (an actual output is often compared with several reference
    steps); :func:`load_result` builds it leniently from JSON text or a parsed value.
    """

    __slots__ = ("_columns", "bindings", "boolean", "vars")

    def __init__(self, boolean: Any, variables: list[str], bindings: list[dict]) -> None:
        self.boolean = boolean  # _MISSING for a SELECT result
        self.vars = variables
        self.bindings = bindings
        self._columns: dict[tuple[str, bool], list[Any]] = {}

    @property
    def is_ask(self) -> bool:
        return self.boolean is not _MISSING

    def column(self, var: str, compat: bool) -> list[Any]:
        """Canonical values of ``var`` in row order; unbound cells are :data:`UNBOUND`."""
        key = (var, compat)
        col = self._columns.get(key)
        if col is None:
            col = (
                _compat_column(self.bindings, var)
                if compat
                else _default_column(self.bindings, var)
            )
            self._columns[key] = col
        return col

    def iris(self) -> set[str]:
        """Every IRI bound anywhere in the result (for IRI discovery)."""
        return {
            cell["value"]
            for b in self.bindings
            for cell in b.values()
            if type(cell) is dict and cell.get("type") == "uri" and type(cell.get("value")) is str
        }


def _default_column(bindings: list[dict], var: str) -> list[Any]:
    # The commonest terms (IRIs, plain literals) inline, with subscripts rather than .get()
    # calls: this loop sees every cell of the result. Everything else goes to canonical_cell.
    out: list[Any] = []
    append = out.append
    iri_tag, str_tag = _IRI, _STR
    for b in bindings:
        try:
            cell = b[var]
        except KeyError:
            append(UNBOUND)
            continue
        if type(cell) is dict and len(cell) == 2:
            try:
                value = cell["value"]
                kind = cell["type"]
            except KeyError:
                append(canonical_cell(cell))
                continue
            if type(value) is str:
                if kind == "uri":
                    append(iri_tag + value)
                    continue
                if kind == "literal":
                    append(str_tag + value)
                    continue
        append(canonical_cell(cell))
    return out


def _compat_column(bindings: list[dict], var: str) -> list[Any]:
    return [compat_cell(b[var]) if var in b else UNBOUND for b in bindings]


def load_result(value: Any) -> SparqlResult | None:
    """Parse an actual output leniently; ``None`` when it is not a SPARQL result at all.

    JSON text is decoded first. A missing ``head.vars`` or ``results.bindings`` counts as empty
    (as upstream reads it); a JSON string (a DESCRIBE result serialised as text), an array or a
    malformed ``head``/``results`` is not a result.

    >>> load_result('{"head": {"vars": ["x"]}, "results": {"bindings": []}}').vars
    ['x']
    >>> load_result("@prefix ex: <http://x/> .") is None
    True
    """
    if isinstance(value, SparqlResult):
        return value
    if isinstance(value, (str, bytes, bytearray)):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    boolean = value.get("boolean", _MISSING)
    head = value.get("head", {})
    results = value.get("results", {})
    variables = head.get("vars", []) if isinstance(head, dict) else None
    bindings = results.get("bindings", []) if isinstance(results, dict) else None
    if bindings is None and isinstance(results, dict):
        bindings = []  # "bindings": null reads as no rows
    ok = (
        isinstance(variables, list)
        and all(isinstance(v, str) for v in variables)
        and isinstance(bindings, list)
        and all(isinstance(b, dict) for b in bindings)
    )
    if not ok:
        if boolean is _MISSING:
            return None
        variables, bindings = [], []
    return SparqlResult(boolean, list(variables), list(bindings))  # type: ignore[arg-type]


def reference_problem(value: Any, *, cells: bool = True) -> str | None:
    """Why a reference output is not a valid SPARQL 1.1 JSON result, or ``None`` if it is.

    ``cells=False`` skips the check that every bound cell is an RDF term object (a comparison
    copes with any cell; dataset validation checks them).

    >>> reference_problem('{"head": {}, "boolean": true}') is None
    True
    >>> reference_problem('{"head": {"vars": ["x"]}}')
    'not a SPARQL result: no "boolean" and no "results.bindings"'
    >>> reference_problem("SELECT ?x")
    'not JSON: Expecting value at column 1'
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            return f"not JSON: {exc.msg} at column {exc.colno}"
        except (ValueError, RecursionError) as exc:
            return f"not JSON: {exc}"
    if not isinstance(value, dict):
        return f"not a SPARQL result: a JSON {_json_type(value)}, not an object"
    if "boolean" in value:
        if not isinstance(value["boolean"], bool):
            return 'not a SPARQL result: "boolean" is not true or false'
        return None
    results = value.get("results")
    if not isinstance(results, dict) or "bindings" not in results:
        return 'not a SPARQL result: no "boolean" and no "results.bindings"'
    bindings = results["bindings"]
    if not isinstance(bindings, list):
        return 'not a SPARQL result: "results.bindings" is not a list'
    for n, b in enumerate(bindings):
        if not isinstance(b, dict):
            return f"not a SPARQL result: results.bindings[{n}] is not an object"
        if not cells:
            continue
        for var, term in b.items():
            if not isinstance(term, dict) or not isinstance(term.get("type"), str):
                return (
                    f"not a SPARQL result: results.bindings[{n}].{var} is not an RDF term "
                    'object with a "type"'
                )
    head = value.get("head", {})
    if not isinstance(head, dict):
        return 'not a SPARQL result: "head" is not an object'
    if "vars" in head and (
        not isinstance(head["vars"], list) or not all(isinstance(v, str) for v in head["vars"])
    ):
        return 'not a SPARQL result: "head.vars" is not a list of variable names'
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


# -- numeric tolerance (default mode) ----------------------------------------------------------


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


def _semantics(ordered: bool, ignore_duplicates: bool, mode: str) -> str:
    if ordered:
        return "ordered"
    if mode == V5 or not ignore_duplicates:
        return "bag"
    return "set"


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


# -- diagnostics (default mode): how close a miss was -------------------------------------------

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


def as_parsed(value: Any) -> SparqlResult | None:
    """``value`` as a :class:`SparqlResult` (already parsed ones pass through)."""
    return value if isinstance(value, SparqlResult) else load_result(value)
