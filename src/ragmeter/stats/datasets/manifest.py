"""The split manifest (docs/stats.md): what was split, how, and the ids of every split.

Evaluation code loads a published manifest and never re-splits; the hash guards the id lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# the format, hash and check live below io (which reads manifests); same objects re-exported
from ragmeter.records.split_manifest import MANIFEST_FORMAT, splits_sha256, verify_manifest

__all__ = ["MANIFEST_FORMAT", "build_manifest", "splits_sha256", "verify_manifest"]


def build_manifest(
    *,
    method: str,
    seed: int,
    splits: Mapping[str, Sequence[str]],
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """A manifest dict in the documented key order, with sorted id lists and the hash."""
    from ragmeter.stats.result import versions

    v = versions()
    sorted_splits = {k: sorted(ids) for k, ids in splits.items()}
    return {
        "format": MANIFEST_FORMAT,
        "method": method,
        "seed": int(seed),
        **settings,
        "versions": {"ragmeter": v["ragmeter"], "numpy": v["numpy"]},
        "splits": sorted_splits,
        "sha256": splits_sha256(sorted_splits),
    }
