"""Loading the extraction conformance vectors (tests/data/conformance/extraction)."""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

from tests.helpers import CONFORMANCE

FOLDER = CONFORMANCE / "extraction"


@cache
def vectors(name: str) -> dict[str, dict[str, Any]]:
    data = json.loads((FOLDER / name).read_text(encoding="utf-8"))
    return {v["id"]: v for v in data["vectors"]}


def close(x: float | None, y: float | None, *, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    if x is None or y is None:
        return x is y
    return math.isclose(x, y, rel_tol=rel, abs_tol=abs_)


def assert_prf(got: dict, expected: dict, *, abs_: float = 1e-12, where: str = "") -> None:
    """Compare P/R/F1 (keys P R F1 or precision recall f1) and any counts present."""
    names = {"P": "precision", "R": "recall", "F1": "f1"}
    for key, value in expected.items():
        mine = got[names.get(key, key)]
        if isinstance(value, float) or key in names or key in ("precision", "recall", "f1"):
            assert close(mine, float(value), abs_=abs_), f"{where} {key}: {mine} != {value}"
        else:
            assert mine == value, f"{where} {key}: {mine} != {value}"
