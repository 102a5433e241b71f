"""Fixtures of the answers tests: the conformance vectors."""

from __future__ import annotations

import json
from functools import lru_cache

from tests.helpers import CONFORMANCE

VECTORS_PATH = CONFORMANCE / "answers" / "vectors.json"


@lru_cache(maxsize=1)
def vectors() -> dict:
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
