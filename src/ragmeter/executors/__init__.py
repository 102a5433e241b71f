"""Executors: where the work of a command runs (docs/scaleout.md).

ragmeter runs in-process by default (:class:`~ragmeter.executors.local.LocalExecutor`). With
``--executor dask`` (or ``--workers N`` / ``--scheduler ADDRESS``) the same shards run on a Dask
distributed cluster (:class:`~ragmeter.executors.dask.DaskExecutor`). Both run module-level task
functions of :mod:`ragmeter.executors.tasks` over shards (small frozen dataclasses of paths,
ranges and settings) and yield the results in shard order; the driver computes every float
aggregate once, in canonical order, so the numbers do not depend on the executor.

Importing this package never imports ``dask`` or ``distributed``: only
:func:`make_executor` does, and only for ``kind="dask"``.
"""

from __future__ import annotations

from ragmeter.executors.settings import ExecutorSettings, resolve_settings

__all__ = ["Executor", "ExecutorSettings", "make_executor", "resolve_settings"]

from ragmeter.executors.base import Executor


def make_executor(settings: ExecutorSettings, *, command: str | None = None) -> Executor:
    """The executor ``settings`` name; a Dask cluster is started or connected to here."""
    if settings.kind == "dask":
        from ragmeter.executors.dask import DaskExecutor

        return DaskExecutor(settings, command=command)
    from ragmeter.executors.local import LocalExecutor

    return LocalExecutor()
