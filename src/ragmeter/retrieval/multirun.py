"""Many runs against one qrels: ``ragmeter trec QRELS RUN [RUN ...]`` and ``ragmeter compare``.

The qrels are parsed once (one :class:`~ragmeter.retrieval.engine.Evaluator`); the runs are read
and evaluated on a thread pool (Arrow's CSV reader and numpy's sorts and searches release the
GIL). A 100k-line run spends about half of its time in Python code that holds the GIL, so when
the runs are large enough to repay starting interpreters, :func:`map_runs` evaluates them in
worker processes instead, each of which builds the evaluator once. The workers are
spawned, not forked: a fork after Arrow's and the duplicate check's threads ran can deadlock in
the child. Results come back in the order the runs were given, and when a run is bad the error
of the *first* bad run in that order is raised, after every worker stopped and before the caller
printed anything: output is all or nothing, as for one run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["combine_csv", "combine_json", "map_runs", "worker_count"]

T = TypeVar("T")


def worker_count(n_runs: int, threads: int | None) -> int:
    """Threads for ``n_runs`` runs: ``--threads`` when given, else the number of CPU cores."""
    if threads:
        cores = threads
    elif hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - macOS and Windows
        cores = os.cpu_count() or 1
    return max(1, min(n_runs, cores))


def map_runs(
    fn: Callable[[str], T],
    paths: Sequence[str],
    *,
    threads: int | None = None,
    spawn: tuple[Callable[..., None], tuple[Any, ...]] | None = None,
) -> list[T]:
    """``[fn(p) for p in paths]`` in parallel, in order; the first failure in order wins.

    On threads of this process; with ``spawn=(init, init_args)``, in spawned worker processes
    instead, where ``init(*init_args)`` runs once in each (it builds what ``fn``, a module-level
    function, needs). A failing run cancels the runs not started yet; runs already started
    finish (their results are dropped), so no worker outlives the call.
    """
    workers = worker_count(len(paths), threads)
    if workers == 1:
        return [fn(p) for p in paths]  # in order: the first failure stops the rest
    from concurrent.futures import Executor, ThreadPoolExecutor

    pool: Executor
    if spawn is None:
        pool = ThreadPoolExecutor(max_workers=workers)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        init, init_args = spawn
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=init,
            initargs=init_args,
        )
    futures = [pool.submit(fn, p) for p in paths]
    try:
        return [fut.result() for fut in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _csv_field(text: str) -> str:
    """One CSV field as Python's csv module writes it (quoted only when needed)."""
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([text])
    return buf.getvalue()[:-1]


def combine_csv(paths: Sequence[str], texts: Sequence[str]) -> str:
    """One record set: each run's ``runid,qid,measure,value`` rows behind a ``run`` column."""
    parts = []
    for i, (path, text) in enumerate(zip(paths, texts, strict=True)):
        lines = text.splitlines(keepends=True)
        if i == 0:
            parts.append("run," + lines[0])
        field = _csv_field(path) + ","
        parts.extend(field + line for line in lines[1:])
    return "".join(parts)


def combine_json(paths: Sequence[str], docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One document: the ``ragmeter`` header once, then ``runs``, one record per run in order.

    Each record is that run's single-run document (without the header) with ``run`` (the path
    as given on the command line) as its first key.
    """
    head = docs[0]["ragmeter"]
    runs = [
        {"run": path, **{k: v for k, v in doc.items() if k != "ragmeter"}}
        for path, doc in zip(paths, docs, strict=True)
    ]
    return {"ragmeter": head, "runs": runs}
