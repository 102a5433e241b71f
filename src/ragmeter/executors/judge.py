"""``ragmeter judge`` on an executor: sample shards judged on workers under one coordinator.

Every shard holds whole samples (all their metrics and repeats) and runs the judge's own asyncio
runtime on its worker; the run's rate limit, in-flight slots, 429 back-off, cost budget and
single-flight are held by one :class:`~ragmeter.judge.coordinator.JudgeCoordinator` (a Dask
actor), and the cache is the SQLite file of this host or, for workers on several hosts, a
PostgreSQL database (:mod:`ragmeter.judge.cache_pg`). The driver then assembles the result
with the in-process function, from the outcomes the shards returned (no call is made again), so
scores, statuses and per-sample costs are those of an in-process run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.executors.plan import SHARDS_PER_WORKER, JudgeShard
from ragmeter.executors.tasks import judge_shard

# About 2,000 samples per shard: some 40 s of calls at full speed, a short tail.
SAMPLES_PER_JUDGE_SHARD = 2_000


def judge_shards(n_samples: int, workers: int, partitions: int | None) -> int:
    if partitions is not None:
        return max(1, min(partitions, n_samples))
    wanted = max(math.ceil(n_samples / SAMPLES_PER_JUDGE_SHARD), SHARDS_PER_WORKER * workers)
    return max(1, min(wanted, n_samples))


def _replayed(run_id: str, rows: list[dict[str, Any]]) -> Any:
    """A ledger holding the workers' rows: the run's totals, per metric and overall."""
    from ragmeter.judge.ledger import Ledger, Totals

    ledger = Ledger(run_id)
    for row in rows:
        ledger.total.add(row)
        ledger.per_metric.setdefault(row["metric"], Totals()).add(row)
        ledger.rows.append(row)
    return ledger


def worker_cache(
    target: str | os.PathLike[str], *, command: str = "judge", reach: bool = True
) -> str:
    """The cache as the workers are told it: a SQLite file by its absolute path (workers have
    their own working directory), a PostgreSQL URL as given, after the driver has reached the
    server once (an unreachable server is one line here, not a failed shard on each worker).

    A URL carrying a password is refused: it would be written to the work dir and sent to
    every worker in the task specs. The workers read it from libpq's own sources instead,
    ``PGPASSWORD`` or ``~/.pgpass`` (docs/judge.md, "The cache on PostgreSQL")."""
    from ragmeter.judge.cache import is_cache_url
    from ragmeter.judge.cache_open import open_cache

    try:
        if not is_cache_url(target):
            return os.path.abspath(target)
        from ragmeter.judge.cache_pg import parse_url

        url = parse_url(os.fspath(target))
        if url.password is not None:
            raise UsageError(
                "a password in the judge cache URL would be sent to every worker and written "
                "to the work dir (expected it in PGPASSWORD or ~/.pgpass on each host, and "
                "the URL without it)"
            )
        if reach:
            open_cache(os.fspath(target)).close()
    except UsageError as exc:
        raise UsageError(exc.message, command=command) from None
    return os.fspath(target)


def _driver_host() -> str:
    import socket

    return socket.gethostname()


def _one_host_for_sqlite(executor: Any, cache: str, command: str) -> None:
    """A SQLite cache is shared only by workers on the driver's own host: SQLite's locking is
    unsafe over network filesystems, and a worker that cannot see the file would start a cache
    of its own, sending again what the others already paid for."""
    from ragmeter.judge.cache import is_cache_url

    client = getattr(executor, "client", None)
    if client is None or is_cache_url(cache):
        return
    import socket

    here = _driver_host()
    hosts = client.run(socket.gethostname)  # {worker address: its host name}
    if any(host != here for host in hosts.values()):
        raise UsageError(
            "the SQLite judge cache cannot be shared by workers on several hosts (SQLite "
            "locking is unsafe over network filesystems); use --cache postgresql+psycopg://...",
            command=command,
        )


def judge_on(
    xsettings: Any,
    samples: Sequence[Any],
    metrics: Sequence[str],
    config: Any,
    *,
    options: dict[str, Any],
    on_outcome: Callable[..., None] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    command: str = "judge",
    report: dict[str, Any] | None = None,
) -> Any:
    """Judge ``samples`` on the executor ``xsettings`` names; returns the
    :class:`~ragmeter.judge.result.JudgeResult` and the ``executor`` block. ``report``
    receives what the run's coordinator granted (start times, most calls in flight)."""
    from ragmeter.executors import open_executor
    from ragmeter.executors.workdir import run_resumable
    from ragmeter.judge.engine import aevaluate

    if config.cache_path is None:
        raise UsageError(
            "--no-cache cannot be used with --executor dask (the workers share the cache; "
            "expected a cache file or a postgresql:// URL)",
            command=command,
        )
    run_id = uuid.uuid4().hex[:12]
    # workers have their own working directory: every path they open is made absolute here
    config = dataclasses.replace(
        config,
        cache_path=worker_cache(config.cache_path, command=command),
        prices=tuple(os.path.abspath(p) if os.path.exists(p) else p for p in config.prices),
    )
    keyless = dataclasses.replace(config, api_key=None)  # workers read it from api_key_env
    with open_executor(xsettings, command) as (work, executor):
        _one_host_for_sqlite(executor, config.cache_path, command)
        meta = executor.describe()
        workers = int(meta.get("workers") or 1)
        parts = judge_shards(len(samples), workers, xsettings.partitions)
        size = math.ceil(len(samples) / parts)
        shared = getattr(executor, "judge_coordinator", lambda _c: None)(config)
        shards = []
        for start in range(0, len(samples), size):
            args = (list(samples[start : start + size]), list(metrics), keyless, options)
            path, digest = work.payload(args)
            shards.append(JudgeShard(len(shards), path, digest, shared))
        plan = work.plan("judge", judge_shard, shards)
        outcomes: dict[tuple[str, str, int], Any] = {}
        ledger: list[dict[str, Any]] = []
        prompts: dict[str, Any] = {}
        total = len(samples) * max(1, len(metrics))
        for got in run_resumable(executor, judge_shard, shards, label="judge", plan=plan):
            for key, (outcome, stats) in got["outcomes"].items():
                outcomes[key] = (outcome, stats)
                if on_outcome is not None:
                    on_outcome(*key, outcome, stats)
            ledger.extend(got["ledger"])
            prompts.update(got["prompts"])
            if on_progress is not None:
                on_progress(
                    {
                        "done": len(outcomes),
                        "total": max(total, len(outcomes)),
                        "calls_sent": sum(1 for r in ledger if not r.get("cache_hit")),
                        "cache_hits": sum(1 for r in ledger if r.get("cache_hit")),
                        "usd": sum(r.get("cost_usd") or 0.0 for r in ledger),
                    }
                )
        if report is not None and shared is not None:  # what the coordinator granted
            got = shared.report()
            report.update(got.result() if hasattr(got, "result") else got)
        # the in-process function assembles the result: every outcome is known, no call made
        result = asyncio.run(
            aevaluate(
                samples,
                metrics,
                config=config,
                resume=outcomes,
                run_id=run_id,
                ledger=_replayed(run_id, ledger),
                **options,
            )
        )
        judge_meta = result.metadata.get("judge")
        if isinstance(judge_meta, dict):  # the prompts the workers used, as one run's
            judge_meta["prompt_versions"] = {k: prompts[k] for k in sorted(prompts)}
    return result, meta
