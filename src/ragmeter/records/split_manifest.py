"""The split manifest's format: what was split, how, and the ids of every split (docs/stats.md).

Below both the reader (``ragmeter.io.split_manifest``) and the splitter
(``ragmeter.stats.datasets``), so ``ragmeter.io`` never imports ``ragmeter.stats``;
``ragmeter.stats.datasets.manifest`` re-exports every name. The hash guards the id lists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import InputError

__all__ = ["MANIFEST_FORMAT", "splits_sha256", "verify_manifest"]

MANIFEST_FORMAT = "ragmeter-split-manifest/1"


def splits_sha256(splits: Mapping[str, Sequence[str]]) -> str:
    """SHA-256 of the canonical JSON of ``splits`` (keys sorted, each id list sorted).

    >>> splits_sha256({"test": ["b", "a"], "dev": ["c"]}) == splits_sha256(
    ...     {"dev": ["c"], "test": ["a", "b"]})
    True
    """
    canonical = {k: sorted(v) for k, v in splits.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify_manifest(data: Any, *, path: str | None = None) -> dict[str, Any]:
    """Check a loaded manifest's shape and hash; return it (ids as lists) or raise InputError."""
    if not isinstance(data, Mapping):
        raise InputError("a split manifest is a JSON object", path=path)
    fmt = data.get("format")
    if fmt != MANIFEST_FORMAT:
        raise InputError(
            f"format {fmt!r} is not a split manifest (expected {MANIFEST_FORMAT!r})", path=path
        )
    splits = data.get("splits")
    if not isinstance(splits, Mapping) or not splits:
        raise InputError("'splits' is missing or empty (expected split name → ids)", path=path)
    seen: dict[str, str] = {}
    for name, ids in splits.items():
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InputError(f"splits.{name} is not a list of id strings", path=path)
        for i in ids:
            if i in seen:
                raise InputError(
                    f"id {i!r} is in splits {seen[i]!r} and {name!r} (a manifest assigns each "
                    "id once)",
                    path=path,
                )
            seen[i] = name
    want = data.get("sha256")
    got = splits_sha256(splits)
    if want != got:
        raise InputError(
            f"sha256 {want!r} does not match the splits ({got}); the manifest was edited or "
            "damaged (re-create it with ragmeter split)",
            path=path,
        )
    return dict(data)
