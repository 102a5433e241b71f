"""``ragmeter trec`` on an executor: a run grouped by query, cut into byte ranges at query
boundaries (the ``grouped`` plan of docs/scaleout.md).

Each worker parses its range with the reader ``--stream`` uses, joins and ranks it with the
same :class:`~ragmeter.retrieval.engine.Evaluator` (rebuilt once per worker from the qrels
file) and returns the ranked judged rows; the driver assembles them and computes every measure
and mean once, exactly as ``--stream`` does with its batches, whose results equal the
in-memory mode's value for value.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import mmap
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.executors.plan import RUN_BLOCK_BYTES, SHARDS_PER_WORKER, is_gzip


@dataclass(frozen=True)
class RunShard:
    """Bytes ``[start, end)`` of a run file, cut at query boundaries; ``recipe`` rebuilds the
    command's evaluator on the worker. Its lines are numbered in messages by counting the
    newlines before ``start`` then, not before (a pass over the file the driver saves)."""

    index: int
    path: str
    name: str
    start: int
    end: int
    recipe: tuple[Any, ...]


def _qid(line: bytes) -> bytes:
    parts = line.split(None, 1)
    return parts[0] if parts else b""


def query_cuts(path: str, parts: int) -> list[tuple[int, int]]:
    """``(start, end)`` of up to ``parts`` ranges of about equal size, each cut moved forward
    to the first line whose qid differs from the line before it."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        cuts = [0]
        for k in range(1, parts):
            pos = max(k * size // parts, cuts[-1] + 1)
            nl = mm.find(b"\n", pos - 1)
            if nl < 0 or nl + 1 >= size:
                break
            pos = nl + 1
            prev = _qid(mm[mm.rfind(b"\n", 0, pos - 1) + 1 : pos])
            while pos < size:
                end = mm.find(b"\n", pos)
                end = size if end < 0 else end + 1
                if _qid(mm[pos:end]) != prev:
                    break
                pos = end
            if pos >= size:  # the last query runs to the end: no cut after it
                break
            if cuts[-1] < pos:
                cuts.append(pos)
        return list(itertools.pairwise([*cuts, size]))
    finally:
        mm.close()


def evaluate_on_executor(
    cfg: dict[str, Any], evaluator: Any, recipe: tuple[Any, ...], run_path: str
) -> tuple[Any, list[str], dict[str, Any]] | None:
    """``(result, qids in order of first appearance, executor metadata)``, or None for the
    cases left to the in-process path: stdin, gzip, JSONL runs, --by-source, and a grouped run
    that is empty or has no judged query. A run that is not grouped by query (or ``--plan
    hash``) goes to the hash plan (:mod:`ragmeter.executors.hashplan`)."""
    from ragmeter.executors.workdir import WorkDir
    from ragmeter.io.files import display_name

    settings = cfg["executor"]
    if (
        run_path == "-"
        or cfg["run_format"] != "trec"
        or cfg["by_source"]
        or not os.path.isfile(run_path)
        or os.path.getsize(run_path) == 0
        or is_gzip(run_path)
    ):
        return None
    qrels_path, qrels_options, measures, options = recipe
    worker_recipe = (
        os.path.abspath(qrels_path),
        tuple((k, False if k == "hash_input" else v) for k, v in qrels_options),
        measures,
        tuple(
            (k, os.path.abspath(v) if k == "zscores" and v is not None else v) for k, v in options
        ),
    )
    name = display_name(run_path)
    size = os.path.getsize(run_path)
    plan = cfg.get("plan") or "auto"
    # files the shards read that they do not name: a changed one makes a new plan
    inputs = [worker_recipe[0], *(v for k, v in worker_recipe[3] if k == "zscores" and v)]
    hash_input = bool(dict(qrels_options)["hash_input"])
    with WorkDir.of(settings, "trec", keep=cfg.get("keep_work", False)) as work:
        return _evaluate_grouped(
            cfg, evaluator, worker_recipe, run_path, name, size, plan, work, inputs, hash_input
        )


def _evaluate_grouped(
    cfg: dict[str, Any],
    evaluator: Any,
    worker_recipe: tuple[Any, ...],
    run_path: str,
    name: str,
    size: int,
    plan: str,
    work: Any,
    inputs: list[str],
    hash_input: bool,
) -> tuple[Any, list[str], dict[str, Any]] | None:
    """The grouped plan, resumable from ``work``; the hash plan when the run is not grouped."""
    from ragmeter.executors import make_executor
    from ragmeter.executors.tasks import trec_run_shard
    from ragmeter.executors.workdir import run_resumable
    from ragmeter.io.files import sha256_meanwhile
    from ragmeter.retrieval.stream import _RunInfo

    settings = cfg["executor"]
    with make_executor(settings, command="trec") as executor:
        meta = executor.describe()
        workers = int(meta.get("workers") or 1)
        outs: list[Any] = []
        seen: set[bytes] = set()
        order: list[bytes] | None = None if plan == "hash" else []
        digest: str | None = None
        if order is not None:
            parts = settings.partitions or max(
                math.ceil(size / RUN_BLOCK_BYTES), SHARDS_PER_WORKER * workers
            )
            shards = [
                RunShard(i, os.path.abspath(run_path), name, a, b, worker_recipe)
                for i, (a, b) in enumerate(query_cuts(run_path, parts))
            ]
            got = run_resumable(
                executor,
                trec_run_shard,
                shards,
                label="run",
                plan=work.plan("run", trec_run_shard, shards, inputs=inputs),
            )
            # a shuffled run shows in its first shard: stop there (the rest are cancelled, and
            # the hash plan reads the SHA-256 itself)
            with contextlib.closing(got), sha256_meanwhile(run_path, hash_input) as sha:
                for out in got:
                    outs.append(out)
                    if out is None:
                        continue
                    if not out["grouped"] or seen.intersection(out["qids"]):
                        order = None  # a query is not contiguous: not grouped by query
                        break
                    seen.update(out["qids"])
                    order.extend(out["qids"])
                if order is not None and sha is not None:
                    digest = sha.result()
        if order is None:
            if plan == "grouped":
                from ragmeter.errors import UsageError

                raise UsageError(
                    f"--plan grouped needs a run grouped by query, and {name} is not "
                    "(expected --plan hash or auto)",
                    command="trec",
                )
            from ragmeter.executors.hashplan import evaluate_hash_on_executor

            hashed = evaluate_hash_on_executor(
                executor, meta, cfg, evaluator, worker_recipe, run_path, work=work, inputs=inputs
            )
            plan_meta = {"plan": "hash", "partitions": hashed.parts, "split_buckets": hashed.split}
            return hashed.result, hashed.order, {**meta, **plan_meta}
    pieces = [out["piece"] for out in outs if out is not None]
    if not pieces or not any((p.counts > 0).any() for p in pieces):
        return None
    for p in pieces[1:]:  # counts are per qrels query: add them up (integers, exact)
        pieces[0].counts = pieces[0].counts + p.counts
        p.counts = np.zeros(0, dtype=np.int64)
    info = _RunInfo(name)
    info.lines = sum(out["rows"] for out in outs if out is not None)
    info.runid = next(out["runid"] for out in reversed(outs) if out is not None)
    info.qids = seen
    info.sha256 = digest
    unjudged = {q for out in outs if out is not None for q in out["unjudged"]}
    dropped = sum(out["dropped"] for out in outs if out is not None)
    result = evaluator._finish(info, pieces, dropped, unjudged, run_qids=list(info.qids))
    return result, [q.decode("utf-8") for q in order], {**meta, "plan": "grouped"}


@dataclass(frozen=True)
class RunFileShard:
    """One whole run file against the qrels (paths as given, and absolute)."""

    index: int
    qrels: tuple[str, str]
    run: tuple[str, str]
    measures: tuple[str, ...]
    level: int


def evaluate_run_files(
    session: Any, qrels_path: str, run_paths: list[str], measures: list[str], level: int
) -> list[dict[str, Any]]:
    """Per-query values and warnings of each run file (one task per file), in input order, on
    the executor of ``session`` (a :class:`~ragmeter.executors.OnDemand`); each file gives
    what an in-process evaluation gives it."""
    from ragmeter.executors.tasks import evaluate_run_file

    for path in (qrels_path, *run_paths):
        if path == "-":
            from ragmeter.errors import UsageError

            raise UsageError(
                "--executor dask reads every run from a file the workers can see, not from "
                "stdin (expected file paths)",
                command="compare",
            )
    qrels = (qrels_path, os.path.abspath(qrels_path))
    shards = [
        RunFileShard(i, qrels, (p, os.path.abspath(p)), tuple(measures), level)
        for i, p in enumerate(run_paths)
    ]
    _, executor = session.open(inputs=[qrels_path, *run_paths])
    return list(executor.run(evaluate_run_file, shards, label="run-file"))
