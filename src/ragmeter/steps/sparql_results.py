"""Parsed SPARQL 1.1 JSON results and their canonical cells.

Every cell is canonicalised once: default mode keeps RDF terms apart by kind and compares numbers
by value; compat modes use graphrag-eval's text form. :mod:`ragmeter.steps.sparql` compares
results built here.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

__all__ = [
    "UNBOUND",
    "SparqlResult",
    "as_parsed",
    "canonical_cell",
    "compat_cell",
    "load_result",
    "reference_problem",
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


def as_parsed(value: Any) -> SparqlResult | None:
    """``value`` as a :class:`SparqlResult` (already parsed ones pass through)."""
    return value if isinstance(value, SparqlResult) else load_result(value)
