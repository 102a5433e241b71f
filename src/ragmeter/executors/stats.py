"""``ragmeter compare`` on an executor: blocks of (metric, pair) tests run on workers.

The driver aligns the systems and rounds the differences (as in-process), writes each
metric's paired data to one file, and sends blocks of test keys. Corrections, win/tie/loss
counts and means stay in the driver, computed once in canonical order by
:func:`ragmeter.stats.compare`.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from ragmeter.executors.base import Executor
from ragmeter.executors.plan import SHARDS_PER_WORKER, TESTS_PER_SHARD, TestShard, scratch_root
from ragmeter.executors.tasks import run_test_block


def test_blocks(n_tests: int, workers: int, partitions: int | None) -> int:
    """How many blocks ``n_tests`` tests make (``partitions`` if given)."""
    if partitions is not None:
        return max(1, min(partitions, n_tests))
    wanted = max(math.ceil(n_tests / TESTS_PER_SHARD), SHARDS_PER_WORKER * max(1, workers))
    return max(1, min(wanted, n_tests))


def test_runner(
    executor: Executor, *, partitions: int | None = None, workers: int = 1
) -> Callable[..., dict[Any, Any]]:
    """A drop-in for the in-process test loop of :func:`ragmeter.stats.compare`
    (its ``run_tests`` argument) that runs the tests on ``executor``."""

    def run(
        paired: Mapping[tuple[str, int, int], Any],
        *,
        on_progress: Callable[[int, int], None] | None = None,
        **settings: Any,
    ) -> dict[Any, Any]:
        keys = list(paired)
        if not keys:
            return {}
        work = tempfile.mkdtemp(prefix="ragmeter-compare-", dir=scratch_root(executor.describe()))
        try:
            files: dict[str, tuple[str, str]] = {}
            for metric in dict.fromkeys(k[0] for k in keys):
                data = pickle.dumps(
                    {k: paired[k] for k in keys if k[0] == metric},
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
                path = os.path.join(work, f"paired-{len(files):04d}.pkl")
                with open(path, "wb") as fh:
                    fh.write(data)
                files[metric] = (path, hashlib.sha256(data).hexdigest())
            frozen = tuple(sorted(settings.items()))
            n_blocks = test_blocks(len(keys), workers, partitions)
            size = math.ceil(len(keys) / n_blocks)
            shards: list[TestShard] = []
            # blocks never mix metrics: a worker then loads only the metrics it tests
            for metric, (path, digest) in files.items():
                mkeys = [k for k in keys if k[0] == metric]
                for start in range(0, len(mkeys), size):
                    block = tuple(mkeys[start : start + size])
                    shards.append(TestShard(len(shards), path, digest, block, frozen))
            results: dict[Any, Any] = {}
            for blob in executor.run(run_test_block, shards, label="tests"):
                results.update(pickle.loads(blob))
                if on_progress is not None:  # per block: the callback stays in the driver
                    on_progress(len(results), len(keys))
            return {k: results[k] for k in keys}
        finally:
            shutil.rmtree(work, ignore_errors=True)

    return run


def compare_on(xsettings: Any, meta: dict[str, Any], *, command: str = "compare") -> Callable:
    """A stand-in for :func:`ragmeter.stats.compare` whose tests run on the executor that
    ``xsettings`` names; ``meta`` receives the ``executor`` block."""

    def run(*args: Any, **kwargs: Any) -> Any:
        from ragmeter.executors import make_executor
        from ragmeter.stats import compare

        with make_executor(xsettings, command=command) as executor:
            info = executor.describe()
            kwargs["run_tests"] = test_runner(
                executor, partitions=xsettings.partitions, workers=int(info.get("workers") or 1)
            )
            report = compare(*args, **kwargs)
            meta.update(info)
        return report

    return run
