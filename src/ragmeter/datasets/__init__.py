"""Gold-standard datasets: the ragmeter gold format, validation, statistics, splits and sampling.

The gold format and its validation live here (:mod:`ragmeter.datasets.gold`); splits, k-fold and
stratified sampling are :mod:`ragmeter.stats.datasets` (docs/stats.md), re-exported
here so that ``ragmeter.datasets.split(...)`` works too.
"""

from __future__ import annotations

import importlib
from typing import Any

from ragmeter.datasets.describe import describe
from ragmeter.datasets.gold import (
    GoldSample,
    GoldSet,
    Link,
    Mention,
    QAPair,
    TypeGold,
    load_gold,
    parse_sample,
)
from ragmeter.datasets.views import TASK_UNITS, Unit, units

_FROM_STATS = ("split", "kfold", "stratified_sample", "load_manifest")

__all__ = [
    "TASK_UNITS",
    "GoldSample",
    "GoldSet",
    "Link",
    "Mention",
    "QAPair",
    "TypeGold",
    "Unit",
    "describe",
    "load_gold",
    "parse_sample",
    "units",
    *_FROM_STATS,
]


def __getattr__(name: str) -> Any:
    if name in _FROM_STATS:
        value = getattr(importlib.import_module("ragmeter.stats.datasets"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ragmeter.datasets' has no attribute {name!r}")
