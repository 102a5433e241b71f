"""Strict JSON output: numpy values converted, NaN and infinity refused (docs/conventions.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "json_type", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars and arrays, tuples and sets to plain JSON types, recursively.

    A non-finite float is a bug in the caller (undefined values are ``None`` with a reason), so
    it raises ``ValueError`` instead of being written as ``NaN``.

    >>> import numpy as np
    >>> to_jsonable({"a": np.float64(0.5), "b": (np.int32(2), None)})
    {'a': 0.5, 'b': [2, None]}
    """
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"non-finite value {obj!r} in output (undefined values are null)")
        return float(obj)  # np.float64 is a float subclass; write it as a plain float
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return [to_jsonable(v) for v in sorted(obj)]
    tolist = getattr(obj, "tolist", None)  # numpy scalars and arrays
    if tolist is not None:
        return to_jsonable(tolist())
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """``json.dumps`` of :func:`to_jsonable` output, UTF-8 kept, NaN impossible."""
    return json.dumps(to_jsonable(obj), indent=indent, ensure_ascii=False, allow_nan=False)


def json_type(value: Any) -> str:
    """How an error message names the JSON type of a parsed value ("a string", "null", ...).

    >>> json_type(True), json_type(3.5), json_type(None), json_type([1]), json_type(float("nan"))
    ('a boolean', 'a number', 'null', 'a list', 'NaN')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and value != value:
        return "NaN"  # a float, but no number: messages must not call it one
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"
