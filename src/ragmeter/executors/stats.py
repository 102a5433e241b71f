"""``ragmeter compare`` on an executor (docs/scaleout.md, "compare").

The driver aligns the systems and rounds the differences (as in-process) and writes what the
workers read to the work dir. Randomization tests without ``--ci`` are cut by resample rows:
every test of the same n shares one ``default_rng(seed)`` sign stream, so in-process one set of
patterns serves all of them, and a block of rows, with all the group's tests, repeats none of
that work; a block returns integer counts that add up exactly. The other tests (and
randomization with a bootstrap CI, whose draws are per test) run in blocks of (metric, pair)
tests. Finished blocks stay in the work dir, so re-running the same command resumes. p-values,
corrections, win/tie/loss counts and means stay in the driver, computed once in canonical
order by :func:`ragmeter.stats.compare`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ragmeter.executors.base import Executor
from ragmeter.executors.plan import (
    SHARDS_PER_WORKER,
    TESTS_PER_SHARD,
    SignFlipShard,
    TestShard,
)
from ragmeter.executors.tasks import count_signflips, run_test_block

# Work of one row block, in (resample × unit × test) cells: about 6.5 CPU-s on the benchmark
# machine (6.5e-11 CPU-s per cell for the exact-integer product, benchmarks/scaleout_stats.py).
CELLS_PER_SHARD = 100_000_000_000
# A block carries at least about 0.2 s of work, so that Dask's ~2 ms per task stays near 1%.
MIN_CELLS_PER_SHARD = 3_000_000_000


def test_blocks(n_tests: int, workers: int, partitions: int | None) -> int:
    """How many blocks ``n_tests`` tests make (``partitions`` if given)."""
    if partitions is not None:
        return max(1, min(partitions, n_tests))
    wanted = max(math.ceil(n_tests / TESTS_PER_SHARD), SHARDS_PER_WORKER * max(1, workers))
    return max(1, min(wanted, n_tests))


def row_blocks(
    groups: list[tuple[int, int, int]], workers: int, partitions: int | None
) -> list[int]:
    """How many row blocks each group of ``(resamples, n, tests)`` makes: ``partitions`` (or
    :data:`CELLS_PER_SHARD` of work each, at least :data:`SHARDS_PER_WORKER` per worker) shared
    out by work, with at least :data:`MIN_CELLS_PER_SHARD` of work per block."""
    cells = [rows * n * tests for rows, n, tests in groups]
    total = sum(cells)
    if total == 0:
        return [0 for _ in groups]
    wanted = partitions
    if wanted is None:
        wanted = max(math.ceil(total / CELLS_PER_SHARD), SHARDS_PER_WORKER * max(1, workers))
    out = []
    for (rows, _n, _tests), work in zip(groups, cells, strict=True):
        if work == 0:
            out.append(0)
            continue
        share = max(1, round(wanted * work / total))
        if partitions is None:
            share = min(share, max(1, work // MIN_CELLS_PER_SHARD))
        out.append(min(share, rows))
    return out


def _cut(rows: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` consecutive ranges covering ``[0, rows)``, as even as integers allow."""
    bounds = [rows * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _randomization(
    executor: Executor,
    work: Any,
    paired: Mapping[tuple[str, int, int], Any],
    settings: dict[str, Any],
    workers: int,
    partitions: int | None,
    on_progress: Callable[[int, int], None] | None,
) -> dict[Any, Any]:
    """Randomization tests without a CI: row blocks of each group of shared patterns."""
    from ragmeter.executors.workdir import run_resumable
    from ragmeter.stats.compare import randomization_groups, randomization_results
    from ragmeter.stats.randomization import pvalues_from_counts

    alternative, two_sided = settings["alternative"], settings["two_sided"]
    groups = randomization_groups(
        paired, n_resamples=settings["n_resamples"], exact=settings["exact"], seed=settings["seed"]
    )
    parts = row_blocks(
        [(g.patterns.count, g.patterns.n, len(g.live)) for g in groups], workers, partitions
    )
    frozen = (("alternative", alternative), ("two_sided", two_sided))
    shards: list[SignFlipShard] = []
    owner: list[int] = []  # the group of each shard
    for gi, (group, n_parts) in enumerate(zip(groups, parts, strict=True)):
        if not group.live:
            continue
        path, digest = work.payload((group.matrix(paired), group.decimals))
        for rows in _cut(group.patterns.count, n_parts):
            shards.append(SignFlipShard(len(shards), path, digest, group.patterns, rows, frozen))
            owner.append(gi)
    counts: list[dict[str, np.ndarray] | None] = [None] * len(groups)
    plan = work.plan("tests", count_signflips, shards)
    done_rows, all_rows = 0, sum(s.rows[1] - s.rows[0] for s in shards)
    blocks = run_resumable(executor, count_signflips, shards, label="tests", plan=plan)
    for shard, got in zip(shards, blocks, strict=True):
        gi = owner[shard.index]
        mine = counts[gi]
        # integer counts: adding them in any grouping gives the in-process counts exactly
        counts[gi] = got if mine is None else {k: mine[k] + got[k] for k in mine}
        done_rows += shard.rows[1] - shard.rows[0]
        if on_progress is not None:  # per block: the callback stays in the driver
            on_progress(len(paired) * done_rows // max(1, all_rows), len(paired))
    results: dict[Any, Any] = {}
    for group, got in zip(groups, counts, strict=True):
        pvalues: Any = ()
        if got is not None:
            pvalues = pvalues_from_counts(
                got,
                total=group.patterns.count,
                exact=group.patterns.exact,
                alternative=alternative,
                two_sided=two_sided,
            )
        options = {k: settings[k] for k in ("exact", "alpha", "n_resamples", "seed")}
        for key, result in randomization_results(
            paired,
            group,
            pvalues,
            alternative=alternative,
            two_sided=two_sided,
            ci=None,
            confidence=settings["confidence"],
            **options,
        ):
            results[key] = result
    return {k: results[k] for k in paired}


def _test_blocks(
    executor: Executor,
    work: Any,
    paired: Mapping[tuple[str, int, int], Any],
    settings: dict[str, Any],
    workers: int,
    partitions: int | None,
    on_progress: Callable[[int, int], None] | None,
) -> dict[Any, Any]:
    """Any test: blocks of whole (metric, pair) tests, each run as in-process."""
    import pickle

    from ragmeter.executors.workdir import run_resumable

    keys = list(paired)
    files: dict[str, tuple[str, str]] = {}
    for metric in dict.fromkeys(k[0] for k in keys):
        files[metric] = work.payload({k: paired[k] for k in keys if k[0] == metric})
    frozen = tuple(sorted(settings.items()))
    size = math.ceil(len(keys) / test_blocks(len(keys), workers, partitions))
    shards: list[TestShard] = []
    # blocks never mix metrics: a worker then loads only the metrics it tests
    for metric, (path, digest) in files.items():
        mkeys = [k for k in keys if k[0] == metric]
        for start in range(0, len(mkeys), size):
            block = tuple(mkeys[start : start + size])
            shards.append(TestShard(len(shards), path, digest, block, frozen))
    results: dict[Any, Any] = {}
    plan = work.plan("tests", run_test_block, shards)
    for blob in run_resumable(executor, run_test_block, shards, label="tests", plan=plan):
        results.update(pickle.loads(blob))
        if on_progress is not None:  # per block: the callback stays in the driver
            on_progress(len(results), len(keys))
    return {k: results[k] for k in keys}


def test_runner(
    executor: Executor, work: Any, *, partitions: int | None = None, workers: int = 1
) -> Callable[..., dict[Any, Any]]:
    """A drop-in for the in-process test loop of :func:`ragmeter.stats.compare` (its
    ``run_tests`` argument) that runs the tests on ``executor``, keeping finished blocks in
    ``work`` (a :class:`~ragmeter.executors.workdir.WorkDir`)."""

    def run(
        paired: Mapping[tuple[str, int, int], Any],
        *,
        on_progress: Callable[[int, int], None] | None = None,
        **settings: Any,
    ) -> dict[Any, Any]:
        if not paired:
            return {}
        how = _test_blocks
        if settings["test"] == "randomization" and settings["ci"] is None:
            how = _randomization
        return how(executor, work, paired, settings, workers, partitions, on_progress)

    return run


def compare_on(session: Any, meta: dict[str, Any]) -> Callable:
    """A stand-in for :func:`ragmeter.stats.compare` whose tests run on the executor of
    ``session`` (a :class:`~ragmeter.executors.OnDemand`); ``meta`` receives the ``executor``
    block. Finished blocks stay in the work dir until the command succeeds, so a re-run
    resumes."""

    def run(*args: Any, **kwargs: Any) -> Any:
        from ragmeter.stats import compare

        work, executor = session.open()
        info = executor.describe()
        kwargs["run_tests"] = test_runner(
            executor,
            work,
            partitions=session.settings.partitions,
            workers=int(info.get("workers") or 1),
        )
        report = compare(*args, **kwargs)
        meta.update(info)
        return report

    return run
