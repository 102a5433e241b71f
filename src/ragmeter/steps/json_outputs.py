"""Structural equality of ``application/json`` step outputs (docs/steps.md)."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["NOT_JSON", "json_equal", "load_json", "score_json"]

NOT_JSON: Final = object()
"""Returned by :func:`load_json` for text that does not parse."""


def load_json(value: Any) -> Any:
    """Decode JSON text; a value that is not a string is taken as already decoded.

    >>> load_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> load_json("not json") is NOT_JSON
    True
    """
    if isinstance(value, (str, bytes, bytearray)):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return NOT_JSON
    return value


def json_equal(a: Any, b: Any) -> bool:
    """JSON-typed equality: key order irrelevant, array order relevant, ``1 == 1.0``,
    ``true != 1``, ``null`` only equals ``null``.

    >>> json_equal({"a": 1, "b": [True, None]}, {"b": [True, None], "a": 1.0})
    True
    >>> json_equal([True], [1])
    False
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is bool and type(b) is bool and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b if type(a) is type(b) else False


def score_json(reference_output: Any, actual_output: Any) -> float:
    """1.0 if both outputs decode to structurally equal JSON values, else 0.0.

    >>> score_json('{"results": [{"x": 1}]}', '{"results": [{"x": 1.0}]}')
    1.0
    """
    ref = load_json(reference_output)
    act = load_json(actual_output)
    if ref is NOT_JSON or act is NOT_JSON:
        return 0.0
    return float(json_equal(ref, act))
