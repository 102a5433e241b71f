"""Re-use of task results by input hashes: a re-run of an unchanged config recomputes nothing.

The key of one (system, task) evaluation hashes everything its values depend on: the ragmeter
and adapter versions, the task options and metric list, the gold file's bytes and the selected
split, the strata factors, the bytes of the system's output files the task reads, and for LLM
tasks the judge settings that change replies (never credentials). A finished evaluation is written
to ``<cache dir>/<task>/<key>.json`` (aggregates, strata, metadata) and ``.parquet`` (per-sample
values) as soon as it completes, so an interrupted run resumes from the tasks that finished (and
the judge's own request cache resumes the one that was running).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter._version import __version__
from ragmeter.io.files import atomic_write
from ragmeter.io.jsonutil import dumps
from ragmeter.result import Result

__all__ = ["DEFAULT_CACHE_DIR", "TaskCache", "input_hash"]

DEFAULT_CACHE_DIR = ".ragmeter/cache"


def input_hash(parts: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``parts`` plus the ragmeter version."""
    payload = {"ragmeter": __version__, **parts}
    text = json.dumps(
        json.loads(dumps(payload)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TaskCache:
    """Finished task Results on disk, keyed by input hash; ``None`` disables caching."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = Path(root) if root is not None else None

    def _paths(self, task: str, key: str) -> tuple[Path, Path]:
        assert self.root is not None
        base = self.root / task / key
        return base.with_suffix(".json"), base.with_suffix(".parquet")

    def get(self, task: str, key: str) -> Result | None:
        if self.root is None:
            return None
        meta_path, samples_path = self._paths(task, key)
        if not (meta_path.exists() and samples_path.exists()):
            return None
        import pyarrow.parquet as pq

        try:
            data = json.loads(meta_path.read_text(encoding="utf-8"))
            table = pq.read_table(samples_path)
            result = Result.from_dict(data)
            result.samples = table.cast(result.samples.schema)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is recomputed, never trusted
        return result

    def put(self, task: str, key: str, result: Result) -> None:
        if self.root is None:
            return
        import pyarrow.parquet as pq

        meta_path, samples_path = self._paths(task, key)
        # samples first: an entry counts only once its JSON half exists
        with atomic_write(samples_path, "wb") as fh:
            pq.write_table(result.samples, fh)
        with atomic_write(meta_path) as fh:
            fh.write(result.to_json(samples=False))
