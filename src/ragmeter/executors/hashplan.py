"""``ragmeter trec`` on an executor for a run not grouped by query: the hash plan.

Map tasks (one per block of the run) and reduce tasks (one per qid-hash bucket) are the
functions the in-process ``--stream --spill`` path runs (:mod:`ragmeter.retrieval.spill`); here
they run on workers, with the map output in a work dir every worker sees, and the driver
assembles the Result exactly as in-process (docs/scaleout.md, "Unsorted runs: the hash plan").
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.executors.base import Split
from ragmeter.executors.plan import RUN_BLOCK_BYTES, SHARDS_PER_WORKER
from ragmeter.retrieval import spill, spill_plan


def reduce_task(shard: spill.ReduceShard) -> dict[str, Any]:
    """One bucket on a worker, with the command's evaluator (built once per worker)."""
    from ragmeter.executors.tasks import _evaluator

    assert shard.recipe is not None
    return spill.reduce_bucket(shard, _evaluator(shard.recipe))


def worker_budget(executor: Any, given: str | None) -> int:
    """Bytes one worker may use: ``--worker-memory``, else the smallest memory limit the
    cluster reports for its workers, else the in-process default."""
    if given:
        return spill_plan.parse_size(given)
    client = getattr(executor, "client", None)
    try:
        limits = [
            int(w.get("memory_limit") or 0)
            for w in client.scheduler_info().get("workers", {}).values()
        ]
    except Exception:  # not a Dask executor, or a scheduler that does not say
        limits = []
    limits = [x for x in limits if x > 0]
    return min(limits) if limits else spill_plan.DEFAULT_BUDGET


def evaluate_hash_on_executor(
    executor: Any,
    meta: dict[str, Any],
    cfg: dict[str, Any],
    evaluator: Any,
    recipe: tuple[Any, ...],
    run_path: str,
    *,
    work: Any,
    inputs: Sequence[str] = (),
) -> spill_plan.HashPlanResult:
    """Run the hash plan for ``run_path`` on ``executor``: at least
    :data:`~ragmeter.executors.plan.SHARDS_PER_WORKER` map blocks and buckets per worker,
    more buckets when the run is large for the workers' memory, rounded up to a multiple of
    the workers (``--partitions`` overrides).

    The map files go to a directory named by the run and the plan, under ``--spill DIR`` or
    the work dir ``work`` (a :class:`~ragmeter.executors.workdir.WorkDir`), that stays after a
    failure; finished map blocks and buckets are kept in the work dir, so a re-run
    recomputes only the others (docs/scaleout.md, "The work dir and resuming")."""
    settings = cfg["executor"]
    workers = int(meta.get("workers") or 1)
    size = os.path.getsize(run_path)
    block_bytes = max(1, min(RUN_BLOCK_BYTES, math.ceil(size / (SHARDS_PER_WORKER * workers))))
    budget = worker_budget(executor, settings.worker_memory)
    # a multiple of the workers, so that the last round of reduces keeps every worker busy
    # (19 buckets on 2 workers left one worker a tenth bucket alone at 100M lines)
    parts = settings.partitions or workers * math.ceil(
        max(
            spill_plan.partition_count(spill_plan.estimate_lines(run_path), budget),
            SHARDS_PER_WORKER * workers,
        )
        / workers
    )
    from ragmeter import __version__
    from ragmeter.executors.workdir import file_identity, run_resumable

    identity = json.dumps([__version__, file_identity(run_path), parts, block_bytes])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    # a command in a private work dir (another one owns the shared one) keeps its own maps
    # under --spill DIR as well: the owner removes its maps when it succeeds
    name = f"ragmeter-hash-{digest}" + (f"-{os.getpid()}" if work.private else "")
    maps = os.path.abspath(os.path.join(cfg.get("spill") or work.root, name))
    os.makedirs(maps, exist_ok=True)
    work.used.append(maps)  # removed after a success (unless --keep-work), kept after a failure
    spill_plan.check_free_space(maps, run_path)

    def runner(
        task: Callable[[Any], Any], shards: Sequence[Any], label: str, split: Split | None = None
    ) -> Any:
        plan = work.plan(f"hash-{label}", task, shards, inputs=inputs)
        return run_resumable(executor, task, shards, label=label, plan=plan, split=split)

    return spill_plan.evaluate_hashed(
        evaluator,
        run_path,
        maps,
        parts=parts,
        block_bytes=block_bytes,
        budget=budget,
        hash_input=cfg["format"] == "json",  # only the JSON output reports the sha256
        runner=runner,
        map_task=spill.map_block,
        reduce_task=reduce_task,
        recipe=recipe,
    )
