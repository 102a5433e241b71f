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

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ragmeter.executors.settings import ExecutorSettings, resolve_settings

__all__ = [
    "Executor",
    "ExecutorSettings",
    "OnDemand",
    "make_executor",
    "open_executor",
    "resolve_settings",
]

from ragmeter.executors.base import Executor

if TYPE_CHECKING:
    from ragmeter.executors.workdir import WorkDir


def make_executor(settings: ExecutorSettings, *, command: str | None = None) -> Executor:
    """The executor ``settings`` name; a Dask cluster is started or connected to here."""
    if settings.kind == "dask":
        from ragmeter.executors.dask import DaskExecutor

        return DaskExecutor(settings, command=command)
    from ragmeter.executors.local import LocalExecutor

    return LocalExecutor()


@contextlib.contextmanager
def open_executor(
    settings: ExecutorSettings,
    command: str,
    *,
    inputs: Sequence[str] = (),
    workers_write: bool = True,
) -> Iterator[tuple[WorkDir, Executor]]:
    """A command's work dir (``--work-dir``, ``--keep-work``) and executor, once every worker
    is seen to reach ``inputs``, and the work dir when the workers write there
    (``workers_write``); the work dir's plans go after a success, and stay after a failure."""
    from ragmeter.executors.workdir import WorkDir

    with (
        WorkDir.of(settings, command) as work,
        make_executor(settings, command=command) as executor,
    ):
        check = getattr(executor, "check_visible", None)
        if check is not None:
            check(list(inputs), work_dir=work.root if workers_write else None)
        yield work, executor


class OnDemand:
    """A command's work dir and executor (:func:`open_executor`), opened on first use and
    closed with ``stack``: a command with several phases on the executor (``compare`` scores
    TREC runs, then tests them) starts one cluster, and one that fails before its first phase
    starts none."""

    def __init__(
        self, settings: ExecutorSettings, command: str, stack: contextlib.ExitStack
    ) -> None:
        self.settings = settings
        self._command = command
        self._stack = stack
        self._opened: tuple[WorkDir, Executor] | None = None

    def open(self, inputs: Sequence[str] = ()) -> tuple[WorkDir, Executor]:
        """The work dir and executor, once every worker is seen to reach ``inputs``."""
        if self._opened is None:
            self._opened = self._stack.enter_context(
                open_executor(self.settings, self._command, inputs=inputs)
            )
        elif inputs:
            check = getattr(self._opened[1], "check_visible", None)
            if check is not None:
                check(list(inputs))
        return self._opened
