"""Shared fixtures of the stats tests: the conformance vectors (docs/stats.md)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tests.helpers import CONFORMANCE

STATS = CONFORMANCE / "stats"


def load(name: str) -> dict[str, dict[str, Any]]:
    """Vectors of one conformance file, by id."""
    data = json.loads((STATS / name).read_text(encoding="utf-8"))
    return {v["id"]: v for v in data["vectors"]}


def close(got: float | None, want: float, *, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """The float rule of stats.md: math.isclose(rel_tol=1e-9, abs_tol=1e-12)."""
    return got is not None and math.isclose(got, want, rel_tol=rel, abs_tol=abs_)


@pytest.fixture(scope="session")
def paired_vectors() -> dict[str, dict[str, Any]]:
    return load("paired_tests.json")
