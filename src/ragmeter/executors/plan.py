"""Plans: how a command's input is cut into shards (docs/scaleout.md, "Plans").

A shard is a frozen dataclass of plain values (a path, a byte range, settings). Workers read
their own part of the input from the file, so nothing large travels through the scheduler.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from typing import Any

from ragmeter.io.files import GZIP_MAGIC

# About 0.3 s of pure-Python scoring per shard keeps Dask's ~2 ms per-task overhead near 1%.
SAMPLES_PER_SHARD = 20_000
# At least this many shards per worker, so that the tail of a run lasts about one shard.
SHARDS_PER_WORKER = 4
# A block of a run file that a worker reads and parses (the grouped plan's ranges, the hash
# plan's map blocks): about 1.2M TREC lines; a hash-plan map block takes 0.31 s on a worker
# (0.38 s beside a second one; benchmarks/README.md). Under 64 MiB: a task runs on the worker's
# task thread, whose glibc arena grows in heaps of at most 64 MiB, so a larger block, as read,
# was mapped afresh and its pages faulted in again every time (a quarter of the hash plan's
# 4.5M page faults at 100M lines; docs/scaleout.md, "The LocalCluster's settings").
RUN_BLOCK_BYTES = 48 << 20


@dataclass(frozen=True)
class LineShard:
    """Rows of a JSONL file: bytes ``[start, end)`` (``end=-1``: to the end of the file).

    ``first_line`` is the physical line number of the first line in the range and
    ``first_row`` the index of its first row in the whole file, so that a worker numbers rows
    and lines exactly as a whole-file read does; ``rows`` is how many rows the range holds
    (-1: not counted, a gzip file).
    """

    index: int
    path: str
    start: int
    end: int
    first_line: int
    first_row: int
    settings: tuple[tuple[str, Any], ...]
    rows: int = -1


def shard_count(n_units: int, workers: int, partitions: int | None) -> int:
    """How many shards ``n_units`` samples make: ``partitions`` if given, else about
    :data:`SAMPLES_PER_SHARD` each but at least :data:`SHARDS_PER_WORKER` per worker."""
    if n_units <= 0:
        return 1
    if partitions is not None:
        return max(1, min(partitions, n_units))
    wanted = max(math.ceil(n_units / SAMPLES_PER_SHARD), SHARDS_PER_WORKER * max(1, workers))
    return max(1, min(wanted, n_units))


def is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


_SAMPLE = 4 << 20
_BLOCK = 16 << 20


def estimate_lines(path: str) -> int:
    """Lines in ``path``: counted in a file of up to 4 MiB, else estimated from its first
    4 MiB (enough to choose a shard count; the cuts themselves are exact)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(_SAMPLE)
    lines = head.count(b"\n") + (not head.endswith(b"\n") and bool(head))
    return lines if size <= len(head) else max(1, round(size * lines / len(head)))


def line_shards(path: str, parts: int, settings: tuple[tuple[str, Any], ...]) -> list[LineShard]:
    """Cut a JSONL file into ``parts`` byte ranges of about equal size, at line starts.

    Nothing is parsed here, and the file is read once, in blocks, with numpy finding the
    newlines: a row is a line holding ``{``. Every line that holds a JSON object does; a
    non-blank line that does not is an error that a worker reports, and the rows after the
    first error never matter, so ``first_row`` is exact wherever it is used. Each range starts
    at a line holding ``{`` and holds at least one row, so a sample never spans two shards. A
    gzip file cannot be cut by bytes and becomes one shard.
    """
    import numpy as np

    path = os.path.abspath(path)
    if is_gzip(path):
        return [LineShard(0, path, 0, -1, 1, 0, settings)]
    size = os.path.getsize(path)
    targets = [k * size // parts for k in range(1, max(1, parts))][::-1]  # popped from the end
    cuts = [(0, 1, 0)]  # (offset, first line, first row) of each range
    pos, lines, rows, pending = 0, 0, 0, b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_BLOCK)
            data = pending + block
            end = data.rfind(b"\n") + 1 if block else len(data)
            chunk, pending = data[:end], data[end:]
            arr = np.frombuffer(chunk, dtype=np.uint8)
            newlines = np.flatnonzero(arr == 10)
            n = len(newlines) + (bool(chunk) and chunk[-1:] != b"\n")
            holds = np.zeros(n, dtype=bool)
            holds[np.searchsorted(newlines, np.flatnonzero(arr == 123))] = True
            starts = np.concatenate(([0], newlines[: n - 1] + 1))
            before = rows + np.concatenate(([0], np.cumsum(holds)[:-1])) if n else holds
            while targets and targets[-1] < pos + len(chunk):
                # the first line holding "{" at or after the target, after a range with a row
                ok = holds & (starts >= targets[-1] - pos) & (before > cuts[-1][2])
                found = np.flatnonzero(ok)
                if not len(found):
                    break  # the cut falls in the next block
                i = int(found[0])
                cuts.append((pos + int(starts[i]), lines + i + 1, int(before[i])))
                while targets and targets[-1] <= cuts[-1][0]:
                    targets.pop()
            pos, lines, rows = pos + len(chunk), lines + n, rows + int(holds.sum())
            if not block:
                break
    bounds = [c[0] for c in cuts[1:]] + [-1]
    counts = [b[2] - a[2] for a, b in itertools.pairwise(cuts)] + [rows - cuts[-1][2]]
    return [
        LineShard(i, path, a, end, line, row, settings, count)
        for i, ((a, line, row), end, count) in enumerate(zip(cuts, bounds, counts, strict=True))
    ]


# A block of significance tests: about 20 s of work at n ≈ 7,000 with 9,999 resamples.
TESTS_PER_SHARD = 40


@dataclass(frozen=True)
class TestShard:
    """A block of (metric, pair) tests. ``path`` holds that metric's paired data (written once
    by the driver, loaded once per worker); ``keys`` are the (metric, i, j) tests to run."""

    index: int
    path: str
    digest: str
    keys: tuple[tuple[str, int, int], ...]
    settings: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class SignFlipShard:
    """Resamples ``rows = (start, stop)`` of a group of randomization tests that share their
    sign patterns (``patterns``: n, exact or sampled, count, seed). ``path`` holds the group's
    differences and rounding, one column per test; the task returns the group's counts."""

    index: int
    path: str
    digest: str
    patterns: Any
    rows: tuple[int, int]
    settings: tuple[tuple[str, Any], ...]


def scratch_root(executor_describe: dict[str, Any]) -> str:
    """Where the driver writes files that workers read.

    A LocalCluster shares this machine's temporary directory; workers of an existing cluster
    may run elsewhere, so the files go to ``.ragmeter/work`` under the current directory, which
    must then be on a filesystem every worker sees.
    """
    import tempfile

    if executor_describe.get("cluster") == "local":
        return tempfile.gettempdir()
    root = os.path.abspath(os.path.join(".ragmeter", "work"))
    os.makedirs(root, exist_ok=True)
    return root


@dataclass(frozen=True)
class PayloadShard:
    """One call of ``func`` (``"module:function"`` inside ragmeter) on the arguments pickled
    in ``path`` (a work-dir payload, checked against ``digest`` on the worker). Used where the
    unit of work is a whole engine call: a runner task for one system, one comparison."""

    index: int
    path: str
    digest: str
    func: str
    coordinator: Any = None  # the run's judge coordinator, for units that call the judge


@dataclass(frozen=True)
class JudgeShard:
    """Samples to judge (pickled in the work-dir payload ``path``) and the run's coordinator,
    an actor handle that is not part of the plan's identity."""

    index: int
    path: str
    digest: str
    coordinator: Any = None
