"""Plans: how a command's input is cut into shards (docs/scaleout.md, "Plans").

A shard is a frozen dataclass of plain values (a path, a byte range, settings). Workers read
their own part of the input from the file, so nothing large travels through the scheduler.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from ragmeter.io.files import GZIP_MAGIC

# About 0.3 s of pure-Python scoring per shard keeps Dask's ~2 ms per-task overhead near 1%.
SAMPLES_PER_SHARD = 20_000
# At least this many shards per worker, so that the tail of a run lasts about one shard.
SHARDS_PER_WORKER = 4


@dataclass(frozen=True)
class LineShard:
    """Rows of a JSONL file: bytes ``[start, end)`` (``end=-1``: to the end of the file).

    ``first_line`` is the physical line number of the first line in the range and
    ``first_row`` the index of its first non-blank line in the whole file, so that a worker
    numbers rows and lines exactly as a whole-file read does.
    """

    index: int
    path: str
    start: int
    end: int
    first_line: int
    first_row: int
    settings: tuple[tuple[str, Any], ...]


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


def line_shards(
    path: str, n_rows: int, parts: int, settings: tuple[tuple[str, Any], ...]
) -> list[LineShard]:
    """Cut a JSONL file into ``parts`` ranges of about ``n_rows / parts`` non-blank lines each.

    Cuts fall on line starts, so a sample never spans two shards. A gzip file cannot be cut
    by bytes and becomes one shard.
    """
    path = os.path.abspath(path)
    if parts <= 1 or is_gzip(path):
        return [LineShard(0, path, 0, -1, 1, 0, settings)]
    per = n_rows / parts
    shards: list[LineShard] = []
    start, first_line, first_row = 0, 1, 0
    offset, line, row = 0, 0, 0
    with open(path, "rb") as fh:
        for raw in fh:
            line += 1
            due = len(shards) < parts - 1 and row >= round(per * (len(shards) + 1))
            if due and row > first_row and raw.strip():
                shards.append(
                    LineShard(len(shards), path, start, offset, first_line, first_row, settings)
                )
                start, first_line, first_row = offset, line, row
            if raw.strip():
                row += 1
            offset += len(raw)
    shards.append(LineShard(len(shards), path, start, -1, first_line, first_row, settings))
    return shards


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
