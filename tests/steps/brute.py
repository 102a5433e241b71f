"""A brute-force reference for SPARQL result comparison (docs/steps.md), written independently of
``ragmeter.steps.sparql``: enumerate every injective column map and compare rows cell by cell.

``concat=True`` emulates graphrag-eval's row identity (cell texts joined without a separator,
unbound cells written "None"), to show where upstream's answer differs from tuple semantics.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

XSD = "http://www.w3.org/2001/XMLSchema#"
INTS = {
    XSD + t
    for t in [
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
    ]
}
FLOATS = {XSD + "decimal", XSD + "double", XSD + "float"}
UNBOUND = ("<unbound>",)


def default_cell(cell: Any) -> Any:
    if not isinstance(cell, dict) or not isinstance(cell.get("value"), str):
        return ("opaque", repr(cell))
    t, v = cell.get("type"), cell["value"]
    if t == "uri":
        return ("iri", v)
    if t == "bnode":
        return ("bnode",)
    if t in ("literal", "typed-literal"):
        if "xml:lang" in cell:
            return ("lang", v, str(cell["xml:lang"]).lower())
        dt = cell.get("datatype")
        if not dt or dt == XSD + "string":
            return ("str", v)
        if dt in INTS:
            try:
                return ("int", int(v))
            except ValueError:
                return ("typed", v, dt)
        if dt in FLOATS:
            try:
                x = float(v)
            except ValueError:
                return ("typed", v, dt)
            if math.isnan(x):
                return ("special", "nan")
            if math.isinf(x):
                return ("special", "inf" if x > 0 else "-inf")
            return ("float", x)
        if dt == XSD + "boolean":
            low = v.strip().lower()
            if low in ("true", "1"):
                return ("bool", True)
            if low in ("false", "0"):
                return ("bool", False)
        return ("typed", v, dt)
    return ("opaque", repr(sorted(cell.items())))


def default_equal(a: Any, b: Any) -> bool:
    numeric = ("int", "float")
    if a[0] in numeric and b[0] in numeric:
        x, y = a[1], b[1]
        if x == y:
            return True
        if a[0] == "int" and b[0] == "int":
            return False
        return abs(float(x) - float(y)) <= 1e-8 * max(abs(float(x)), abs(float(y)))
    return a == b


def compat_cell(cell: Any) -> str:
    if not isinstance(cell, dict):
        return str(cell)
    v = cell.get("value")
    if cell.get("type") in ("literal", "typed-literal") and cell.get("datatype"):
        dt = cell["datatype"]
        if dt in INTS:
            try:
                return str(int(v))
            except (ValueError, TypeError):
                return str(v)
        if dt in FLOATS:
            try:
                x = float(v)
            except (ValueError, TypeError):
                return str(v)
            if math.isnan(x) or math.isinf(x):
                return str(x)
            return str(math.trunc(x * 100000.0) / 100000.0)
        if dt == XSD + "boolean":
            return str(str(v).lower() in ("true", "1"))
    return str(v)


def _columns(result: dict, names: list[str], cell) -> list[list[Any]]:
    bindings = result.get("results", {}).get("bindings", [])
    return [[cell(b[n]) if n in b else UNBOUND for b in bindings] for n in names]


def _bag_equal(rows_a: list, rows_b: list, eq) -> bool:
    if len(rows_a) != len(rows_b):
        return False
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j, row in enumerate(rows_b):
            if j in seen or not eq(rows_a[i], row):
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(augment(i, set()) for i in range(len(rows_a)))


def brute_compare(
    reference: dict,
    actual: Any,
    required: list[str] | None,
    ordered: bool,
    ignore_duplicates: bool,
    mode: str,
    *,
    concat: bool = False,
) -> float:
    if not isinstance(actual, dict):
        return 0.0
    if "boolean" in reference:
        if "boolean" not in actual:
            return 0.0
        if mode == "default":
            same = type(reference["boolean"]) is type(actual["boolean"])
            return float(same and reference["boolean"] == actual["boolean"])
        return float(reference["boolean"] == actual["boolean"])
    r_rows = reference["results"]["bindings"]
    a_rows = actual.get("results", {}).get("bindings", [])
    a_vars = actual.get("head", {}).get("vars", [])
    r_vars = reference.get("head", {}).get("vars", [])
    if mode == "default":
        q = list(required) if required else list(r_vars)
    else:
        q = list(required) if required is not None else list(r_vars)
    if not r_rows and not a_rows:
        return float(len(a_vars) >= len(q))
    if not r_rows or not a_rows or len(q) > len(a_vars):
        return 0.0
    if not q and mode != "default":
        return 1.0
    cell = default_cell if mode == "default" else compat_cell
    r_cols = _columns(reference, q, cell)
    a_cols = _columns(actual, a_vars, cell)
    if mode == "default":

        def row_eq(x: tuple, y: tuple) -> bool:
            return all(default_equal(a, b) for a, b in zip(x, y, strict=True))

    else:

        def row_eq(x: tuple, y: tuple) -> bool:
            return x == y

    if concat:

        def text(row: tuple) -> tuple:
            return ("".join("None" if c is UNBOUND else c for c in row),)
    else:

        def text(row: tuple) -> tuple:
            return row

    bag = (not ignore_duplicates) or mode == "graphrag-eval-5"
    n_r = len(r_rows)
    t_r = [text(tuple(col[i] for col in r_cols)) for i in range(n_r)]
    for sigma in itertools.permutations(range(len(a_vars)), len(q)):
        t_a = [text(tuple(a_cols[j][i] for j in sigma)) for i in range(len(a_rows))]
        if ordered:
            ok = len(t_r) == len(t_a) and all(row_eq(x, y) for x, y in zip(t_r, t_a, strict=True))
        elif bag:
            ok = _bag_equal(t_r, t_a, row_eq)
        else:
            ok = all(any(row_eq(x, y) for y in t_a) for x in t_r) and all(
                any(row_eq(y, x) for x in t_r) for y in t_a
            )
        if ok:
            return 1.0
    return 0.0
