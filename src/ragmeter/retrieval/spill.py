"""Runs not grouped by query, in bounded memory: the qid-hash bucket plan.

The plan is described in docs/scaleout.md, "Unsorted runs: the hash plan".

**Map** (one task per block of about ``--batch-rows`` lines, cut at a line end): the block is
parsed with the reader every other path uses, each distinct qid gets a bucket
(:func:`bucket_of`: BLAKE2b-64 of its UTF-8 bytes, little-endian, modulo the bucket count), the
rows are stable-sorted by bucket (file order stays inside a bucket) and written to one Parquet
file per block with one row group per non-empty bucket, under a temporary name then renamed.
Each row keeps its row number inside the block, so messages name the file's own lines.

**Reduce** (one task per bucket): the bucket's row group of every map file, concatenated in
block order, is one run holding every line of its queries in file order; the evaluator joins,
checks duplicates and ranks it with the functions the in-process path calls. The driver adds
the ranked pieces and computes every measure and mean once (qid byte order), so the output is
byte-identical to the in-memory evaluation of the whole file.

This module runs the plan in this process (``ragmeter trec --stream --spill DIR``); the Dask
executor runs the same map and reduce functions on workers (:mod:`ragmeter.executors.hashplan`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import mmap
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ragmeter.errors import InputError, UsageError
from ragmeter.io.files import GZIP_MAGIC, display_name, sha256_file
from ragmeter.io.trec import Origin, Run, _Input, _no_data, run_from_input, to_numpy
from ragmeter.retrieval import kernels as K

__all__ = [
    "MapOut",
    "MapShard",
    "ReduceShard",
    "bucket_of",
    "evaluate_hashed",
    "map_block",
    "partition_count",
    "reduce_bucket",
]

# Memory model of one reduce (docs/scaleout.md, "Memory and the number of buckets"): peak ≈
# BASE + ROW_BYTES × rows of the bucket (fitted by benchmarks/scaleout_hash.py, rounded up);
# buckets are sized to SAFETY × budget.
BASE_BYTES = 300 << 20
ROW_BYTES = 120
SAFETY = 0.6
DEFAULT_BUDGET = 2 << 30  # in-process --worker-memory
BYTES_PER_LINE = 40  # --batch-rows lines make a map block of about this many bytes each
# free space asked for, against the run's text: the LZ4 map output was 0.43 × at 10M lines
SPILL_RATIO = 0.5
_SCHEMA_ROW = pa.int32()
# at 10M lines LZ4 cost the CPU time of no compression for 30% less disk; snappy cost 14% more
_COMPRESSION = "lz4"
_COUNT_STEP = 1 << 26
_COMMAND = "trec"


def bucket_of(qid: bytes, parts: int) -> int:
    """The bucket of a qid: the same in every process (Python's ``hash`` is salted per process)."""
    digest = hashlib.blake2b(qid, digest_size=8).digest()
    return int.from_bytes(digest, "little") % parts


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
    the largest bucket (1.5 × the mean, for hash skew) fits ``SAFETY × budget``."""
    per_bucket = max(1, int((SAFETY * budget - BASE_BYTES) / ROW_BYTES))
    return max(1, math.ceil(1.5 * lines / per_bucket))


# --------------------------------------------------------------------------------------------
# Blocks of the run file


def block_ranges(path: str, block_bytes: int) -> list[tuple[int, int]]:
    """``[start, end)`` byte ranges of about ``block_bytes``, each ending at a newline."""
    size = os.path.getsize(path)
    if size == 0:
        return []
    out: list[tuple[int, int]] = []
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = 0
        while pos < size:
            end = min(pos + max(block_bytes, 1), size)
            if end < size:
                nl = mm.find(b"\n", end - 1)
                end = size if nl < 0 else nl + 1
            out.append((pos, end))
            pos = end
    return out


def newlines_before(path: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of the file (messages only: a rescan)."""
    if offset <= 0:
        return 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return sum(
            mm[a : min(a + _COUNT_STEP, offset)].count(b"\n") for a in range(0, offset, _COUNT_STEP)
        )


def _read_range(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as fh:
        return os.pread(fh.fileno(), end - start, start)


def block_input(name: str, path: str, start: int, end: int) -> _Input:
    """A block as reader input: its bytes, and its line offset counted only if a message asks."""
    data = _read_range(path, start, end)
    return _Input(
        name, None, data, data[: 1 << 16], functools.partial(newlines_before, path, start)
    )


# --------------------------------------------------------------------------------------------
# Map


@dataclass(frozen=True)
class MapShard:
    """Block ``index`` of a run file: bytes ``[start, end)``; ``parts`` buckets; map output
    goes to ``work_dir``."""

    index: int
    path: str
    name: str
    start: int
    end: int
    parts: int
    work_dir: str


@dataclass(frozen=True)
class MapOut:
    """What the driver keeps of a map block: its Parquet file and row groups ``(bucket, row
    group, rows)``, its row count, its distinct qids in order of first appearance, its runid."""

    index: int
    file: str | None
    groups: tuple[tuple[int, int, int], ...]
    rows: int
    qids: tuple[bytes, ...]
    runid: str


def map_block(shard: MapShard) -> MapOut:
    """Parse one block, assign buckets and write its rows, bucket by bucket, to Parquet."""
    inp = block_input(shard.name, shard.path, shard.start, shard.end)
    run = run_from_input(inp, allow_empty=True, trim=False)
    del inp
    if run is None:
        return MapOut(shard.index, None, (), 0, (), "")
    qids, codes = K._qid_codes(run.qid)
    n = len(run)
    first_row = np.full(len(qids), n, dtype=np.int64)
    np.minimum.at(first_row, codes, np.arange(n, dtype=np.int64))  # O(n), where a sort is not
    appearance = tuple(qids[c] for c in np.argsort(first_row).tolist())
    qbucket = np.fromiter((bucket_of(q, shard.parts) for q in qids), np.int64, len(qids))
    row_bucket = qbucket[codes]
    order = K._stable_argsort_codes(row_bucket)  # stable: file order inside each bucket
    counts = np.bincount(row_bucket, minlength=shard.parts)
    # each bucket gets a dictionary of its own qids only: a reduce then decodes each qid once
    qorder = np.argsort(qbucket, kind="stable")
    qcounts = np.bincount(qbucket, minlength=shard.parts)
    qstarts = np.concatenate(([0], np.cumsum(qcounts)))
    local = np.empty(len(qids), dtype=np.int32)
    local[qorder] = np.arange(len(qids), dtype=np.int32) - qstarts[qbucket[qorder]].astype(np.int32)
    sorted_codes = codes[order]
    local_codes = local[sorted_codes]
    docno = K.take_rows(run.docno, order)
    score = run.score[order]
    row = order.astype(np.int32)
    runid = run.runid
    del run, codes, sorted_codes, row_bucket
    schema = pa.schema(
        [
            ("qid", pa.dictionary(pa.int32(), pa.binary())),
            ("docno", pa.binary()),
            ("score", pa.float64()),
            ("row", _SCHEMA_ROW),
        ]
    )
    final = os.path.join(shard.work_dir, f"block-{shard.index:06d}.parquet")
    tmp = final + f".{os.getpid()}.tmp"
    groups: list[tuple[int, int, int]] = []
    at = 0
    with pq.ParquetWriter(
        tmp, schema, compression=_COMPRESSION, use_dictionary=["qid"], write_statistics=False
    ) as writer:
        for b in np.flatnonzero(counts).tolist():
            c = int(counts[b])
            dic = pa.array(
                [qids[i] for i in qorder[qstarts[b] : qstarts[b + 1]].tolist()], pa.binary()
            )
            table = pa.table(
                [
                    pa.DictionaryArray.from_arrays(pa.array(local_codes[at : at + c]), dic),
                    docno.slice(at, c),
                    pa.array(score[at : at + c]),
                    pa.array(row[at : at + c]),
                ],
                schema=schema,
            )
            writer.write_table(table, row_group_size=c)
            groups.append((b, len(groups), c))
            at += c
    os.replace(tmp, final)
    del docno, score, row
    pa.default_memory_pool().release_unused()
    return MapOut(shard.index, final, tuple(groups), n, appearance, runid)


# --------------------------------------------------------------------------------------------
# Reduce


@dataclass(frozen=True)
class ReduceShard:
    """Bucket ``bucket``: its row groups ``(block, file, row group, rows)`` in block order; the
    run file and its block ranges name lines in messages; ``recipe`` rebuilds the evaluator on
    a worker (None in-process)."""

    bucket: int
    path: str
    name: str
    ranges: tuple[tuple[int, int], ...]
    inputs: tuple[tuple[int, str, int, int], ...]
    recipe: tuple[Any, ...] | None = None


@dataclass(frozen=True, eq=False)
class _BucketOrigin:
    """Rows of a bucket: each is (block, row in block); lines are found by rescanning the block."""

    name: str
    path: str
    ranges: tuple[tuple[int, int], ...]
    blocks: tuple[int, ...]  # block of each segment of the bucket
    bounds: np.ndarray  # first bucket row of each segment (+ end)
    rows: np.ndarray  # row in its block, per bucket row

    def _block_origin(self, block: int) -> Origin:
        inp = block_input(self.name, self.path, *self.ranges[block])
        return Origin(self.name, data=inp.data, line_offset=inp.line_offset)

    def locate(self, rows: Sequence[int]) -> list[InputError]:
        out = []
        for r in rows:
            seg = int(np.searchsorted(self.bounds, int(r), side="right")) - 1
            block = self.blocks[seg]
            out.append(self._block_origin(block).locate([int(self.rows[int(r)])])[0])
        return out

    def where(self, row: int) -> str:
        err = self.locate([row])[0]
        return err.location if err.location else f"line {err.line}"


def load_bucket(shard: ReduceShard) -> Run | None:
    """The bucket's rows, in file order, as one run."""
    tables = []
    blocks = []
    for block, file, group, _rows in shard.inputs:
        tables.append(pq.ParquetFile(file).read_row_group(group))
        blocks.append(block)
    if not tables:
        return None
    table = pa.concat_tables(tables)
    del tables
    sizes = [0] + [t for *_, t in shard.inputs]
    origin = _BucketOrigin(
        shard.name,
        shard.path,
        shard.ranges,
        tuple(blocks),
        np.cumsum(sizes).astype(np.int64),
        to_numpy(table.column("row")),
    )
    return Run(
        qid=table.column("qid"),
        docno=table.column("docno"),
        score=to_numpy(table.column("score")),
        runid="",
        origin=origin,  # type: ignore[arg-type]
    )


def reduce_bucket(shard: ReduceShard, evaluator: Any) -> dict[str, Any]:
    """Join, check and rank one bucket with ``evaluator``: its ranked piece, the lines
    ``--dedupe`` dropped, its unjudged qids, and its first duplicate as data (the driver
    reports the one earliest in the file)."""
    run = load_bucket(shard)
    if run is None:
        return {"piece": None, "dropped": 0, "unjudged": [], "error": None}
    try:
        piece, dropped, joined = evaluator._piece(run, require_overlap=False)
    except InputError as exc:
        error = (exc.line if exc.line is not None else -1, exc.message, exc.path, exc.location)
        return {"piece": None, "dropped": 0, "unjudged": [], "error": error}
    finally:
        del run
        pa.default_memory_pool().release_unused()
    return {
        "piece": piece,
        "dropped": dropped,
        "unjudged": sorted(joined.unjudged_qids),
        "error": None,
    }


# --------------------------------------------------------------------------------------------
# The plan, run by any executor (the driver's side)


Runner = Callable[[Callable[[Any], Any], Sequence[Any], str], Iterable[Any]]


def _in_process(task: Callable[[Any], Any], shards: Sequence[Any], label: str) -> Iterable[Any]:
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


def evaluate_hashed(
    evaluator: Any,
    run_path: str,
    work_dir: str,
    *,
    parts: int,
    block_bytes: int,
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
    ``evaluator``.
    """
    from ragmeter.retrieval.engine import no_overlap_error
    from ragmeter.retrieval.stream import _RunInfo

    name = display_name(run_path)
    path = os.path.abspath(run_path)
    ranges = block_ranges(path, block_bytes)
    maps = [MapShard(i, path, name, a, b, parts, work_dir) for i, (a, b) in enumerate(ranges)]
    outs: list[MapOut] = list(runner(map_task, maps, "map"))
    info = _RunInfo(name)
    order: list[bytes] = []
    for out in outs:
        if out.rows:
            info.lines += out.rows
            info.runid = out.runid
            for q in out.qids:
                if q not in info.qids:
                    info.qids.add(q)
                    order.append(q)
    if info.lines == 0:
        raise InputError(_no_data(6), path=name)
    index = evaluator.index
    lookup = index.qid_lookup()
    if not any(q in lookup for q in info.qids):
        raise no_overlap_error(
            evaluator.qrels.name,
            name,
            index.qids[:2],
            sorted(info.qids)[:2],
            complete=evaluator.options.complete,
        )
    by_bucket: dict[int, list[tuple[int, str, int, int]]] = {}
    for out in outs:
        for bucket, group, rows in out.groups:
            assert out.file is not None
            by_bucket.setdefault(bucket, []).append((out.index, out.file, group, rows))
    reduces = [
        ReduceShard(b, path, name, tuple(ranges), tuple(by_bucket[b]), recipe)
        for b in sorted(by_bucket)
    ]
    task = reduce_task or functools.partial(reduce_bucket, evaluator=evaluator)
    pieces: list[K.RankPiece] = []
    unjudged: set[bytes] = set()
    dropped = 0
    first_error: tuple[int, str, str | None, str | None] | None = None
    for got in runner(task, reduces, "bucket"):
        if got["error"] is not None:
            if first_error is None or got["error"][0] < first_error[0]:
                first_error = got["error"]
            continue
        if got["piece"] is None:
            continue
        dropped += got["dropped"]
        unjudged.update(got["unjudged"])
        pieces.append(got["piece"])
        if len(pieces) > 1:  # counts are per qrels query: integers, added in any order
            pieces[0].counts = pieces[0].counts + pieces[-1].counts
            pieces[-1].counts = np.zeros(0, dtype=np.int64)
    if first_error is not None:
        line, message, epath, location = first_error
        raise InputError(message, path=epath, line=None if line < 0 else line, location=location)
    if hash_input:
        info.sha256 = sha256_file(run_path)
    result = evaluator._finish(info, pieces, dropped, unjudged, run_qids=list(info.qids))
    return HashPlanResult(result, [q.decode("utf-8") for q in order], parts, len(ranges))


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
            hash_input=hash_input,
        )
    return done.result, done.order
