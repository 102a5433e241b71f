"""Which executor to use: the flags, then ``RAGMETER_EXECUTOR`` / ``RAGMETER_DASK_SCHEDULER``,
then the runner's ``executor:`` block (docs/scaleout.md, "Choosing the executor")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import UsageError

KINDS = ("local", "dask")
CONFIG_KEYS = (
    "kind",
    "scheduler",
    "workers",
    "worker_memory",
    "partitions",
    "work_dir",
    "keep_work",
)
# Keys of the executor block that are planned but not built yet: refused, never ignored.
LATER_KEYS = ("plan", "spill")
DEFAULT_WORK_DIR = ".ragmeter/work"


@dataclass(frozen=True)
class ExecutorSettings:
    """Resolved executor settings.

    ``kind`` is ``"local"`` or ``"dask"``. For Dask, ``scheduler`` is a ``tcp://HOST:PORT``
    address or a scheduler file to connect to; without it a LocalCluster of ``workers``
    processes (one thread each, on 127.0.0.1) is started. ``partitions`` overrides the number of
    shards a plan makes; ``worker_memory`` is the LocalCluster's per-worker limit (``"2GiB"``).
    ``work_dir`` holds the files workers read and the finished shards a re-run reuses
    (default ``.ragmeter/work``); ``keep_work`` keeps it after a successful run.
    """

    kind: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    worker_memory: str | None = None
    partitions: int | None = None
    work_dir: str | None = None
    keep_work: bool = False

    @property
    def is_local(self) -> bool:
        return self.kind == "local"


def _positive(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value).strip())
        except ValueError:
            raise UsageError(f"{what} must be a positive integer, not {value!r}") from None
    if value < 1:
        raise UsageError(f"{what} must be a positive integer, not {value}")
    return value


# How each source spells the executor's kind (a format), its scheduler and its workers.
_FLAGS = ("--executor {}", "--scheduler", "--workers")
_ENV = ("RAGMETER_EXECUTOR={}", "RAGMETER_DASK_SCHEDULER", "workers")
_CONFIG = ("executor.kind {}", "executor.scheduler", "executor.workers")


def _layer(
    kind: Any, scheduler: Any, workers: Any, spelling: tuple[str, str, str]
) -> dict[str, Any] | None:
    """One source's topology, or None when it says nothing about the executor; messages name
    the source's own spelling (``--workers``, ``executor.workers``)."""
    if kind is None and not scheduler and workers is None:
        return None
    kind_is, scheduler_is, workers_is = spelling
    if kind is not None:
        kind = str(kind).strip().lower()
        if kind not in KINDS:
            raise UsageError(f"{kind_is.format(repr(kind))} is not known (expected local or dask)")
    workers = _positive(workers, workers_is)
    if kind == "local" and (scheduler or workers is not None):
        raise UsageError(
            f"{kind_is.format('local')} contradicts {scheduler_is if scheduler else workers_is} "
            f"(expected {kind_is.format('dask')}, or no scheduler and no workers)"
        )
    if scheduler and workers is not None:
        raise UsageError(
            f"{scheduler_is} and {workers_is} contradict each other (expected a scheduler to "
            "connect to, or a number of local workers to start)"
        )
    if scheduler or workers is not None:
        kind = "dask"
    return {"kind": kind, "scheduler": scheduler or None, "workers": workers}


def resolve_settings(
    *,
    executor: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    partitions: int | None = None,
    worker_memory: str | None = None,
    work_dir: str | None = None,
    keep_work: bool | None = None,
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecutorSettings:
    """Resolve the executor from the flags, the environment and a config block, in that order.

    The first source that names an executor, a scheduler or workers decides the topology
    (a flag ``--workers 2`` is not combined with a scheduler from the environment);
    ``partitions`` and ``worker_memory`` come from the flags, else the config block.

    >>> resolve_settings(workers=2, env={})  # doctest: +NORMALIZE_WHITESPACE
    ExecutorSettings(kind='dask', scheduler=None, workers=2, worker_memory=None, partitions=None,
                     work_dir=None, keep_work=False)
    >>> resolve_settings(env={"RAGMETER_EXECUTOR": "local"}).kind
    'local'
    """
    env = os.environ if env is None else env
    config = dict(config or {})
    for key in config:
        if key in LATER_KEYS:
            raise UsageError(f"executor.{key} is not supported yet (see docs/scaleout.md)")
        if key not in CONFIG_KEYS:
            raise UsageError(
                f"executor.{key} is not a known key (expected {', '.join(CONFIG_KEYS)})"
            )
    # the first source that says anything decides; the ones below it are not even checked
    sources = (
        lambda: _layer(executor, scheduler, workers, _FLAGS),
        lambda: _layer(
            env.get("RAGMETER_EXECUTOR") or None,
            env.get("RAGMETER_DASK_SCHEDULER") or None,
            None,
            _ENV,
        ),
        lambda: _layer(config.get("kind"), config.get("scheduler"), config.get("workers"), _CONFIG),
    )
    topo: dict[str, Any] = {"kind": "local"}
    for source in sources:
        layer = source()
        if layer is not None:
            topo = layer
            break
    kind = topo["kind"] or "local"
    n_workers = topo.get("workers")
    if kind == "dask" and not topo.get("scheduler") and n_workers is None:
        n_workers = os.cpu_count() or 1
    parts = _positive(partitions, "--partitions")
    if parts is None:
        parts = _positive(config.get("partitions"), "executor.partitions")
    memory = worker_memory or config.get("worker_memory")
    work = work_dir or config.get("work_dir")
    if work is not None and (not isinstance(work, str) or not work.strip()):
        raise UsageError(f"executor.work_dir must be a directory path, not {work!r}")
    keep = keep_work if keep_work is not None else config.get("keep_work", False)
    if not isinstance(keep, bool):
        raise UsageError(f"executor.keep_work must be true or false, not {keep!r}")
    if kind == "local":
        return ExecutorSettings(kind="local", partitions=parts, work_dir=work, keep_work=keep)
    return ExecutorSettings(
        kind="dask",
        scheduler=topo.get("scheduler"),
        workers=n_workers,
        worker_memory=None if memory is None else str(memory),
        partitions=parts,
        work_dir=work,
        keep_work=keep,
    )
