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

These are the tasks; :mod:`ragmeter.retrieval.spill_plan` cuts the run into their shards and
runs them in this process (``ragmeter trec --stream --spill DIR``), and the Dask executor runs
them on workers (:mod:`ragmeter.executors.hashplan`).
"""

from __future__ import annotations

import functools
import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import release_unused
from ragmeter.io.trec import Origin, Run, _Input, run_from_input, to_numpy
from ragmeter.io.trec.lines import newlines_before
from ragmeter.retrieval.kernels.codes import _qid_codes, take_rows
from ragmeter.retrieval.kernels.ranking import _stable_argsort_codes
from ragmeter.retrieval.spill_split import Select, bucket_of

__all__ = [
    "MapOut",
    "MapShard",
    "ReduceShard",
    "block_ranges",
    "bucket_of",
    "map_block",
    "merge_reduced",
    "reduce_bucket",
]

_SCHEMA_ROW = pa.int32()
# at 10M lines LZ4 cost the CPU time of no compression for 30% less disk; snappy cost 14% more
_COMPRESSION = "lz4"
_COMMAND = "trec"


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
    group, rows)``, its row count, its distinct qids in order of first appearance (an Arrow
    binary array: the driver finds the run's order with one ``unique`` over every block's,
    where a Python loop over 64 blocks × 100,000 qids took seconds), its runid."""

    index: int
    file: str | None
    groups: tuple[tuple[int, int, int], ...]
    rows: int
    qids: pa.Array
    runid: str


def map_block(shard: MapShard) -> MapOut:
    """Parse one block, assign buckets and write its rows, bucket by bucket, to Parquet."""
    inp = block_input(shard.name, shard.path, shard.start, shard.end)
    run = run_from_input(inp, allow_empty=True, trim=False)
    del inp
    if run is None:
        return MapOut(shard.index, None, (), 0, pa.array([], pa.binary()), "")
    qids, codes = _qid_codes(run.qid)
    n = len(run)
    first_row = np.full(len(qids), n, dtype=np.int64)
    np.minimum.at(first_row, codes, np.arange(n, dtype=np.int64))  # O(n), where a sort is not
    appearance = pa.array(qids, pa.binary()).take(np.argsort(first_row))
    qbucket = np.fromiter((bucket_of(q, shard.parts) for q in qids), np.int64, len(qids))
    row_bucket = qbucket[codes]
    order = _stable_argsort_codes(row_bucket)  # stable: file order inside each bucket
    counts = np.bincount(row_bucket, minlength=shard.parts)
    # each bucket gets a dictionary of its own qids only: a reduce then decodes each qid once
    qorder = np.argsort(qbucket, kind="stable")
    qcounts = np.bincount(qbucket, minlength=shard.parts)
    qstarts = np.concatenate(([0], np.cumsum(qcounts)))
    local = np.empty(len(qids), dtype=np.int32)
    local[qorder] = np.arange(len(qids), dtype=np.int32) - qstarts[qbucket[qorder]].astype(np.int32)
    sorted_codes = codes[order]
    local_codes = local[sorted_codes]
    docno = take_rows(run.docno, order)
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
    release_unused()
    return MapOut(shard.index, final, tuple(groups), n, appearance, runid)


# --------------------------------------------------------------------------------------------
# Reduce


@dataclass(frozen=True)
class ReduceShard:
    """Bucket ``bucket``: its row groups ``(block, file, row group, rows)`` in block order; the
    run file and its block ranges name lines in messages; ``recipe`` rebuilds the evaluator on
    a worker (None in-process); ``select`` the part of a split bucket (None: all of it)."""

    bucket: int
    path: str
    name: str
    ranges: tuple[tuple[int, int], ...]
    inputs: tuple[tuple[int, str, int, int], ...]
    recipe: tuple[Any, ...] | None = None
    select: Select | None = None


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


def _part(table: pa.Table, select: Select) -> pa.Table:
    """The rows of ``table`` (one row group) that ``select`` takes, their qid dictionary holding
    only the qids they have (as an unsplit bucket's does)."""
    qid = table.column("qid").combine_chunks()
    dic = qid.dictionary.to_pylist()
    keep = select.keeps(dic)
    codes = to_numpy(qid.indices)
    rows = keep[codes]
    at = np.cumsum(keep, dtype=np.int32) - 1
    kept = pa.array([d for d, k in zip(dic, keep.tolist(), strict=True) if k], pa.binary())
    part = pa.DictionaryArray.from_arrays(pa.array(at[codes[rows]]), kept)
    return table.filter(pa.array(rows)).set_column(0, table.schema.field(0), part)


def load_bucket(shard: ReduceShard) -> Run | None:
    """The bucket's rows (or the part of them ``shard.select`` takes), in file order, as one
    run; a row group is read and cut one at a time, so a part never holds the whole bucket."""
    tables = []
    blocks = []
    for block, file, group, _rows in shard.inputs:
        table = pq.ParquetFile(file).read_row_group(group)
        if shard.select is not None:
            table = _part(table, shard.select)
            if not len(table):
                continue
        tables.append(table)
        blocks.append(block)
    if not tables:
        return None
    sizes = [0] + [len(t) for t in tables]
    table = pa.concat_tables(tables)
    del tables
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


def merge_reduced(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The results of several reduces (a split bucket's parts, or every bucket) as one: pieces
    in order, the first duplicate in the file (the smallest line) as the error."""
    errors = [r["error"] for r in results if r["error"] is not None]
    return {
        "pieces": [p for r in results for p in r["pieces"]],
        "dropped": sum(r["dropped"] for r in results),
        "unjudged": sorted({q for r in results for q in r["unjudged"]}),
        "error": min(errors, key=lambda e: e[0]) if errors else None,
    }


def reduce_bucket(shard: ReduceShard, evaluator: Any) -> dict[str, Any]:
    """Join, check and rank one bucket with ``evaluator``: its ranked pieces, the lines
    ``--dedupe`` dropped, its unjudged qids, and its first duplicate as data (the driver
    reports the one earliest in the file)."""
    run = load_bucket(shard)
    if run is None:
        return {"pieces": [], "dropped": 0, "unjudged": [], "error": None}
    try:
        piece, dropped, joined = evaluator._piece(run, require_overlap=False)
    except InputError as exc:
        error = (exc.line if exc.line is not None else -1, exc.message, exc.path, exc.location)
        return {"pieces": [], "dropped": 0, "unjudged": [], "error": error}
    finally:
        del run
        release_unused()
    return {
        "pieces": [piece],
        "dropped": dropped,
        "unjudged": sorted(joined.unjudged_qids),
        "error": None,
    }
