"""Bounded-memory evaluation of a run grouped by query (``--stream``, docs/retrieval.md#decisions).

The run is read in chunks of about ``batch_rows`` lines (stdin and gzip included). The trailing,
possibly incomplete query of each batch is carried into the next batch, so every query is ranked,
deduplicated and joined entirely inside one batch and the results equal the in-memory mode's,
value for value. Only the qrels, the per-query counts and the judged rows are kept, so memory does
not grow with the run.
"""

from __future__ import annotations

import functools
import mmap
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError, UsageError
from ragmeter.io.files import GZIP_MAGIC, display_name, open_binary, sha256_file
from ragmeter.io.trec import LineOffset, Run, _Input, run_from_input
from ragmeter.io.trec.checks import _no_data
from ragmeter.io.trec.lines import count_newlines
from ragmeter.retrieval import kernels as K
from ragmeter.retrieval.result import RetrievalResult

__all__ = ["Chunk", "evaluate_stream_with", "iter_chunks"]

_BYTES_PER_LINE = 40  # a TREC run line is ~40 bytes; only sizes the chunks


@dataclass(frozen=True)
class Chunk:
    """Whole lines of the (decompressed) input, and the number of lines before them."""

    data: bytes | memoryview  # a memoryview: a segment of the memory-mapped file
    line_offset: LineOffset


def iter_chunks(path: str | os.PathLike[str], chunk_bytes: int) -> Iterator[Chunk]:
    """Newline-aligned chunks of about ``chunk_bytes`` bytes of the input.

    A plain file is memory-mapped and each chunk is a view of the map: nothing is copied
    before the parse, and line numbers are counted only if a message needs one. Reading the
    file through a Python file object instead (a copy per read, another to join the partial
    line, another to cut the chunk, a newline count) cost about as much CPU as the parse itself
    on a 100M-line run. Stdin, pipes and gzip cannot be mapped; they are read.
    """
    mm = _map(path)
    if mm is None:
        yield from _read_chunks(path, chunk_bytes)
    else:
        yield from _mapped_chunks(mm, chunk_bytes)


def _map(path: str | os.PathLike[str]) -> mmap.mmap | None:
    """A read-only map of a plain, non-empty, uncompressed regular file; else None."""
    p = os.fspath(path)
    if p == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            return None  # before open(): opening a FIFO nobody writes to would block
        with open(p, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0 or fh.read(2) == GZIP_MAGIC:
                return None
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # the reading path reports an unreadable file with its usual message


def _mapped_chunks(mm: mmap.mmap, chunk_bytes: int) -> Iterator[Chunk]:
    size = len(mm)
    page = mmap.PAGESIZE
    pos = 0
    while pos < size:
        end = min(pos + max(chunk_bytes, 1), size)
        if end < size:
            nl = mm.find(b"\n", end - 1)
            end = size if nl < 0 else nl + 1
        yield Chunk(memoryview(mm)[pos:end], functools.partial(count_newlines, mm, pos))
        # the chunk is parsed: drop its pages from this process (the page cache keeps them),
        # so the map adds no more than a chunk to the peak RSS
        lo, hi = pos // page * page, end // page * page
        if hi > lo and hasattr(mm, "madvise"):
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        pos = end


def _read_chunks(path: str | os.PathLike[str], chunk_bytes: int) -> Iterator[Chunk]:
    """Chunks read from a file object (stdin, pipes, gzip); lines are counted as they pass.

    Each chunk is read into its own buffer, after the partial line the previous chunk left, and
    handed on as a view: one copy of the data, where read-join-cut made three (and raised the
    peak RSS of a 100M-line stdin run by the same amount).
    """
    name = display_name(path)
    carry = b""
    offset = 0
    want = max(chunk_bytes, 1)
    with open_binary(path, allow_stdin=True) as fh:
        while True:
            buf = bytearray(len(carry) + want)
            buf[: len(carry)] = carry
            filled = len(carry)
            view = memoryview(buf)
            try:
                while filled < len(buf) and (n := fh.readinto(view[filled:])):
                    filled += n
            except (OSError, EOFError) as exc:
                raise InputError(f"cannot read (not a gzip stream: {exc})", path=name) from None
            if filled == len(carry):  # end of input
                if carry:
                    yield Chunk(carry, offset)
                return
            cut = buf.rfind(b"\n", 0, filled) if filled == len(buf) else filled - 1
            if cut < 0:  # one line longer than a chunk so far: read on
                carry = bytes(view[:filled])
                want *= 2
                continue
            carry = bytes(view[cut + 1 : filled])
            yield Chunk(view[: cut + 1], offset)
            offset += buf.count(b"\n", 0, cut + 1)
            want = max(chunk_bytes, 1)


@dataclass(frozen=True, eq=False)
class _PartsOrigin:
    """Rows that span several chunks: each part is (origin, first row, row count)."""

    name: str
    parts: tuple[tuple[Any, int, int], ...]

    def _split(self, row: int) -> tuple[Any, int]:
        for origin, start, count in self.parts:
            if row < count:
                return origin, start + row
            row -= count
        raise IndexError(row)

    def locate(self, rows: Sequence[int]) -> list[InputError]:
        out = []
        for r in rows:
            origin, local = self._split(int(r))
            out.append(origin.locate([local])[0])
        return out

    def where(self, row: int) -> str:
        err = self.locate([row])[0]
        return err.location if err.location else f"line {err.line}"


Part = tuple[Run, int, int]  # (a whole chunk's Run, first row, row count)


def _build(parts: list[Part], name: str) -> Run:
    """One Run from row ranges of chunk Runs; messages still name each row's own line."""
    qid_chunks = [c for r, a, n in parts for c in r.qid.slice(a, n).chunks]
    doc_chunks = [c for r, a, n in parts for c in r.docno.slice(a, n).chunks]
    first = parts[0][0]
    return Run(
        qid=pa.chunked_array(qid_chunks, type=first.qid.type),
        docno=pa.chunked_array(doc_chunks, type=first.docno.type),
        score=np.concatenate([r.score[a : a + n] for r, a, n in parts]),
        runid=parts[-1][0].runid,
        origin=_PartsOrigin(name, tuple((r.origin, a, n) for r, a, n in parts)),  # type: ignore[arg-type]
    )


def _parsed_chunks(source: str | os.PathLike[str], chunk_bytes: int) -> Iterator[Run]:
    """The input's chunks that hold data lines, parsed (a chunk of comments yields nothing)."""
    name = display_name(source)
    for chunk in iter_chunks(source, chunk_bytes):
        inp = _Input(name, None, chunk.data, bytes(chunk.data[: 1 << 16]), chunk.line_offset)
        # no allocator trim per chunk: the next chunk's parse reuses the freed buffers
        run = run_from_input(inp, allow_empty=True, trim=False)
        if run is not None:
            yield run


@dataclass
class _RunInfo:
    """What the result needs to know about a streamed run (it is never held whole)."""

    name: str
    runid: str = ""
    sha256: str | None = None
    lines: int = 0
    qids: set[bytes] = field(default_factory=set)
    ranked: bool = False
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return self.lines

    def qid_values(self) -> list[str]:
        return sorted(q.decode("utf-8", "replace") for q in self.qids)


class NotGroupedError(InputError):
    """A query that comes back after other queries (``--spill`` then takes the hash plan)."""


def _grouping_error(batch: Run, row: int, qid: bytes) -> InputError:
    loc = batch.origin.locate([row])[0]
    return NotGroupedError(
        f"query '{qid.decode('utf-8', 'replace')}' appears again after other queries; --stream "
        "needs the run grouped by query (LC_ALL=C sort -s -k1,1 run > run.sorted), or add "
        "--spill DIR to evaluate an unsorted run in bounded memory, or drop --stream",
        path=loc.path,
        line=loc.line,
        location=loc.location,
    )


def evaluate_stream_with(
    evaluator: Any,
    source: str | os.PathLike[str],
    *,
    batch_rows: int = 2_000_000,
    run_format: str = "trec",
    hash_input: bool = True,
) -> RetrievalResult:
    """Evaluate a run grouped by query with a prepared :class:`Evaluator`, batch by batch.

    ``hash_input=False`` skips the run's SHA-256 (only JSON and CSV outputs report it), as
    :func:`~ragmeter.io.trec.read_run` does: hashing reads the whole file once more.
    """
    if run_format != "trec":
        raise UsageError("--stream reads TREC runs only (--run-format trec)", command="trec")
    if batch_rows < 1:
        raise UsageError(f"--batch-rows needs an integer ≥ 1, not {batch_rows}", command="trec")
    name = display_name(source)
    info = _RunInfo(name)
    finished: set[bytes] = set()
    pieces: list[K.RankPiece] = []
    unjudged: set[bytes] = set()
    dropped = 0
    chunk_bytes = batch_rows * _BYTES_PER_LINE

    def evaluate_batch(batch: Run) -> None:
        nonlocal dropped
        piece, n_dropped, joined = evaluator._piece(batch, require_overlap=False)
        dropped += n_dropped
        unjudged.update(joined.unjudged_qids)
        pieces.append(piece)
        # counts of the whole batch suffice: keep only judged rows and a running count
        if len(pieces) > 1:
            pieces[0].counts += pieces[-1].counts
            pieces[-1].counts = np.zeros(0, dtype=np.int64)

    carried: list[Part] = []  # rows of the trailing query, which the next chunk may continue
    carried_qid: bytes | None = None
    # (Parsing the next chunk on a thread while this one is evaluated gained nothing on 2 cores:
    # Arrow's CSV reader already keeps both busy, and two chunks in flight fault in more pages.)
    for run in _parsed_chunks(source, chunk_bytes):
        info.lines += len(run)
        info.runid = run.runid
        qids, codes = K._qid_codes(run.qid)
        starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
        block_qids = [qids[c] for c in codes[starts].tolist()]
        seen_here: set[bytes] = set()
        for i, (b, q) in enumerate(zip(starts.tolist(), block_qids, strict=True)):
            if i == 0 and q == carried_qid:
                continue  # the carried query goes on
            if q in seen_here or q in finished or q == carried_qid:
                raise _grouping_error(run, b, q)
            seen_here.add(q)
        info.qids.update(qids)
        # every query but the last is complete: evaluate them (with the carried rows), and
        # carry the last, possibly incomplete, query into the next chunk
        if carried_qid is not None and block_qids[0] != carried_qid:
            finished.add(carried_qid)
        finished.update(block_qids[:-1])
        tail = int(starts[-1])
        rest: Part = (run, tail, len(run) - tail)
        if tail == 0 and block_qids[0] == carried_qid:
            carried.append(rest)  # one query, longer than a chunk so far
            continue
        head = [*carried, (run, 0, tail)] if tail else carried
        carried, carried_qid = [rest], block_qids[-1]
        if head:
            evaluate_batch(_build(head, name))
    if carried:
        evaluate_batch(_build(carried, name))
    if info.lines == 0:
        raise InputError(_no_data(6), path=name)
    if not pieces or not any((p.counts > 0).any() for p in pieces if p.counts.size):
        raise evaluator.no_overlap(name, info.qids)
    if hash_input and os.fspath(source) != "-":
        try:
            info.sha256 = sha256_file(source)
        except InputError:
            info.sha256 = None
    return evaluator._finish(info, pieces, dropped, unjudged, run_qids=list(info.qids))
