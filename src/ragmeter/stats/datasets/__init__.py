"""Dataset splits and stratified sampling (docs/stats.md).

:func:`split` makes group-aware multi-factor splits (no group in two splits, every factor's
distribution kept in every split, rare values handled explicitly) and returns a manifest with a
hash; :func:`kfold` does the same for cross-validation; :func:`stratified_sample` draws a smaller
set with the same proportions. Evaluation loads a published manifest (:func:`load_manifest`) and
never re-splits.
"""

from __future__ import annotations

from typing import Any

from ragmeter.stats.datasets.items import MISSING, RARE
from ragmeter.stats.datasets.manifest import (
    MANIFEST_FORMAT,
    build_manifest,
    splits_sha256,
    verify_manifest,
)
from ragmeter.stats.datasets.rare import HERITAGE_HIERARCHY
from ragmeter.stats.datasets.sampling import SampleResult, allocate, stratified_sample
from ragmeter.stats.datasets.split import (
    HERITAGE_RATIOS,
    METHODS,
    SplitResult,
    kfold,
    normalize_ratios,
    split,
)

__all__ = [
    "HERITAGE_HIERARCHY",
    "HERITAGE_RATIOS",
    "MANIFEST_FORMAT",
    "METHODS",
    "MISSING",
    "RARE",
    "SampleResult",
    "SplitResult",
    "allocate",
    "build_manifest",
    "kfold",
    "load_manifest",
    "normalize_ratios",
    "split",
    "splits_sha256",
    "stratified_sample",
    "verify_manifest",
]


def load_manifest(path: Any) -> dict[str, Any]:
    """Read a split manifest and verify its hash (:mod:`ragmeter.io.split_manifest`)."""
    from ragmeter.io.split_manifest import load_manifest as _load

    return _load(path)
