"""The driver's side of the hash plan: how many buckets, where the map files go, and the
plan run by any executor (docs/scaleout.md, "Unsorted runs: the hash plan").

:mod:`ragmeter.retrieval.spill` holds the map and reduce tasks that read and write the data;
this module cuts the run into their shards, runs them (in this process for ``ragmeter trec
--stream --spill DIR``, or on an executor), and assembles the Result from what they return.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError, UsageError
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.files import GZIP_MAGIC, display_name, sha256_meanwhile
from ragmeter.io.trec.checks import _no_data
from ragmeter.retrieval.kernels.ranking import RankPiece
from ragmeter.retrieval.spill import (
    MapOut,
    MapShard,
    ReduceShard,
    block_ranges,
    map_block,
    merge_reduced,
    reduce_bucket,
)
from ragmeter.retrieval.spill_split import Buckets, rows_within

__all__ = [
    "HashPlanResult",
    "evaluate_hashed",
    "evaluate_spilled",
    "parse_size",
    "partition_count",
]

DEFAULT_BUDGET = 2 << 30  # in-process --worker-memory
BYTES_PER_LINE = 40  # --batch-rows lines make a map block of about this many bytes each
# free space asked for, against the run's text: the LZ4 map output was 0.43 × at 10M lines
SPILL_RATIO = 0.5
_COMMAND = "trec"


def parse_size(text: str | int | None, default: int = DEFAULT_BUDGET) -> int:
    """Bytes of a size such as ``2GiB``, ``1.5GB``, ``512MiB`` or ``1000000``."""
    if text is None:
        return default
    if isinstance(text, int):
        return text
    s = text.strip().lower().replace(" ", "")
    units = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2}
    units.update({"mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gib": 1 << 30})
    units.update({"t": 1000**4, "tb": 1000**4, "tib": 1 << 40})
    num = s.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = s[len(num) :]
    try:
        value = float(num)
    except ValueError:
        value = -1.0
    if unit not in units or value <= 0:
        raise UsageError(
            f"--worker-memory {text!r} is not a size (expected e.g. 2GiB)", command=_COMMAND
        )
    return int(value * units[unit])


def estimate_lines(path: str) -> int:
    """Lines of a run, from its size and the mean length of the lines in its first MiB."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(1 << 20)
    n = head.count(b"\n")
    if n == 0:
        return 1
    return max(1, math.ceil(size / (len(head) / n)))


def partition_count(lines: int, budget: int) -> int:
    """Buckets for a run of ``lines`` lines under a per-process ``budget`` of bytes: enough that
    the largest bucket (1.5 × the mean, for hash skew) fits the memory model's share of the
    budget (:func:`~ragmeter.retrieval.spill_split.rows_within`)."""
    return max(1, math.ceil(1.5 * lines / rows_within(budget)))


# runner(task, shards, label, split): runs task over shards, yields the results in shard
# order; ``split(shard)`` gives the parts of a shard that killed its workers and how to merge
# their results (None: no retry), for executors whose workers can die
Runner = Callable[..., Iterable[Any]]


def _in_process(
    task: Callable[[Any], Any], shards: Sequence[Any], label: str, split: Any = None
) -> Iterable[Any]:
    # (``split`` unused: in one process, a shard that dies takes the command along)
    for shard in shards:
        yield task(shard)


def check_plain_file(path: str, *, what: str = "--spill") -> None:
    """The hash plan re-reads blocks of the run for messages: it needs a plain file."""
    if path == "-":
        raise UsageError(
            f"{what} reads the run from a file, not from stdin (its blocks are read again "
            "for messages); write the run to a file first",
            command=_COMMAND,
        )
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            raise UsageError(
                f"{what} reads an uncompressed run (its blocks are read by byte range); "
                f"decompress {display_name(path)} first",
                command=_COMMAND,
            )


def check_free_space(work_dir: str, run_path: str) -> None:
    """Refuse before the map phase when the work dir cannot hold the map output."""
    need = SPILL_RATIO * os.path.getsize(run_path)
    free = shutil.disk_usage(work_dir).free
    if free < need:
        raise UsageError(
            f"{work_dir} needs about {need / 1e9:.1f} GB free for this run, "
            f"{free / 1e9:.1f} GB available",
            command=_COMMAND,
        )


@contextlib.contextmanager
def work_directory(root: str, *, keep: bool) -> Any:
    """A fresh directory for one run's map output under ``root`` (created if missing); removed
    afterwards with everything in it, and ``root`` too if this run created it, unless ``keep``."""
    created = not os.path.isdir(root)
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ragmeter-hash-", dir=root)
    try:
        yield work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
            if created:
                with contextlib.suppress(OSError):
                    os.rmdir(root)


@dataclass
class HashPlanResult:
    result: Any
    order: list[str]  # qids in order of first appearance
    parts: int
    blocks: int
    split: int = 0  # buckets reduced in parts (too large for one reduce)


def evaluate_hashed(
    evaluator: Any,
    run_path: str,
    work_dir: str,
    *,
    parts: int,
    block_bytes: int,
    budget: int = DEFAULT_BUDGET,
    hash_input: bool = True,
    runner: Runner = _in_process,
    map_task: Callable[[Any], Any] = map_block,
    reduce_task: Callable[[Any], Any] | None = None,
    recipe: tuple[Any, ...] | None = None,
) -> HashPlanResult:
    """Run the hash plan over ``run_path`` with map output in ``work_dir`` (which must exist)
    and assemble the Result exactly as the in-memory evaluation does.

    ``runner`` runs a task over shards and yields results in shard order (this process by
    default, or an executor); ``reduce_task`` defaults to :func:`reduce_bucket` with
    ``evaluator``. A bucket too large for ``budget`` bytes, or much larger than the others, is
    reduced in parts (:mod:`ragmeter.retrieval.spill_split`).
    """
    from ragmeter.retrieval.stream import _RunInfo

    with sha256_meanwhile(run_path, hash_input) as sha:
        name = display_name(run_path)
        path = os.path.abspath(run_path)
        ranges = block_ranges(path, block_bytes)
        maps = [MapShard(i, path, name, a, b, parts, work_dir) for i, (a, b) in enumerate(ranges)]
        outs: list[MapOut] = list(runner(map_task, maps, "map"))
        info = _RunInfo(name)
        firsts = []
        for out in outs:
            if out.rows:
                info.lines += out.rows
                info.runid = out.runid
                firsts.append(out.qids)
        # unique keeps the first appearance, in block order: the qids in file order
        order: list[bytes] = (
            pc.unique(pa.chunked_array(firsts, pa.binary())).to_pylist() if firsts else []
        )
        info.qids = set(order)
        if info.lines == 0:
            raise InputError(_no_data(6), path=name)
        lookup = evaluator.index.qid_lookup()
        if not any(q in lookup for q in info.qids):
            raise evaluator.no_overlap(name, info.qids)
        buckets = Buckets(outs, parts, budget)
        reduces = [
            ReduceShard(b, path, name, tuple(ranges), tuple(buckets.inputs[b]), recipe, select)
            for b in sorted(buckets.inputs)
            for select in buckets.plan(b)
        ]

        split_buckets = {r.bucket for r in reduces if r.select is not None}

        def split(shard: ReduceShard) -> tuple[list[ReduceShard], Callable[..., Any]]:
            parts = buckets.after_kill(shard.bucket, shard.select)  # or the one-line error
            split_buckets.add(shard.bucket)
            return [dataclasses.replace(shard, select=p) for p in parts], merge_reduced

        task = reduce_task or functools.partial(reduce_bucket, evaluator=evaluator)
        results = []
        first: RankPiece | None = None
        for got in runner(task, reduces, "bucket", split):
            for piece in got["pieces"]:  # counts are per qrels query: integers, added as they come
                if first is None:
                    first = piece
                else:
                    first.counts = first.counts + piece.counts
                    piece.counts = np.zeros(0, dtype=np.int64)
            results.append(got)
        reduced = merge_reduced(results)  # the buckets' as the parts of one bucket are merged
        if reduced["error"] is not None:
            line, message, epath, location = reduced["error"]
            where = None if line < 0 else line
            raise InputError(message, path=epath, line=where, location=location)
        if sha is not None:
            info.sha256 = sha.result()
        result = evaluator._finish(
            info,
            reduced["pieces"],
            reduced["dropped"],
            set(reduced["unjudged"]),
            run_qids=list(info.qids),
        )
        order_text = [q.decode("utf-8") for q in order]
        return HashPlanResult(result, order_text, parts, len(ranges), len(split_buckets))


def evaluate_spilled(
    evaluator: Any, cfg: dict[str, Any], run_path: str, *, hash_input: bool
) -> tuple[Any, list[str] | None]:
    """``ragmeter trec --stream --spill DIR``: the Result and, for the hash plan, the qids in
    order of first appearance (None for a stream, which sums UltraRAG's means in qid order).

    With ``--plan auto`` a run is first streamed as a run grouped by query; the first query that
    comes back after others switches to the hash plan (one partial pass is lost). ``--plan hash``
    goes to the hash plan at once, ``--plan grouped`` keeps the stream's error.
    """
    from ragmeter.retrieval.stream import NotGroupedError, evaluate_stream_with

    plan = cfg.get("plan") or "auto"
    if plan != "hash":
        try:
            result = evaluate_stream_with(
                evaluator,
                run_path,
                batch_rows=cfg["batch_rows"],
                run_format=cfg["run_format"],
                hash_input=hash_input,
            )
            return result, None
        except NotGroupedError:
            if plan == "grouped":
                raise
    if cfg["run_format"] != "trec":
        raise UsageError("--spill reads TREC runs only (--run-format trec)", command=_COMMAND)
    check_plain_file(run_path)
    budget = parse_size(cfg.get("worker_memory"))
    parts = cfg.get("partitions") or partition_count(estimate_lines(run_path), budget)
    with work_directory(cfg["spill"], keep=cfg.get("keep_work", False)) as work:
        check_free_space(work, run_path)
        done = evaluate_hashed(
            evaluator,
            run_path,
            work,
            parts=parts,
            block_bytes=cfg["batch_rows"] * BYTES_PER_LINE,
            budget=budget,
            hash_input=hash_input,
        )
    return done.result, done.order
