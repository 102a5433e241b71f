"""Many runs against one qrels: ``ragmeter trec QRELS RUN [RUN ...]`` and ``ragmeter compare``.

The qrels are parsed once (one :class:`~ragmeter.retrieval.engine.Evaluator`); the runs are read
and evaluated in parallel: on a thread pool, or (``processes=True``, where ``fork`` exists) in
forked workers that inherit the parsed qrels, because a 100k-line run spends half of its time in
Python code that holds the GIL. Results come back in the order the runs were given, and when a run
is bad the error of the *first* bad run in that order is raised, after every worker stopped and
before the caller printed anything: output is all or nothing, as for one run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ragmeter.errors import RagmeterError

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


class WorkerError(RagmeterError):
    """A run's error, raised again in the parent: its one-line message and exit status."""

    def __init__(self, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.exit_status = exit_status


_FORKED: tuple[Callable[[str], Any], Sequence[str]] | None = None


def _forked_call(i: int) -> tuple[bool, Any]:
    """In a forked worker: run the inherited function on path ``i``; errors come back as text."""
    assert _FORKED is not None
    fn, paths = _FORKED
    try:
        return True, fn(paths[i])
    except RagmeterError as exc:
        return False, (str(exc), exc.exit_status)
    except MemoryError:
        return False, ("ragmeter trec: out of memory (try --stream or --threads 1)", 2)


def map_runs(
    fn: Callable[[str], T],
    paths: Sequence[str],
    *,
    threads: int | None = None,
    processes: bool = False,
) -> list[T]:
    """``[fn(p) for p in paths]`` in parallel, in order; the first failure in order wins.

    A failing run stops the runs not started yet and nothing of the others is kept. With
    ``processes``, ``fn`` runs in forked workers (it is inherited, not pickled; its result is).
    """
    workers = worker_count(len(paths), threads)
    if workers == 1:
        return [fn(p) for p in paths]  # in order: the first failure stops the rest
    if processes and hasattr(os, "fork"):
        return _map_forked(fn, paths, workers)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(fn, p) for p in paths]
        out: list[T] = []
        try:
            for fut in futures:
                out.append(fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    return out


def _map_forked(fn: Callable[[str], T], paths: Sequence[str], workers: int) -> list[T]:
    global _FORKED
    import multiprocessing

    _FORKED = (fn, paths)
    try:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers) as pool:
            out: list[T] = []
            for ok, value in pool.imap(_forked_call, range(len(paths))):
                if not ok:
                    pool.terminate()
                    raise WorkerError(*value)
                out.append(value)
            return out
    finally:
        _FORKED = None


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
