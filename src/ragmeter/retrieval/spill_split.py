"""Buckets of the hash plan that are too large, split by query before they are reduced.

With many queries the qid hash spreads rows evenly over the buckets. A run with a few very
large queries, or with few buckets, can still give one bucket far more rows than the plan
expected: a straggler, or more memory than a worker has. The map blocks report their rows per
bucket, so the driver knows each bucket's size before any reduce starts, and a bucket over
:data:`SKEW` × the mean is reduced in parts (docs/scaleout.md, "Skewed buckets"); the rows of
its queries are then counted from the qid column of its row groups:

- a query larger than one part is reduced alone (a query is never cut: its ranking needs all
  its lines), or refused in one line when even alone it needs more than a worker's memory;
- the bucket's other queries go to parts by a second hash, BLAKE2b-64 salted with
  :data:`SALT`, which does not follow the first (the same in every process, like the first).

A part holds whole queries, so its ranked piece is the one the whole bucket would have given
for them, and the driver adds the pieces as it adds buckets: the output does not change. A
bucket whose reduce killed the workers that ran it is split the same way into
:data:`PARTS_AFTER_KILL` parts and run once more.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.errors import UsageError

__all__ = [
    "BASE_BYTES",
    "PARTS_AFTER_KILL",
    "ROW_BYTES",
    "SAFETY",
    "SALT",
    "SKEW",
    "Buckets",
    "Select",
    "bucket_of",
    "bytes_for",
    "rows_within",
    "split_bucket",
    "sub_bucket_of",
]

# Memory model of one reduce (docs/scaleout.md, "Memory and the number of buckets"): peak ≈
# BASE_BYTES + ROW_BYTES × rows of the bucket (fitted by benchmarks/scaleout_hash.py, rounded
# up); buckets are sized to SAFETY × a worker's budget.
BASE_BYTES = 300 << 20
ROW_BYTES = 120
SAFETY = 0.6
SALT = b"ragmeter-split"  # BLAKE2b's salt: at most 16 bytes
SKEW = 1.5  # a bucket over this many times the mean is split
PARTS_AFTER_KILL = 4
_COMMAND = "trec"


def bucket_of(qid: bytes, parts: int) -> int:
    """The bucket of a qid: the same in every process (Python's ``hash`` is salted per process)."""
    digest = hashlib.blake2b(qid, digest_size=8).digest()
    return int.from_bytes(digest, "little") % parts


def sub_bucket_of(qid: bytes, parts: int) -> int:
    """The part of a qid inside a split bucket: a hash independent of :func:`bucket_of`."""
    digest = hashlib.blake2b(qid, digest_size=8, salt=SALT).digest()
    return int.from_bytes(digest, "little") % parts


@dataclass(frozen=True)
class Select:
    """The rows of a bucket that one reduce takes: those of query ``only``; or those whose
    :func:`sub_bucket_of` modulo ``parts`` is ``part``, except the queries in ``alone`` (each
    reduced by itself). ``rows`` is how many that is, for messages."""

    parts: int = 1
    part: int = 0
    alone: tuple[bytes, ...] = ()
    only: bytes | None = None
    rows: int = 0

    def keeps(self, qids: Sequence[bytes]) -> np.ndarray:
        """Which of ``qids`` (a row group's dictionary) this part takes."""
        if self.only is not None:
            return np.fromiter((q == self.only for q in qids), bool, len(qids))
        alone = set(self.alone)
        return np.fromiter(
            (q not in alone and sub_bucket_of(q, self.parts) == self.part for q in qids),
            bool,
            len(qids),
        )

    def describe(self) -> str:
        if self.only is not None:
            return f"query {self.only.decode('utf-8', 'replace')!r}"
        return f"part {self.part + 1} of {self.parts}"


def rows_within(budget: int) -> int:
    """Rows a bucket may hold to fit ``SAFETY`` × a worker's ``budget`` bytes."""
    return max(1, int((SAFETY * budget - BASE_BYTES) / ROW_BYTES))


def bytes_for(rows: int) -> int:
    """The memory model's peak for a reduce of ``rows`` rows."""
    return BASE_BYTES + ROW_BYTES * rows


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _refuse_too_large(qid_rows: dict[bytes, int], budget: int) -> None:
    for q, n in sorted(qid_rows.items()):
        if bytes_for(n) > budget:
            raise UsageError(
                f"query {q.decode('utf-8', 'replace')!r} has {n:,} lines, which needs about "
                f"{_size(bytes_for(n))}; raise --worker-memory",
                command=_COMMAND,
            )


def split_bucket(qid_rows: dict[bytes, int], parts: int) -> list[Select]:
    """A bucket's queries (``qid_rows``: the rows of each) cut into about ``parts`` parts of
    similar size; a query larger than the mean part is a part of its own."""
    mean = sum(qid_rows.values()) / max(1, parts)
    alone = sorted(q for q, n in qid_rows.items() if n > mean) if len(qid_rows) > 1 else []
    out = [Select(only=q, rows=qid_rows[q]) for q in alone]
    skip = set(alone)
    rest = {q: n for q, n in qid_rows.items() if q not in skip}
    if not rest:
        return out
    k = max(1, min(len(rest), math.ceil(sum(rest.values()) / mean)))
    sizes = [0] * k
    for q, n in rest.items():
        sizes[sub_bucket_of(q, k)] += n
    out += [
        Select(parts=k, part=j, alone=tuple(alone), rows=sizes[j]) for j in range(k) if sizes[j]
    ]
    return out


class Buckets:
    """The sizes the map blocks report, and how each bucket is reduced: whole, or in parts.

    ``outs`` are the map blocks' results (their Parquet file and row groups per bucket),
    ``parts`` the bucket count and ``budget`` a worker's memory in bytes."""

    def __init__(self, outs: Sequence[Any], parts: int, budget: int) -> None:
        self.parts = parts
        self.budget = budget
        # each bucket's row groups, (block, file, row group, rows) in block order
        self.inputs: dict[int, list[tuple[int, str, int, int]]] = {}
        for out in outs:
            for bucket, group, rows in out.groups:
                self.inputs.setdefault(bucket, []).append((out.index, out.file, group, rows))
        self.rows = {b: sum(g[3] for g in groups) for b, groups in self.inputs.items()}
        mean = sum(self.rows.values()) / max(1, parts)
        # rows above which a bucket is split: SKEW × the mean, and what fits a worker; its
        # parts hold about the mean, or what fits with room for the same skew
        self.limit = min(math.floor(SKEW * mean), rows_within(budget))
        self.target = max(1.0, min(mean, self.limit / SKEW))

    def queries(self, bucket: int) -> dict[bytes, int]:
        """The rows of each query of ``bucket``, counted from its row groups' qid column (only
        for a bucket that is cut: nothing more travels from the map blocks)."""
        import pyarrow.parquet as pq

        rows: dict[bytes, int] = {}
        for _block, file, group, _rows in self.inputs.get(bucket, []):
            qid = pq.ParquetFile(file).read_row_group(group, columns=["qid"]).column(0)
            for chunk in qid.chunks:
                counts = np.bincount(
                    chunk.indices.to_numpy(zero_copy_only=False), minlength=len(chunk.dictionary)
                )
                for q, n in zip(chunk.dictionary.to_pylist(), counts.tolist(), strict=True):
                    if n:
                        rows[q] = rows.get(q, 0) + n
        return rows

    def plan(self, bucket: int) -> list[Select | None]:
        """How ``bucket`` is reduced: ``[None]`` whole, else its parts."""
        rows = self.rows[bucket]
        if rows <= self.limit:
            return [None]
        queries = self.queries(bucket)
        _refuse_too_large(queries, self.budget)
        parts = split_bucket(queries, math.ceil(rows / self.target))
        return [None] if len(parts) == 1 else list(parts)  # one query: reduced whole

    def after_kill(self, bucket: int, select: Select | None) -> list[Select]:
        """The parts of a bucket whose reduce killed the workers that ran it, or a one-line
        error when it cannot be cut further (a part already, or a single query)."""
        queries = self.queries(bucket)
        if select is not None or len(queries) < 2:
            what = f"bucket {bucket + 1} of {self.parts}"
            rows = self.rows[bucket]
            if select is not None:
                what, rows = f"{what}, {select.describe()}", select.rows
            raise UsageError(
                f"{what} ({rows:,} lines) killed the workers that ran it; raise "
                f"--worker-memory (now {_size(self.budget)}) or --partitions",
                command=_COMMAND,
            )
        return split_bucket(queries, PARTS_AFTER_KILL)
